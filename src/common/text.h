/* SPDX-License-Identifier: GPL-2.0-only */
/* text.h — strings as text reports and SVG print them: control characters and bytes that are not UTF-8 as '?'. */
#ifndef MEMTRACK_TEXT_H
#define MEMTRACK_TEXT_H

#include <stddef.h>
#include <stdio.h>

/* len bytes of s, each control character and each byte of an invalid UTF-8 sequence written as '?'. */
void mt_text__put_n(FILE *f, const char *s, size_t len);
/* The same for a NUL-terminated s. */
void mt_text__put(FILE *f, const char *s);
/* s (at most max bytes, up to its NUL) as XML character data or an attribute value: & < > " ' as entities. */
void mt_text__put_xml(FILE *f, const char *s, size_t max);

/*
 * A C++ (or Rust) function name with each outermost template argument list elided, as heaptrack -t and pprof
 * print them: "std::vector<int, std::allocator<int> >::push_back" → "std::vector<…>::push_back". The '<' of an
 * operator (operator<, <<, <=, <=>) is the name's own, not a list. Malloc'd; NULL on ENOMEM.
 */
char *mt_text__elide_templates(const char *name);

/* The word of words[0..n) nearest to word by edit distance, when it is near enough to be what a typo meant (at
 * most 2 edits, and at most half the word's length); NULL when none is. */
const char *mt_text__nearest(const char *word, const char *const *words, size_t n);

#endif /* MEMTRACK_TEXT_H */
