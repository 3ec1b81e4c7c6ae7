/* cli.h — what every offline subcommand's option parsing shares: the refused option, the one DIR operand. */
#ifndef MEMTRACK_CLI_H
#define MEMTRACK_CLI_H

/* After getopt_long returned '?': says which option cmd does not know. Returns -EINVAL. */
int mt_cli__bad_option(const char *cmd, char **argv);
/* After the options: exactly one DIR operand into *dir, else an error naming usage. 0 or -EINVAL. */
int mt_cli__one_dir(const char *cmd, const char *usage, int argc, char **argv, const char **dir);

#endif /* MEMTRACK_CLI_H */
