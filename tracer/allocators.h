/* allocators.h — what to probe in a file: the allocator it defines and one probe site per entry point. */
#ifndef MEMTRACK_TRACER_ALLOCATORS_H
#define MEMTRACK_TRACER_ALLOCATORS_H

#include <stddef.h>
#include <stdint.h>

#include "tracer/probe_site.h"

#define MT_PROBE_PLAN_MAX 96

struct mt_probe_plan {
	uint8_t kind;		/* enum mt_allocator, 0: no allocator here */
	size_t n;
	struct mt_probe_site sites[MT_PROBE_PLAN_MAX];	/* deduplicated by entry */
};

/* The plan for the ELF file at path (kind 0 and no sites when it holds no allocator). 0 or -errno. */
int mt_allocators__plan(const char *path, struct mt_probe_plan *plan);

#endif /* MEMTRACK_TRACER_ALLOCATORS_H */
