/* module_files.h — the files the tree mapped: one MT_REC_FILE each, and with --stacks a copy in DIR/modules. */
#ifndef MEMTRACK_TRACER_MODULE_FILES_H
#define MEMTRACK_TRACER_MODULE_FILES_H

#include <stdbool.h>
#include <stdint.h>

struct mt_attach;
struct mt_writer;

struct mt_module_files;
/* dir_fd: DIR (kept open by the caller until the finish); copy: each file is copied into DIR/modules by build-id
 * at the end, 0600 at most and never wider than the original. NULL + errno. */
struct mt_module_files *mt_module_files__new(int dir_fd, bool copy);
/* The MT_REC_FILE of a file looked at (rec: its attach record), and its copy to come. */
void mt_module_files__add(struct mt_module_files *m, struct mt_writer *w, const char *open_path,
			  const struct mt_attach *rec, uint8_t kind);
/* The copies made, and m freed (NULL: nothing). 0 or -errno. */
int mt_module_files__finish(struct mt_module_files *m);

#endif /* MEMTRACK_TRACER_MODULE_FILES_H */
