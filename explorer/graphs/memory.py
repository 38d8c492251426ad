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


def _cgroup_available(base: str = "/sys/fs/cgroup") -> int | None:
    """What the container's memory limit leaves (cgroup v2, then v1); None without a limit.
    /proc/meminfo shows the host's memory, not the container's. The cgroup's usage counts page
    cache too; its inactive file pages are given back on demand, so they count as available."""
    for root, limit, usage, cache_key in (
            (base, "memory.max", "memory.current", "inactive_file"),
            (f"{base}/memory", "memory.limit_in_bytes", "memory.usage_in_bytes",
             "total_inactive_file")):
        try:
            text = Path(root, limit).read_text().strip()
            if text == "max" or int(text) >= 1 << 60:  # v1 writes "no limit" as a huge number
                return None
            used = int(Path(root, usage).read_text())
        except (OSError, ValueError):
            continue
        try:
            for line in Path(root, "memory.stat").read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == cache_key:
                    used -= int(value)
        except (OSError, ValueError):
            pass
        return max(0, int(text) - used)
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


# Below this, asking the OS is not worth it (the conformance suite builds hundreds of tiny graphs).
_SMALL = 64 << 20


def check_memory(need: int, what: str) -> None:
    """GraphError when `need` bytes (an estimate) exceed the memory available now."""
    if need < _SMALL:
        return
    have = available_bytes()
    if have is not None and need > have:
        raise GraphError(f"{what} needs about {format_bytes(need)} of memory, but only "
                         f"{format_bytes(have)} is available; use a smaller graph or a machine "
                         "with more memory")
