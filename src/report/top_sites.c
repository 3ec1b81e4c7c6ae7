// SPDX-License-Identifier: GPL-2.0-only
/* top_sites.c — the top allocation sites in `report`: by bytes and by count, text and JSON, and why chains stop. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/json.h"
#include "common/plural.h"
#include "report/format.h"
#include "report/report.h"
#include "report/sites.h"

/* "cut_allocations": {"truncated", "no_unwind_info", ...}: the hint line's figures. */
static void report__cut_json(struct mt_json *j, const struct mt_sites *sites)
{
	static const char *const keys[MT_KSTOP__COUNT] = {
		[0] = "truncated", [MT_KSTOP_NO_INFO] = "no_unwind_info", [MT_KSTOP_LOADING] = "loading",
		[MT_KSTOP_NO_MAPPING] = "anonymous", [MT_KSTOP_DEPTH] = "depth_limit", [MT_KSTOP_READ] = "unreadable",
	};
	int why;

	mt_json__kv_u64(j, "fp_walk_allocations", sites->fp_walk_allocations);
	mt_json__key(j, "cut_allocations");
	mt_json__begin_object(j);
	for (why = 0; why < MT_KSTOP__COUNT; why++)
		if (keys[why])
			mt_json__kv_u64(j, keys[why], sites->cut_allocations[why]);
	mt_json__end_object(j);
}

static void text_site(FILE *f, size_t rank, const struct mt_site *site, bool by_count)
{
	char a[2 * MT_HUMAN_MAX], b[MT_HUMAN_MAX];

	if (by_count)
		fprintf(f, "  #%-3zu %" PRIu64 " %s, %s", rank, site->count,
			mt_plural__of(site->count, "allocation", "allocations"), mt_format__size(a, site->bytes));
	else
		fprintf(f, "  #%-3zu %s in %" PRIu64 " %s", rank, mt_format__size(a, site->bytes), site->count,
			mt_plural__of(site->count, "allocation", "allocations"));
	if (site->leaked_bytes)
		fprintf(f, ", %s leaked", mt_format__human(b, site->leaked_bytes));
	if (site->suppressed_bytes)
		fprintf(f, ", %s of suppressed leaks", mt_format__human(b, site->suppressed_bytes));
	fputc('\n', f);
	mt_format__frames_text(f, site, false);
}

/* Why chains stop early, and what helps: one clause per reason in the report's hint line. */
static void cut_clause(FILE *f, const struct mt_sites *sites, int why)
{
	switch (why) {
	case 0:
		fputs("[truncated] (raise --stack-bytes: the DWARF unwinder ran out of captured stack)", f);
		break;
	case MT_KSTOP_NO_INFO:
	case MT_KSTOP_LOADING:
		fprintf(f, "[no unwind info in %s] (give it .eh_frame, or build it with frame pointers)",
			sites->cut_module ? sites->cut_module : "a module");
		break;
	case MT_KSTOP_NO_MAPPING:
		fputs("[anonymous executable memory] (JIT code: build the JIT with frame pointers)", f);
		break;
	case MT_KSTOP_DEPTH:
		fprintf(f, "[depth limit] (deeper than %d frames: the innermost ones are shown)", MT_KCHAIN_MAX);
		break;
	default:
		fputs("[stack unreadable] (the stack could not be read there)", f);
		break;
	}
}

/* One line, when some chains stop before their stack's end: the share of allocations on them, and what helps. */
static void report__cut_hint(FILE *f, const struct mt_sites *sites)
{
	uint64_t all = sites->totals.allocations, cut = 0;
	bool first = true;
	int why;

	for (why = 0; why < MT_KSTOP__COUNT; why++)
		cut += why == MT_KSTOP_END ? 0 : sites->cut_allocations[why];
	if (sites->fp_walk_allocations && all)
		fprintf(f, "\nstacks walked by frame pointer where there is no CFI: %.1f%% of allocations (%" PRIu64 "; "
			"%s the most): right only where that code keeps frame pointers\n",
			100.0 * sites->fp_walk_allocations / all, sites->fp_walk_allocations, sites->fp_module);
	if (!cut || !all)
		return;
	fprintf(f, "\nstacks cut short: %.1f%% of allocations (%" PRIu64 ") are on call paths that stop early:", 100.0 *
		cut / all, cut);
	for (why = 0; why < MT_KSTOP__COUNT; why++) {
		if (why == MT_KSTOP_END || !sites->cut_allocations[why])
			continue;
		fprintf(f, "%s %.1f%% ", first ? "" : ",", 100.0 * sites->cut_allocations[why] / all);
		cut_clause(f, sites, why);
		first = false;
	}
	fputc('\n', f);
}

int mt_report__sites_text(FILE *f, const struct mt_sites *sites, size_t top)
{
	char a[2 * MT_HUMAN_MAX];
	size_t i, n;

	if (!sites || !sites->any)
		return ferror(f) ? -EIO : 0;
	n = sites->count < top ? sites->count : top;
	fprintf(f, "\ntop allocation sites by bytes (%zu of %zu %s, %s chains):\n", n, sites->count,
		mt_plural__of(sites->count, "site", "sites"), sites->chains);
	for (i = 0; i < n; i++)
		text_site(f, i + 1, &sites->sites[i], false);
	fprintf(f, "\ntop allocation sites by count (%zu of %zu %s):\n", n, sites->count,
		mt_plural__of(sites->count, "site", "sites"));
	for (i = 0; i < n; i++)
		text_site(f, i + 1, &sites->sites[sites->by_count[i]], true);
	if (sites->undefined_allocations)
		fprintf(f, "  (%" PRIu64 " %s, %s, name a stack that was never defined)\n", sites->undefined_allocations,
			mt_plural__of(sites->undefined_allocations, "allocation", "allocations"),
			mt_format__size(a, sites->undefined_bytes));
	report__cut_hint(f, sites);
	return mt_sites__mapped_text(f, sites, top);
}

void mt_report__sites_json(struct mt_json *j, const struct mt_sites *sites, size_t top)
{
	size_t i, n = sites ? (sites->count < top ? sites->count : top) : 0;

	mt_json__key(j, "sites");
	mt_json__begin_array(j);
	for (i = 0; i < n; i++)
		mt_sites__json_site(j, sites, &sites->sites[i], false);
	mt_json__end_array(j);
	if (!sites || !sites->any)
		return;
	mt_json__key(j, "sites_by_count");
	mt_json__begin_array(j);
	for (i = 0; i < n; i++)
		mt_sites__json_site(j, sites, &sites->sites[sites->by_count[i]], false);
	mt_json__end_array(j);
	mt_json__kv_u64(j, "sites_total", sites->count);
	mt_json__kv_string(j, "sites_chains", sites->chains_key);
	mt_json__kv_u64(j, "undefined_stack_allocations", sites->undefined_allocations);
	report__cut_json(j, sites);
}
