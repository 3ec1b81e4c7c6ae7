/* SPDX-License-Identifier: GPL-2.0-only */
/* commands.h — the subcommands the CLI dispatches to; each parses its own options and returns the exit status;
 * each is in src/cli/ under its own name (check-fp: checkfp.c). */
#ifndef MEMTRACK_COMMANDS_H
#define MEMTRACK_COMMANDS_H

int mt_cmd_record(int argc, char **argv);
int mt_cmd_report(int argc, char **argv);
int mt_cmd_dump(int argc, char **argv);
int mt_cmd_flamegraph(int argc, char **argv);
int mt_cmd_unwind(int argc, char **argv);
int mt_cmd_check_fp(int argc, char **argv);
int mt_cmd_check_stacks(int argc, char **argv);
int mt_cmd_diff(int argc, char **argv);
int mt_cmd_pprof(int argc, char **argv);
int mt_cmd_timeline(int argc, char **argv);
int mt_cmd_pack(int argc, char **argv);
int mt_cmd_view(int argc, char **argv);

#endif /* MEMTRACK_COMMANDS_H */
