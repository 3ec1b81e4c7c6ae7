/* report.c — `memtrack report`: its options and exit status; the printing is src/report/report.c */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "cli/commands.h"
#include "common/args.h"
#include "common/log.h"
#include "report/report.h"
#include "report/sites.h"

struct report_args {
	bool json;
	bool attach;
	bool full_paths;
	bool sites_given;
	size_t top;
	const char *dir;
};

#define REPORT_USAGE "memtrack report [--json] [--attach | --sites N] DIR"

/* Loads the artifact's stacks and ranks its sites; NULL (after an error message) when that fails. */
static struct mt_sites *report_sites(const struct report_args *a, int *ret)
{
	struct mt_stacks_opts opts = { .full_paths = a->full_paths };
	struct mt_read_status st;
	struct mt_stacks *s;
	struct mt_sites *sites;
	int err;

	*ret = 0;
	err = mt_stacks__load(a->dir, &opts, &s, &st);
	if (!s) {
		pr_err("%s: stacks: %s\n", a->dir, st.reason[0] ? st.reason : strerror(-err));
		*ret = err;
		return NULL;
	}
	sites = mt_sites__build(s);
	if (!sites) {
		*ret = -errno;
		pr_err("%s: stacks: %s\n", a->dir, strerror(errno));
	}
	mt_stacks__free(s);
	return sites;
}

static void report_usage(FILE *f)
{
	fputs("usage: memtrack report [--json] [--sites N] [--full-paths] DIR\n"
	      "       memtrack report --attach [--json] DIR\n"
	      "Heap allocation statistics of a recorded run: totals, then one row per process, then (recorded with\n"
	      "--stacks) the top allocation sites by bytes and by count.\n"
	      "  --json        one JSON object {\"totals\", \"processes\", \"sites\"} instead of text\n"
	      "  --sites N     sites in each ranking (default 10; 0 leaves the section out)\n"
	      "  --full-paths  source files by their whole path, not relative to their compilation directory\n"
	      "  --attach      the attach log instead: each file looked at, its probes, how long its thread was held\n"
	      "                (with --json: {\"attach\": [...]}, the records as `memtrack dump` prints them)\n"
	      "  -h, --help    this text\n"
	      "Exit status: 0; 1 when DIR is damaged (the report covers the records before the damage);\n"
	      "2 when DIR cannot be read or the command line is wrong.\n", f);
}

/* The attach log is all --attach prints: options about the rest of the report do not go with it. */
static int report_conflicts(const struct report_args *a)
{
	const char *other = a->sites_given ? "--sites" : a->full_paths ? "--full-paths" : NULL;

	if (!a->attach || !other)
		return 0;
	pr_err("report: --attach prints the attach log only: %s does not go with it (usage: %s)\n", other,
	       REPORT_USAGE);
	return -EINVAL;
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int report_args(int argc, char **argv, struct report_args *a)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "attach", no_argument, NULL, 'a' },
		{ "sites", required_argument, NULL, 's' },
		{ "full-paths", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	optind = 0;	/* getopt state is global: start over */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j') {
			a->json = true;
		} else if (c == 'a') {
			a->attach = true;
		} else if (c == 'f') {
			a->full_paths = true;
		} else if (c == 's') {
			errno = 0;
			a->top = strtoul(optarg, &end, 10);
			a->sites_given = true;
			if (errno || end == optarg || *end || optarg[0] == '-') {
				pr_err("report: --sites takes a count, not '%s'\n", optarg);
				return -EINVAL;
			}
		} else if (c == 'h') {
			report_usage(stdout);
			return 1;
		} else {
			return mt_args__bad_option("report", argv);
		}
	}
	if (report_conflicts(a))
		return -EINVAL;
	return mt_args__one_dir("report", REPORT_USAGE, argc, argv, &a->dir);
}

static int report_attach(const struct report_args *a)
{
	struct mt_read_status st;
	int err, werr = 0;

	err = a->json ? mt_dump__attach_json(stdout, a->dir, &st) : mt_report__attach(stdout, a->dir, &st);
	if (fflush(stdout))
		werr = errno;
	else if (ferror(stdout))
		werr = EIO;
	if (werr) {
		pr_err("report: writing to stdout: %s\n", strerror(werr));
		return 2;
	}
	return mt_report__exit_status(a->dir, err, &st, "report");
}

int mt_cmd_report(int argc, char **argv)
{
	struct report_args a = { .top = 10 };
	struct mt_read_status st;
	struct mt_sites *sites;
	struct mt_model *m;
	int err, ret;

	ret = report_args(argc, argv, &a);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (a.attach)
		return report_attach(&a);
	err = mt_model__load(a.dir, &m, &st);
	if (!m)
		return mt_report__exit_status(a.dir, err, &st, "report");
	sites = report_sites(&a, &ret);
	if (!sites) {
		mt_model__free(m);
		return 2;
	}
	if (a.json) {
		ret = mt_report__json_sites(stdout, m, sites, a.top);
	} else {
		ret = mt_report__text(stdout, m, a.dir);
		if (!ret && a.top)
			ret = mt_report__sites_text(stdout, sites, a.top);
	}
	mt_sites__free(sites);
	mt_model__free(m);
	if (fflush(stdout))
		ret = -errno;
	if (ret) {
		pr_err("report: writing to stdout: %s\n", strerror(-ret));
		return 2;
	}
	return mt_report__exit_status(a.dir, err, &st, "report");
}
