// SPDX-License-Identifier: GPL-2.0-only
/* memtrack.bpf.c — the BPF object: its licence, and the features, each a sibling *.bpf.h that owns its maps,
 * globals and programs (docs/DESIGN.md, "The BPF side"). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "core.bpf.h"
#include "maps.bpf.h"
#include "control.bpf.h"
#include "stacks.bpf.h"
#include "watch.bpf.h"
#include "pressure.bpf.h"
#include "callers.bpf.h"
#include "calls.bpf.h"
#include "syscalls.bpf.h"
#include "rss.bpf.h"
#include "tree.bpf.h"

char LICENSE[] SEC("license") = "GPL";
