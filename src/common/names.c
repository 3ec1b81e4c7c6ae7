// SPDX-License-Identifier: GPL-2.0-only
/* names.c — the names report, dump and the tracer give the values of the shared enums, and wait statuses. */
#include <stddef.h>
#include <sys/wait.h>

#include "common/names.h"

static const char *const func_names[MT_FN__COUNT] = {
	[MT_FN_MALLOC] = "malloc",
	[MT_FN_CALLOC] = "calloc",
	[MT_FN_REALLOC] = "realloc",
	[MT_FN_REALLOCARRAY] = "reallocarray",
	[MT_FN_ALIGNED_ALLOC] = "aligned_alloc",
	[MT_FN_MEMALIGN] = "memalign",
	[MT_FN_POSIX_MEMALIGN] = "posix_memalign",
	[MT_FN_VALLOC] = "valloc",
	[MT_FN_PVALLOC] = "pvalloc",
	[MT_FN_FREE] = "free",
	[MT_FN_NEW] = "new",
	[MT_FN_NEW_ARRAY] = "new_array",
	[MT_FN_DELETE] = "delete",
	[MT_FN_DELETE_ARRAY] = "delete_array",
	[MT_FN_MALLOCX] = "mallocx",
	[MT_FN_RALLOCX] = "rallocx",
	[MT_FN_XALLOCX] = "xallocx",
	[MT_FN_DALLOCX] = "dallocx",
	[MT_FN_SDALLOCX] = "sdallocx",
};

/* Indexed by enum mt_allocator; add a name with each new allocator. */
static const char *const allocator_names[] = {
	[MT_ALLOCATOR_GLIBC] = "glibc",
	[MT_ALLOCATOR_JEMALLOC] = "jemalloc",
	[MT_ALLOCATOR_MIMALLOC] = "mimalloc",
	[MT_ALLOCATOR_TCMALLOC] = "tcmalloc",
	[MT_ALLOCATOR_LIBSTDCXX] = "libstdc++",
	[MT_ALLOCATOR_LIBCXX] = "libc++",
	[MT_ALLOCATOR_WRAPPER] = "wrapper",
};

static const char *const drop_names[MT_DROP__COUNT] = {
	[MT_DROP_RINGBUF] = "ringbuf",
	[MT_DROP_CALLSTATE] = "callstate",
	[MT_DROP_READ] = "read",
	[MT_DROP_TRACKED] = "tracked",
	[MT_DROP_ATTACH] = "attach",
	[MT_DROP_HOLD] = "hold",
	[MT_DROP_MALFORMED] = "malformed",
	[MT_DROP_HANDOFF] = "handoff",
};

/* Indexed by enum mt_attach_reason. */
static const char *const attach_reason_names[] = {
	[MT_ATTACH_EXEC] = "exec",
	[MT_ATTACH_INTERP] = "interp",
	[MT_ATTACH_MMAP] = "mmap",
	[MT_ATTACH_INHERIT] = "inherit",
	[MT_ATTACH_SEIZE] = "seize",
};

const char *mt_func__name(unsigned int func)
{
	return func < MT_FN__COUNT ? func_names[func] : NULL;
}

const char *mt_allocator__name(unsigned int allocator)
{
	size_t n = sizeof(allocator_names) / sizeof(allocator_names[0]);

	return allocator < n ? allocator_names[allocator] : NULL;
}

const char *mt_attach_reason__name(unsigned int reason)
{
	size_t n = sizeof(attach_reason_names) / sizeof(attach_reason_names[0]);

	return reason < n ? attach_reason_names[reason] : NULL;
}

const char *mt_drop__name(unsigned int cause)
{
	return cause < MT_DROP__COUNT ? drop_names[cause] : NULL;
}

int mt_status__shell(int32_t status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int mt_status__signal(int32_t status)
{
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}
