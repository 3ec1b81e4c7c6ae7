// SPDX-License-Identifier: GPL-2.0-only
/* args.c — one wording for the command-line errors of the subcommands, and one number parser. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/args.h"
#include "common/log.h"
#include "common/text.h"

#define ARGS_MAX_LONG 64

/* The long option of opts that a mistyped "--word[=value]" most likely meant, or NULL. */
static const char *args__guess(const struct option *opts, const char *word)
{
	const char *names[ARGS_MAX_LONG];
	char typed[64];
	size_t n = 0;

	if (strncmp(word, "--", 2) || snprintf(typed, sizeof(typed), "%s", word + 2) >= (int)sizeof(typed))
		return NULL;
	typed[strcspn(typed, "=")] = 0;
	while (opts && opts[n].name && n < ARGS_MAX_LONG) {
		names[n] = opts[n].name;
		n++;
	}
	return mt_text__nearest(typed, names, n);
}

int mt_args__bad_option(const char *cmd, char **argv, const struct option *opts)
{
	const char *word = argv[optind - 1], *guess = args__guess(opts, word);

	if (optopt && strncmp(word, "--", 2))
		pr_err("%s: unknown option '-%c' (see memtrack %s --help)\n", cmd, optopt, cmd);
	else if (guess)
		pr_err("%s: unknown option '%s'; did you mean '--%s'? (see memtrack %s --help)\n", cmd, word, guess, cmd);
	else
		pr_err("%s: unknown option '%s' (see memtrack %s --help)\n", cmd, word, cmd);
	return -EINVAL;
}

/* The option's name as the user wrote it: getopt_long reports the index of a long option only. */
static const char *args__name(const struct option *opts, int idx, int val)
{
	static char shortname[2];

	if (idx >= 0)
		return opts[idx].name;
	shortname[0] = (char)val;
	return shortname;
}

int mt_args__parse(const char *cmd, int argc, char **argv, const struct option *opts, bool in_order, mt_args_fn fn,
		   void *ctx, void (*usage)(FILE *))
{
	return mt_args__parse_short(cmd, argc, argv, opts, "", in_order, fn, ctx, usage);
}

/* The argv being parsed, for mt_args__next_word: getopt's own state is global too. */
static int parse_argc;
static char **parse_argv;

const char *mt_args__next_word(void)
{
	return parse_argv && optind < parse_argc ? parse_argv[optind++] : NULL;
}

int mt_args__parse_short(const char *cmd, int argc, char **argv, const struct option *opts, const char *shorts,
			 bool in_order, mt_args_fn fn, void *ctx, void (*usage)(FILE *))
{
	char optstring[64];
	int c, idx, ret;

	if (snprintf(optstring, sizeof(optstring), "%s:h%s", in_order ? "+" : "", shorts) >= (int)sizeof(optstring))
		return -EINVAL;
	optind = 0;	/* getopt's state is global: start over */
	opterr = 0;
	parse_argc = argc;
	parse_argv = argv;
	for (;;) {
		idx = -1;
		c = getopt_long(argc, argv, optstring, opts, &idx);
		if (c == -1)
			return 0;
		if (c == 'h') {
			usage(stdout);
			return 1;
		}
		if (c == ':') {
			pr_err("%s: %s needs a value (see memtrack %s --help)\n", cmd, argv[optind - 1], cmd);
			return -EINVAL;
		}
		if (c == '?')
			return mt_args__bad_option(cmd, argv, opts);
		ret = fn(ctx, c, args__name(opts, idx, c), optarg);
		if (ret)
			return ret;
	}
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
