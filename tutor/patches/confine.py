"""What a learner's exercise code may not do, and a checker that cannot be reached from it (Linux, ctypes).

The checker's supervisor runs the learner's code in a child it forks. That child is confined by a seccomp
filter before the code runs: signalling any process (kill, tkill, tgkill, sigqueue, pidfd_send_signal), leaving
its session or process group (setsid, setpgid), and reading or writing another process (ptrace,
process_vm_readv/writev, pidfd_getfd) fail with EPERM. So it cannot SIGSTOP the supervisor or the tutor, nor leave
a daemon outside the group that is killed when the check ends. The supervisor itself is not dumpable (its
/proc/PID/fd and memory are closed to processes of the same user: no reopening its verdict channel) and is a
subreaper (an orphan of the learner's reparents to it, not to init, and is killed with the rest).

Elsewhere (macOS, other architectures) `confine()` does nothing and says so; the verdict still comes from the
supervisor, over a socket the learner's process never holds.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import sys

PR_SET_DUMPABLE = 4  # from <linux/prctl.h>
PR_SET_SECCOMP = 22
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
SECCOMP_MODE_FILTER = 2  # from <linux/seccomp.h>
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
X32_SYSCALL_BIT = 0x40000000  # x86-64's x32 numbers: another way to the same calls

# BPF opcodes, from <linux/filter.h>: load a word of seccomp_data, compare and jump, return
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x06
SECCOMP_DATA_NR, SECCOMP_DATA_ARCH = 0, 4

# audit architecture and the forbidden calls' numbers, from the kernel's syscall tables
ARCHITECTURES: dict[str, tuple[int, dict[str, int]]] = {
    "x86_64": (
        0xC000003E,
        {
            "kill": 62,
            "tkill": 200,
            "tgkill": 234,
            "rt_sigqueueinfo": 129,
            "rt_tgsigqueueinfo": 297,
            "pidfd_send_signal": 424,
            "setsid": 112,
            "setpgid": 109,
            "ptrace": 101,
            "process_vm_readv": 310,
            "process_vm_writev": 311,
            "pidfd_getfd": 438,
        },
    ),
    "aarch64": (
        0xC00000B7,
        {
            "kill": 129,
            "tkill": 130,
            "tgkill": 131,
            "rt_sigqueueinfo": 138,
            "rt_tgsigqueueinfo": 240,
            "pidfd_send_signal": 424,
            "setsid": 157,
            "setpgid": 154,
            "ptrace": 117,
            "process_vm_readv": 270,
            "process_vm_writev": 271,
            "pidfd_getfd": 438,
        },
    ),
}


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _prctl() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


def guard_supervisor() -> bool:
    """This process: not dumpable (no same-user process opens its fds or memory) and the subreaper of its
    descendants. False where the platform has neither."""
    prctl = _prctl()
    if prctl is None:
        return False
    hidden = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0
    reaper = prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    return hidden and reaper


def filter_program(machine: str) -> list[tuple[int, int, int, int]] | None:
    """The seccomp filter for `machine` as (code, jt, jf, k) instructions; None for an architecture not known."""
    if machine not in ARCHITECTURES:
        return None
    arch, numbers = ARCHITECTURES[machine]
    deny = SECCOMP_RET_ERRNO | errno.EPERM
    checks: list[tuple[int, int]] = []  # (opcode, k): jump to "deny" when true
    if machine == "x86_64":
        checks.append((BPF_JGE_K, X32_SYSCALL_BIT))
    checks += [(BPF_JEQ_K, number) for number in sorted(numbers.values())]
    program = [
        (BPF_LD_W_ABS, 0, 0, SECCOMP_DATA_ARCH),
        (BPF_JEQ_K, 1, 0, arch),  # another ABI (32-bit calls on a 64-bit kernel): refuse everything
        (BPF_RET_K, 0, 0, deny),
        (BPF_LD_W_ABS, 0, 0, SECCOMP_DATA_NR),
    ]
    for index, (opcode, k) in enumerate(checks):
        program.append((opcode, len(checks) - index, 0, k))  # true: over the rest and the "allow" to "deny"
    program += [(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW), (BPF_RET_K, 0, 0, deny)]
    return program


def confine() -> bool:
    """From now on this process and every process it starts cannot signal, trace or leave (see the module's
    docstring). False where the platform cannot (then nothing changed)."""
    prctl = _prctl()
    program = filter_program(platform.machine())
    if prctl is None or program is None:
        return False
    instructions = (_SockFilter * len(program))(*(_SockFilter(*step) for step in program))
    fprog = _SockFprog(len(program), instructions)
    if prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0) == 0
