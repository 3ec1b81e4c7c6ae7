// SPDX-License-Identifier: GPL-2.0-only
/* test_boundary_modules.c — issue 29, module files under --user: read from the mapping, withheld, verified, packed. */
#include "kernel_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact/reader.h"
#include "bpf/memtrack.h"
#include "common/elf.h"
#include "common/filecopy.h"
#include "common/modcache.h"

#define tmp_root mt_test_root
#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LD_SO "/lib64/ld-linux-x86-64.so.2"
#define SECRET_MARK "memtrack-test-secret-6b1f0c2e9a77d3"
#define RACE_RUNS 200
#define SPARSE_HOLE (256 * 1024 * 1024)
#define SMALL_BLOCKS (1024 * 1024)	/* bytes a sparse copy may allocate: the ELF's own few pages */

static const struct passwd *nobody(void)
{
	const struct passwd *pw = getpwnam("nobody");

	assert_non_null(pw);
	return pw;
}

/* A directory of nobody's (0755) in /tmp, where nobody's command may rename and nobody's cache is made. */
static void user_base(char *base, size_t len)
{
	const struct passwd *pw = nobody();

	snprintf(base, len, "/tmp/memtrack-boundary-XXXXXX");
	assert_non_null(mkdtemp(base));
	assert_int_equal(chown(base, pw->pw_uid, pw->pw_gid), 0);
	assert_int_equal(chmod(base, 0755), 0);
}

static void run_sh(const char *fmt, const char *a, const char *b)
{
	char cmd[2000];

	snprintf(cmd, sizeof(cmd), fmt, a, b);
	assert_int_equal(system(cmd), 0);
}

/* memtrack with MEMTRACK_CACHE set to cache (NULL: the scratch dir's), its stdout and stderr as NAME.out/.err. */
static int run_cache(const char *name, const char *cache, char *const *argv)
{
	char *saved = strdup(getenv(MT_MODCACHE_ENV));
	int rc;

	if (cache)
		setenv(MT_MODCACHE_ENV, cache, 1);
	rc = mt_test__run_named(name, argv);
	setenv(MT_MODCACHE_ENV, saved, 1);
	free(saved);
	return rc;
}

/* `record -q --user nobody --stacks -o DIR -- cmd...` (at most 3 words of cmd). */
static int record_as_nobody(const char *name, const char *dir, const char *cache, char *const *cmd)
{
	char *argv[13] = { MT_BINARY, "record", "-q", "--user", "nobody", "--stacks", "-o", (char *)dir, "--" };
	int i;

	for (i = 0; cmd[i] && i < 3; i++)
		argv[9 + i] = cmd[i];
	return run_cache(name, cache, argv);
}

/* NAME.which is want, exactly. */
static void output_is(const char *name, const char *which, const char *want)
{
	char *s = mt_test__read_output(name, which);

	assert_string_equal(s, want);
	free(s);
}

static char *slurp(const char *path, size_t *len);

/* The file at path holds want, exactly. */
static void output_file_is(const char *path, const char *want)
{
	char *s = mt_test__read_file(path);

	assert_string_equal(s, want);
	free(s);
}

/* Whether the regular file at path holds needle's len bytes anywhere. */
static bool file_holds(const char *path, const void *needle, size_t len)
{
	size_t n;
	char *buf = slurp(path, &n);
	bool found = memmem(buf, n, needle, len) != NULL;

	free(buf);
	return found;
}

/* Files under path (links never followed, a missing path is none) holding needle: their count, each named. */
static int tree_holds(const char *path, const void *needle, size_t len)
{
	char sub[1200];
	struct dirent *e;
	struct stat st;
	int n = 0;
	DIR *d;

	if (lstat(path, &st))
		return 0;
	if (S_ISREG(st.st_mode)) {
		n = file_holds(path, needle, len);
		if (n)
			fprintf(stderr, "%s holds the bytes it must not\n", path);
		return n;
	}
	if (!S_ISDIR(st.st_mode) || !(d = opendir(path)))
		return 0;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			n += tree_holds(sub, needle, len);
		}
	closedir(d);
	return n;
}

/* The whole file at path, its size in *len. */
static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;

	assert_int_equal(stat(path, &st), 0);
	buf = mt_test__read_file(path);
	*len = st.st_size;
	return buf;
}

/* The files at a and b hold the same bytes. */
static void same_content(const char *a, const char *b)
{
	size_t alen, blen;
	char *abuf = slurp(a, &alen), *bbuf = slurp(b, &blen);

	assert_int_equal(alen, blen);
	assert_memory_equal(abuf, bbuf, alen);
	free(abuf);
	free(bbuf);
}

/* The MT_REC_FILE records of a recording whose build-id is the one asked for: how many, and the last one's flags. */
struct file_query {
	uint8_t id[MT_BUILD_ID_MAX];
	int id_len;
	int count;
	int flags;
};

static int file_query__on_record(const struct mt_rec_hdr *rec, void *ctx)
{
	const struct mt_file *f = (const struct mt_file *)rec;
	struct file_query *q = ctx;

	if (rec->type == MT_REC_FILE && rec->size == sizeof(*f) && f->build_id_len == q->id_len &&
	    !memcmp(f->build_id, q->id, q->id_len)) {
		q->count++;
		q->flags = f->flags;
	}
	return 0;
}

/* The flags of dir's one file record of the module at path (the test fails unless there is exactly one). */
static int file_flags(const char *dir, const char *path)
{
	struct file_query q = { 0 };
	struct mt_read_status st = { 0 };

	q.id_len = mt_elf__file_build_id(path, q.id, sizeof(q.id));
	assert_int_equal(q.id_len, 20);
	assert_int_equal(mt_artifact__read(dir, file_query__on_record, &q, &st), 0);
	assert_int_equal(q.count, 1);
	return q.flags;
}

/*
 * U4: nobody's command dlopens its library while a child of it exchanges the library's name with a symlink to a
 * root-only secret (renameat2 RENAME_EXCHANGE), again and again; memtrack reads the module from the mapping, so
 * over 200 recordings not one byte of the secret reaches DIR or nobody's cache, and each recording keeps the library
 * (one file record, hashed, not withheld).
 */
static void test_rename_race(void **state)
{
	char base[64], secret[300], lib[300], alt[300], dir[300], cache[300], line[sizeof(SECRET_MARK) + 2];
	char *cmd[] = { PROG("swap_race"), lib, alt, NULL };
	const struct passwd *pw = nobody();
	FILE *f;
	int i;

	(void)state;
	user_base(base, sizeof(base));
	snprintf(secret, sizeof(secret), "%s/secret", tmp_root);
	f = fopen(secret, "w");
	assert_non_null(f);
	for (i = 0; i < 64; i++)
		fprintf(f, "%s\n", SECRET_MARK);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(secret, 0600), 0);
	snprintf(lib, sizeof(lib), "%s/libswap.so", base);
	snprintf(alt, sizeof(alt), "%s/alt", base);
	snprintf(cache, sizeof(cache), "%s/cache", base);
	snprintf(line, sizeof(line), "%s", SECRET_MARK);
	for (i = 0; i < RACE_RUNS; i++) {
		unlink(alt);	/* either may be the link after an odd number of exchanges */
		unlink(lib);
		run_sh("cp '%s' '%s'", PROG("libfake_mi.so"), lib);
		assert_int_equal(chown(lib, pw->pw_uid, pw->pw_gid), 0);
		assert_int_equal(symlink(secret, alt), 0);
		assert_int_equal(lchown(alt, pw->pw_uid, pw->pw_gid), 0);
		snprintf(dir, sizeof(dir), "%s/run%d", base, i);
		assert_int_equal(record_as_nobody("race", dir, cache, cmd), 0);
		assert_int_equal(tree_holds(dir, line, strlen(line)), 0);
		assert_int_equal(tree_holds(cache, line, strlen(line)), 0);
		assert_int_equal(file_flags(dir, PROG("libfake_mi.so")), MT_FILE_HASHED);
		run_sh("rm -rf '%s'%s", dir, "");
	}
	run_sh("rm -rf '%s'%s", base, "");
}

/* Root's pack of uid's DIR: DIR/modules and each file in it are uid's (given by their own descriptors), the files
 * regular and 0600. How many files. */
static int modules_given(const char *dir, uid_t uid)
{
	char path[1200];
	struct dirent *e;
	struct stat st;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/modules", dir);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(st.st_uid, uid);
	d = opendir(path);
	assert_non_null(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/modules/%s", dir, e->d_name);
		assert_int_equal(lstat(path, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_uid, uid);
		assert_int_equal(st.st_mode & 07777, 0600);
		n++;
	}
	closedir(d);
	return n;
}

/*
 * C11: an execute-only (0711) root program run as nobody is recorded by path and build-id and withheld, said in
 * one line: no copy in DIR or nobody's cache. root's report says it was withheld and symbolizes it from its path;
 * root's pack says so and does not copy it.
 */
static void test_exec_only_withheld(void **state)
{
	char base[64], prog[300], dir[300], cache[300], entry[600], hex[2 * MT_BUILD_ID_MAX + 1], want[700];
	char *cmd[] = { prog, "chain", NULL }, *report[] = { MT_BINARY, "report", "--json", dir, NULL }, *s, *bytes;
	char *pack[] = { MT_BINARY, "pack", dir, NULL };
	size_t len;

	(void)state;
	user_base(base, sizeof(base));
	snprintf(prog, sizeof(prog), "%s/xonly", base);
	run_sh("cp '%s' '%s'", PROG("stack_chain"), prog);
	assert_int_equal(chmod(prog, 0711), 0);
	snprintf(dir, sizeof(dir), "%s/dir", base);
	snprintf(cache, sizeof(cache), "%s/cache", base);
	assert_int_equal(record_as_nobody("xonly", dir, cache, cmd), 0);
	snprintf(want, sizeof(want), "memtrack: %s: withheld from DIR and the module cache: uid %u may not read it (its "
		 "path and build-id are recorded)\n", prog, (unsigned int)nobody()->pw_uid);
	output_is("xonly", "err", want);
	assert_int_equal(file_flags(dir, prog), MT_FILE_HASHED | MT_FILE_WITHHELD);
	assert_int_equal(file_flags(dir, LIBC), MT_FILE_HASHED);
	mt_test__build_id_hex(prog, hex);
	assert_int_equal(mt_modcache__entry(cache, hex, MT_MODCACHE_FILE, entry, sizeof(entry)), 0);
	assert_int_equal(access(entry, F_OK), -1);
	snprintf(entry, sizeof(entry), "%s/modules", dir);
	assert_int_equal(access(entry, F_OK), -1);
	bytes = slurp(prog, &len);
	assert_int_equal(tree_holds(dir, bytes, len) + tree_holds(cache, bytes, len), 0);
	free(bytes);

	assert_int_equal(run_cache("xonly_report", cache, report), 0);
	snprintf(want, sizeof(want), "memtrack: %s: withheld at recording (the recording user may not read it): "
		 "symbolized from %s\n", prog, prog);
	output_is("xonly_report", "err", want);
	s = mt_test__read_output("xonly_report", "out");
	assert_non_null(strstr(s, "\"f20+0x"));
	assert_non_null(strstr(s, "\"main+0x"));
	free(s);

	assert_int_equal(run_cache("xonly_pack", cache, pack), 0);
	snprintf(want, sizeof(want), "memtrack: pack: %s (build-id %s): withheld at recording, its user may not read "
		 "it: not copied\n", prog, hex);
	output_is("xonly_pack", "err", want);
	snprintf(want, sizeof(want), "%s: 2 modules of 3 in %s/modules (%d files copied now, 1 withheld)\n", dir, dir,
		 2 + mt_test__system_debug(LIBC) + mt_test__system_debug(LD_SO));
	output_is("xonly_pack", "out", want);
	snprintf(entry, sizeof(entry), "%s/modules/%s", dir, hex);
	assert_int_equal(access(entry, F_OK), -1);
	assert_int_equal(modules_given(dir, nobody()->pw_uid),
			 2 + mt_test__system_debug(LIBC) + mt_test__system_debug(LD_SO));
	run_sh("rm -rf '%s'%s", base, "");
}

/*
 * A cache entry nobody forged: an ELF linked with libc's build-id under libc's name in nobody's cache. root's report
 * says so once and ignores it (libc is read at its path: no forged symbol); pack says so and copies the real libc;
 * the next recording says so and puts libc in its place.
 */
static void test_forged_cache_entry(void **state)
{
	char base[64], dir[300], cache[300], entry[600], hex[2 * MT_BUILD_ID_MAX + 1], src[300], want[900];
	char *cmd[] = { PROG("stack_chain"), "chain", NULL }, *s;
	char *report[] = { MT_BINARY, "report", "--json", dir, NULL }, *pack[] = { MT_BINARY, "pack", dir, NULL };
	char cc[2400];
	FILE *f;

	(void)state;
	user_base(base, sizeof(base));
	snprintf(dir, sizeof(dir), "%s/dir", base);
	snprintf(cache, sizeof(cache), "%s/cache", base);
	assert_int_equal(record_as_nobody("forge_rec", dir, cache, cmd), 0);
	mt_test__build_id_hex(LIBC, hex);
	assert_int_equal(mt_modcache__entry(cache, hex, MT_MODCACHE_FILE, entry, sizeof(entry)), 0);
	assert_int_equal(access(entry, F_OK), 0);
	snprintf(src, sizeof(src), "%s/forged.c", base);
	f = fopen(src, "w");
	assert_non_null(f);
	fputs("int forged_symbol(void) { return 42; }\n", f);
	assert_int_equal(fclose(f), 0);
	snprintf(cc, sizeof(cc), "cc -shared -fPIC -o '%s.new' '%s' -Wl,--build-id=0x%s && mv '%s.new' '%s'", entry,
		 src, hex, entry, entry);
	assert_int_equal(system(cc), 0);
	mt_test__build_id_hex(entry, want);
	assert_string_equal(want, hex);

	assert_int_equal(run_cache("forge_report", cache, report), 0);
	snprintf(want, sizeof(want), "memtrack: %s: not the module " LIBC " recorded (its content's hash differs, though "
		 "its build-id is the same): ignored\n", entry);
	output_is("forge_report", "err", want);
	s = mt_test__read_output("forge_report", "out");
	assert_null(strstr(s, "forged_symbol"));
	assert_non_null(strstr(s, "\"main+0x"));
	free(s);

	assert_int_equal(run_cache("forge_pack", cache, pack), 0);
	s = mt_test__read_output("forge_pack", "err");
	snprintf(want, sizeof(want), "memtrack: %s: not the module " LIBC " recorded", entry);
	assert_int_equal(mt_test__count(s, want), 1);
	free(s);
	snprintf(want, sizeof(want), "%s: 3 modules of 3 in %s/modules (%d files copied now)\n", dir, dir,
		 3 + mt_test__system_debug(LIBC) + mt_test__system_debug(LD_SO));
	output_is("forge_pack", "out", want);
	snprintf(want, sizeof(want), "%s/modules/%s", dir, hex);
	same_content(want, LIBC);

	snprintf(dir, sizeof(dir), "%s/dir2", base);
	assert_int_equal(record_as_nobody("forge_rec2", dir, cache, cmd), 0);
	snprintf(want, sizeof(want), "memtrack: the module cache's entry of " LIBC " (build-id %s) was not the module "
		 "(other content): replaced\n", hex);
	output_is("forge_rec2", "err", want);
	same_content(entry, LIBC);
	run_sh("rm -rf '%s'%s", base, "");
}

/* A build-id no other program has, for the system debug file planted under DEBUG_ROOT ("memtrack-pack-debug!"). */
#define PLANTED_ID "6d656d747261636b2d7061636b2d646562756721"
#define DEBUG_ROOT "/usr/lib/debug/.build-id"

/* base/name: a program with PLANTED_ID, root's, 0755. */
static void planted_prog(const char *base, char *prog, size_t len)
{
	char cmd[1200];

	snprintf(prog, len, "%s/dbgprog", base);
	snprintf(cmd, sizeof(cmd), "printf 'int main(void) { return 0; }\\n' | cc -x c -o '%s' - "
		 "-Wl,--build-id=0x" PLANTED_ID, prog);
	assert_int_equal(system(cmd), 0);
}

/*
 * pack run by root withholds from DIR's owner what they may not read, as record does: a system debug file that is
 * root's alone (planted under /usr/lib/debug for a program of nobody's recording), then the program itself once it
 * is root's alone and found only at its path. Each in one line; the copies left are nobody's.
 */
static void test_pack_withholds_unreadable(void **state)
{
	char base[64], prog[300], dir[300], cache[300], debug[300], entry[700], want[1200];
	char *cmd[] = { prog, NULL }, *pack[] = { MT_BINARY, "pack", dir, NULL };
	unsigned int uid = nobody()->pw_uid;
	int debugs = mt_test__system_debug(LIBC) + mt_test__system_debug(LD_SO);

	(void)state;
	user_base(base, sizeof(base));
	planted_prog(base, prog, sizeof(prog));
	snprintf(dir, sizeof(dir), "%s/dir", base);
	snprintf(cache, sizeof(cache), "%s/cache", base);
	assert_int_equal(record_as_nobody("wh_rec", dir, cache, cmd), 0);
	output_is("wh_rec", "err", "");
	snprintf(debug, sizeof(debug), DEBUG_ROOT "/%.2s", PLANTED_ID);
	mkdir(debug, 0755);
	snprintf(debug, sizeof(debug), DEBUG_ROOT "/%.2s/%s.debug", PLANTED_ID, &PLANTED_ID[2]);
	unlink(debug);
	run_sh("cp '%s' '%s'", prog, debug);
	assert_int_equal(chmod(debug, 0600), 0);

	assert_int_equal(run_cache("wh_pack", cache, pack), 0);
	snprintf(want, sizeof(want), "memtrack: pack: %s (build-id " PLANTED_ID "): withheld, uid %u may not read it: "
		 "not copied\n", debug, uid);
	output_is("wh_pack", "err", want);
	snprintf(want, sizeof(want), "%s: 3 modules of 3 in %s/modules (%d files copied now)\n", dir, dir, 3 + debugs);
	output_is("wh_pack", "out", want);
	snprintf(entry, sizeof(entry), "%s/modules/" PLANTED_ID ".debug", dir);
	assert_int_equal(access(entry, F_OK), -1);
	assert_int_equal(modules_given(dir, uid), 3 + debugs);

	snprintf(entry, sizeof(entry), "%s/modules/" PLANTED_ID, dir);
	assert_int_equal(unlink(entry), 0);
	assert_int_equal(mt_modcache__entry(cache, PLANTED_ID, MT_MODCACHE_FILE, entry, sizeof(entry)), 0);
	assert_int_equal(unlink(entry), 0);
	assert_int_equal(chmod(prog, 0700), 0);
	assert_int_equal(run_cache("wh_pack2", cache, pack), 0);
	snprintf(want, sizeof(want), "memtrack: pack: %s (build-id " PLANTED_ID "): withheld, uid %u may not read it: "
		 "not copied\n", prog, uid);
	output_is("wh_pack2", "err", want);
	snprintf(want, sizeof(want), "%s: 2 modules of 3 in %s/modules (0 files copied now, 1 withheld)\n", dir, dir);
	output_is("wh_pack2", "out", want);
	assert_int_equal(modules_given(dir, uid), 2 + debugs);
	assert_int_equal(unlink(debug), 0);
	run_sh("rm -rf '%s'%s", base, "");
}

/*
 * pack's copies replace whatever is at the name when they are renamed into place (what the owner re-plants after
 * pack said and removed a bad entry included): a file pack counts as copied is its own copy. Other content and a
 * symlink are replaced, the link's target untouched; the module cache's copy (replace false) keeps what is there.
 */
static void test_filecopy_replaces(void **state)
{
	char dir[300], path[400], victim[300];
	int dfd, in;
	struct stat st;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/filecopy", tmp_root);
	snprintf(victim, sizeof(victim), "%s/filecopy_victim", tmp_root);
	assert_int_equal(mkdir(dir, 0700), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	in = open(PROG("stack_chain"), O_RDONLY | O_CLOEXEC);
	assert_true(dfd >= 0 && in >= 0);
	mt_test__write_text(victim, "root's own\n");
	snprintf(path, sizeof(path), "%s/other", dir);
	mt_test__write_text(path, "planted\n");
	assert_int_equal(mt_filecopy__copy(in, dfd, "other", 0600, false, NULL), 0);
	output_file_is(path, "planted\n");
	assert_int_equal(mt_filecopy__copy(in, dfd, "other", 0600, true, NULL), 0);
	same_content(path, PROG("stack_chain"));
	snprintf(path, sizeof(path), "%s/link", dir);
	assert_int_equal(symlink(victim, path), 0);
	assert_int_equal(mt_filecopy__copy(in, dfd, "link", 0600, true, NULL), 0);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
	same_content(path, PROG("stack_chain"));
	output_file_is(victim, "root's own\n");
	assert_int_equal(mt_test__dir_entries(dir), 2);	/* no temporary file left */
	close(in);
	close(dfd);
}

/* `record --stacks -o DIR -- prog chain` as root, with the cache given. */
static void record_root(const char *name, const char *dir, const char *prog, const char *cache)
{
	char *argv[] = { MT_BINARY, "record", "-q", "--stacks", "-o", (char *)dir, "--", (char *)prog, "chain", NULL };

	assert_int_equal(run_cache(name, cache, argv), 0);
}

/*
 * pack with DIR/modules/<id> a symlink to a good copy of the program, found nowhere else: the link is no packed
 * module (exit 1, "2 of 3", left alone). With the program back at its path, the link is said and replaced by a
 * real copy (exit 0, "3 of 3", one file copied).
 */
static void test_pack_symlinked_entry(void **state)
{
	char dir[300], prog[300], elsewhere[300], cache[300], hex[2 * MT_BUILD_ID_MAX + 1], link[700], want[1200];
	char *pack[] = { MT_BINARY, "pack", dir, NULL };
	struct stat st;

	(void)state;
	snprintf(prog, sizeof(prog), "%s/sym_prog", tmp_root);
	snprintf(elsewhere, sizeof(elsewhere), "%s/sym_prog_elsewhere", tmp_root);
	snprintf(dir, sizeof(dir), "%s/symdir", tmp_root);
	snprintf(cache, sizeof(cache), "%s/sym-cache", tmp_root);
	run_sh("cp '%s' '%s'", PROG("stack_chain"), prog);
	record_root("sym_rec", dir, prog, cache);
	mt_test__build_id_hex(prog, hex);
	run_sh("mv '%s' '%s'", prog, elsewhere);
	run_sh("rm -rf '%s'%s", cache, "");
	snprintf(link, sizeof(link), "%s/modules", dir);
	assert_int_equal(mkdir(link, 0700), 0);
	snprintf(link, sizeof(link), "%s/modules/%s", dir, hex);
	assert_int_equal(symlink(elsewhere, link), 0);

	assert_int_equal(run_cache("sym_pack", cache, pack), 1);
	snprintf(want, sizeof(want), "%s: 2 modules of 3 in %s/modules (%d files copied now)\n", dir, dir,
		 2 + mt_test__system_debug(LIBC) + mt_test__system_debug(LD_SO));
	output_is("sym_pack", "out", want);
	snprintf(want, sizeof(want), "memtrack: pack: %s (build-id %s): not in %s/modules, the module cache or at its "
		 "path\n", prog, hex, dir);
	output_is("sym_pack", "err", want);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));

	run_sh("cp '%s' '%s'", elsewhere, prog);
	assert_int_equal(run_cache("sym_pack2", cache, pack), 0);
	snprintf(want, sizeof(want), "memtrack: pack: %s is not the module recorded (a symbolic link): replaced by %s\n",
		 link, prog);
	output_is("sym_pack2", "err", want);
	snprintf(want, sizeof(want), "%s: 3 modules of 3 in %s/modules (1 file copied now)\n", dir, dir);
	output_is("sym_pack2", "out", want);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
}

/* The size and allocated bytes of path, which must be sparse: all of size, at most SMALL_BLOCKS of it on disk. */
static void is_sparse(const char *path, off_t size)
{
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_size, size);
	if ((uint64_t)st.st_blocks * 512 > SMALL_BLOCKS)
		fprintf(stderr, "%s: %llu bytes on disk\n", path, (unsigned long long)st.st_blocks * 512);
	assert_true((uint64_t)st.st_blocks * 512 <= SMALL_BLOCKS);
}

/* A program with a 256 MiB hole at its end: its cache entry and pack's copy are as sparse (st_blocks small). */
static void test_pack_sparse(void **state)
{
	char dir[300], prog[300], cache[300], entry[700], hex[2 * MT_BUILD_ID_MAX + 1], want[900];
	char *pack[] = { MT_BINARY, "pack", dir, NULL };
	struct stat st;

	(void)state;
	snprintf(prog, sizeof(prog), "%s/sparse_prog", tmp_root);
	snprintf(dir, sizeof(dir), "%s/sparsedir", tmp_root);
	snprintf(cache, sizeof(cache), "%s/sparse-cache", tmp_root);
	run_sh("cp '%s' '%s'", PROG("stack_chain"), prog);
	assert_int_equal(stat(prog, &st), 0);
	assert_int_equal(truncate(prog, st.st_size + SPARSE_HOLE), 0);
	record_root("sparse_rec", dir, prog, cache);
	mt_test__build_id_hex(prog, hex);
	assert_int_equal(mt_modcache__entry(cache, hex, MT_MODCACHE_FILE, entry, sizeof(entry)), 0);
	is_sparse(entry, st.st_size + SPARSE_HOLE);
	assert_int_equal(run_cache("sparse_pack", cache, pack), 0);
	snprintf(want, sizeof(want), "%s: 3 modules of 3 in %s/modules (%d files copied now)\n", dir, dir,
		 3 + mt_test__system_debug(LIBC) + mt_test__system_debug(LD_SO));
	output_is("sparse_pack", "out", want);
	snprintf(entry, sizeof(entry), "%s/modules/%s", dir, hex);
	is_sparse(entry, st.st_size + SPARSE_HOLE);
	assert_int_equal(unlink(prog), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_only_withheld),
		cmocka_unit_test(test_forged_cache_entry),
		cmocka_unit_test(test_pack_withholds_unreadable),
		cmocka_unit_test(test_pack_symlinked_entry),
		cmocka_unit_test(test_filecopy_replaces),
		cmocka_unit_test(test_pack_sparse),
		cmocka_unit_test(test_rename_race),
	};

	return mt_test__main("boundary_modules", tests, sizeof(tests) / sizeof(tests[0]));
}
