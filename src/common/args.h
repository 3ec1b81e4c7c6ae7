/* SPDX-License-Identifier: GPL-2.0-only */
/* args.h — what every subcommand's option parsing shares: the refused option, the one DIR operand, numbers. */
#ifndef MEMTRACK_ARGS_H
#define MEMTRACK_ARGS_H

#include <stdbool.h>

#include <getopt.h>
#include <stdio.h>

/* Called for each option other than --help, with its struct option's val and the value (NULL for a flag);
 * 0 goes on, anything else stops the parse and is returned. */
typedef int (*mt_args_fn)(void *ctx, int val, const char *name, const char *arg);

/* The option loop every subcommand shares: getopt_long over argv with opts (which lists "help"); -h and --help
 * print usage to stdout and return 1; an unknown option or a missing value is reported and gives -EINVAL; the
 * rest go to fn. 0 leaves optind at the first operand. With in_order, the first operand ends the options (the
 * command after `record`'s options keeps its own). */
int mt_args__parse(const char *cmd, int argc, char **argv, const struct option *opts, bool in_order, mt_args_fn fn,
		   void *ctx, void (*usage)(FILE *));

/* The same with short options too (getopt's letters, say "o:qv"), which fn gets as their letter. */
int mt_args__parse_short(const char *cmd, int argc, char **argv, const struct option *opts, const char *shorts,
			 bool in_order, mt_args_fn fn, void *ctx, void (*usage)(FILE *));

/* From fn, for an option of two values (--between A B): the word after the option's own value, taken from the
 * operands, or NULL when there is none. */
const char *mt_args__next_word(void);

/* After getopt_long returned '?': says which option cmd does not know, and which of opts (NULL: none) a mistyped
 * long option most likely meant. Returns -EINVAL. */
int mt_args__bad_option(const char *cmd, char **argv, const struct option *opts);
/* After the options: exactly one DIR operand into *dir, else an error naming usage. 0 or -EINVAL. */
int mt_args__one_dir(const char *cmd, const char *usage, int argc, char **argv, const char **dir);

/* A decimal number of --opt from min to max (and a power of two when pow2), else an error naming the range and
 * -EINVAL. */
int mt_args__number(const char *opt, const char *arg, unsigned long long min, unsigned long long max, bool pow2,
		    unsigned long long *out);

#endif /* MEMTRACK_ARGS_H */
