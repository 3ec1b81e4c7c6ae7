// SPDX-License-Identifier: GPL-2.0-only
/* metadata.c — DIR/memory_metadata.json: who each process was (name, exe, cmdline, ppid, start and exit times). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/array.h"
#include "common/json.h"
#include "common/log.h"
#include "common/openreg.h"
#include "report/metadata.h"
#include "stacks/stacks.h"

/* ---- labels ---- */

#define LABEL_KEY_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"

/* Why the key cannot be one (NULL: it can). Keys are what every backend takes as a label name. */
static const char *label_bad_key(const char *key, size_t klen)
{
	if (!klen)
		return "KEY is empty";
	if (klen > MT_LABEL_KEY_MAX)
		return "KEY is longer than 64 characters";
	if (strspn(key, LABEL_KEY_CHARS) < klen)
		return "KEY may hold only letters, digits, '_', '.' and '-'";
	if (klen == 3 && (!memcmp(key, "pid", 3) || !memcmp(key, "exe", 3)))
		return "KEY pid and exe are pprof's per-sample labels";
	return NULL;
}

static const char *label_bad(const struct mt_labels *l, const char *key, size_t klen, const char *value)
{
	size_t i;

	if (strlen(value) > MT_LABEL_VALUE_MAX)
		return "VALUE is longer than 256 characters";
	for (i = 0; value[i]; i++)
		if (value[i] < 0x20 || value[i] > 0x7e)
			return "VALUE may hold only printable ASCII characters";
	for (i = 0; i < l->n; i++)
		if (strlen(l->v[i].key) == klen && !memcmp(l->v[i].key, key, klen))
			return "KEY is given twice";
	if (l->n == MT_LABELS_MAX)
		return "more than 32 labels";
	return NULL;
}

/* The message names the key only when it is a good one: a bad argument may hold anything, even a newline. */
int mt_labels__add(struct mt_labels *l, const char *cmd, const char *arg)
{
	const char *eq = strchr(arg, '='), *why;
	struct mt_label *lb = &l->v[l->n];
	size_t klen = eq ? (size_t)(eq - arg) : 0;

	why = !eq ? "not KEY=VALUE" : label_bad_key(arg, klen);
	if (why) {
		pr_err("%s: --label: %s\n", cmd, why);
		return -EINVAL;
	}
	why = label_bad(l, arg, klen, eq + 1);
	if (why) {
		pr_err("%s: --label %.*s=...: %s\n", cmd, (int)klen, arg, why);
		return -EINVAL;
	}
	lb->key = strndup(arg, klen);
	lb->value = strdup(eq + 1);
	if (!lb->key || !lb->value) {
		free(lb->key);
		free(lb->value);
		pr_err("%s: --label: %s\n", cmd, strerror(ENOMEM));
		return -ENOMEM;
	}
	l->n++;
	return 0;
}

void mt_labels__release(struct mt_labels *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].value);
	}
	l->n = 0;
}

char *mt_labels__text(const struct mt_labels *l)
{
	size_t i, len = 1;
	char *t, *p;

	for (i = 0; i < l->n; i++)
		len += strlen(l->v[i].key) + strlen(l->v[i].value) + 2;
	t = malloc(len);
	if (!t)
		return NULL;
	for (p = t, *t = '\0', i = 0; i < l->n; i++)
		p += sprintf(p, "%s%s=%s", i ? " " : "", l->v[i].key, l->v[i].value);
	return t;
}

void mt_labels__json(struct mt_json *j, const struct mt_labels *l)
{
	size_t i;

	mt_json__key(j, "labels");
	mt_json__begin_object(j);
	for (i = 0; i < l->n; i++)
		mt_json__kv_string(j, l->v[i].key, l->v[i].value);
	mt_json__end_object(j);
}

/* ---- writing ---- */

/* NUL-separated arguments as a JSON array of strings. */
static void args__json(struct mt_json *j, const char *args, size_t len)
{
	size_t i, start;

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

/* A fork child that did not exec runs its parent's command line. */
static void cmdline__json(struct mt_json *j, const struct mt_metadata_src *src, const struct mt_model *m, uint32_t pid)
{
	const struct mt_proc *p = mt_model__find_proc(m, pid);
	const char *args;
	size_t depth, len, k;

	args = src->cmdline(src->ctx, pid, &len);
	for (depth = 0; !args && p && p->ppid && depth < 64; depth++) {
		args = src->cmdline(src->ctx, p->ppid, &len);
		p = mt_model__find_proc(m, p->ppid);
	}
	mt_json__key(j, "cmdline");
	args__json(j, args, len);
	if (!src->exec_cmdline)
		return;
	mt_json__key(j, "exec_cmdlines");	/* each exec stop's: every image its own */
	mt_json__begin_array(j);
	for (k = 0; (args = src->exec_cmdline(src->ctx, pid, k, &len)); k++)
		args__json(j, args, len);
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
int mt_metadata__write(int fd, const struct mt_model *m, const struct mt_metadata_src *src)
{
	const struct mt_session_info *si = mt_model__session(m);
	struct mt_json j;
	size_t i;
	FILE *f;
	int err;

	f = fdopen(fd, "we");
	if (!f) {
		err = -errno;
		close(fd);
		return err;
	}
	mt_json__init(&j, f, 2);
	mt_json__begin_object(&j);
	mt_json__kv_u64(&j, "root_pid", si->root_pid);
	mt_json__kv_u64(&j, "realtime_ns", si->realtime_ns);
	if (src->labels && src->labels->n)
		mt_labels__json(&j, src->labels);
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

/* ---- reading it back: the command lines, for the report's rows ---- */

struct md_proc {
	uint32_t pid;
	char **argv;		/* argc strings, then NULL; NULL when the entry has none */
	size_t argc;
	size_t entry;		/* in mt_metadata.x: the index of the entry in v it belongs to */
};

struct mt_metadata {
	struct md_proc *v;	/* in the file's order, the model's order of processes */
	size_t n, cap;
	struct md_proc *x;	/* their "exec_cmdlines", in order */
	size_t nx, cap_x;
	struct mt_labels labels;	/* "labels": the first MT_LABELS_MAX */
	uint64_t realtime_ns;		/* "realtime_ns": the session's start, wall clock */
};

/* A reader of the JSON mt_metadata__write writes: objects, arrays, strings, numbers and literals. */
struct jr {
	const char *p, *end;
	int err;
};

static bool jr_eat(struct jr *r, char c)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\t' || *r->p == '\r'))
		r->p++;
	if (r->p < r->end && *r->p == c) {
		r->p++;
		return true;
	}
	return false;
}

static void jr_fail(struct jr *r)
{
	if (!r->err)
		r->err = -EBADMSG;
	r->p = r->end;
}

/* Four hex digits. */
static unsigned int jr_hex4(struct jr *r)
{
	unsigned int v = 0, i, c;

	for (i = 0; i < 4; i++, r->p++) {
		c = r->p < r->end ? (unsigned char)*r->p : 'x';
		if (!isxdigit(c)) {
			jr_fail(r);
			return 0;
		}
		v = v * 16 + (isdigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	return v;
}

/* \uXXXX: U+0000..U+00FF as the byte (the writer's escape of an invalid byte), above as UTF-8. */
static size_t jr_unicode(struct jr *r, char *out)
{
	unsigned int u = jr_hex4(r);

	if (u < 0x100) {
		out[0] = (char)u;
		return 1;
	}
	if (u >= 0xd800 && u < 0xe000) {	/* the writer makes no surrogates */
		out[0] = '?';
		return 1;
	}
	if (u < 0x800) {
		out[0] = (char)(0xc0 | u >> 6);
		out[1] = (char)(0x80 | (u & 0x3f));
		return 2;
	}
	out[0] = (char)(0xe0 | u >> 12);
	out[1] = (char)(0x80 | ((u >> 6) & 0x3f));
	out[2] = (char)(0x80 | (u & 0x3f));
	return 3;
}

/* The raw length of the string body at r->p (escapes counted as written), up to its closing quote. */
static size_t jr_raw_len(const struct jr *r)
{
	const char *q = r->p;

	while (q < r->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	return q < r->end ? (size_t)(q - r->p) : (size_t)(r->end - r->p);
}

/* One escape after its backslash into out; its length, 0 when it is not one. */
static size_t jr_escape(struct jr *r, char *out)
{
	static const char esc[] = "\"\"\\\\//b\bf\fn\nr\rt\t";
	const char *e;

	if (r->p < r->end && *r->p == 'u') {
		r->p++;
		return jr_unicode(r, out);
	}
	for (e = esc; r->p < r->end && *e && *e != *r->p; e += 2)
		;
	if (r->p >= r->end || !*e)
		return 0;
	r->p++;
	out[0] = e[1];
	return 1;
}

/* A string, decoded into *out (malloc'd, NUL-terminated; *len its length), or skipped when out is NULL. */
static void jr_string(struct jr *r, char **out, size_t *len)
{
	char *buf, tmp[3];
	size_t n = 0, k;

	if (!jr_eat(r, '"')) {
		jr_fail(r);
		return;
	}
	buf = malloc(3 * jr_raw_len(r) + 1);	/* an escape of 6 bytes makes at most 3 */
	if (!buf) {
		r->err = -ENOMEM;
		r->p = r->end;
		return;
	}
	while (r->p < r->end && *r->p != '"') {
		if (*r->p != '\\') {
			buf[n++] = *r->p++;
			continue;
		}
		r->p++;
		k = jr_escape(r, tmp);
		if (!k)
			break;
		memcpy(buf + n, tmp, k);
		n += k;
	}
	if (!jr_eat(r, '"'))
		jr_fail(r);
	if (r->err || !out) {
		free(buf);
		return;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
}

/* Reads one value of a container: key is its member's name (NULL in an array), which fn may keep (*key = NULL). */
typedef void jr_value_fn(struct jr *r, char **key, void *ctx);

/* The values of the container whose '{' or '[' was just eaten, each read by fn, up to close ('}' or ']'). */
static void jr_items(struct jr *r, char close, jr_value_fn *fn, void *ctx)
{
	char *key = NULL;
	size_t len;

	if (jr_eat(r, close))
		return;
	do {
		if (close == '}') {
			jr_string(r, &key, &len);
			if (!r->err && !jr_eat(r, ':'))
				jr_fail(r);
		}
		if (!r->err)
			fn(r, &key, ctx);
		free(key);
		key = NULL;
	} while (!r->err && jr_eat(r, ','));
	if (!jr_eat(r, close))
		jr_fail(r);
}

/* An object ('{') or an array ('['), each of its values read by fn. */
static void jr_container(struct jr *r, char open, jr_value_fn *fn, void *ctx)
{
	if (!jr_eat(r, open))
		jr_fail(r);
	else
		jr_items(r, open == '{' ? '}' : ']', fn, ctx);
}

static void jr_skip(struct jr *r, int depth);

/* A jr_value_fn skipping the value, ctx its depth. */
static void jr_skip_value(struct jr *r, char **key, void *ctx)
{
	(void)key;
	jr_skip(r, *(int *)ctx + 1);
}

static void jr_skip(struct jr *r, int depth)
{
	if (depth > MT_JSON_DEPTH_MAX)
		jr_fail(r);
	else if (jr_eat(r, '{'))
		jr_items(r, '}', jr_skip_value, &depth);
	else if (jr_eat(r, '['))
		jr_items(r, ']', jr_skip_value, &depth);
	else if (r->p < r->end && *r->p == '"')
		jr_string(r, NULL, NULL);
	else while (r->p < r->end && (isalnum((unsigned char)*r->p) || strchr("+-.", *r->p)))
		r->p++;	/* a number, true, false or null */
}

/* A "cmdline" being read. */
struct md_args {
	struct md_proc *mp;
	size_t cap;
};

/* A jr_value_fn: one string of a "cmdline" array into the md_args ctx. */
static void md_arg_read(struct jr *r, char **key, void *ctx)
{
	struct md_args *a = ctx;
	struct md_proc *mp = a->mp;
	size_t len;

	(void)key;
	if (mt_array__grow((void **)&mp->argv, &a->cap, mp->argc + 1, sizeof(*mp->argv))) {
		r->err = -ENOMEM;
		return;
	}
	mp->argv[mp->argc] = NULL;
	jr_string(r, &mp->argv[mp->argc], &len);
	if (!r->err)
		mp->argc++;
}

static void md_argv(struct jr *r, struct md_proc *mp)
{
	if (!jr_eat(r, '[')) {
		jr_skip(r, 0);	/* null */
		return;
	}
	jr_items(r, ']', md_arg_read, &(struct md_args){ mp, 0 });
	if (r->err)
		return;
	if (!mp->argv && !(mp->argv = calloc(1, sizeof(*mp->argv))))
		r->err = -ENOMEM;
	else
		mp->argv[mp->argc] = NULL;
}

/* What md_list_read reads into: "processes" (execs false) or v[entry]'s "exec_cmdlines". */
struct md_list {
	struct mt_metadata *md;
	bool execs;
	size_t entry;
};

static void md_proc_read(struct jr *r, struct mt_metadata *md, size_t entry);

/* A jr_value_fn: one item of an md_list. */
static void md_item_read(struct jr *r, char **key, void *ctx)
{
	struct md_list *l = ctx;
	struct mt_metadata *md = l->md;
	struct md_proc **v = l->execs ? &md->x : &md->v;
	size_t *n = l->execs ? &md->nx : &md->n, *cap = l->execs ? &md->cap_x : &md->cap;

	(void)key;
	if (mt_array__grow((void **)v, cap, *n, sizeof(**v))) {
		r->err = -ENOMEM;
		return;
	}
	(*v)[*n] = (struct md_proc){ .pid = l->execs ? md->v[l->entry].pid : 0, .entry = l->entry };
	if (l->execs)
		md_argv(r, &(*v)[(*n)++]);
	else
		md_proc_read(r, md, (*n)++);
}

/* "processes": [{...}, ...] into v; or (execs) v[entry]'s "exec_cmdlines": [[...], ...] into x. */
static void md_list_read(struct jr *r, struct mt_metadata *md, bool execs, size_t entry)
{
	jr_container(r, '[', md_item_read, &(struct md_list){ md, execs, entry });
}

/* A jr_value_fn: one member of a "processes" entry, an md_list ctx. */
static void md_proc_member(struct jr *r, char **key, void *ctx)
{
	struct md_list *l = ctx;
	struct md_proc *mp = &l->md->v[l->entry];

	if (!strcmp(*key, "pid"))
		mp->pid = (uint32_t)strtoul(r->p, (char **)&r->p, 10);
	else if (!strcmp(*key, "cmdline"))
		md_argv(r, mp);
	else if (!strcmp(*key, "exec_cmdlines"))
		md_list_read(r, l->md, true, l->entry);
	else
		jr_skip(r, 1);
}

/* One {"pid": N, "cmdline": [...], ...} of "processes", v[entry]. */
static void md_proc_read(struct jr *r, struct mt_metadata *md, size_t entry)
{
	jr_container(r, '{', md_proc_member, &(struct md_list){ md, false, entry });
}

/* A jr_value_fn: one "KEY": "VALUE" of "labels" into the mt_labels ctx; past MT_LABELS_MAX, skipped. */
static void md_label_read(struct jr *r, char **key, void *ctx)
{
	struct mt_labels *l = ctx;
	char *value = NULL;
	size_t len;

	jr_string(r, &value, &len);
	if (!r->err && l->n < MT_LABELS_MAX) {
		l->v[l->n++] = (struct mt_label){ *key, value };
		*key = NULL;
	} else {
		free(value);
	}
}

/* A jr_value_fn: one member of the file's object, into the mt_metadata ctx. */
static void md_member(struct jr *r, char **key, void *ctx)
{
	struct mt_metadata *md = ctx;

	if (!strcmp(*key, "processes"))
		md_list_read(r, md, false, 0);
	else if (!strcmp(*key, "labels"))
		jr_container(r, '{', md_label_read, &md->labels);
	else if (!strcmp(*key, "realtime_ns"))
		md->realtime_ns = strtoull(r->p, (char **)&r->p, 10);
	else
		jr_skip(r, 1);
}

static int md_parse(struct mt_metadata *md, const char *text, size_t len)
{
	struct jr r = { text, text + len, 0 };

	jr_container(&r, '{', md_member, md);
	return r.err;
}

#define MD_MAX (64u << 20)	/* a larger file is not one memtrack wrote */

/* The whole file, NUL-terminated (strtoul stops there). 0 or -errno. */
static int md_slurp(FILE *f, char **text, size_t *len)
{
	struct stat sb;

	if (fstat(fileno(f), &sb))
		return -errno;
	if (sb.st_size > MD_MAX)
		return -EFBIG;
	*text = malloc((size_t)sb.st_size + 1);
	if (!*text)
		return -ENOMEM;
	*len = fread(*text, 1, (size_t)sb.st_size, f);
	(*text)[*len] = '\0';
	return ferror(f) ? -EIO : 0;
}

struct mt_metadata *mt_metadata__read(const char *dir)
{
	struct mt_metadata *md = calloc(1, sizeof(*md));
	char path[PATH_MAX], *text = NULL;
	size_t len = 0;
	struct stat sb;
	FILE *f;
	int fd, err;

	snprintf(path, sizeof(path), "%s/" MT_METADATA_FILE, dir);
	fd = md ? mt_openreg__at(AT_FDCWD, path, O_NOFOLLOW, &sb) : -ENOMEM;
	f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f) {
		err = fd >= 0 ? -errno : fd;
		if (fd >= 0)
			close(fd);
		goto err_free;
	}
	err = md_slurp(f, &text, &len);
	fclose(f);
	if (!err)
		err = md_parse(md, text, len);
	free(text);
	if (!err)
		return md;
err_free:
	mt_metadata__free(md);
	errno = -err;
	return NULL;
}

struct mt_metadata *mt_metadata__load(const char *path, const char *without)
{
	char *dir = mt_stacks__dir_of(path);
	struct mt_metadata *md = dir ? mt_metadata__read(dir) : NULL;

	if (!md && dir && errno != ENOENT)
		pr_warn("%s/" MT_METADATA_FILE ": %s: %s\n", dir,
			errno == EINVAL || errno == EISDIR ? "not a regular file" : strerror(errno), without);
	free(dir);
	return md;
}

const char *const *mt_metadata__cmdline(const struct mt_metadata *md, uint32_t pid, size_t *argc)
{
	size_t i;

	for (i = md ? md->n : 0; i-- > 0;) {
		if (md->v[i].pid == pid && md->v[i].argv) {
			*argc = md->v[i].argc;
			return (const char *const *)md->v[i].argv;
		}
	}
	return NULL;
}

const char *const *mt_metadata__exec_cmdline(const struct mt_metadata *md, uint32_t pid, size_t back, size_t *argc)
{
	size_t i, entry = SIZE_MAX;

	for (i = md ? md->n : 0; entry == SIZE_MAX && i-- > 0;)
		if (md->v[i].pid == pid)
			entry = i;
	for (i = md && entry != SIZE_MAX ? md->nx : 0; i-- > 0;) {
		if (md->x[i].entry != entry || back--)
			continue;
		*argc = md->x[i].argc;
		return md->x[i].argv ? (const char *const *)md->x[i].argv : NULL;
	}
	return NULL;
}

const struct mt_labels *mt_metadata__labels(const struct mt_metadata *md)
{
	static const struct mt_labels none;

	return md ? &md->labels : &none;
}

uint64_t mt_metadata__realtime_ns(const struct mt_metadata *md)
{
	return md ? md->realtime_ns : 0;
}

static void md_procs_free(struct md_proc *v, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < v[i].argc; k++)
			free(v[i].argv[k]);
		free(v[i].argv);
	}
	free(v);
}

void mt_metadata__free(struct mt_metadata *md)
{
	if (!md)
		return;
	md_procs_free(md->v, md->n);
	md_procs_free(md->x, md->nx);
	mt_labels__release(&md->labels);
	free(md);
}
