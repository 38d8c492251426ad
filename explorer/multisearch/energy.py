"""Energy of a batch, from NVML (the NVIDIA Management Library), through ctypes.

Two ways, as the GPU allows: its total-energy counter (nvmlDeviceGetTotalEnergyConsumption,
millijoules since the driver loaded; Volta and later), read before and after each step; or, as the
paper does on its K40 (§IV-A), the board power (nvmlDeviceGetPowerUsage, milliwatts) sampled every
10 ms on a thread and integrated over each step. Either measures the whole board while the steps
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
    batch's total since the last take (None when unsupported; `note` says why or how)."""

    def __init__(self, runtime_kind: str, pci_bus_id: str | None = None, lib=None):
        self.mode: str | None = None
        self._joules = 0.0
        self._seconds = 0.0
        self._samples: list = []
        self._sampling = threading.Event()
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
            self.mode, self.note = "counter", "NVML total-energy counter (whole board, idle draw included)"
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

    def begin(self) -> None:
        if self.mode is None:
            return
        self._t0 = time.perf_counter()
        if self.mode == "counter":
            self._e0 = self._nvml.energy_mj(self._h)[1]
        else:
            self._samples = [(self._t0, self._nvml.power_mw(self._h)[1])]
            self._sampling.set()
            self._thread = threading.Thread(target=self._sample, daemon=True)
            self._thread.start()

    def _sample(self) -> None:
        while self._sampling.is_set():
            time.sleep(SAMPLE_PERIOD)
            rc, mw = self._nvml.power_mw(self._h)
            if rc == NVML_SUCCESS:
                self._samples.append((time.perf_counter(), mw))

    def end(self) -> None:
        """After the step's work has completed (its results were read back)."""
        if self.mode is None:
            return
        t1 = time.perf_counter()
        if self.mode == "counter":
            self._joules += (self._nvml.energy_mj(self._h)[1] - self._e0) / 1e3
        else:
            self._sampling.clear()
            self._thread.join()
            samples = self._samples + [(t1, self._nvml.power_mw(self._h)[1])]
            self._joules += sum((t_b - t_a) * (p_a + p_b) / 2e3
                                for (t_a, p_a), (t_b, p_b) in zip(samples, samples[1:]))
        self._seconds += t1 - self._t0

    def take(self) -> EnergyReading | None:
        """The energy since the last take (the batch's), or None when unsupported."""
        if self.mode is None:
            return None
        reading = EnergyReading(self._joules, self._seconds)
        self._joules = self._seconds = 0.0
        return reading


def pci_bus_id() -> str | None:
    """The current CUDA device's PCI bus id as NVML writes it (domain:bus:device.function)."""
    try:
        from numba import cuda

        dev = cuda.get_current_device()
        return f"{dev.PCI_DOMAIN_ID:08X}:{dev.PCI_BUS_ID:02X}:{dev.PCI_DEVICE_ID:02X}.0"
    except Exception:  # NVML then takes device 0
        return None
