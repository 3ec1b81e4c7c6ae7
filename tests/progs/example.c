// SPDX-License-Identifier: GPL-2.0-only
/* example.c — the README's demo: a small workload with a child, a peak and a leak, to show a report. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static char **build_table(int n)
{
	char **rows = malloc(n * sizeof(*rows));

	for (int i = 0; i < n; i++) {
		rows[i] = malloc(64 + i % 512);
		snprintf(rows[i], 64, "row %d", i);
	}
	return rows;
}

static void free_table(char **rows, int n, int keep)
{
	for (int i = keep; i < n; i++)
		free(rows[i]);
	if (!keep)
		free(rows);
}

int main(void)
{
	char **rows = build_table(10000);
	pid_t child = fork();

	if (child == 0) {
		free_table(build_table(2000), 2000, 0);
		_exit(0);
	}
	waitpid(child, NULL, 0);
	free_table(rows, 10000, 10);	/* leaks 10 rows and the table */
	printf("example: built 10000 rows, leaked 10 of them\n");
	return 0;
}
