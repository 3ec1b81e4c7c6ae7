/* args.h — what every subcommand's option parsing shares: the refused option, the one DIR operand, numbers. */
#ifndef MEMTRACK_ARGS_H
#define MEMTRACK_ARGS_H

/* After getopt_long returned '?': says which option cmd does not know. Returns -EINVAL. */
int mt_args__bad_option(const char *cmd, char **argv);
/* After the options: exactly one DIR operand into *dir, else an error naming usage. 0 or -EINVAL. */
int mt_args__one_dir(const char *cmd, const char *usage, int argc, char **argv, const char **dir);

/* A decimal number of --opt from min to max (and a power of two when pow2), else an error naming the range and
 * -EINVAL. */
#include <stdbool.h>
int mt_args__number(const char *opt, const char *arg, unsigned long long min, unsigned long long max, bool pow2,
		    unsigned long long *out);

#endif /* MEMTRACK_ARGS_H */
