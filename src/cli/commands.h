/* commands.h — the subcommands the CLI dispatches to; each parses its own options and returns the exit status. */
#ifndef MEMTRACK_COMMANDS_H
#define MEMTRACK_COMMANDS_H

int mt_cmd_record(int argc, char **argv);	/* tracer/record.c */
int mt_cmd_report(int argc, char **argv);	/* src/report.c */
int mt_cmd_dump(int argc, char **argv);		/* src/dump.c */
int mt_cmd_flamegraph(int argc, char **argv);	/* src/flamegraph.c */
int mt_cmd_unwind(int argc, char **argv);	/* src/unwind_cmd.c */
int mt_cmd_check_fp(int argc, char **argv);	/* src/checkfp.c */
int mt_cmd_diff(int argc, char **argv);		/* src/cli/diff.c */
int mt_cmd_pprof(int argc, char **argv);	/* src/cli/pprof.c */
int mt_cmd_timeline(int argc, char **argv);	/* src/cli/timeline.c */

#endif /* MEMTRACK_COMMANDS_H */
