/* metadata.c — DIR/memory_metadata.json: who each process was (name, exe, cmdline, ppid, start and exit times). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>

#include "common/json.h"
#include "report/metadata.h"

/* A fork child that did not exec runs its parent's command line. */
static void cmdline__json(struct mt_json *j, const struct mt_metadata_src *src, const struct mt_model *m, uint32_t pid)
{
	const struct mt_proc *p = mt_model__find_proc(m, pid);
	size_t i, start, depth, len;
	const char *args = src->cmdline(src->ctx, pid, &len);

	for (depth = 0; !args && p && p->ppid && depth < 64; depth++) {
		args = src->cmdline(src->ctx, p->ppid, &len);
		p = mt_model__find_proc(m, p->ppid);
	}
	mt_json__key(j, "cmdline");
	mt_json__begin_array(j);
	for (start = 0, i = 0; args && i < len; i++) {
		if (args[i])
			continue;
		mt_json__string_n(j, args + start, i - start);
		start = i + 1;
	}
	if (args && start < len)
		mt_json__string_n(j, args + start, len - start);
	mt_json__end_array(j);
}

static void proc__json(struct mt_json *j, const struct mt_metadata_src *src, const struct mt_model *m,
		       const struct mt_proc *p, uint64_t base)
{
	mt_json__begin_object(j);
	mt_json__kv_u64(j, "pid", p->pid);
	mt_json__kv_u64(j, "ppid", p->ppid);
	mt_json__kv_string_n(j, "name", p->comm, sizeof(p->comm));
	mt_json__kv_string_n(j, "exe", p->exe, sizeof(p->exe));
	cmdline__json(j, src, m, p->pid);
	mt_json__kv_u64(j, "start_ns", p->start_ns >= base ? p->start_ns - base : 0);
	if (p->exited) {
		mt_json__kv_u64(j, "exit_ns", p->exit_ns >= base ? p->exit_ns - base : 0);
		mt_json__kv_i64(j, "status", mt_status__shell(p->status));
	} else {
		mt_json__kv_null(j, "exit_ns");
		mt_json__kv_null(j, "status");
	}
	mt_json__end_object(j);
}

/* Times are nanoseconds since the session started, like the report's. */
int mt_metadata__write(const char *dir, const struct mt_model *m, const struct mt_metadata_src *src)
{
	const struct mt_session_info *si = mt_model__session(m);
	char path[PATH_MAX];
	struct mt_json j;
	size_t i;
	FILE *f;
	int err;

	snprintf(path, sizeof(path), "%s/memory_metadata.json", dir);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	mt_json__init(&j, f, 2);
	mt_json__begin_object(&j);
	mt_json__kv_u64(&j, "root_pid", si->root_pid);
	mt_json__kv_u64(&j, "realtime_ns", si->realtime_ns);
	mt_json__key(&j, "processes");
	mt_json__begin_array(&j);
	for (i = 0; i < mt_model__nr_procs(m); i++)
		proc__json(&j, src, m, mt_model__proc(m, i), si->ts_ns);
	mt_json__end_array(&j);
	mt_json__end_object(&j);
	fputc('\n', f);
	err = ferror(f) ? -EIO : 0;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}
