// SPDX-License-Identifier: GPL-2.0-only
/* json.c — the JSON writer behind report --json and dump: comma/indent bookkeeping and string escaping. */
#include <errno.h>
#include <string.h>

#include "common/json.h"

void mt_json__init(struct mt_json *j, FILE *f, int indent)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	j->indent = indent > 0 ? indent : 0;
}

int mt_json__error(const struct mt_json *j)
{
	return ferror(j->f) ? -EIO : 0;
}

static bool *items_at(struct mt_json *j, int depth)
{
	if (depth >= MT_JSON_DEPTH_MAX)
		depth = MT_JSON_DEPTH_MAX - 1;
	return &j->has_items[depth];
}

static void newline_indent(struct mt_json *j, int depth)
{
	if (!j->indent)
		return;
	fprintf(j->f, "\n%*s", depth * j->indent, "");
}

/* Whatever goes before a value (or a key): nothing after a key, else a comma and a line break inside containers. */
static void value_prefix(struct mt_json *j)
{
	bool *items;

	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (!j->depth)
		return;
	items = items_at(j, j->depth);
	if (*items)
		fputc(',', j->f);
	*items = true;
	newline_indent(j, j->depth);
}

static void begin(struct mt_json *j, char open)
{
	value_prefix(j);
	fputc(open, j->f);
	j->depth++;
	*items_at(j, j->depth) = false;
}

static void end(struct mt_json *j, char close)
{
	if (j->depth <= 0)
		return;
	if (*items_at(j, j->depth))
		newline_indent(j, j->depth - 1);
	j->depth--;
	fputc(close, j->f);
}

void mt_json__begin_object(struct mt_json *j)
{
	begin(j, '{');
}

void mt_json__end_object(struct mt_json *j)
{
	end(j, '}');
}

void mt_json__begin_array(struct mt_json *j)
{
	begin(j, '[');
}

void mt_json__end_array(struct mt_json *j)
{
	end(j, ']');
}

void mt_json__key(struct mt_json *j, const char *key)
{
	value_prefix(j);
	mt_json__write_string(j->f, key, strlen(key));
	fputs(j->indent ? ": " : ":", j->f);
	j->after_key = true;
}

void mt_json__string(struct mt_json *j, const char *s)
{
	value_prefix(j);
	mt_json__write_string(j->f, s, strlen(s));
}

void mt_json__string_n(struct mt_json *j, const char *s, size_t n)
{
	value_prefix(j);
	mt_json__write_string(j->f, s, strnlen(s, n));
}

/* Decimal digits of v, written without printf: dump writes millions of numbers. */
static void write_u64(FILE *f, uint64_t v, bool negative)
{
	char buf[24], *p = buf + sizeof(buf);

	do {
		*--p = '0' + v % 10;
		v /= 10;
	} while (v);
	if (negative)
		*--p = '-';
	fwrite(p, 1, buf + sizeof(buf) - p, f);
}

void mt_json__u64(struct mt_json *j, uint64_t v)
{
	value_prefix(j);
	write_u64(j->f, v, false);
}

void mt_json__i64(struct mt_json *j, int64_t v)
{
	value_prefix(j);
	write_u64(j->f, v < 0 ? -(uint64_t)v : (uint64_t)v, v < 0);
}

void mt_json__bool(struct mt_json *j, bool v)
{
	value_prefix(j);
	fputs(v ? "true" : "false", j->f);
}

void mt_json__null(struct mt_json *j)
{
	value_prefix(j);
	fputs("null", j->f);
}

void mt_json__kv_string(struct mt_json *j, const char *key, const char *s)
{
	mt_json__key(j, key);
	mt_json__string(j, s);
}

void mt_json__kv_string_n(struct mt_json *j, const char *key, const char *s, size_t n)
{
	mt_json__key(j, key);
	mt_json__string_n(j, s, n);
}

void mt_json__kv_u64(struct mt_json *j, const char *key, uint64_t v)
{
	mt_json__key(j, key);
	mt_json__u64(j, v);
}

void mt_json__kv_i64(struct mt_json *j, const char *key, int64_t v)
{
	mt_json__key(j, key);
	mt_json__i64(j, v);
}

void mt_json__kv_bool(struct mt_json *j, const char *key, bool v)
{
	mt_json__key(j, key);
	mt_json__bool(j, v);
}

void mt_json__kv_null(struct mt_json *j, const char *key)
{
	mt_json__key(j, key);
	mt_json__null(j);
}

/*
 * Length of the well-formed UTF-8 sequence (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF)
 * starting at s, or 0 when the bytes there are not one.
 */
size_t mt_json__utf8_len(const char *str, size_t avail)
{
	const unsigned char *s = (const unsigned char *)str;
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (!avail)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (avail < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

static void write_escape(FILE *f, unsigned char c)
{
	switch (c) {
	case '"': fputs("\\\"", f); break;
	case '\\': fputs("\\\\", f); break;
	case '\b': fputs("\\b", f); break;
	case '\f': fputs("\\f", f); break;
	case '\n': fputs("\\n", f); break;
	case '\r': fputs("\\r", f); break;
	case '\t': fputs("\\t", f); break;
	default: fprintf(f, "\\u%04x", c); break;
	}
}

static bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

void mt_json__write_string(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run, n;

	fputc('"', f);
	while (i < len) {
		for (run = i; run < len && plain(p[run]); run++)
			;
		if (run > i) {
			fwrite(p + i, 1, run - i, f);
			i = run;
			continue;
		}
		n = p[i] < 0x80 ? 0 : mt_json__utf8_len((const char *)p + i, len - i);
		if (n) {
			fwrite(p + i, 1, n, f);
			i += n;
		} else {
			write_escape(f, p[i++]);
		}
	}
	fputc('"', f);
}
