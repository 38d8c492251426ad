"""Energy of a batch, from NVML (the NVIDIA Management Library), through ctypes.

Two ways, as the GPU allows: its total-energy counter (nvmlDeviceGetTotalEnergyConsumption,
millijoules since the driver loaded; Volta and later), read every 10 ms on a thread and
interpolated at each step's edges; or, as the paper does on its K40 (§IV-A), the board power
(nvmlDeviceGetPowerUsage, milliwatts) sampled every 10 ms on a thread and integrated over each
step. Either measures the whole board while the steps
run (idle draw included), not the kernels alone, and neither counts the time the caller holds a
progress record. Both are coarse for steps of a few milliseconds: the counter and the power
reading update every few to few tens of milliseconds, so time batches of a second or more when
comparing energy (benchmarks/multisearch.py repeats a method until it has).

Unsupported, the meter says why: under the simulator (a CPU), without libnvidia-ml.so.1, or when
the GPU reports neither (NVML's NOT_SUPPORTED, e.g. some GeForce boards).
"""
from __future__ import annotations

import ctypes
import threading
import time
from dataclasses import dataclass

import numpy as np

NVML_SUCCESS = 0
NVML_ERROR_NOT_SUPPORTED = 3
#: Seconds between power samples (the paper's 10 ms).
SAMPLE_PERIOD = 0.010


@dataclass(frozen=True)
class EnergyReading:
    joules: float
    seconds: float  # host wall time the reading covers

    @property
    def watts(self) -> float:
        return self.joules / self.seconds if self.seconds > 0 else 0.0


class _NVML:
    """The few NVML calls used here; `lib` is the loaded library (tests pass a stand-in)."""

    def __init__(self, lib):
        self.lib = lib
        rc = lib.nvmlInit_v2()
        if rc != NVML_SUCCESS:
            raise OSError(f"nvmlInit failed: {self.error(rc)}")

    def error(self, rc: int) -> str:
        try:
            self.lib.nvmlErrorString.restype = ctypes.c_char_p
            return self.lib.nvmlErrorString(rc).decode()
        except Exception:  # a description only
            return f"NVML error {rc}"

    def handle(self, pci_bus_id: str | None):
        h = ctypes.c_void_p()
        if pci_bus_id is not None:
            rc = self.lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(h))
            if rc == NVML_SUCCESS:
                return h
        rc = self.lib.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(h))
        if rc != NVML_SUCCESS:
            raise OSError(f"no NVML device: {self.error(rc)}")
        return h

    def energy_mj(self, h) -> tuple[int, int]:
        v = ctypes.c_ulonglong()
        rc = self.lib.nvmlDeviceGetTotalEnergyConsumption(h, ctypes.byref(v))
        return rc, int(v.value)

    def power_mw(self, h) -> tuple[int, int]:
        v = ctypes.c_uint()
        rc = self.lib.nvmlDeviceGetPowerUsage(h, ctypes.byref(v))
        return rc, int(v.value)


def _load_nvml():
    return ctypes.CDLL("libnvidia-ml.so.1")


class EnergyMeter:
    """Joules over a batch's steps: `begin()` before a step, `end()` after it, `take()` for the
    batch's total since the last take (None when unsupported; `note` says why or how); `close()`
    once the run is over.

    NVML is read on a thread of the meter's own, every SAMPLE_PERIOD, from the first begin() to
    close(): a read can take milliseconds (3.5 ms on an H100), and a step waiting for two of them
    would leave the GPU idle that long. begin() and end() only note the host clock; take() reads
    NVML once more (so that a sample follows the batch's last step) and measures each step's window
    from the samples: the counter interpolated at its edges, or the power integrated over it."""

    def __init__(self, runtime_kind: str, pci_bus_id: str | None = None, lib=None):
        self.mode: str | None = None
        self._samples: list[tuple[float, int]] = []  # (host time, mJ or mW), in time order
        self._windows: list[tuple[float, float]] = []  # the steps since the last take
        self._lock = threading.Lock()
        self._thread = None
        if runtime_kind == "simulator":
            self.note = "no energy under the simulator: it runs on the CPU"
            return
        if runtime_kind != "gpu":
            self.note = f"no GPU energy on the {runtime_kind}"
            return
        try:
            self._nvml = _NVML(lib if lib is not None else _load_nvml())
            self._h = self._nvml.handle(pci_bus_id)
        except OSError as err:
            self.note = f"no energy: NVML is unavailable ({err})"
            return
        rc, _ = self._nvml.energy_mj(self._h)
        if rc == NVML_SUCCESS:
            self.mode = "counter"
            self.note = (f"NVML total-energy counter read every {SAMPLE_PERIOD * 1e3:.0f} ms and interpolated at the "
                         "steps' edges (whole board, idle draw included)")
            return
        rc2, _ = self._nvml.power_mw(self._h)
        if rc2 == NVML_SUCCESS:
            self.mode = "sampled"
            self.note = (f"NVML power sampled every {SAMPLE_PERIOD * 1e3:.0f} ms and integrated, as the paper "
                         f"does (the energy counter: {self._nvml.error(rc)})")
            return
        self.note = f"this GPU reports neither its energy nor its power (NVML: {self._nvml.error(rc)})"

    @property
    def supported(self) -> bool:
        return self.mode is not None

    def _read(self) -> None:
        t = time.perf_counter()
        rc, value = (self._nvml.energy_mj if self.mode == "counter" else self._nvml.power_mw)(self._h)
        if rc == NVML_SUCCESS:
            with self._lock:  # stamped halfway through the read
                self._samples.append(((t + time.perf_counter()) / 2, value))

    def _sample(self, stop: threading.Event) -> None:
        while not stop.wait(SAMPLE_PERIOD):
            self._read()

    def begin(self) -> None:
        if self.mode is None:
            return
        if self._thread is None:
            self._read()  # a sample before the first step
            self._stop = threading.Event()
            self._thread = threading.Thread(target=self._sample, args=(self._stop,), daemon=True,
                                            name="energy-meter")
            self._thread.start()
        self._t0 = time.perf_counter()

    def end(self) -> None:
        """After the step's work has completed (its results were read back)."""
        if self.mode is None:
            return
        self._windows.append((self._t0, time.perf_counter()))

    def take(self) -> EnergyReading | None:
        """The energy since the last take (the batch's), or None when unsupported."""
        if self.mode is None:
            return None
        if not self._windows:
            return EnergyReading(0.0, 0.0)
        self._read()
        with self._lock:
            if not self._samples:  # NVML stopped answering since the meter chose its mode
                self._windows = []
                return None
            self._samples.sort()  # two threads read: their stamps may cross
            t, v = (np.array(x, dtype=np.float64) for x in zip(*self._samples))
            last = self._windows[-1][1]
            keep = max(0, int(np.searchsorted(t, last)) - 1)  # the sample before the last edge stays
            self._samples = self._samples[keep:]
        a, b = (np.array(x) for x in zip(*self._windows))
        self._windows = []
        if self.mode == "counter":
            joules = float(np.sum(np.interp(b, t, v) - np.interp(a, t, v))) / 1e3
        else:  # the power's trapezoids, each window's edges interpolated
            joules = sum(_integral(t, v, lo, hi) for lo, hi in zip(a, b)) / 1e3
        return EnergyReading(joules, float(np.sum(b - a)))

    def close(self) -> None:
        """Stop sampling (the run is over); a later begin() starts again. The thread is not waited
        for (joining it took 0.3 s at the end of a closeness chunk on an H100): it ends after its
        current read."""
        if self._thread is not None:
            self._stop.set()
            self._thread = None
            with self._lock:
                self._samples = []


def _integral(t: np.ndarray, p: np.ndarray, lo: float, hi: float) -> float:
    """The integral of the power p (interpolated between its samples at times t) from lo to hi."""
    inner = (t > lo) & (t < hi)
    x = np.concatenate(([lo], t[inner], [hi]))
    y = np.interp(x, t, p)
    return float(np.sum((x[1:] - x[:-1]) * (y[1:] + y[:-1]) / 2))


def pci_bus_id() -> str | None:
    """The current CUDA device's PCI bus id as NVML writes it (domain:bus:device.function)."""
    try:
        from numba import cuda

        dev = cuda.get_current_device()
        return f"{dev.PCI_DOMAIN_ID:08X}:{dev.PCI_BUS_ID:02X}:{dev.PCI_DEVICE_ID:02X}.0"
    except Exception:  # NVML then takes device 0
        return None
