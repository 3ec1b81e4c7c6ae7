// SPDX-License-Identifier: GPL-2.0-only
/* sizes.c — allocation sizes: a histogram by power-of-two class, and the largest allocations with their sites. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "common/plural.h"
#include "report/format.h"
#include "report/sizes.h"

#define BAR_MAX 40		/* '#'s of the fullest class */
#define FRAMES_SHOWN 3		/* innermost frames shown per large allocation */

/* Class k holds [2^(k-1), 2^k): its bounds, inclusive. */
static void class_bounds(unsigned int k, uint64_t *min, uint64_t *max)
{
	*min = k ? 1ull << (k - 1) : 0;
	*max = k == 0 ? 0 : k == 64 ? UINT64_MAX : (1ull << k) - 1;
}

static void class_label(unsigned int k, char *buf, size_t len)
{
	char a[MT_HUMAN_MAX], b[MT_HUMAN_MAX];
	uint64_t min, max;

	class_bounds(k, &min, &max);
	if (k <= 1)
		snprintf(buf, len, "%s", mt_format__human(a, min));
	else if (k == 64)
		snprintf(buf, len, "%s and up", mt_format__human(a, min));
	else
		snprintf(buf, len, "%s - %s", mt_format__human(a, min), mt_format__human(b, max + 1));
}

/* The classes used, first to last: false when there is none. */
static bool classes_used(const struct mt_size_stats *z, unsigned int *lo, unsigned int *hi, uint64_t *most)
{
	unsigned int k;

	*most = 0;
	*lo = MT_SIZE_CLASSES;
	*hi = 0;
	for (k = 0; k < MT_SIZE_CLASSES; k++) {
		if (!z->allocations[k])
			continue;
		*lo = *lo < k ? *lo : k;
		*hi = k;
		*most = *most > z->allocations[k] ? *most : z->allocations[k];
	}
	return *lo < MT_SIZE_CLASSES;
}

static void text_histogram(FILE *f, const struct mt_sites *sites)
{
	const struct mt_size_stats *z = &sites->sizes;
	char label[2 * MT_HUMAN_MAX + 16], a[MT_HUMAN_MAX];
	unsigned int k, lo, hi, bar;
	uint64_t most;

	fprintf(f, "\nallocation sizes (%" PRIu64 " %s, by power-of-two class; the upper bound excluded):\n",
		sites->totals.allocations, mt_plural__of(sites->totals.allocations, "allocation", "allocations"));
	if (!classes_used(z, &lo, &hi, &most))
		return;
	fprintf(f, "  %-22s %12s %12s\n", "SIZE", "ALLOCATIONS", "BYTES");
	for (k = lo; k <= hi; k++) {
		class_label(k, label, sizeof(label));
		fprintf(f, "  %-22s %12" PRIu64 " %12s  ", label, z->allocations[k], mt_format__human(a, z->bytes[k]));
		bar = z->allocations[k] ? (unsigned int)(z->allocations[k] * BAR_MAX / most) : 0;
		for (bar = bar ? bar : z->allocations[k] != 0; bar; bar--)
			fputc('#', f);
		fputc('\n', f);
	}
}

/* The innermost frame of the site in the program's own code (not the runtime's), or nframes when none is. */
static size_t first_user_frame(const struct mt_site *site)
{
	size_t i;

	for (i = 0; i < site->nframes && mt_site__frame(site, i)->runtime; i++)
		;
	return i;
}

static void text_big(FILE *f, size_t rank, const struct mt_site_big *big)
{
	char a[MT_HUMAN_MAX];
	size_t i, n, user;

	fprintf(f, "  #%-3zu %s", rank, mt_format__human(a, big->size));
	if (big->size >= 1024)
		fprintf(f, " (%" PRIu64 " B)", big->size);
	fprintf(f, ", pid %" PRIu32 " at %.6f s\n", big->pid, big->ts_ns / 1e9);
	if (!big->site) {
		fputs("        (no stack)\n", f);
		return;
	}
	n = big->site->nframes < FRAMES_SHOWN ? big->site->nframes : FRAMES_SHOWN;
	for (i = 0; i < n; i++)
		mt_format__frame_text(f, mt_site__frame(big->site, i), false);
	user = first_user_frame(big->site);
	if (user >= n && user < big->site->nframes) {	/* all shown are the runtime's: the program's call too */
		if (user > n)
			fprintf(f, "        ... (%zu more)\n", user - n);
		mt_format__frame_text(f, mt_site__frame(big->site, user), false);
		n = user + 1;
	}
	if (big->site->nframes > n)
		fprintf(f, "        ... (%zu more)\n", big->site->nframes - n);
}

int mt_sizes__text(FILE *f, const struct mt_sites *sites)
{
	size_t i;

	text_histogram(f, sites);
	if (sites->nlargest)
		fprintf(f, "\nlargest allocations (%zu of %" PRIu64 "):\n", sites->nlargest, sites->totals.allocations);
	for (i = 0; i < sites->nlargest; i++)
		text_big(f, i + 1, &sites->largest[i]);
	return ferror(f) ? -EIO : 0;
}

static void json_big(struct mt_json *j, const struct mt_site_big *big)
{
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "size", big->size);
	mt_json__kv_u64(j, "pid", big->pid);
	mt_json__kv_u64(j, "ts_ns", big->ts_ns);
	if (big->site) {
		mt_sites__json_frame_keys(j, big->site);
	} else {
		mt_json__kv_null(j, "frames");
		mt_json__kv_null(j, "srclines");
	}
	mt_json__end_object(j);
}

void mt_sizes__json(struct mt_json *j, const struct mt_sites *sites)
{
	const struct mt_size_stats *z = &sites->sizes;
	uint64_t min, max;
	unsigned int k;
	size_t i;

	mt_json__key(j, "size_classes");
	mt_json__begin_array(j);
	for (k = 0; k < MT_SIZE_CLASSES; k++) {
		if (!z->allocations[k])
			continue;
		class_bounds(k, &min, &max);
		mt_json__begin_object(j);
		mt_json__kv_u64(j, "min", min);
		mt_json__kv_u64(j, "max", max);
		mt_json__kv_u64(j, "allocations", z->allocations[k]);
		mt_json__kv_u64(j, "bytes", z->bytes[k]);
		mt_json__end_object(j);
	}
	mt_json__end_array(j);
	mt_json__key(j, "largest_allocations");
	mt_json__begin_array(j);
	for (i = 0; i < sites->nlargest; i++)
		json_big(j, &sites->largest[i]);
	mt_json__end_array(j);
}
