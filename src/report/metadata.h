/* metadata.h — DIR/memory_metadata.json, from the model and the command lines the tracer read. */
#ifndef MEMTRACK_METADATA_H
#define MEMTRACK_METADATA_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

/* Where the command lines come from: NUL-separated as in /proc/PID/cmdline, NULL when unknown. */
struct mt_metadata_src {
	const char *(*cmdline)(void *ctx, uint32_t pid, size_t *len);
	void *ctx;
};

/* Times are nanoseconds since the session started, like the report's. 0 or -errno. */
int mt_metadata__write(const char *dir, const struct mt_model *m, const struct mt_metadata_src *src);

#endif /* MEMTRACK_METADATA_H */
