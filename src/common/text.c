// SPDX-License-Identifier: GPL-2.0-only
/* text.c — strings for text reports and SVG: valid UTF-8 passes, control characters and stray bytes become '?'. */
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
