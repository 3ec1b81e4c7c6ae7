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

/* Loads the artifact's stacks and ranks its sites; NULL (after an error message) when that fails. */
static struct mt_sites *report_sites(const char *dir, int *ret)
{
	struct mt_read_status st;
	struct mt_stacks *s;
	struct mt_sites *sites;
	int err;

	*ret = 0;
	err = mt_stacks__load(dir, NULL, &s, &st);
	if (!s) {
		pr_err("%s: stacks: %s\n", dir, st.reason[0] ? st.reason : strerror(-err));
		*ret = err;
		return NULL;
	}
	sites = mt_sites__build(s);
	if (!sites) {
		*ret = -errno;
		pr_err("%s: stacks: %s\n", dir, strerror(errno));
	}
	mt_stacks__free(s);
	return sites;
}

static void report_usage(FILE *f)
{
	fputs("usage: memtrack report [--json | --attach] [--sites N] DIR\n"
	      "Heap allocation statistics of a recorded run: totals, then one row per process, then (recorded with\n"
	      "--stacks) the top allocation sites by bytes and by count.\n"
	      "  --json      one JSON object {\"totals\", \"processes\", \"sites\"} instead of text\n"
	      "  --sites N   sites in each ranking (default 10; 0 leaves the section out)\n"
	      "  --attach    the attach log instead: each file looked at, its probes, how long its thread was held\n"
	      "  -h, --help  this text\n"
	      "Exit status: 0; 1 when DIR is damaged (the report covers the records before the damage);\n"
	      "2 when DIR cannot be read or the command line is wrong.\n", f);
}

/* 0: go on; 1: --help was printed; -EINVAL: a usage error was reported. */
static int report_args(int argc, char **argv, bool *json, bool *attach, size_t *top, const char **dir)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "attach", no_argument, NULL, 'a' },
		{ "sites", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	optind = 0;	/* getopt state is global: start over */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j') {
			*json = true;
		} else if (c == 'a') {
			*attach = true;
		} else if (c == 's') {
			errno = 0;
			*top = strtoul(optarg, &end, 10);
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
	return mt_args__one_dir("report", "memtrack report [--json | --attach] [--sites N] DIR", argc, argv, dir);
}

int mt_cmd_report(int argc, char **argv)
{
	struct mt_read_status st;
	struct mt_sites *sites;
	struct mt_model *m;
	const char *dir;
	bool json = false, attach = false;
	size_t top = 10;
	int err, ret;

	ret = report_args(argc, argv, &json, &attach, &top, &dir);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (attach)
		return mt_report__exit_status(dir, mt_report__attach(stdout, dir, &st), &st, "report");
	err = mt_model__load(dir, &m, &st);
	if (!m)
		return mt_report__exit_status(dir, err, &st, "report");
	sites = report_sites(dir, &ret);
	if (!sites) {
		mt_model__free(m);
		return 2;
	}
	if (json) {
		ret = mt_report__json_sites(stdout, m, sites, top);
	} else {
		ret = mt_report__text(stdout, m, dir);
		if (!ret && top)
			ret = mt_report__sites_text(stdout, sites, top);
	}
	mt_sites__free(sites);
	mt_model__free(m);
	if (fflush(stdout))
		ret = -errno;
	if (ret) {
		pr_err("report: writing to stdout: %s\n", strerror(-ret));
		return 2;
	}
	return mt_report__exit_status(dir, err, &st, "report");
}
