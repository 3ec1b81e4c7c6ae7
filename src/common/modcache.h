/* SPDX-License-Identifier: GPL-2.0-only */
/* modcache.h — the module cache: one copy per machine of each module file (and debug file), by build-id. */
#ifndef MEMTRACK_MODCACHE_H
#define MEMTRACK_MODCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MT_MODCACHE_ENV "MEMTRACK_CACHE"	/* the cache directory, when set and not empty */
#define MT_MODCACHE_ROOT "/var/cache/memtrack"	/* root's, when no user is behind it (no sudo, no --user) */
#define MT_MODCACHE_FILE "file"			/* CACHE/<2 hex>/<rest of the build-id hex>/file */
#define MT_MODCACHE_DEBUG "debug"		/* ... /debug: its separate debug file */

/*
 * The cache directory into buf: $MEMTRACK_CACHE; else user's (the uid DIR belongs to: --user or sudo's) ~/.cache/
 * memtrack from its passwd entry; with user NULL, sudo's invoking user (SUDO_UID, when root), else /var/cache/memtrack
 * for root, else $XDG_CACHE_HOME/memtrack or ~/.cache/memtrack. 0, or -ENOENT (no home), -ENAMETOOLONG.
 */
int mt_modcache__dir(const uid_t *user, char *buf, size_t len);
/* An entry's path under the cache directory: "<cache>/<hex[0..1]>/<hex[2..]>/<what>". */
int mt_modcache__entry(const char *cache, const char *hex, const char *what, char *buf, size_t len);
/* The cache directory, made (0700, and each missing parent) when missing; its descriptor, or -errno. */
int mt_modcache__open(const char *cache);
/*
 * in copied into the cache as the entry <hex>/<what> (mode at most 0600), unless it is there already; the copy is
 * renamed into place whole, so concurrent recordings may insert the same entry. 0 or -errno.
 */
int mt_modcache__insert(int cache_fd, const char *hex, const char *what, int in);

/*
 * The entry <hex>/<what>, when it is there and not a regular file of the content hashed sha256 (a forgery under the
 * module's build-id, a symlink, a damaged copy), removed without following it, so that an insert puts the module
 * there. 1 when it was removed, 0 when there was none or it is the module, or -errno.
 */
int mt_modcache__evict_other(int cache_fd, const char *hex, const char *what, const uint8_t *sha256);

#endif /* MEMTRACK_MODCACHE_H */
