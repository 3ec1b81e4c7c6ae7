// SPDX-License-Identifier: GPL-2.0-only
/* test_privstacks.c — integration: with --stacks and --user, a setuid program's stack bytes stay out of the artifact. */
#include "kernel_test.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "artifact/artifact.h"
#include "model/model.h"

#define SITES 2			/* priv_stack's call sites: one path each */
#define MARK_LEN 40

/* The run's files: the setuid copy of priv_stack, a plain copy, the secret (root's, 0600) and a public file. */
struct priv_run {
	char dir[512];
	char setuid_exe[512], plain_exe[512];
	char secret[MARK_LEN + 1], public[MARK_LEN + 1];	/* the files' contents: markers to look for */
	pid_t setuid_pid, plain_pid;
};

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void copy_exe(const char *to, mode_t mode)
{
	char *argv[] = { "/bin/cp", PROG("priv_stack"), (char *)to, NULL };

	assert_int_equal(mt_test__run(argv, NULL, NULL), 0);
	assert_int_equal(chown(to, 0, 0), 0);
	assert_int_equal(chmod(to, mode), 0);	/* after the chown, which clears the setuid bit */
}

static void priv_names(struct priv_run *r, const char *bin)
{
	snprintf(r->setuid_exe, sizeof(r->setuid_exe), "%s/priv_setuid", bin);
	snprintf(r->plain_exe, sizeof(r->plain_exe), "%s/priv_plain", bin);
	snprintf(r->secret, sizeof(r->secret), "MT-SECRET-%08x-%021d", (unsigned int)getpid() * 2654435761u, 7);
	snprintf(r->public, sizeof(r->public), "MT-PUBLIC-%08x-%021d", (unsigned int)getpid() * 2654435761u, 7);
}

/* The scratch dir is 0700: nobody may pass it (0711) to run the copies in a 0755 directory of root's. */
static void priv_setup(struct priv_run *r, const char *name)
{
	char bin[256], path[600];

	assert_int_equal(chmod(mt_test_root, 0711), 0);
	snprintf(bin, sizeof(bin), "%s/privbin", mt_test_root);
	snprintf(r->dir, sizeof(r->dir), "%s/%s", mt_test_root, name);
	if (mkdir(bin, 0755) && errno == EEXIST) {	/* an earlier test's */
		priv_names(r, bin);
		return;
	}
	priv_names(r, bin);
	copy_exe(r->setuid_exe, 04755);
	copy_exe(r->plain_exe, 0755);
	snprintf(path, sizeof(path), "%s/secret", bin);
	write_file(path, r->secret, 0600);
	snprintf(path, sizeof(path), "%s/public", bin);
	write_file(path, r->public, 0644);
}

/* The setuid copy reads the secret (exit 0 only if it could: it ran as root), then the plain one the public file;
 * as nobody, or as memtrack's own user (root) when user is NULL. */
static void priv_record(struct priv_run *r, const char *user)
{
	char cmd[2048];
	char *argv[] = { MT_BINARY, "record", "-q", "--stacks", "-o", r->dir, "--user", (char *)user, "--", "/bin/sh",
			 "-c", cmd, NULL };

	if (!user)
		memmove(&argv[6], &argv[8], 5 * sizeof(argv[0]));	/* no --user */
	snprintf(cmd, sizeof(cmd), "%s %s/privbin/secret && %s %s/privbin/public", r->setuid_exe, mt_test_root,
		 r->plain_exe, mt_test_root);
	assert_int_equal(mt_test__run_named("privstacks_record", argv), 0);
}

static const struct mt_image *image_of(const struct mt_model *m, const char *exe)
{
	const struct mt_image *found = NULL;
	size_t i;

	for (i = 0; i < mt_model__nr_images(m); i++)
		if (!strcmp(mt_model__image(m, i)->exe, exe)) {
			assert_null(found);
			found = mt_model__image(m, i);
		}
	assert_non_null(found);
	return found;
}

/* Each copy: 5 allocations (7000 bytes), all freed. Returns the call paths withheld. */
static uint64_t check_model(struct priv_run *r)
{
	uint64_t withheld;
	const struct mt_image *img[2];
	struct mt_model *m = NULL;
	int i;

	assert_int_equal(mt_model__load(r->dir, &m, NULL), 0);
	img[0] = image_of(m, r->setuid_exe);
	img[1] = image_of(m, r->plain_exe);
	for (i = 0; i < 2; i++) {
		assert_int_equal(img[i]->heap.allocations, 5);
		assert_int_equal(img[i]->heap.allocated_bytes, 7000);
		assert_int_equal(img[i]->heap.frees, 5);
		assert_int_equal(img[i]->heap.unknown_frees, 0);
	}
	r->setuid_pid = img[0]->pid;
	r->plain_pid = img[1]->pid;
	withheld = mt_model__totals(m)->stacks_withheld;
	mt_model__free(m);
	return withheld;
}

/* record --pid: the process's 5 allocations after the attach, all freed, its 2 call paths withheld. */
static void check_pid_model(struct priv_run *r, pid_t target)
{
	const struct mt_proc *p;
	struct mt_model *m = NULL;

	assert_int_equal(mt_model__load(r->dir, &m, NULL), 0);
	p = mt_model__find_proc(m, target);
	assert_non_null(p);
	assert_int_equal(p->heap.allocations, 5);
	assert_int_equal(p->heap.allocated_bytes, 7000);
	assert_int_equal(p->heap.frees, 5);
	assert_int_equal(mt_model__totals(m)->stacks_withheld, SITES);
	mt_model__free(m);
}

#define MAP_PATHS_MAX 64

/* The stack definitions of the two copies' images (after their exec records; before, the pid was the shell's
 * child): how many, withheld or not, whose raw bytes hold the public marker; and the distinct call paths of the
 * setuid copy's mapping calls (the loader's and libc's mmaps: with --stacks they have call paths too). */
struct defs {
	const struct priv_run *r;
	bool setuid_exec, plain_exec;	/* its exec record was read */
	unsigned int setuid_defs, setuid_withheld, setuid_clean, setuid_nfp[SITES];
	unsigned int plain_defs, plain_withheld, plain_marked, plain_nfp[SITES];
	uint64_t map_paths[MAP_PATHS_MAX];
	unsigned int nmap_paths;
};

/* A mapping call of the setuid copy's with a call path: its path, once. */
static void defs_map_path(struct defs *d, const struct mt_syscall *sc)
{
	unsigned int i;

	for (i = 0; i < d->nmap_paths; i++)
		if (d->map_paths[i] == sc->stack)
			return;
	assert_true(d->nmap_paths < MAP_PATHS_MAX);
	d->map_paths[d->nmap_paths++] = sc->stack;
}

/* A withheld definition: no bytes, and no register but ip; the FP chain, then the kernel's chain (code addresses). */
static bool stack_clean(const struct mt_stack *s)
{
	const struct mt_kchain *k = (const void *)((const char *)(s + 1) + s->nfp * 8);
	size_t size = sizeof(*s) + s->nfp * 8;
	int i;

	for (i = 0; i < MT_REG__COUNT; i++)
		if (i != MT_REG_IP && s->regs[i])
			return false;
	if (s->flags & MT_STACK_F_KCHAIN)
		size += sizeof(*k) + k->n * 8;
	return s->nbytes == 0 && s->hdr.size == size;
}

static int defs_record(const struct mt_rec_hdr *rec, void *ctx)
{
	const struct mt_stack *s = (const struct mt_stack *)rec;
	const void *raw = (const char *)(s + 1) + s->nfp * 8;
	struct defs *d = ctx;

	if (rec->type == MT_REC_EXEC) {
		d->setuid_exec |= rec->pid == (uint32_t)d->r->setuid_pid;
		d->plain_exec |= rec->pid == (uint32_t)d->r->plain_pid;
	}
	if (rec->type == MT_REC_SYSCALL && rec->size >= sizeof(struct mt_syscall) &&
	    rec->pid == (uint32_t)d->r->setuid_pid && d->setuid_exec && ((const struct mt_syscall *)rec)->stack)
		defs_map_path(d, (const struct mt_syscall *)rec);
	if (rec->type != MT_REC_STACK)
		return 0;
	if (rec->pid == (uint32_t)d->r->setuid_pid && d->setuid_exec) {
		if (d->setuid_defs < SITES)
			d->setuid_nfp[d->setuid_defs] = s->nfp;
		d->setuid_defs++;
		d->setuid_withheld += (s->truncated & MT_STACK_WITHHELD) != 0;
		d->setuid_clean += stack_clean(s);
	} else if (rec->pid == (uint32_t)d->r->plain_pid && d->plain_exec) {
		if (d->plain_defs < SITES)
			d->plain_nfp[d->plain_defs] = s->nfp;
		d->plain_defs++;
		d->plain_withheld += (s->truncated & MT_STACK_WITHHELD) != 0;
		d->plain_marked += memmem(raw, s->nbytes, d->r->public, MARK_LEN) != NULL;
	}
	return 0;
}

/* Every definition of the setuid copy withheld and clean, none of the plain copy's; returns how many. */
static unsigned int check_definitions(const struct priv_run *r)
{
	struct defs d = { .r = r };
	struct mt_read_status st;

	assert_int_equal(mt_artifact__read(r->dir, defs_record, &d, &st), 0);
	assert_int_equal(d.setuid_defs, SITES + d.nmap_paths);	/* its two sites and its mapping calls' paths */
	assert_int_equal(d.setuid_withheld, d.setuid_defs);
	assert_int_equal(d.setuid_clean, d.setuid_defs);
	assert_int_equal(d.plain_defs, d.setuid_defs);	/* the same program: the same paths */
	assert_int_equal(d.plain_withheld, 0);
	assert_int_equal(d.plain_marked, SITES);	/* the plain copy's sites kept, its file's bytes in them */
	/* the chain of code addresses is the whole chain: main's frame and the site's, the same as the plain copy's */
	assert_int_equal(d.setuid_nfp[0], d.plain_nfp[0]);
	assert_int_equal(d.setuid_nfp[1], d.plain_nfp[1]);
	return d.setuid_defs;
}

/* Looked for in every file under DIR, .mtz ones decompressed (by zstd, not memtrack's reader). */
static const struct priv_run *scan_run;
static unsigned int scan_secret, scan_public, scan_files;

static void scan_bytes(const char *path)
{
	struct stat st;
	char *buf;

	assert_int_equal(stat(path, &st), 0);
	buf = mt_test__read_file(path);
	scan_secret += memmem(buf, st.st_size, scan_run->secret, MARK_LEN) != NULL;
	scan_public += memmem(buf, st.st_size, scan_run->public, MARK_LEN) != NULL;
	free(buf);
}

/* An .mtz file's zstd frames (after its header, docs/FORMAT.md) decompressed by zstd(1), then scanned. */
static void scan_mtz(const char *path, const struct stat *st)
{
	char frames[600], plain[600];
	char *argv[] = { "/usr/bin/zstd", "-dqf", frames, "-o", plain, NULL };
	char *buf = mt_test__read_file(path);
	uint32_t hdr;
	int fd;

	snprintf(frames, sizeof(frames), "%s/scan.zst", mt_test_root);
	snprintf(plain, sizeof(plain), "%s/scan.plain", mt_test_root);
	assert_true(st->st_size >= 16 && !memcmp(buf, "MEMTRACK", 8));
	memcpy(&hdr, buf + 12, sizeof(hdr));
	assert_true(hdr <= st->st_size);
	fd = open(frames, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf + hdr, st->st_size - hdr), st->st_size - hdr);
	close(fd);
	free(buf);
	assert_int_equal(mt_test__run(argv, NULL, NULL), 0);
	scan_bytes(plain);
	unlink(frames);
	unlink(plain);
}

static int scan_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	size_t len = strlen(path);

	(void)ftw;
	if (type != FTW_F)
		return 0;
	scan_files++;
	scan_bytes(path);
	if (len > 4 && !strcmp(path + len - 4, ".mtz"))
		scan_mtz(path, st);
	return 0;
}

/* expect_public: files holding the public file's bytes (the decompressed events, when the plain copy ran): the
 * search would have found the secret's. */
static void check_no_secret(const struct priv_run *r, unsigned int expect_public)
{
	scan_run = r;
	scan_secret = scan_public = scan_files = 0;
	assert_int_equal(nftw(r->dir, scan_file, 8, FTW_PHYS), 0);
	assert_true(scan_files >= 2);	/* events.mtz and memory_metadata.json at least */
	assert_int_equal(scan_secret, 0);
	assert_int_equal(scan_public, expect_public);
}

static void check_reports(const struct priv_run *r, unsigned int withheld)
{
	char text[16384], json[65536], want_text[80], want_json[80];
	char *text_argv[] = { MT_BINARY, "report", (char *)r->dir, NULL };
	char *json_argv[] = { MT_BINARY, "report", "--json", (char *)r->dir, NULL };

	assert_int_equal(mt_test__run_named("privstacks_text", text_argv), 0);
	mt_test__read_named("privstacks_text", "out", text, sizeof(text));
	snprintf(want_text, sizeof(want_text), "\n  stacks withheld:    %u (privileged process: ", withheld);
	assert_non_null(strstr(text, want_text));
	assert_int_equal(mt_test__run_named("privstacks_json", json_argv), 0);
	mt_test__read_named("privstacks_json", "out", json, sizeof(json));
	snprintf(want_json, sizeof(want_json), "\"stacks_withheld\": %u,", withheld);
	assert_non_null(strstr(json, want_json));
}

/*
 * A setuid-root copy of priv_stack reads a root-only file onto its stack and allocates; a plain copy, its sibling
 * under one shell, does the same with a public file. Recorded --stacks --user nobody: the artifact is nobody's, so
 * the setuid copy's stacks are withheld (FP chain only) while its allocations count, and the plain copy's stay whole.
 */
static void test_setuid_withheld(void **state)
{
	struct priv_run r = { 0 };
	uint64_t withheld;
	unsigned int defs;

	(void)state;
	if (!getpwnam("nobody"))
		skip();
	priv_setup(&r, "privstacks");
	priv_record(&r, "nobody");
	withheld = check_model(&r);
	defs = check_definitions(&r);
	assert_int_equal(withheld, defs);	/* every call path of the setuid copy's, none other */
	check_no_secret(&r, 1);
	check_reports(&r, defs);
}

/* Recorded as root (no --user, no sudo): the artifact is root's, and nothing is withheld. */
static void test_root_keeps(void **state)
{
	char json[65536];
	char *json_argv[] = { MT_BINARY, "report", "--json", NULL, NULL };
	struct priv_run r = { 0 };

	(void)state;
	priv_setup(&r, "privroot");
	assert_int_equal(unsetenv("SUDO_UID") || unsetenv("SUDO_GID"), 0);
	priv_record(&r, NULL);
	assert_int_equal(check_model(&r), 0);
	json_argv[3] = r.dir;
	assert_int_equal(mt_test__run_named("privroot_json", json_argv), 0);
	mt_test__read_named("privroot_json", "out", json, sizeof(json));
	assert_non_null(strstr(json, "\"stacks_withheld\": 0,"));
}

/*
 * record --pid of the setuid copy, run by nobody, that has read the secret and waits: under sudo by nobody
 * (SUDO_UID) the artifact is nobody's, and the process was privileged when memtrack attached: its 2 paths withheld.
 */
static void test_pid_withheld(void **state)
{
	char ready[600], err[600], pid[16];
	char *prog[] = { "/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", NULL, NULL, ready,
			 NULL };
	char *rec[] = { MT_BINARY, "record", "-q", "--stacks", "--pid", pid, "-o", NULL, NULL };
	struct priv_run r = { 0 };
	struct passwd *pw = getpwnam("nobody");
	char secret[600], ids[16];
	pid_t target, memtrack;

	(void)state;
	if (!pw)
		skip();
	priv_setup(&r, "privpid");
	snprintf(secret, sizeof(secret), "%s/privbin/secret", mt_test_root);
	snprintf(ready, sizeof(ready), "%s/privpid.ready", mt_test_root);
	snprintf(err, sizeof(err), "%s/privpid.err", mt_test_root);
	prog[4] = r.setuid_exe;
	prog[5] = secret;
	rec[7] = r.dir;
	target = mt_test__spawn(prog, "/dev/null", NULL);
	mt_test__wait_for(ready, "");
	snprintf(pid, sizeof(pid), "%d", target);
	snprintf(ids, sizeof(ids), "%u", (unsigned int)pw->pw_uid);
	assert_int_equal(setenv("SUDO_UID", ids, 1), 0);
	snprintf(ids, sizeof(ids), "%u", (unsigned int)pw->pw_gid);
	assert_int_equal(setenv("SUDO_GID", ids, 1), 0);
	memtrack = mt_test__spawn(rec, "/dev/null", err);
	assert_int_equal(unsetenv("SUDO_UID") || unsetenv("SUDO_GID"), 0);
	mt_test__wait_for(err, "attached");
	assert_int_equal(kill(target, SIGUSR1), 0);
	assert_int_equal(mt_test__wait_code(target), 0);
	assert_int_equal(mt_test__wait_code(memtrack), 0);
	check_pid_model(&r, target);
	check_no_secret(&r, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_setuid_withheld),
		cmocka_unit_test(test_root_keeps),
		cmocka_unit_test(test_pid_withheld),
	};

	return mt_test__main("privstacks", tests, sizeof(tests) / sizeof(tests[0]));
}
