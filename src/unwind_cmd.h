/* unwind_cmd.h — `memtrack unwind` and the in-memory unwinding check-fp falls back to. */
#ifndef MEMTRACK_UNWIND_CMD_H
#define MEMTRACK_UNWIND_CMD_H

#include "stacks.h"

/* Loads the artifact's stacks with DWARF chains unwound now, in memory (DIR/unwind.mtz is neither read nor
 * written). Returns what mt_stacks__load does; st may be NULL. */
int mt_unwind__load(const char *path, struct mt_stacks **out, struct mt_read_status *st);

#endif /* MEMTRACK_UNWIND_CMD_H */
