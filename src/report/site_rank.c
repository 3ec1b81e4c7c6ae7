// SPDX-License-Identifier: GPL-2.0-only
/* site_rank.c — the sites in order of bytes, and their rankings by count, at the peak and by temporaries. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "report/sites.h"

#define RANK_SHORT 16	/* runs this short are sorted by insertion */

typedef bool (*site_before)(const struct mt_site *x, const struct mt_site *y);

static bool by_bytes(const struct mt_site *x, const struct mt_site *y)
{
	if (x->heap != y->heap)	/* the sites of mappings alone go last */
		return x->heap;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes;
	if (x->count != y->count)
		return x->count > y->count;
	return x->order < y->order;
}

static bool by_count(const struct mt_site *x, const struct mt_site *y)
{
	if (x->count != y->count)
		return x->count > y->count;
	if (x->bytes != y->bytes)
		return x->bytes > y->bytes;
	return x->order < y->order;
}

static bool by_peak(const struct mt_site *x, const struct mt_site *y)
{
	if (x->peak_bytes != y->peak_bytes)
		return x->peak_bytes > y->peak_bytes;
	if (x->peak_allocations != y->peak_allocations)
		return x->peak_allocations > y->peak_allocations;
	return x->order < y->order;
}

static bool by_temporary(const struct mt_site *x, const struct mt_site *y)
{
	if (x->temporary_allocations != y->temporary_allocations)
		return x->temporary_allocations > y->temporary_allocations;
	if (x->temporary_bytes != y->temporary_bytes)
		return x->temporary_bytes > y->temporary_bytes;
	return x->order < y->order;
}

static void rank_swap(uint32_t *v, size_t i, size_t j)
{
	uint32_t t = v[i];

	v[i] = v[j];
	v[j] = t;
}

static void rank_insert(const struct mt_site *s, uint32_t *v, size_t n, site_before before)
{
	size_t i, j;
	uint32_t t;

	for (i = 1; i < n; i++) {
		t = v[i];
		for (j = i; j && before(&s[t], &s[v[j - 1]]); j--)
			v[j] = v[j - 1];
		v[j] = t;
	}
}

/*
 * Quicksort with a median of three, the shorter side first: no buffer beside the indexes (qsort's merge takes one
 * as large). The orders are total (order breaks every tie), so any correct sort ranks the same.
 */
static void rank_sort(const struct mt_site *s, uint32_t *v, size_t n, site_before before)
{
	size_t i, j, m;
	uint32_t p;

	while (n > RANK_SHORT) {
		m = n / 2;
		if (before(&s[v[m]], &s[v[0]]))
			rank_swap(v, m, 0);
		if (before(&s[v[n - 1]], &s[v[m]])) {
			rank_swap(v, n - 1, m);
			if (before(&s[v[m]], &s[v[0]]))
				rank_swap(v, m, 0);
		}
		p = v[m];
		for (i = 0, j = n - 1;;) {	/* v[0] and v[n - 1] stop the scans */
			while (before(&s[v[++i]], &s[p]))
				;
			while (before(&s[p], &s[v[--j]]))
				;
			if (i >= j)
				break;
			rank_swap(v, i, j);
		}
		if (i < n - i) {	/* [0, i) and [i, n), both nonempty */
			rank_sort(s, v, i, before);
			v += i;
			n -= i;
		} else {
			rank_sort(s, v + i, n - i, before);
			n = i;
		}
	}
	rank_insert(s, v, n, before);
}

static bool any_site(const struct mt_site *site)
{
	(void)site;
	return true;
}

static bool at_peak(const struct mt_site *site)
{
	return site->peak_bytes || site->peak_allocations;
}

static bool temporary(const struct mt_site *site)
{
	return site->temporary_allocations;
}

/* The heap's sites that rank (the others would rank last, in no list shown), sorted; *n of them. */
static uint32_t *sites_rank(const struct mt_sites *sites, site_before before, bool (*ranks)(const struct mt_site *),
			    size_t *n)
{
	uint32_t *v;
	size_t i;

	for (i = 0, *n = 0; i < sites->count; i++)
		*n += ranks(&sites->sites[i]);
	v = malloc((*n ? *n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0, *n = 0; i < sites->count; i++)
		if (ranks(&sites->sites[i]))
			v[(*n)++] = (uint32_t)i;
	rank_sort(sites->sites, v, *n, before);
	return v;
}

/*
 * Sorted through their 32-bit indexes, then moved along the permutation's cycles: qsort would take a buffer of two
 * pointers a site beside them (its indirect sort of large elements).
 */
int mt_sites__sort(struct mt_site *sites, size_t n)
{
	uint32_t *v = malloc((n ? n : 1) * sizeof(*v));
	struct mt_site t;
	size_t i, j, k;

	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		v[i] = (uint32_t)i;
	rank_sort(sites, v, n, by_bytes);
	for (i = 0; i < n; i++) {	/* site v[j] goes to j; v[j] = j once it has */
		if (v[i] == i)
			continue;
		t = sites[i];
		for (j = i; v[j] != i; j = k) {
			k = v[j];
			sites[j] = sites[k];
			v[j] = (uint32_t)j;
		}
		sites[j] = t;
		v[j] = (uint32_t)j;
	}
	free(v);
	return 0;
}

int mt_sites__rank(struct mt_sites *sites)
{
	size_t n;

	sites->by_count = sites_rank(sites, by_count, any_site, &n);
	sites->by_peak = sites_rank(sites, by_peak, at_peak, &sites->npeak);
	sites->by_temporary = sites_rank(sites, by_temporary, temporary, &sites->ntemporary);
	return sites->by_count && sites->by_peak && sites->by_temporary ? 0 : -ENOMEM;
}
