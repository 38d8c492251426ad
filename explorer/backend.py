"""Where kernels run: a real CUDA GPU, or Numba's CUDA simulator when the user asks for it.

Numba decides between the real driver and the simulator when `numba.cuda` is first imported, so
the choice is made here, before any kernel module is imported. A GPU is detected through the
driver library directly (ctypes), which leaves both choices open. Without a GPU the explorer
never falls back silently: `select("auto")` raises `NoGPUError`, whose message offers the
simulator and states its size limit.
"""
from __future__ import annotations

import ctypes
import datetime
import os
import platform
import sys
from dataclasses import dataclass, field
from importlib import metadata

#: The simulator runs every CUDA thread as a Python thread: about 2.4 s for a 176k-arc graph with
#: the simplest kernel, much longer with BFS-4K's warp-level kernels. Larger graphs are refused.
SIMULATOR_MAX_ARCS = 200_000


#: Under the simulator every GPU thread is a Python thread: 1024-thread blocks make a 10-vertex
#: BFS-4K run take minutes. Demos there use 32-thread blocks (and say so).
SIMULATOR_KNOBS = {"single_block_threads": 32, "K6": 32, "block_threads": 32}


def simulator_knobs_note(applied: dict | None = None) -> str:
    applied = SIMULATOR_KNOBS if applied is None else applied
    return ("simulator: using 32-thread blocks (" + ", ".join(f"{k}={v}" for k, v in applied.items())
            + ") so that a small graph takes seconds, not minutes (every GPU thread is a Python thread)")


class BackendError(RuntimeError):
    """The requested backend cannot be used in this process."""


class NoGPUError(BackendError):
    """No CUDA GPU is usable and the simulator was not requested."""


@dataclass(frozen=True)
class BackendInfo:
    kind: str  # "gpu" or "simulator"
    device_name: str
    compute_capability: str = ""
    driver: str = ""
    versions: dict = field(default_factory=dict)
    max_arcs: int | None = None  # None: limited by GPU memory only

    @property
    def is_simulator(self) -> bool:
        return self.kind == "simulator"

    def describe(self) -> str:
        if self.is_simulator:
            return (f"Numba CUDA simulator on the CPU (no GPU): graphs up to {self.max_arcs:,} arcs; "
                    "timings are not GPU timings")
        return f"{self.device_name} (compute {self.compute_capability}, driver {self.driver})"

    def as_dict(self) -> dict:
        return {
            "backend": self.kind,
            "name": self.device_name,
            "compute_capability": self.compute_capability,
            "driver": self.driver,
            "versions": dict(self.versions),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        }


_selected: BackendInfo | None = None


def simulator_requested() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "") not in ("", "0")


def gpu_present() -> tuple[bool, str]:
    """Ask the CUDA driver library for devices, without importing numba.cuda."""
    names = {"linux": ["libcuda.so.1", "libcuda.so"], "win32": ["nvcuda.dll"]}.get(sys.platform, ["libcuda.dylib"])
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        if lib.cuInit(0) != 0:
            return False, f"the CUDA driver ({name}) failed to initialise"
        count = ctypes.c_int(0)
        if lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value == 0:
            return False, "the CUDA driver reports no device"
        return True, f"{count.value} CUDA device(s)"
    return False, "no CUDA driver library (libcuda) was found"


def _versions() -> dict:
    out = {"python": platform.python_version()}
    for pkg in ("numpy", "numba", "numba-cuda"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "missing"
    return out


def select(mode: str = "auto") -> BackendInfo:
    """Choose the backend for this process: "auto" (GPU, or NoGPUError), "gpu" or "simulator".

    The environment variable NUMBA_ENABLE_CUDASIM=1 selects the simulator as well.
    """
    global _selected
    if mode not in ("auto", "gpu", "simulator"):
        raise ValueError(f"backend mode {mode!r} is invalid: use 'auto', 'gpu' or 'simulator'")
    if _selected is not None:
        if mode == "auto" or mode == _selected.kind:
            return _selected
        raise BackendError(
            f"this process already uses the {_selected.kind} backend; Numba cannot switch after "
            "numba.cuda is imported: restart the Python kernel to change it")
    if mode == "simulator" or (mode == "auto" and simulator_requested()):
        _selected = _enable_simulator()
        return _selected
    ok, why = gpu_present()
    if not ok:
        raise NoGPUError(
            f"No CUDA GPU is available ({why}). The kernels can run on Numba's CUDA simulator instead, "
            f"for graphs up to {SIMULATOR_MAX_ARCS:,} arcs and at CPU speed: call "
            "explorer.backend.select('simulator') before running, or set NUMBA_ENABLE_CUDASIM=1.")
    _selected = _gpu_info()
    return _selected


def selected() -> BackendInfo | None:
    """The backend chosen so far, or None (nothing is selected by asking)."""
    return _selected


def current() -> BackendInfo:
    """The selected backend, selecting "auto" on first use."""
    return _selected if _selected is not None else select("auto")


def check_graph_size(num_arcs: int) -> None:
    info = current()
    if info.max_arcs is not None and num_arcs > info.max_arcs:
        raise BackendError(
            f"graph has {num_arcs:,} arcs; the CUDA simulator is limited to {info.max_arcs:,} arcs "
            "(it runs each GPU thread as a Python thread). Use a smaller graph or a real GPU.")


def _enable_simulator() -> BackendInfo:
    import numba

    cuda_mod = sys.modules.get("numba.cuda")
    if cuda_mod is not None and not getattr(numba.config, "ENABLE_CUDASIM", 0):
        raise BackendError("numba.cuda was already imported for a real GPU in this process; "
                           "restart the Python kernel and select the simulator first")
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    numba.core.config.reload_config()
    from kernels import cudasim  # the warp intrinsics, clusters and grid barrier Numba's simulator lacks

    cudasim.install()
    return BackendInfo(kind="simulator", device_name="Numba CUDA simulator (CPU)",
                       versions=_versions(), max_arcs=SIMULATOR_MAX_ARCS)


def _gpu_info() -> BackendInfo:
    import numba
    from numba import cuda

    # Small grids are normal for the first and last BFS levels: don't warn about every launch.
    numba.config.CUDA_LOW_OCCUPANCY_WARNINGS = 0

    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    cc = ".".join(str(x) for x in dev.compute_capability)
    try:
        drv = cuda.cudadrv.driver.driver.get_version()
        driver = ".".join(str(x) for x in drv)
    except Exception:  # the version is informative only
        driver = "unknown"
    return BackendInfo(kind="gpu", device_name=name, compute_capability=cc, driver=driver,
                       versions=_versions())


def cpu_info() -> BackendInfo:
    """The host CPU, for techniques that run there (Numba parallel=True)."""
    return BackendInfo(kind="cpu", device_name=platform.processor() or platform.machine(),
                       versions=_versions())
