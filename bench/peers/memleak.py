# SPDX-License-Identifier: GPL-2.0-only
# memleak.py — runs bcc's memleak (bpfcc-tools' /usr/sbin/memleak-bpfcc) with the fix of bcc issue #5236 applied.
# bcc 0.26's Python binding declares bpf_attach_uprobe without its last argument, ref_ctr_offset, so the C side
# reads whatever the register holds, and the kernel refuses the uprobe (EINVAL) when that is not 0 or aligned.
# This passes 0, as bcc's own C++ API does, then runs memleak unchanged with this script's arguments.
import ctypes as ct
import runpy
import sys

from bcc import libbcc

attach = libbcc.lib.bpf_attach_uprobe
attach.restype = ct.c_int
attach.argtypes = [ct.c_int, ct.c_int, ct.c_char_p, ct.c_char_p, ct.c_ulonglong, ct.c_int, ct.c_uint32]


class AttachUprobe:
    def __call__(self, *args):
        return attach(*args, 0) if len(args) == 6 else attach(*args)


libbcc.lib.bpf_attach_uprobe = AttachUprobe()
memleak = "/usr/sbin/memleak-bpfcc"
sys.argv = [memleak] + sys.argv[1:]
runpy.run_path(memleak, run_name="__main__")
