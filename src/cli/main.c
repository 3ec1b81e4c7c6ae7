// SPDX-License-Identifier: GPL-2.0-only
/* main.c — the memtrack command line: dispatches to the subcommands; `help [COMMAND]` is their --help. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "common/log.h"
#include "common/text.h"

#ifndef MEMTRACK_VERSION
#define MEMTRACK_VERSION "unknown"
#endif

static void usage(FILE *f)
{
	fputs("usage: memtrack COMMAND [OPTIONS]\n"
	      "  record [-o DIR] [-q] [--stacks] -- PROGRAM [ARGS...]\n"
	      "                                               trace every heap allocation of PROGRAM and its children\n"
	      "  report [--json] [--sites N] DIR              per-process and total statistics, top allocation sites\n"
	      "  dump DIR                                     every record as one JSON object per line\n"
	      "  flamegraph [--collapsed] [--weight W] DIR    allocation stacks as an SVG flame graph\n"
	      "  flamegraph --diff BEFORE AFTER               the same, red where AFTER grew, blue where it shrank\n"
	      "  diff [--json] BEFORE AFTER                   what changed between two runs, in total and per site\n"
	      "  pprof DIR > out.pb.gz                        allocation stacks as a pprof profile\n"
	      "  timeline [--json] DIR > out.svg              live heap bytes over time, per process and in total\n"
	      "  unwind [--stats] [--list] DIR                DWARF-unwind the recorded stacks into DIR/unwind.mtz\n"
	      "  check-fp [--json] [--strict] DIR             where frame-pointer chains differ from DWARF ones, and why\n"
	      "  check-stacks [--json] [--strict] DIR         in-kernel chains against DWARF's and the FP chains\n"
	      "  view [-o FILE.html] DIR                      an interactive HTML page: timeline, flame graph, sites\n"
	      "  view [-o FILE.html] BEFORE AFTER             the same for two runs, compared as diff compares them\n"
	      "  pack DIR                                     copy the module files DIR uses into it, to move it elsewhere\n"
	      "  help [COMMAND], --help, --version\n"
	      "`memtrack help COMMAND` (or `memtrack COMMAND --help`) tells more.\n",
	      f);
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} cmds[] = { { "record", mt_cmd_record }, { "report", mt_cmd_report }, { "dump", mt_cmd_dump },
	     { "flamegraph", mt_cmd_flamegraph }, { "unwind", mt_cmd_unwind }, { "check-fp", mt_cmd_check_fp },
	     { "check-stacks", mt_cmd_check_stacks }, { "diff", mt_cmd_diff }, { "pprof", mt_cmd_pprof },
	     { "timeline", mt_cmd_timeline }, { "pack", mt_cmd_pack }, { "view", mt_cmd_view } };
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

/* One line, with the command a typo most likely meant. */
static int unknown_command(const char *word)
{
	const char *names[NCMDS], *guess;
	size_t i;

	for (i = 0; i < NCMDS; i++)
		names[i] = cmds[i].name;
	guess = mt_text__nearest(word, names, NCMDS);
	if (guess)
		pr_err("unknown command '%s'; did you mean '%s'? (memtrack --help lists them)\n", word, guess);
	else
		pr_err("unknown command '%s' (memtrack --help lists them)\n", word);
	return 2;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return EXIT_SUCCESS;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("memtrack %s\n", MEMTRACK_VERSION);
		return EXIT_SUCCESS;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc > 3) {
			pr_err("help: one COMMAND at most (usage: memtrack help [COMMAND])\n");
			return 2;
		}
		if (argc == 2 || !strcmp(argv[2], "help")) {
			usage(stdout);
			return EXIT_SUCCESS;
		}
		/* `memtrack help COMMAND` is `memtrack COMMAND --help` */
		argv[1] = argv[2];
		argv[2] = (char *)"--help";
	}
	for (i = 0; i < NCMDS; i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	return unknown_command(argv[1]);
}
