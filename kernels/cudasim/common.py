"""What every part of the simulator extension shares: its errors, its settings, whether the
simulator is on, and lane-list formatting for error messages."""

from __future__ import annotations

import os
from contextlib import contextmanager

FULL_MASK = 0xFFFFFFFF
WARP_SIZE = 32


class WarpSyncError(RuntimeError):
    """Misuse of a warp intrinsic that is undefined behaviour on hardware."""


class WarpTimeoutError(WarpSyncError):
    """A warp barrier did not complete within ``config.timeout`` seconds."""


class GridSyncError(RuntimeError):
    """Misuse of the grid barrier (``cuda.cg.this_grid().sync()``) under the simulator: a thread of
    the grid has exited, the grid is larger than the simulator runs side by side, the kernel was
    launched as clusters."""


class GridTimeoutError(GridSyncError):
    """A grid barrier did not complete within ``config.timeout`` seconds."""


class _Config:
    """Mutable simulator settings (see ``kernels.cudasim``'s docstring)."""

    def __init__(self):
        self.timeout = float(os.environ.get("BFS4K_SIM_WARP_TIMEOUT", "60"))
        self.exited_lanes = "raise"
        self.undefined_read = "raise"
        self.grid_threads = int(os.environ.get("BFS4K_SIM_GRID_THREADS", "1024"))

    def __repr__(self):
        return (
            f"SimConfig(timeout={self.timeout!r}, exited_lanes={self.exited_lanes!r}, "
            f"undefined_read={self.undefined_read!r}, grid_threads={self.grid_threads!r})"
        )


config = _Config()

_CHOICES = {"exited_lanes": ("raise", "ignore"), "undefined_read": ("raise", "poison")}
_CASTS = {"timeout": float, "grid_threads": int}


@contextmanager
def settings(**overrides):
    """Temporarily change ``config`` fields, e.g. ``with settings(timeout=0.5):``."""
    for key, value in overrides.items():
        if not hasattr(config, key):
            raise AttributeError(f"unknown simulator setting {key!r}")
        if key in _CHOICES and value not in _CHOICES[key]:
            raise ValueError(f"{key} must be one of {_CHOICES[key]}, got {value!r}")
        if key == "grid_threads" and int(value) < 1:
            raise ValueError(f"grid_threads must be at least 1, got {value!r}")
    saved = {key: getattr(config, key) for key in overrides}
    for key, value in overrides.items():
        setattr(config, key, _CASTS.get(key, lambda v: v)(value))
    try:
        yield config
    finally:
        for key, value in saved.items():
            setattr(config, key, value)


def simulator_enabled() -> bool:
    """True when numba.cuda is (or will be) the simulator."""
    from numba.core import config as numba_config

    if getattr(numba_config, "ENABLE_CUDASIM", 0):
        return True
    try:  # numba-cuda keeps its own copy of the flag; it decides what numba.cuda is
        from numba.cuda.core import config as cuda_config
    except ImportError:  # pragma: no cover - older numba-cuda
        return False
    return bool(getattr(cuda_config, "ENABLE_CUDASIM", 0))


def lanes_of(mask):
    return [lane for lane in range(WARP_SIZE) if mask >> lane & 1]


def fmt_ranges(ids):
    """[0, 1, 2, 5] -> '0-2, 5'."""
    ids = sorted(ids)
    parts, start = [], None
    for i, x in enumerate(ids):
        if start is None:
            start = x
        if i + 1 == len(ids) or ids[i + 1] != x + 1:
            parts.append(str(start) if start == x else f"{start}-{x}")
            start = None
    return ", ".join(parts) if parts else "none"
