// SPDX-License-Identifier: GPL-2.0-only
/* modcache.c — where the module cache is for whom, its layout by build-id, and entries added atomically. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/filecopy.h"
#include "common/modcache.h"
#include "common/sha256.h"

#define MODCACHE_MODE 0700	/* modules may be private programs: the user's alone, as DIR/modules is */

static int path__set(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* The passwd entry's home, not $HOME: under sudo $HOME may be root's. */
static int modcache__of_user(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (!pw || !pw->pw_dir || pw->pw_dir[0] != '/')
		return -ENOENT;
	return path__set(buf, len, "%s/.cache/memtrack", pw->pw_dir);
}

/* SUDO_UID, when memtrack is root by sudo: whose command this is. */
static int sudo__uid(uid_t *uid)
{
	const char *s = getenv("SUDO_UID");
	unsigned long v;
	char *end;

	if (!s || geteuid() != 0)
		return -ENOENT;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v >= (unsigned long)(uid_t)-1)
		return -EINVAL;
	*uid = v;
	return 0;
}

int mt_modcache__dir(const uid_t *user, char *buf, size_t len)
{
	const char *env = getenv(MT_MODCACHE_ENV), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	uid_t uid;

	if (env && env[0])
		return path__set(buf, len, "%s", env);
	if (!user && !sudo__uid(&uid))
		user = &uid;
	if (user)
		return modcache__of_user(*user, buf, len);
	if (geteuid() == 0)
		return path__set(buf, len, "%s", MT_MODCACHE_ROOT);
	if (xdg && xdg[0] == '/')
		return path__set(buf, len, "%s/memtrack", xdg);
	if (home && home[0] == '/')
		return path__set(buf, len, "%s/.cache/memtrack", home);
	return modcache__of_user(getuid(), buf, len);
}

int mt_modcache__entry(const char *cache, const char *hex, const char *what, char *buf, size_t len)
{
	if (strlen(hex) < 3)
		return -EINVAL;
	return path__set(buf, len, "%s/%.2s/%s/%s", cache, hex, hex + 2, what);
}

/* name in dir_fd, made 0700 when missing, opened without following a symlink: its descriptor, or -errno. */
static int subdir__open(int dir_fd, const char *name)
{
	int fd;

	if (mkdirat(dir_fd, name, MODCACHE_MODE) && errno != EEXIST)
		return -errno;
	fd = openat(dir_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int mt_modcache__open(const char *cache)
{
	char path[PATH_MAX], *p;
	int fd;

	if (path__set(path, sizeof(path), "%s", cache))
		return -ENAMETOOLONG;
	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {	/* the parents, as mkdir -p */
		*p = '\0';
		if (mkdir(path, MODCACHE_MODE) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, MODCACHE_MODE) && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int mt_modcache__insert(int cache_fd, const char *hex, const char *what, int in)
{
	char top[3];
	int top_fd, fd, err;

	if (strlen(hex) < 3)
		return -EINVAL;
	snprintf(top, sizeof(top), "%.2s", hex);
	top_fd = subdir__open(cache_fd, top);
	if (top_fd < 0)
		return top_fd;
	fd = subdir__open(top_fd, hex + 2);
	close(top_fd);
	if (fd < 0)
		return fd;
	err = mt_filecopy__copy(in, fd, what, 0600, true, NULL);
	close(fd);
	return err;
}

/* Whether the entry open as dir_fd/what is a regular file of the content hashed sha256. */
static bool entry__is(int dir_fd, const char *what, const uint8_t *sha256)
{
	uint8_t sum[MT_SHA256_LEN];
	struct stat st;
	bool same;
	int fd = openat(dir_fd, what, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return false;
	same = !fstat(fd, &st) && S_ISREG(st.st_mode) && !mt_sha256__fd(fd, sum) && !memcmp(sum, sha256, sizeof(sum));
	close(fd);
	return same;
}

int mt_modcache__evict_other(int cache_fd, const char *hex, const char *what, const uint8_t *sha256)
{
	char top[3];
	struct stat st;
	int top_fd, fd, err = 0;

	if (strlen(hex) < 3)
		return -EINVAL;
	snprintf(top, sizeof(top), "%.2s", hex);
	top_fd = openat(cache_fd, top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top_fd < 0)
		return errno == ENOENT ? 0 : -errno;
	fd = openat(top_fd, hex + 2, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	close(top_fd);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!fstatat(fd, what, &st, AT_SYMLINK_NOFOLLOW) && !entry__is(fd, what, sha256))
		err = unlinkat(fd, what, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) ? -errno : 1;
	close(fd);
	return err;
}
