"""glibc's malloc and the forward pass: keep the memory of the last trace for the next keystroke.

Every keystroke builds a new trace (91 arrays for `tiny`) and drops the old one. By default glibc
hands blocks of 128 KB or more (the logits) straight to mmap, and gives freed heap memory back to
the kernel once 128 KB sit free at its top; dropping a whole trace does exactly that, so the next
pass pays for fresh pages again. Measured on `tiny` at 32 tokens: 2.3 ms of CPU per pass by default,
1.4–1.6 ms with the thresholds below (the arrays are then reused from the heap).
"""

from __future__ import annotations

import ctypes
import sys

M_TRIM_THRESHOLD = -1  # from glibc's <malloc.h>
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 4 << 20  # blocks below 4 MB come from the heap (a GPT-2 logits table still gets mmap)
TRIM_THRESHOLD = 32 << 20  # keep up to 32 MB of freed heap instead of returning it at once


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds for this process; False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this process already runs on
    except (OSError, AttributeError):  # no mallopt: musl, or a static build
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
