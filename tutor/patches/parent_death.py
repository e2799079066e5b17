"""A browser tab's tutor ends with its server: the kernel sends it SIGHUP when `tutor serve` dies.

textual-serve's server tells each tab's tutor to quit when the tab closes or the server stops; a server that
is killed outright (SIGKILL, out of memory) cannot, and Textual's web driver only stops reading at the end of
its input: the tutor lived on, orphaned, with nobody to draw for. SIGHUP is what a dropped SSH session sends,
and TutorApp saves the learner's progress on it and leaves. Linux's prctl(PR_SET_PDEATHSIG); elsewhere nothing.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def hang_up_with_parent() -> bool:
    """Ask the kernel for SIGHUP when this process's parent dies; False where that is not possible."""
    if not sys.platform.startswith("linux"):
        return False
    parent = os.getppid()
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return False
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    if prctl(PR_SET_PDEATHSIG, signal.SIGHUP, 0, 0, 0) != 0:
        return False
    if os.getppid() != parent:  # the server died before the request: nobody will send the signal
        os.kill(os.getpid(), signal.SIGHUP)
    return True
