// SPDX-License-Identifier: GPL-2.0-only
/* text.c — strings for text reports and SVG: valid UTF-8 passes, control characters and stray bytes become '?'. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/json.h"
#include "common/text.h"

void mt_text__put_n(FILE *f, const char *s, size_t len)
{
	size_t n;

	while (len) {
		n = mt_json__utf8_len(s, len);
		if (!n || (n == 1 && ((unsigned char)*s < 0x20 || *s == 0x7f))) {
			fputc('?', f);
			n = 1;
		} else {
			fwrite(s, 1, n, f);
		}
		s += n;
		len -= n;
	}
}

void mt_text__put(FILE *f, const char *s)
{
	mt_text__put_n(f, s, strlen(s));
}

static const char *xml_entity(char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&apos;";
	default: return NULL;
	}
}

void mt_text__put_xml(FILE *f, const char *s, size_t max)
{
	size_t len = strnlen(s, max), n;

	while (len) {
		n = mt_json__utf8_len(s, len);
		if (!n || (n == 1 && ((unsigned char)*s < 0x20 || *s == 0x7f)))
			fputc('?', f);	/* XML 1.0 allows neither, and a file with them does not parse */
		else if (n == 1 && xml_entity(*s))
			fputs(xml_entity(*s), f);
		else
			fwrite(s, 1, n, f);
		n = n ? n : 1;
		s += n;
		len -= n;
	}
}

/* The '<' at s[i] belongs to an operator's name ("operator<", "operator<<", "operator<=", "operator<=>"). */
static bool operator_lt(const char *s, size_t i)
{
	size_t k = i;

	while (k && s[k - 1] == '<')
		k--;
	return k >= 8 && !strncmp(s + k - 8, "operator", 8) && i - k < 2;
}

char *mt_text__elide_templates(const char *name)
{
	size_t len = strlen(name), i, o = 0, depth = 0;
	char *out = malloc(2 * len + 1);	/* "<x>" grows by 2 bytes to "<…>" at most */

	if (!out)
		return NULL;
	for (i = 0; i < len; i++) {
		if (name[i] == '<' && !operator_lt(name, i)) {
			if (!depth++) {
				memcpy(out + o, "<\u2026", strlen("<\u2026"));
				o += strlen("<\u2026");
			}
			continue;
		}
		if (name[i] == '>' && depth && !(i && name[i - 1] == '-')) {
			if (!--depth)
				out[o++] = '>';
			continue;
		}
		if (!depth)
			out[o++] = name[i];
	}
	if (depth)	/* unbalanced: not a list after all, the name as it was */
		return memcpy(out, name, len + 1);
	out[o] = '\0';
	return out;
}

#define NEAREST_MAX 64	/* longer words are not typos of a command or an option */

/* Levenshtein distance of a and b, both shorter than NEAREST_MAX. */
static size_t text__distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t row[NEAREST_MAX + 1], i, j, diag, up;

	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			up = row[j];
			row[j] = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < row[j])
				row[j] = up + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			diag = up;
		}
	}
	return row[lb];
}

const char *mt_text__nearest(const char *word, const char *const *words, size_t n)
{
	size_t lw = strlen(word), best = 3, d, i, l;
	const char *found = NULL;

	if (lw >= NEAREST_MAX)
		return NULL;
	for (i = 0; i < n; i++) {
		l = strlen(words[i]);
		if (l >= NEAREST_MAX)
			continue;
		d = text__distance(word, lw, words[i], l);
		if (d < best && 2 * d <= lw) {
			best = d;
			found = words[i];
		}
	}
	return found;
}
