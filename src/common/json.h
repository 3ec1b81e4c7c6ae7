/* SPDX-License-Identifier: GPL-2.0-only */
/* json.h — a small JSON writer over a FILE*: escaped strings, nested objects and arrays, compact or indented. */
#ifndef MEMTRACK_JSON_H
#define MEMTRACK_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MT_JSON_DEPTH_MAX 32	/* deepest nesting tracked; deeper containers still nest, but lose comma state */

/*
 * Writer state. Values written at depth 0 are top-level values; the caller ends the line.
 * Output errors are sticky on the FILE (check ferror() or mt_json__error() once at the end).
 */
struct mt_json {
	FILE *f;
	int indent;			/* spaces per level; 0 writes everything on one line */
	int depth;			/* containers open */
	bool after_key;			/* a key was written; the next value belongs to it */
	bool has_items[MT_JSON_DEPTH_MAX];
};

void mt_json__init(struct mt_json *j, FILE *f, int indent);
/* -EIO when the FILE has seen an error, else 0. */
int mt_json__error(const struct mt_json *j);

void mt_json__begin_object(struct mt_json *j);
void mt_json__end_object(struct mt_json *j);
void mt_json__begin_array(struct mt_json *j);
void mt_json__end_array(struct mt_json *j);
void mt_json__key(struct mt_json *j, const char *key);

void mt_json__string(struct mt_json *j, const char *s);
/* At most n bytes of s, stopping early at a NUL: for fixed-size char arrays that may lack one. */
void mt_json__string_n(struct mt_json *j, const char *s, size_t n);
void mt_json__u64(struct mt_json *j, uint64_t v);
void mt_json__i64(struct mt_json *j, int64_t v);
void mt_json__bool(struct mt_json *j, bool v);
void mt_json__null(struct mt_json *j);

/* key + value in one call. */
void mt_json__kv_string(struct mt_json *j, const char *key, const char *s);
void mt_json__kv_string_n(struct mt_json *j, const char *key, const char *s, size_t n);
void mt_json__kv_u64(struct mt_json *j, const char *key, uint64_t v);
void mt_json__kv_i64(struct mt_json *j, const char *key, int64_t v);
void mt_json__kv_bool(struct mt_json *j, const char *key, bool v);
void mt_json__kv_null(struct mt_json *j, const char *key);

/*
 * Writes len bytes of s as a quoted JSON string: '"' and '\\' escaped, control characters as \n, \t, ... or \u00XX,
 * valid UTF-8 passed through, and each byte of an invalid UTF-8 sequence as \u00XX (so it reads back as U+00XX).
 */
void mt_json__write_string(FILE *f, const char *s, size_t len);

/* Length of the well-formed UTF-8 sequence at s (at most avail bytes; 1 for ASCII), or 0 when it is not one. */
size_t mt_json__utf8_len(const char *s, size_t avail);

#endif /* MEMTRACK_JSON_H */
