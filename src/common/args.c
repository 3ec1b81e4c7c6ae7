/* args.c — one wording for the command-line errors of the subcommands, and one number parser. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "common/args.h"
#include "common/log.h"

int mt_args__bad_option(const char *cmd, char **argv)
{
	if (optopt && strncmp(argv[optind - 1], "--", 2))
		pr_err("%s: unknown option '-%c' (see memtrack %s --help)\n", cmd, optopt, cmd);
	else
		pr_err("%s: unknown option '%s' (see memtrack %s --help)\n", cmd, argv[optind - 1], cmd);
	return -EINVAL;
}

int mt_args__one_dir(const char *cmd, const char *usage, int argc, char **argv, const char **dir)
{
	if (argc - optind != 1) {
		pr_err("%s: %s (usage: %s)\n", cmd, optind == argc ? "no DIR given" : "one DIR only", usage);
		return -EINVAL;
	}
	*dir = argv[optind];
	return 0;
}

/* A decimal number from min to max (and a power of two when pow2), else the error names the option's range. */
int mt_args__number(const char *opt, const char *arg, unsigned long long min, unsigned long long max,
			 bool pow2, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || *out < min || *out > max || (pow2 && (*out & (*out - 1)))) {
		pr_err("--%s takes %s from %llu to %llu, not '%s'\n", opt, pow2 ? "a power of two" : "a number", min,
		       max, arg);
		return -EINVAL;
	}
	return 0;
}
