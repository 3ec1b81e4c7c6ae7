// SPDX-License-Identifier: GPL-2.0-only
/* rss_credit.c — resident memory at known points: a parent touches pages and forks a child that touches more and
 * reads a file, then pages out the sleeping child's file pages with process_madvise. Prints each point's counters. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ANON_PAGES 600	/* the parent's, copied into the child at the fork */
#define MORE_PAGES 300	/* the child's own */
#define FILE_PAGES 512	/* a file the child maps and reads, which the parent pages out */
#define MARKS 8		/* pages, one touched at each point, so that each point changes the counters */
#define MARK_WARM 1000	/* malloc sizes: one to warm the heap's chunk up, then one per point (test_rss.c) */
#define MARK_P1 1001
#define MARK_C1 1002
#define MARK_C2 1003

/* /proc/PID/status's RssAnon, RssFile, RssShmem and smaps_rollup's Rss, in kB, of pid at a point. */
struct point {
	const char *name;
	long pid;
	unsigned long anon, file, shmem, rss;
};

static struct point points[3];
static int npoints;
static char text[16384];	/* a /proc file's text: static, touched before the first point, so reading it
				 * changes no counter */
static long page;

static unsigned long field(const char *key)
{
	const char *at = strstr(text, key);

	return at ? strtoul(at + strlen(key), NULL, 10) : ~0ul;
}

static int slurp(long pid, const char *name)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/%s", pid, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	return n > 0 ? 0 : -1;
}

static int snapshot(struct point *p, const char *name, long pid)
{
	p->name = name;
	p->pid = pid;
	if (slurp(pid, "status"))
		return -1;
	p->anon = field("RssAnon:");
	p->file = field("RssFile:");
	p->shmem = field("RssShmem:");
	if (slurp(pid, "smaps_rollup"))
		return -1;
	p->rss = field("\nRss:");
	return 0;
}

static void nap(void)
{
	struct timespec t = { 0, 150 * 1000 * 1000 };	/* more than MT_RSS_PERIOD_NS */

	nanosleep(&t, NULL);
}

/* A point: the counters still since the last change, then one page more (a period record of them all), then read
 * and marked by a malloc of mark bytes. A first reading faults in the code that reads (a fork child maps its
 * program's text anew), so that the second changes nothing. */
static int point(const char *name, volatile char *markpage, size_t mark)
{
	struct point *p = &points[npoints++];

	if (snapshot(p, name, getpid()))
		return -1;
	nap();
	*markpage = 1;
	if (snapshot(p, name, getpid()))
		return -1;
	free(malloc(mark));
	return 0;
}

/* The points from the first this process took (a fork child has its parent's too). */
static void print_points(int first)
{
	for (int i = first; i < npoints; i++)
		dprintf(1, "%s %ld %lu %lu %lu %lu\n", points[i].name, points[i].pid, points[i].anon, points[i].file,
			points[i].shmem, points[i].rss);
}

static void touch(volatile char *p, size_t pages)
{
	for (size_t i = 0; i < pages; i++)
		p[i * page] = 1;
}

static char *map_file(const char *dir, const char *name, size_t pages)
{
	char path[4096];
	char *p;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return NULL;
	memset(text, 'f', sizeof(text));
	for (size_t done = 0; done < pages * page; done += sizeof(text))
		if (write(fd, text, sizeof(text)) != (ssize_t)sizeof(text))
			return NULL;
	fdatasync(fd);	/* clean: a page-out drops the pages, never writes them */
	p = mmap(NULL, pages * page, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static int read_file(const volatile char *p, size_t pages)
{
	int sum = 0;

	for (size_t i = 0; i < pages; i++)
		sum += p[i * page];
	return sum;
}

static int pageout(int pidfd, void *p, size_t pages)
{
	struct iovec iov = { p, pages * page };

	return syscall(SYS_process_madvise, pidfd, &iov, 1, MADV_PAGEOUT, 0) == (long)iov.iov_len ? 0 : -1;
}

/* The child: its own pages and the file's, a point, then asleep until its parent has paged the file out. */
static int child(char *more, char *marks, char *file, char *one, int ready, int go)
{
	char c = 0;

	touch(more, MORE_PAGES);
	if (read_file(file, FILE_PAGES) + read_file(one, 1) == 0 || point("C1", marks + page, MARK_C1))
		return 1;
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		return 1;
	print_points(npoints - 1);
	return 0;
}

/* The parent, once the child sleeps: the file's pages out of the child, then one page more after a pause (a
 * period record of them all, made in the parent's context), the child's counters, and the mark. */
static int parent(pid_t pid, int ready, int go, char *file, char *one)
{
	int pidfd, status;
	char c = 0;

	if (read(ready, &c, 1) != 1)
		return 1;
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0 || pageout(pidfd, file, FILE_PAGES))
		return 1;
	nap();
	if (pageout(pidfd, one, 1) || snapshot(&points[npoints++], "C2", pid))
		return 1;
	free(malloc(MARK_C2));
	if (write(go, &c, 1) != 1 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	print_points(0);
	return 0;
}

int main(int argc, char **argv)
{
	char *anon, *more, *marks, *file, *one;
	int ready[2], go[2];
	pid_t pid;

	page = sysconf(_SC_PAGESIZE);
	if (argc != 2)
		return 2;
	free(malloc(MARK_WARM));	/* the chunk each mark's malloc takes again */
	anon = mmap(NULL, (ANON_PAGES + MORE_PAGES + MARKS) * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	file = map_file(argv[1], "rss_credit.file", FILE_PAGES);
	one = map_file(argv[1], "rss_credit.one", 1);
	if (anon == MAP_FAILED || !file || !one || pipe(ready) || pipe(go))
		return 1;
	more = anon + ANON_PAGES * page;
	marks = more + MORE_PAGES * page;
	touch(anon, ANON_PAGES);
	if (point("P1", marks, MARK_P1))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		return child(more, marks, file, one, ready[1], go[0]);
	return parent(pid, ready[0], go[1], file, one);
}
