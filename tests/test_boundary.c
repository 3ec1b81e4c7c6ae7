// SPDX-License-Identifier: GPL-2.0-only
/* test_boundary.c — integration: the privilege boundary (issue 29): what the command does in DIR never makes root
 * write, chown or wait on a file it did not make; readers refuse what is not a regular file; DIR, the control
 * directory and --pid leave nothing behind that blocks a retry. */
#include "kernel_test.h"

#include <fcntl.h>
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
#include "bpf/memtrack.h"
#include "common/elf.h"
#include "common/modcache.h"

#define tmp_root mt_test_root
#define TIMEOUT "20"		/* seconds: a reader that waits on a FIFO fails the test instead of hanging it */
#define VICTIM_TEXT "root's own\n"

static void test_path(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmp_root, name);
}

/* A root-owned file holding VICTIM_TEXT, mode mode. */
static void victim_make(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, VICTIM_TEXT, strlen(VICTIM_TEXT)), (ssize_t)strlen(VICTIM_TEXT));
	assert_int_equal(close(fd), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/* Still root's, mode mode, with VICTIM_TEXT and nothing else. */
static void victim_intact(const char *path, mode_t mode)
{
	char *text = mt_test__read_file(path);
	struct stat st;

	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_uid, 0);
	assert_int_equal(st.st_gid, 0);
	assert_int_equal(st.st_mode & 07777, mode);
	assert_string_equal(text, VICTIM_TEXT);
	free(text);
}

static void err_is(const char *name, const char *want)
{
	char err[4096];

	mt_test__read_named(name, "err", err, sizeof(err));
	assert_string_equal(err, want);
}

/* The test user can reach the scratch dir's entries (the command, run as it, works in DIR by its path). */
static const struct passwd *user_setup(void)
{
	gid_t extra;

	assert_int_equal(chmod(tmp_root, 0711), 0);
	return mt_test__user(&extra);
}

/* U1: the command links DIR/memory_metadata.json to a root-owned file; memtrack does not write through it. */
static void test_metadata_symlink(void **state)
{
	char dir[256], victim[256], script[700], want[600], link[300], target[300];
	char *argv[] = { MT_BINARY, "record", "-q", "--user", MT_TEST_USER, "-o", dir, "--", "/bin/sh", "-c", script,
			 NULL };
	const struct passwd *pw = user_setup();
	struct stat st;
	ssize_t n;

	(void)state;
	test_path(dir, sizeof(dir), "u1");
	test_path(victim, sizeof(victim), "u1_victim");
	victim_make(victim, 0644);
	snprintf(script, sizeof(script), "ln -s %s %s/memory_metadata.json", victim, dir);
	assert_int_equal(mt_test__run_named("u1", argv), 0);
	snprintf(want, sizeof(want), "memtrack: cannot write %s/memory_metadata.json: the command put something at "
		 "that name\n", dir);
	err_is("u1", want);
	victim_intact(victim, 0644);
	snprintf(link, sizeof(link), "%s/memory_metadata.json", dir);
	n = readlink(link, target, sizeof(target) - 1);
	assert_int_equal(n, (ssize_t)strlen(victim));
	target[n] = '\0';
	assert_string_equal(target, victim);
	snprintf(link, sizeof(link), "%s/events.mtz", dir);
	assert_int_equal(lstat(link, &st), 0);
	assert_int_equal(st.st_uid, pw->pw_uid);
	assert_int_equal(lstat(dir, &st), 0);
	assert_int_equal(st.st_uid, pw->pw_uid);
}

/* fs.protected_hardlinks, as it was before the test; U2 needs it 0 (the kernel's default), and puts it back. */
static char hardlinks_saved[16];

static void sysctl_write(const char *value)
{
	FILE *f = fopen("/proc/sys/fs/protected_hardlinks", "w");

	assert_non_null(f);
	assert_true(fputs(value, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static int hardlinks_off(void **state)
{
	char *old = mt_test__read_file("/proc/sys/fs/protected_hardlinks");

	(void)state;
	snprintf(hardlinks_saved, sizeof(hardlinks_saved), "%s", old);
	free(old);
	sysctl_write("0\n");
	return 0;
}

static int hardlinks_restore(void **state)
{
	(void)state;
	sysctl_write(hardlinks_saved);
	return 0;
}

/* U2: the command hardlinks a root-owned file into DIR: it stays root's, its content and mode as they were. */
static void test_hardlink_not_chowned(void **state)
{
	char dir[256], victim[256], script[700], linked[300];
	char *argv[] = { MT_BINARY, "record", "-q", "--user", MT_TEST_USER, "-o", dir, "--", "/bin/sh", "-c", script,
			 NULL };
	const struct passwd *pw = user_setup();
	struct stat st, vst;

	(void)state;
	test_path(dir, sizeof(dir), "u2");
	test_path(victim, sizeof(victim), "u2_victim");
	victim_make(victim, 0600);
	snprintf(script, sizeof(script), "ln %s %s/x", victim, dir);
	assert_int_equal(mt_test__run_named("u2", argv), 0);
	err_is("u2", "");
	victim_intact(victim, 0600);
	snprintf(linked, sizeof(linked), "%s/x", dir);
	assert_int_equal(lstat(linked, &st), 0);
	assert_int_equal(lstat(victim, &vst), 0);
	assert_int_equal(st.st_ino, vst.st_ino);	/* the very file the command linked, still root's */
	assert_int_equal(st.st_uid, 0);
	snprintf(linked, sizeof(linked), "%s/memory_metadata.json", dir);
	assert_int_equal(lstat(linked, &st), 0);
	assert_int_equal(st.st_uid, pw->pw_uid);
}

/* `memtrack record -q [--stacks ...] -o DIR -- alloc_ctor` as root, exit 0. */
static void record_plain(const char *dir, const char *name, const char *opt1, const char *opt2)
{
	char *argv[12] = { MT_BINARY, "record", "-q", "-o", (char *)dir };
	int i = 5;

	if (opt1)
		argv[i++] = (char *)opt1;
	if (opt2)
		argv[i++] = (char *)opt2;
	argv[i++] = "--";
	argv[i++] = PROG("alloc_ctor");
	assert_int_equal(mt_test__run_named(name, argv), 0);
}

/* file in dir replaced by a FIFO nobody writes to. */
static void fifo_plant(const char *dir, const char *file)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0644), 0);
}

/* `timeout TIMEOUT memtrack CMD DIR`: its exit code (124: it waited on the FIFO). */
static int reader_run(const char *name, const char *cmd, const char *dir)
{
	char *argv[] = { "/usr/bin/timeout", TIMEOUT, MT_BINARY, (char *)cmd, (char *)dir, NULL };

	return mt_test__run_named(name, argv);
}

/* A FIFO as DIR/events.mtz: report and dump refuse it in one line, exit 2, at once. */
static void test_fifo_events(void **state)
{
	char dir[256], want[700];

	(void)state;
	test_path(dir, sizeof(dir), "fifo_events");
	record_plain(dir, "fifo_events_rec", NULL, NULL);
	fifo_plant(dir, "events.mtz");
	snprintf(want, sizeof(want), "memtrack: %s: cannot read %s/events.mtz: not a regular file (a FIFO)\n", dir, dir);
	assert_int_equal(reader_run("fifo_events_report", "report", dir), 2);
	err_is("fifo_events_report", want);
	assert_int_equal(reader_run("fifo_events_dump", "dump", dir), 2);
	err_is("fifo_events_dump", want);
}

/* A FIFO as DIR/memory_metadata.json: the report is made without command lines, and says so in one line. */
static void test_fifo_metadata(void **state)
{
	char dir[256], want[700];

	(void)state;
	test_path(dir, sizeof(dir), "fifo_md");
	record_plain(dir, "fifo_md_rec", NULL, NULL);
	fifo_plant(dir, "memory_metadata.json");
	assert_int_equal(reader_run("fifo_md_report", "report", dir), 0);
	snprintf(want, sizeof(want), "memtrack: %s/memory_metadata.json: not a regular file: the rows have no command "
		 "lines\n", dir);
	err_is("fifo_md_report", want);
}

/* FIFOs as the program's DIR/modules entry and as DIR/unwind.mtz: refused in one line, the report made; pack
 * says the entry is no module and puts a copy in its place. */
static void test_fifo_modules(void **state)
{
	char dir[256], hex[2 * MT_BUILD_ID_MAX + 1], entry[400], want[1400], out[1400];
	struct stat st;

	(void)state;
	mt_test__build_id_hex(PROG("alloc_ctor"), hex);
	test_path(dir, sizeof(dir), "fifo_mod");
	record_plain(dir, "fifo_mod_rec", "--stacks", "--portable");
	snprintf(entry, sizeof(entry), "modules/%s", hex);
	fifo_plant(dir, entry);
	snprintf(entry, sizeof(entry), "%s/unwind.mtz", dir);
	assert_int_equal(mkfifo(entry, 0644), 0);
	assert_int_equal(reader_run("fifo_mod_report", "report", dir), 0);
	snprintf(want, sizeof(want), "memtrack: %s/unwind.mtz: not a regular file (a FIFO): not read, unwinding again\n"
		 "memtrack: %s/modules/%s: not a regular file (a FIFO): not read\n", dir, dir, hex);
	err_is("fifo_mod_report", want);
	assert_int_equal(lstat(entry, &st), 0);
	assert_true(S_ISREG(st.st_mode));	/* the chains unwound again, in its place */

	assert_int_equal(reader_run("fifo_mod_pack", "pack", dir), 0);
	snprintf(want, sizeof(want), "memtrack: %s/modules/%s: not a regular file (a FIFO): not read\n"
		 "memtrack: pack: %s/modules/%s is not the module recorded (not a regular file): replaced by %s\n", dir,
		 hex, dir, hex, PROG("alloc_ctor"));
	err_is("fifo_mod_pack", want);
	snprintf(want, sizeof(want), "%s: 3 modules of 3 in %s/modules (1 file copied now)\n", dir, dir);
	mt_test__read_named("fifo_mod_pack", "out", out, sizeof(out));
	assert_string_equal(out, want);
	snprintf(entry, sizeof(entry), "%s/modules/%s", dir, hex);
	assert_int_equal(lstat(entry, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

/*
 * DIR/unwind.mtz a symbolic link to a good unwind.mtz of this very recording: not followed (one line), the chains
 * unwound again and put in its place, the link's target untouched.
 */
static void test_unwind_symlink(void **state)
{
	char dir[256], link[300], target[300], want[700], *before, *after;
	char *unwind[] = { MT_BINARY, "unwind", dir, NULL };
	size_t len, len_after;
	struct stat st;

	(void)state;
	test_path(dir, sizeof(dir), "unwind_link");
	test_path(target, sizeof(target), "unwind_link_target.mtz");
	record_plain(dir, "unwind_link_rec", "--stacks", "--portable");
	assert_int_equal(mt_test__run_named("unwind_link_unwind", unwind), 0);
	snprintf(link, sizeof(link), "%s/unwind.mtz", dir);
	assert_int_equal(rename(link, target), 0);
	assert_int_equal(symlink(target, link), 0);
	before = mt_test__read_bytes(target, &len);
	assert_int_equal(reader_run("unwind_link_report", "report", dir), 0);
	snprintf(want, sizeof(want), "memtrack: %s: a symbolic link (not followed): not read, unwinding again\n", link);
	err_is("unwind_link_report", want);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	after = mt_test__read_bytes(target, &len_after);
	assert_int_equal(len_after, len);
	assert_memory_equal(before, after, len);
	free(before);
	free(after);
}

/* A FIFO as the program's entry in the module cache: refused in one line, the report made. */
static void test_fifo_cache(void **state)
{
	char dir[256], cache[256], hex[2 * MT_BUILD_ID_MAX + 1], entry[700], want[900];
	char *saved = strdup(getenv(MT_MODCACHE_ENV));

	(void)state;
	mt_test__build_id_hex(PROG("alloc_ctor"), hex);
	test_path(dir, sizeof(dir), "fifo_cache");
	test_path(cache, sizeof(cache), "fifo_cache_modules");
	setenv(MT_MODCACHE_ENV, cache, 1);
	record_plain(dir, "fifo_cache_rec", "--stacks", NULL);
	assert_int_equal(mt_modcache__entry(cache, hex, MT_MODCACHE_FILE, entry, sizeof(entry)), 0);
	assert_int_equal(unlink(entry), 0);
	assert_int_equal(mkfifo(entry, 0600), 0);
	assert_int_equal(reader_run("fifo_cache_report", "report", dir), 0);
	setenv(MT_MODCACHE_ENV, saved, 1);
	free(saved);
	snprintf(want, sizeof(want), "memtrack: %s: not a regular file (a FIFO): not read\n", entry);
	err_is("fifo_cache_report", want);
}

struct marks {
	unsigned int n;
	char labels[4][MT_MARK_LABEL_MAX + 1];
};

static int marks__on_record(const struct mt_rec_hdr *h, void *ctx)
{
	const struct mt_mark *k = (const void *)h;
	struct marks *m = ctx;

	if (h->type != MT_REC_MARK || k->kind != MT_MARK_LABEL || m->n >= 4)
		return 0;
	snprintf(m->labels[m->n++], sizeof(m->labels[0]), "%.*s", (int)k->len, k->label);
	return 0;
}

/* A mark label of 70 bytes is a line past the limits: not recorded (not cut to 64), and counted; 64 bytes are kept. */
static void test_mark_label_limit(void **state)
{
	char dir[256], script[600], events[300], l64[65], l70[71];
	char *argv[] = { MT_BINARY, "record", "-q", "-o", dir, "--", "/bin/sh", "-c", script, NULL };
	struct mt_read_status st;
	struct marks m = { 0 };

	(void)state;
	memset(l64, 'a', 64);
	l64[64] = '\0';
	memset(l70, 'b', 70);
	l70[70] = '\0';
	test_path(dir, sizeof(dir), "mark_label");
	snprintf(script, sizeof(script), "echo 'mark %s' > \"$MEMTRACK_CONTROL\"; echo 'mark %s' > \"$MEMTRACK_CONTROL\"",
		 l70, l64);
	assert_int_equal(mt_test__run_named("mark_label", argv), 0);
	snprintf(events, sizeof(events), "%s/events.mtz", dir);
	assert_int_equal(mt_artifact__read(events, marks__on_record, &m, &st), 0);
	assert_int_equal(m.n, 1);
	assert_string_equal(m.labels[0], l64);
	err_is("mark_label", "memtrack: 1 line written to $MEMTRACK_CONTROL was not acted on: not `start`, `stop` or "
	       "`mark LABEL`, in a write over 256 bytes, or past the first 8 lines of one write\n");
}

/* memtrack killed (SIGKILL) while the command runs: its closer removes the control FIFO and its directory. */
static void test_control_dir_after_kill(void **state)
{
	char dir[256], named[256], script[1200], *text, *control, *slash;
	char *argv[] = { MT_BINARY, "record", "-q", "-o", dir, "--", "/bin/sh", "-c", script, NULL };
	struct stat st;
	pid_t pid;
	int i;

	(void)state;
	test_path(dir, sizeof(dir), "control_kill");
	test_path(named, sizeof(named), "control_kill.path");
	snprintf(script, sizeof(script), "echo \"$$ $MEMTRACK_CONTROL\" > %s.tmp; mv %s.tmp %s; exec sleep 60", named,
		 named, named);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execv(argv[0], argv);
		_exit(127);
	}
	for (i = 0; i < 2000 && access(named, F_OK); i++)
		usleep(10000);
	text = mt_test__read_file(named);
	text[strcspn(text, "\n")] = '\0';
	control = strchr(text, ' ') + 1;
	assert_int_equal(stat(control, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	kill(atoi(text), SIGKILL);	/* the command, untraced now */
	slash = strrchr(control, '/');
	*slash = '\0';		/* the directory: gone once the closer has seen memtrack go */
	for (i = 0; i < 1000 && !access(control, F_OK); i++)
		usleep(10000);
	assert_int_equal(access(control, F_OK), -1);
	free(text);
}

/* pid is a zombie, within 10 s. */
static bool zombie_wait(pid_t pid)
{
	char path[64], line[256];
	bool zombie = false;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	for (i = 0; i < 10000 && !zombie; i++) {
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			zombie = zombie || !strncmp(line, "State:\tZ", 8);
		if (f)
			fclose(f);
		if (!zombie)
			usleep(1000);
	}
	return zombie;
}

/* record --pid of a zombie: one line that says so, exit 2, no DIR. */
static void test_pid_zombie(void **state)
{
	char dir[256], pid_s[16], want[300];
	char *argv[] = { MT_BINARY, "record", "-q", "--pid", pid_s, "-o", dir, NULL };
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (!pid)
		_exit(0);
	assert_true(zombie_wait(pid));	/* a zombie until waited for: the test is its parent */
	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	test_path(dir, sizeof(dir), "pid_zombie");
	assert_int_equal(mt_test__run_named("pid_zombie", argv), 2);
	snprintf(want, sizeof(want), "memtrack: cannot attach to %d: process %d is a zombie (it exited; its parent has "
		 "not reaped it)\n", pid, pid);
	err_is("pid_zombie", want);
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/*
 * --pid of a process that exits while memtrack attaches: memtrack stops itself just before the seize
 * (MEMTRACK_TEST_ATTACH_STOP), the target is killed and reaped meanwhile, then memtrack goes on: exit 2, the one
 * line, and no DIR left.
 */
static void test_pid_exits_during_attach(void **state)
{
	char dir[256], pid_s[16], want[300], out[300], err[300];
	char *argv[] = { MT_BINARY, "record", "-q", "--pid", pid_s, "-o", dir, NULL };
	pid_t pid = fork(), mt;
	int status;

	(void)state;
	assert_true(pid >= 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	snprintf(pid_s, sizeof(pid_s), "%d", pid);
	test_path(dir, sizeof(dir), "pid_exits");
	test_path(out, sizeof(out), "pid_exits.out");
	test_path(err, sizeof(err), "pid_exits.err");
	assert_int_equal(setenv("MEMTRACK_TEST_ATTACH_STOP", "1", 1), 0);
	mt = mt_test__spawn(argv, out, err);
	assert_int_equal(unsetenv("MEMTRACK_TEST_ATTACH_STOP"), 0);
	assert_int_equal(waitpid(mt, &status, WUNTRACED), mt);
	assert_true(WIFSTOPPED(status));
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(kill(mt, SIGCONT), 0);
	assert_int_equal(mt_test__wait_code(mt), 2);
	snprintf(want, sizeof(want), "memtrack: cannot attach to %d: process %d exited\n", pid, pid);
	err_is("pid_exits", want);
	assert_int_equal(access(dir, F_OK), -1);
}

/*
 * A SIGTERM during the BPF load ends memtrack, as it did before the command was forked first: memtrack stops itself
 * just before the load (MEMTRACK_TEST_LOAD_STOP), its one child the command, forked and not yet run; the SIGTERM
 * comes while it is stopped. memtrack dies of it, the command dies with it (PR_SET_PDEATHSIG) without running, and
 * the DIR memtrack made before the load is left empty, for a retry.
 */
static void test_term_during_load(void **state)
{
	char dir[256], out[300], err[300], children[64];
	char *argv[] = { MT_BINARY, "record", "-q", "-o", dir, "--", "/bin/true", NULL };
	pid_t mt, child = 0;
	int status, i;
	FILE *f;

	(void)state;
	test_path(dir, sizeof(dir), "term_load");
	test_path(out, sizeof(out), "term_load.out");
	test_path(err, sizeof(err), "term_load.err");
	assert_int_equal(setenv("MEMTRACK_TEST_LOAD_STOP", "1", 1), 0);
	mt = mt_test__spawn(argv, out, err);
	assert_int_equal(unsetenv("MEMTRACK_TEST_LOAD_STOP"), 0);
	assert_int_equal(waitpid(mt, &status, WUNTRACED), mt);
	assert_true(WIFSTOPPED(status));
	snprintf(children, sizeof(children), "/proc/%d/task/%d/children", mt, mt);
	f = fopen(children, "re");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &child), 1);	/* the closer is a grandchild: the command alone */
	fclose(f);
	assert_int_equal(kill(mt, SIGTERM), 0);
	assert_int_equal(kill(mt, SIGCONT), 0);
	assert_int_equal(waitpid(mt, &status, 0), mt);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGTERM);
	for (i = 0; i < 500 && !kill(child, 0); i++)	/* reaped by init once the SIGKILL of its parent's death lands */
		usleep(10000);
	assert_int_equal(kill(child, 0), -1);
	err_is("term_load", "");
	assert_int_equal(rmdir(dir), 0);	/* there, and empty */
}

/* A command that cannot be run: exit 127 or 126 with the reason, and nothing of memtrack's left in DIR: the DIR it
 * made goes, a DIR that was there stays, empty. */
static void test_exec_failure(void **state)
{
	char dir[256], kept[256], want[600], noexec[300];
	char *argv[] = { MT_BINARY, "record", "-q", "-o", dir, "--", "/nonexistent/prog", NULL };
	char *argv2[] = { MT_BINARY, "record", "-q", "-o", kept, "--", noexec, NULL };

	(void)state;
	test_path(dir, sizeof(dir), "exec_fail");
	assert_int_equal(mt_test__run_named("exec_fail", argv), 127);
	err_is("exec_fail", "memtrack: cannot run '/nonexistent/prog': No such file or directory\n");
	assert_int_equal(access(dir, F_OK), -1);
	assert_int_equal(mt_test__run_named("exec_fail_retry", argv), 127);	/* not "exists and is not empty" */
	err_is("exec_fail_retry", "memtrack: cannot run '/nonexistent/prog': No such file or directory\n");

	test_path(kept, sizeof(kept), "exec_fail_kept");
	test_path(noexec, sizeof(noexec), "exec_fail_kept.txt");	/* a file without the execute bit */
	victim_make(noexec, 0644);
	assert_int_equal(mkdir(kept, 0755), 0);
	assert_int_equal(mt_test__run_named("exec_fail_kept", argv2), 126);
	snprintf(want, sizeof(want), "memtrack: cannot run '%s': Permission denied\n", noexec);
	err_is("exec_fail_kept", want);
	assert_int_equal(mt_test__dir_entries(kept), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metadata_symlink),
		cmocka_unit_test_setup_teardown(test_hardlink_not_chowned, hardlinks_off, hardlinks_restore),
		cmocka_unit_test(test_fifo_events),
		cmocka_unit_test(test_fifo_metadata),
		cmocka_unit_test(test_fifo_modules),
		cmocka_unit_test(test_fifo_cache),
		cmocka_unit_test(test_unwind_symlink),
		cmocka_unit_test(test_mark_label_limit),
		cmocka_unit_test(test_control_dir_after_kill),
		cmocka_unit_test(test_pid_zombie),
		cmocka_unit_test(test_pid_exits_during_attach),
		cmocka_unit_test(test_term_during_load),
		cmocka_unit_test(test_exec_failure),
	};

	return mt_test__main("test_boundary", tests, sizeof(tests) / sizeof(tests[0]));
}
