/* cli.c — one wording for the command-line errors of the offline subcommands. */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "cli.h"
#include "log.h"

int mt_cli__bad_option(const char *cmd, char **argv)
{
	if (optopt && strncmp(argv[optind - 1], "--", 2))
		pr_err("%s: unknown option '-%c' (see memtrack %s --help)\n", cmd, optopt, cmd);
	else
		pr_err("%s: unknown option '%s' (see memtrack %s --help)\n", cmd, argv[optind - 1], cmd);
	return -EINVAL;
}

int mt_cli__one_dir(const char *cmd, const char *usage, int argc, char **argv, const char **dir)
{
	if (argc - optind != 1) {
		pr_err("%s: %s (usage: %s)\n", cmd, optind == argc ? "no DIR given" : "one DIR only", usage);
		return -EINVAL;
	}
	*dir = argv[optind];
	return 0;
}
