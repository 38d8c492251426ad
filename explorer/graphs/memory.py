"""How much memory a load or a generation needs, checked before the large arrays are allocated,
so that a graph too big for this machine gets a GraphError naming the size instead of numpy's
MemoryError traceback (or the kernel's out-of-memory killer)."""
from __future__ import annotations

import os
from pathlib import Path

from .csr import GraphError


def _meminfo_available() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _cgroup_available() -> int | None:
    """What the container's memory limit leaves (cgroup v2, then v1); None without a limit.
    /proc/meminfo shows the host's memory, not the container's."""
    for limit, usage in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                         ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                          "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            text = Path(limit).read_text().strip()
            if text == "max" or int(text) >= 1 << 60:  # v1 writes "no limit" as a huge number
                return None
            return max(0, int(text) - int(Path(usage).read_text()))
        except (OSError, ValueError):
            continue
    return None


def available_bytes() -> int | None:
    """Memory this process can still allocate, as far as the OS says; None when unknown."""
    known = [b for b in (_meminfo_available(), _cgroup_available()) if b is not None]
    return min(known) if known else None


def format_bytes(b: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if b < 1024 or unit == "TB":
            return f"{b:,.0f} {unit}" if unit == "bytes" else f"{b:,.1f} {unit}"
        b /= 1024
    raise AssertionError("unreachable")


def check_memory(need: int, what: str) -> None:
    """GraphError when `need` bytes (an estimate) exceed the memory available now."""
    have = available_bytes()
    if have is not None and need > have:
        raise GraphError(f"{what} needs about {format_bytes(need)} of memory, but only "
                         f"{format_bytes(have)} is available; use a smaller graph or a machine "
                         "with more memory")
