"""Where a technique's steps run: a GPU, Numba's CUDA simulator, or the CPU.

A runtime gives the enactor the same four things whatever the backend: arrays (device, or
pinned/plain host), a launcher (`go(kernel, blocks, threads, shared, *args)`, `go.zero`,
`go.cluster`), a way to compile before the clock starts (`prepare`), and a clock. Nothing above
this module branches on the backend.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

import numpy as np

from .. import backend
from ..device import DeviceLimits


#: One run's set-up or step at a time in a process: the simulator keeps its threads' state in
#: Numba's globals, and the launcher keeps marshalled arguments per kernel. Runs in several threads
#: take turns step by step (never across a yield, so a run held by its caller blocks no other).
STEP_LOCK = threading.RLock()


class _HostClock:
    """Wall-clock time of steps on the host (the simulator's events carry no time; the CPU has none).

    The run's elapsed time runs from the first step's start to the last step's completion, less
    the time the caller held levels in between (a hold after the last step is outside it anyway)."""

    def __init__(self):
        self._begin = self._start = self._stop = None
        self._held = self._pending = 0.0

    def start(self, go) -> None:
        self._commit_holds()
        self._start = time.perf_counter()
        if self._begin is None:
            self._begin = self._start

    def _commit_holds(self) -> None:
        self._held += self._pending
        self._pending = 0.0

    def stop(self, go) -> None:
        self._stop = time.perf_counter()

    def step_ms(self) -> float:
        return (self._stop - self._start) * 1e3

    def hold(self, seconds: float) -> None:
        """The caller held a level for `seconds`: not BFS time."""
        self._pending += seconds

    def elapsed_ms(self) -> float:
        if self._begin is None:
            return 0.0
        return max(0.0, (self._stop - self._begin - self._held) * 1e3)


class _EventClock(_HostClock):
    """CUDA events around each step; the run's elapsed time from the first step's start event to
    the last step's stop event, less the time the caller held levels in between (the GPU is idle
    then: the next step is launched only when the caller asks for it)."""

    def __init__(self):
        super().__init__()
        from numba import cuda

        self._cuda = cuda
        self._start, self._stop = cuda.event(), cuda.event()
        self._step = self._start  # the running step's start event

    def start(self, go) -> None:
        self._commit_holds()
        if self._begin is None:  # the run's clock starts with its first step, whose start it is:
            self._begin = self._step = self._cuda.event()  # no second event before its launch
        else:
            self._step = self._start
        go.record(self._step)

    def stop(self, go) -> None:
        go.record(self._stop)

    def step_ms(self) -> float:
        return self._cuda.event_elapsed_time(self._step, self._stop)

    def elapsed_ms(self) -> float:
        if self._begin is None:
            return 0.0
        return max(0.0, self._cuda.event_elapsed_time(self._begin, self._stop) - self._held * 1e3)


class Runtime:
    """The GPU runtime; the simulator's and the CPU's below override what differs."""

    kind = "gpu"

    def __init__(self, info: backend.BackendInfo, limits: DeviceLimits | None = None):
        self.info = info
        self._limits = limits
        self.launcher = self._make_launcher()

    def _make_launcher(self):
        from .launcher import Launcher

        return Launcher.shared()

    @property
    def limits(self) -> DeviceLimits:
        if self._limits is None:
            self._limits = DeviceLimits.from_current_device()
        return self._limits

    def with_limits(self, limits: DeviceLimits | None) -> "Runtime":
        """The same runtime with other device limits (tests use small ones to exercise every decision)."""
        return self if limits is None else type(self)(self.info, limits)

    # ---- arrays
    def device_array(self, shape, dtype):
        from numba import cuda

        return cuda.device_array(shape, dtype)

    def host_array(self, shape, dtype):
        """Host memory the GPU copies into fastest (pinned)."""
        from numba import cuda

        return cuda.pinned_array(shape, dtype)

    def mapped_array(self, shape, dtype):
        """Host memory a kernel reads and writes while it runs (pinned, mapped into the GPU's space)."""
        from numba import cuda

        return cuda.mapped_array(shape, dtype)

    def to_device(self, array: np.ndarray):
        from numba import cuda

        return cuda.to_device(array)

    def to_host(self, array) -> np.ndarray:
        return array.copy_to_host()

    # ---- launches
    def prepare(self, launch: Callable, on_compile: Callable[..., None]) -> None:
        """Compile (or load from the disk cache) what `launch(go)` would launch, launching nothing."""
        launch(self.launcher.preparing(on_compile))

    def launch_now(self, on_compile, kernel, blocks, threads, shared, *args) -> None:
        """An untimed launch (set-up): prepared and launched at once."""
        self.launcher.prepare(kernel, blocks, threads, shared, *args, on_compile=on_compile)
        self.launcher(kernel, blocks, threads, shared, *args)

    def read(self, dev, host) -> None:
        """host[:] = dev once everything launched before has run (a step's read-back)."""
        self.launcher.read(dev, host)

    def clock(self):
        return _EventClock()

    def device_dict(self, limits: DeviceLimits | None) -> dict:
        d = self.info.as_dict()
        if limits is not None:
            import dataclasses

            d["limits"] = dataclasses.asdict(limits)
        return d


class SimulatorRuntime(Runtime):
    """Numba's CUDA simulator: Numba's own launch path, host memory for pinned arrays, host time."""

    kind = "simulator"

    def _make_launcher(self):
        from .launcher import PlainLauncher

        return PlainLauncher()

    @property
    def limits(self) -> DeviceLimits:
        if self._limits is None:
            self._limits = DeviceLimits.simulator()
        return self._limits

    def host_array(self, shape, dtype):
        return np.zeros(shape, dtype)

    mapped_array = host_array

    def prepare(self, launch, on_compile) -> None:
        pass  # nothing is compiled

    def launch_now(self, on_compile, kernel, blocks, threads, shared, *args) -> None:
        self.launcher(kernel, blocks, threads, shared, *args)

    def clock(self):
        return _HostClock()


class _CPUGo:
    """The CPU's launcher: `go(function, *args)` calls it (Numba parallel=True code)."""

    def __call__(self, function, *args) -> None:
        function(*args)

    def zero(self, arr) -> None:
        arr[:] = 0

    def record(self, event) -> None:
        pass


class CPURuntime(Runtime):
    """Host code: numpy arrays, no launches, host time."""

    kind = "cpu"

    def __init__(self, info: backend.BackendInfo | None = None, limits=None):
        self.info = info or backend.cpu_info()
        self._limits = None
        self.launcher = _CPUGo()

    @property
    def limits(self):
        return None

    def with_limits(self, limits):
        return self

    def device_array(self, shape, dtype):
        return np.empty(shape, dtype)

    host_array = mapped_array = SimulatorRuntime.host_array

    def to_device(self, array):
        return array

    def to_host(self, array):
        return np.array(array)

    def prepare(self, launch, on_compile) -> None:
        pass

    def launch_now(self, on_compile, function, *args) -> None:
        function(*args)

    def read(self, dev, host) -> None:
        host[:] = dev

    def clock(self):
        return _HostClock()


def for_technique(runtimes: frozenset) -> Runtime:
    """The runtime a technique runs on here: the CPU for a CPU technique, else the selected backend."""
    if runtimes == frozenset({"cpu"}):
        return CPURuntime()
    info = backend.current()
    if info.kind not in runtimes:
        raise backend.BackendError(f"this technique runs on {', '.join(sorted(runtimes))}, not on the {info.kind}")
    return SimulatorRuntime(info) if info.is_simulator else Runtime(info)
