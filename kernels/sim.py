"""Warp intrinsics for Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``).

numba-cuda's simulator runs every CUDA thread of a block as a Python thread
(one block at a time) and swaps the global name ``cuda`` inside kernels and
device functions for a ``FakeCUDAModule`` instance. That module has no warp
intrinsics. :func:`install` patches them in, with real lock-step semantics, so
that kernels written for the GPU run unchanged under the simulator:

================  =======================================================
intrinsic         simulated semantics (numba-cuda 0.30.4 signatures)
================  =======================================================
shfl_sync         ``(mask, value, src_lane)`` -> value of lane ``src_lane % 32``
shfl_up_sync      ``(mask, value, delta)`` -> value of ``lane - delta``, own if < 0
shfl_down_sync    ``(mask, value, delta)`` -> value of ``lane + delta``, own if > 31
shfl_xor_sync     ``(mask, value, lane_mask)`` -> value of ``lane ^ lane_mask``
ballot_sync       ``(mask, pred)`` -> int32 bit mask of participating lanes with pred
all_sync          ``(mask, pred)`` -> bool
any_sync          ``(mask, pred)`` -> bool
eq_sync           ``(mask, pred)`` -> bool, all predicates (as booleans) equal
match_any_sync    ``(mask, value)`` -> int32 mask of lanes holding the same value
match_all_sync    ``(mask, value)`` -> (int32 mask or 0, bool)
syncwarp          ``()`` or ``(mask)``
activemask        ``()`` -> uint32 mask of the lanes converged with the caller (emulated)
lanemask_lt       ``()`` -> uint32 ``(1 << lane) - 1``
nanosleep         ``(ns)`` -> sleeps ``ns`` nanoseconds (real time, perturbs scheduling)
================  =======================================================

It also replaces the simulator's ``popc``/``clz``/``ffs``/``brev``, which
format the value with ``'{:032b}'`` and therefore give wrong answers for
negative or 64-bit values (``popc(int32(-1))`` was 1, not 32). That matters
because ``ballot_sync`` returns a *signed* int32 in numba-cuda: a ballot with
lane 31 set is negative.

Hardware details reproduced exactly
-----------------------------------
* The shuffle offset/lane argument is truncated to 5 bits, as PTX
  ``shfl.sync`` does (``b[4:0]``): ``shfl_up_sync(m, v, 33)`` behaves like
  delta 1, ``shfl_sync(m, v, 35)`` reads lane 3. There is no ``width``
  argument: numba-cuda 0.30.4's shuffles take exactly three arguments (the
  CUDA C++ ``width`` is hard-wired to 32).
* Return types follow numba-cuda's typing: a shuffle returns the type of
  ``value`` (int32, int64, float32 or float64; a Python int is int64 and a
  Python float float64 under Numba, so they come back as ``np.int64`` /
  ``np.float64``). Any other value type (bool, uint32, int16, float16, ...)
  raises ``TypeError`` here because it is a TypingError on the GPU.
  ``ballot_sync`` and ``match_*_sync`` return int32 (signed!),
  ``all/any/eq_sync`` bool, ``activemask``/``lanemask_lt`` uint32.
  Predicates must be integers or booleans (a float predicate is a
  TypingError on the GPU and a ``TypeError`` here).
* Masks are truncated to 32 bits, so an int32 ballot result (e.g. -1) can be
  used as a mask.

Lock step
---------
A warp is 32 consecutive linear thread ids
(``x + y*blockDim.x + z*blockDim.x*blockDim.y``). A block whose size is not a
multiple of 32 has a partial last warp; its missing lanes are absent. Each
warp has one barrier (condition variable + pending table) owned by the
block. A lane calling a ``*_sync`` intrinsic registers (intrinsic, mask,
value) and waits until every lane named in ``mask`` is waiting too; then all
results are computed at once from the values passed at that call and every
participant is released. Disjoint masks (divergent branches) synchronise
independently, as on Volta and later. Misuse that is undefined behaviour on
hardware raises :class:`WarpSyncError` with the block, warp and lanes:

* the calling lane is not in its own mask;
* lanes of one barrier disagree on the intrinsic or on the mask;
* the mask names a lane that has exited the kernel or does not exist
  (partial warp) -- see ``exited_lanes`` below;
* a shuffle reads from a lane that does not take part in the call (not in
  the mask, exited or absent) -- see ``undefined_read`` below.

A barrier that cannot complete (one lane in ``shfl_sync``, another in
``syncthreads`` or in a different ``*_sync`` that never meets it) raises
:class:`WarpTimeoutError` after ``config.timeout`` seconds (default 60,
environment variable ``BFS4K_SIM_WARP_TIMEOUT``) naming the intrinsic, the
warp, the missing lanes and what each of them is doing. The simulator's own
``syncthreads`` keeps its semantics: its BlockManager only counts threads
blocked in ``syncthreads``, and a thread waiting in a warp barrier simply
counts as running. (``install`` only wraps ``BlockThread.syncthreads`` to
flag the lane as blocked for ``activemask``, turns ``BlockThread.abort`` into
a property that wakes the lane's warp barrier when the BlockManager aborts a
failed block, and wraps ``BlockThread.run`` to record lane exits.)

Settings (``kernels.sim.config``, or temporarily ``with sim.settings(...)``)
---------------------------------------------------------------------------
``timeout``         seconds a lane waits in a warp barrier before raising.
``exited_lanes``    ``"raise"`` (default): a mask naming an exited or absent
                    lane raises -- stricter than the CUDA guide, which only
                    requires all *non-exited* lanes of the mask to take part,
                    but it catches the classic ``if tid >= n: return``
                    followed by a full-mask reduction that then reads garbage.
                    ``"ignore"``: documented hardware behaviour, exited and
                    absent lanes are dropped from the mask (they count as 0
                    in ballot/any/all); reading from them is still caught by
                    ``undefined_read``.
``undefined_read``  ``"raise"`` (default) or ``"poison"``: a shuffle from a
                    non-participating lane returns 0xDEADBEEF-like garbage
                    (NaN for floats) instead of raising, for code that reads
                    and then discards such values, as is legal on hardware.

Limits (what still differs from hardware)
-----------------------------------------
* No lock step outside the sync intrinsics: between two ``*_sync`` calls the
  lanes of a warp are ordinary Python threads scheduled in any order.
  Warp-synchronous code that relies on implicit lock step (pre-Volta style,
  no ``syncwarp``) is not emulated -- it is wrong on Volta+ too.
* Memory model: all memory is sequentially consistent Python/NumPy memory
  (fences are no-ops, every write is visible at once); races that would
  need ``syncwarp``/``threadfence`` on hardware can pass here. Conversely a
  read-after-write across lanes is only guaranteed on the GPU with
  ``syncwarp``/``syncthreads`` between them -- write tests that way.
* ``activemask()`` cannot see divergence directly: the simulator has no
  program counter per warp. It emulates it instead: the calling lane waits
  until every other live lane of its warp is blocked (in a ``*_sync``
  intrinsic, in ``syncthreads`` or in ``activemask``) or has exited, then
  returns the lanes waiting in ``activemask`` at the *same call stack*.
  Converged code therefore gets all non-exited lanes and an ``if/else``
  gets its branch's lanes, as on hardware. It differs when lanes of one
  branch on hardware are still running elsewhere: a lane that is merely
  slower but at the same call joins the group (the hardware might have
  split them, so the simulator can only be more converged), and a lane that
  never blocks (a spin loop waiting for the caller) stalls it until the
  timeout. Exited lanes are never included (they drop out whenever they
  exit, so with the simple "all non-exited lanes" rule a lane that finishes
  early would make the answer depend on timing).
* ``cuda.cg.this_grid().sync()`` only works for a single block (the
  simulator runs blocks one after another), and blocks never run
  concurrently, so inter-block communication through global memory that
  waits on another block deadlocks. The exception is a cluster launch,
  :func:`run_cluster`: a cluster's blocks run side by side (one cluster at a
  time), each with its own shared memory, and the ``kernels.cluster``
  intrinsics (cluster barrier, distributed shared memory) work between them.
* Arithmetic follows NumPy scalar rules, not Numba typing: ``int32 + int32``
  stays int32 here but is int64 on the GPU. Values derived from shuffles keep
  the dtype they had.
* One kernel at a time; blocks are Python threads, so keep blocks small in
  tests: the simulator's own ``syncthreads`` polls every thread of the block,
  about 0.1 s per call at 1024 threads on a 2-core machine (a warp barrier
  costs a few ms). Simulated single-block kernels should use 64-128 threads.
* ``nanosleep(ns)`` really sleeps ``ns`` nanoseconds of wall time (the GPU
  caps it at about 1 ms); use it only to shake up scheduling in tests.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager

import numpy as np

__all__ = [
    "WarpSyncError",
    "WarpTimeoutError",
    "config",
    "install",
    "is_installed",
    "run_cluster",
    "settings",
    "simulator_enabled",
]

FULL_MASK = 0xFFFFFFFF
WARP_SIZE = 32


class WarpSyncError(RuntimeError):
    """Misuse of a warp intrinsic that is undefined behaviour on hardware."""


class WarpTimeoutError(WarpSyncError):
    """A warp barrier did not complete within ``config.timeout`` seconds."""


class _Config:
    """Mutable simulator settings; see the module docstring."""

    def __init__(self):
        self.timeout = float(os.environ.get("BFS4K_SIM_WARP_TIMEOUT", "60"))
        self.exited_lanes = "raise"
        self.undefined_read = "raise"

    def __repr__(self):
        return (
            f"SimConfig(timeout={self.timeout!r}, exited_lanes={self.exited_lanes!r}, "
            f"undefined_read={self.undefined_read!r})"
        )


config = _Config()

_CHOICES = {"exited_lanes": ("raise", "ignore"), "undefined_read": ("raise", "poison")}


@contextmanager
def settings(**overrides):
    """Temporarily change ``config`` fields, e.g. ``with settings(timeout=0.5):``."""
    for key, value in overrides.items():
        if not hasattr(config, key):
            raise AttributeError(f"unknown simulator setting {key!r}")
        if key in _CHOICES and value not in _CHOICES[key]:
            raise ValueError(f"{key} must be one of {_CHOICES[key]}, got {value!r}")
    saved = {key: getattr(config, key) for key in overrides}
    for key, value in overrides.items():
        setattr(config, key, float(value) if key == "timeout" else value)
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


# --------------------------------------------------------------------------
# Value/type helpers mirroring numba-cuda's typing of the intrinsics


_SHFL_TYPES = (np.int32, np.int64, np.float32, np.float64)
_POISON = {
    np.int32: np.int32(-559038737),  # 0xDEADBEEF
    np.int64: np.int64(-2401053088876216593),  # 0xDEADBEEFDEADBEEF
    np.float32: np.float32("nan"),
    np.float64: np.float64("nan"),
}


def _shfl_value(op, value):
    """Normalise a shuffled value to the numpy type Numba would give it."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(
            f"{op}: cannot shuffle a boolean (numba-cuda: 'shfl_sync only supports 32- and "
            "64-bit ints and floats'; this is a TypingError on the GPU)"
        )
    if isinstance(value, _SHFL_TYPES):
        return value
    if isinstance(value, int):
        return np.int64(value)  # Numba types a Python int as int64
    if isinstance(value, float):
        return np.float64(value)
    raise TypeError(
        f"{op}: cannot shuffle a value of type {type(value).__name__} (numba-cuda: 'shfl_sync "
        "only supports 32- and 64-bit ints and floats', i.e. int32, int64, float32, float64; "
        "this is a TypingError on the GPU)"
    )


def _as_type(value, like):
    """``value`` converted to the numpy scalar type of ``like`` (C-style cast)."""
    if type(value) is type(like):
        return value
    return np.asarray(value).astype(type(like))[()]


def _predicate(op, pred):
    if isinstance(pred, (bool, np.bool_, int, np.integer)):
        return bool(pred)
    raise TypeError(
        f"{op}: predicate must be an integer or boolean, got {type(pred).__name__} "
        "(numba-cuda raises a TypingError on the GPU)"
    )


def _to_int32(bits):
    return np.asarray(bits & FULL_MASK, dtype=np.uint32).view(np.int32)[()]


def _match_key(op, value):
    """Bit pattern used by match_*_sync (floats compare bitwise, like the GPU)."""
    if isinstance(value, (np.floating, float)):
        dtype = np.float32 if isinstance(value, np.float32) else np.float64
        return np.asarray(value, dtype=dtype).view(np.uint32 if dtype is np.float32 else np.uint64)[()]
    if isinstance(value, (bool, np.bool_, int, np.integer)):
        return int(value)
    raise TypeError(f"{op}: value must be a 32- or 64-bit int or float, got {type(value).__name__}")


def _lanes(mask):
    return [lane for lane in range(WARP_SIZE) if mask >> lane & 1]


def _fmt_lanes(lanes):
    """[0, 1, 2, 5] -> '0-2, 5'."""
    lanes = sorted(lanes)
    parts, start = [], None
    for i, lane in enumerate(lanes):
        if start is None:
            start = lane
        if i + 1 == len(lanes) or lanes[i + 1] != lane + 1:
            parts.append(str(start) if start == lane else f"{start}-{lane}")
            start = None
    return ", ".join(parts) if parts else "none"


# --------------------------------------------------------------------------
# Per-warp barrier


class _Arrival:
    __slots__ = ("op", "mask", "value", "arg", "since")

    def __init__(self, op, mask, value, arg):
        self.op = op
        self.mask = mask
        self.value = value
        self.arg = arg
        self.since = time.monotonic()


class _Warp:
    """Barrier and bookkeeping for the lanes of one warp of one block."""

    def __init__(self, manager, warp_id, nlanes):
        self.manager = manager
        self.warp_id = warp_id
        self.nlanes = nlanes
        self.present = (1 << nlanes) - 1
        self.cond = threading.Condition(threading.Lock())
        self.pending = {}  # lane -> _Arrival, lanes waiting in a barrier
        self.results = {}  # lane -> (ok, value), completed but not yet picked up
        self.exited = 0  # mask of lanes whose thread has finished
        self.failures = {}  # lane -> exception text, for lanes that died with an error
        self.threads = {}  # lane -> BlockThread
        self.generation = 0  # number of completed barriers (debugging aid)
        self.am_waiting = {}  # lane -> call-stack key, lanes waiting in activemask()
        self.am_results = {}  # lane -> mask, activemask() answers not yet picked up

    # -- descriptions for error messages
    def where(self):
        first = self.warp_id * WARP_SIZE
        thread = next(iter(self.threads.values()), None)
        block = tuple(thread.blockIdx) if thread is not None else "?"
        return f"block {block}, warp {self.warp_id} (threads {first}-{first + self.nlanes - 1})"

    def lane_state(self, lane):
        if not self.present >> lane & 1:
            return f"lane {lane} does not exist (partial warp of {self.nlanes} lanes)"
        if self.exited >> lane & 1:
            if lane in self.failures:
                return f"lane {lane} exited with an error: {self.failures[lane]}"
            return f"lane {lane} has exited the kernel"
        if lane in self.pending:
            a = self.pending[lane]
            return f"lane {lane} waits in {a.op} with mask {a.mask:#010x}"
        if lane in self.am_waiting:
            return f"lane {lane} waits in activemask"
        if self.in_syncthreads(lane):
            return f"lane {lane} waits in syncthreads"
        return f"lane {lane} is running (has not reached the call)"

    # -- called with self.cond held
    def participants(self, mask):
        if config.exited_lanes == "ignore":
            return mask & self.present & ~self.exited
        return mask

    def check_names_dead(self, op, lane, mask):
        if config.exited_lanes == "ignore":
            return
        dead = mask & ~(self.present & ~self.exited)
        if dead:
            states = "; ".join(self.lane_state(x) for x in _lanes(dead))
            raise WarpSyncError(
                f"{op} in lane {lane} of {self.where()}: mask {mask:#010x} names lanes "
                f"{_fmt_lanes(_lanes(dead))} that will never arrive ({states}). Naming exited or "
                "absent lanes and reading from them is undefined on hardware; pass a mask of "
                "the live lanes (sim.settings(exited_lanes='ignore') to allow it)"
            )

    def try_complete(self, mask):
        """Complete the barrier of ``mask`` if all its lanes are waiting. Returns True if done."""
        part = self.participants(mask)
        lanes = _lanes(part)
        if not lanes or any(lane not in self.pending for lane in lanes):
            return False
        group = {lane: self.pending[lane] for lane in lanes}
        first = group[lanes[0]]
        problem = None
        for lane, a in group.items():
            if a.op != first.op:
                problem = (
                    f"lanes disagree on the intrinsic: lane {lanes[0]} is in {first.op}, "
                    f"lane {lane} in {a.op}"
                )
                break
            if a.mask != first.mask:
                problem = (
                    f"lanes disagree on the mask in {first.op}: lane {lanes[0]} passed "
                    f"{first.mask:#010x}, lane {lane} passed {a.mask:#010x}"
                )
                break
        if problem is None:
            try:
                out = _COMPUTE[first.op](self, part, group)
            except Exception as e:  # report to every participant, not just one
                problem = str(e)
        for lane in lanes:
            del self.pending[lane]
            if problem is None:
                self.results[lane] = (True, out[lane])
            else:
                self.results[lane] = (False, f"{problem} ({self.where()})")
        self.generation += 1
        self.cond.notify_all()
        return True

    def in_syncthreads(self, lane):
        thread = self.threads.get(lane)
        return thread is not None and (
            getattr(thread, "_bfs4k_in_syncthreads", False)
            or getattr(thread, "syncthreads_blocked", False)
        )

    def try_activemask(self):
        """Answer pending activemask() calls once the warp has settled.

        Settled: every live lane waits somewhere (a warp barrier, syncthreads,
        activemask) or has exited. Lanes waiting in activemask at the same
        call stack are taken as converged; everyone else is diverged.
        """
        if not self.am_waiting:
            return
        live = self.present & ~self.exited
        for lane in _lanes(live):
            if not (lane in self.pending or lane in self.am_waiting or self.in_syncthreads(lane)):
                return
        groups = {}
        for lane, site in self.am_waiting.items():
            groups[site] = groups.get(site, 0) | 1 << lane
        for lane, site in self.am_waiting.items():
            self.am_results[lane] = groups[site]
        self.am_waiting.clear()
        self.cond.notify_all()

    def lane_exited(self, lane, failure):
        with self.cond:
            self.exited |= 1 << lane
            if failure is not None:
                self.failures[lane] = failure
            self.pending.pop(lane, None)
            self.am_waiting.pop(lane, None)
            if config.exited_lanes == "ignore":
                # Barriers that were only waiting for this lane can now complete.
                for mask in {a.mask for a in self.pending.values()}:
                    self.try_complete(mask)
            self.try_activemask()
            self.cond.notify_all()

    @contextmanager
    def blocked(self, thread):
        """Around a block-wide barrier (syncthreads, the cluster barrier): the lane counts as
        settled for activemask() while it waits there."""
        self._set_blocked(thread, True)
        try:
            yield
        finally:
            self._set_blocked(thread, False)

    def _set_blocked(self, thread, flag):
        with self.cond:
            thread._bfs4k_in_syncthreads = flag
            if flag:
                self.try_activemask()


def _collective(op, mask, value=None, arg=None):
    """Register the calling lane at a warp barrier and wait for the result."""
    thread = threading.current_thread()
    warp = getattr(thread, "_bfs4k_warp", None)
    if warp is None:
        raise WarpSyncError(f"{op} called outside a simulated kernel thread")
    lane = thread.thread_id % WARP_SIZE
    mask = int(mask) & FULL_MASK
    if not mask >> lane & 1:
        raise WarpSyncError(
            f"{op} in lane {lane} of {warp.where()}: the calling lane is not in its own mask "
            f"{mask:#010x} (undefined on hardware)"
        )
    timeout = config.timeout
    deadline = time.monotonic() + timeout
    with warp.cond:
        warp.check_names_dead(op, lane, mask)
        warp.pending[lane] = _Arrival(op, mask, value, arg)
        if not warp.try_complete(mask):
            warp.try_activemask()
        while True:
            result = warp.results.pop(lane, None)
            if result is not None:
                ok, payload = result
                if ok:
                    return payload
                raise WarpSyncError(f"{op} in lane {lane}: {payload}")
            if getattr(thread, "abort", False):
                warp.pending.pop(lane, None)
                raise RuntimeError(f"abort flag set while lane {lane} waited in {op}")
            if config.exited_lanes != "ignore" and mask & warp.exited:
                warp.pending.pop(lane, None)
                warp.check_names_dead(op, lane, mask)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                part = warp.participants(mask)
                missing = [x for x in _lanes(part) if x not in warp.pending]
                states = "; ".join(warp.lane_state(x) for x in missing)
                warp.pending.pop(lane, None)
                raise WarpTimeoutError(
                    f"{op} in lane {lane} of {warp.where()} with mask {mask:#010x} timed out "
                    f"after {timeout:g} s waiting for lanes {_fmt_lanes(missing)} ({states}). "
                    "Likely a divergent warp barrier: every lane named in the mask must reach "
                    "the same *_sync intrinsic (kernels.sim.config.timeout sets the bound)"
                )
            # Woken by arrivals, exits and aborts (see _abort_set); no polling.
            warp.cond.wait(remaining)


# -- result computation for one completed barrier; returns {lane: result}


def _shfl_source(mode, lane, b):
    """PTX shfl.sync source lane for width 32 (c = 0 for up, 0x1f otherwise)."""
    bval = int(b) & 0x1F  # PTX uses b[4:0]
    if mode == "up":
        j = lane - bval
        return j if j >= 0 else lane
    if mode == "down":
        j = lane + bval
        return j if j <= 31 else lane
    if mode == "bfly":
        return lane ^ bval
    return bval  # idx


def _make_shfl(mode):
    def compute(warp, part, group):
        out = {}
        for lane, a in group.items():
            src = _shfl_source(mode, lane, a.arg)
            if part >> src & 1:
                out[lane] = _as_type(group[src].value, a.value)
            elif config.undefined_read == "poison":
                out[lane] = _POISON[type(a.value)]
            else:
                raise WarpSyncError(
                    f"{a.op}: lane {lane} reads lane {src}, which does not take part in the call "
                    f"(mask {a.mask:#010x}; {warp.lane_state(src)}); the value is undefined on "
                    "hardware (sim.settings(undefined_read='poison') to allow it)"
                )
        return out

    return compute


def _vote_all(warp, part, group):
    r = all(a.value for a in group.values())
    return dict.fromkeys(group, r)


def _vote_any(warp, part, group):
    r = any(a.value for a in group.values())
    return dict.fromkeys(group, r)


def _vote_eq(warp, part, group):
    r = len({a.value for a in group.values()}) == 1
    return dict.fromkeys(group, r)


def _ballot(warp, part, group):
    bits = 0
    for lane, a in group.items():
        if a.value:
            bits |= 1 << lane
    return dict.fromkeys(group, _to_int32(bits))


def _syncwarp(warp, part, group):
    return dict.fromkeys(group, None)


def _match_any(warp, part, group):
    out = {}
    for lane, a in group.items():
        bits = 0
        for other, b in group.items():
            if b.value == a.value:
                bits |= 1 << other
        out[lane] = _to_int32(bits)
    return out


def _match_all(warp, part, group):
    same = len({a.value for a in group.values()}) == 1
    r = (_to_int32(part if same else 0), same)
    return dict.fromkeys(group, r)


_COMPUTE = {
    "shfl_sync": _make_shfl("idx"),
    "shfl_up_sync": _make_shfl("up"),
    "shfl_down_sync": _make_shfl("down"),
    "shfl_xor_sync": _make_shfl("bfly"),
    "all_sync": _vote_all,
    "any_sync": _vote_any,
    "eq_sync": _vote_eq,
    "ballot_sync": _ballot,
    "syncwarp": _syncwarp,
    "match_any_sync": _match_any,
    "match_all_sync": _match_all,
}


# --------------------------------------------------------------------------
# Methods added to FakeCUDAModule (``self`` is the kernel's ``cuda``)


def _m_shfl_sync(self, mask, value, src_lane):
    return _collective("shfl_sync", mask, _shfl_value("shfl_sync", value), src_lane)


def _m_shfl_up_sync(self, mask, value, delta):
    return _collective("shfl_up_sync", mask, _shfl_value("shfl_up_sync", value), delta)


def _m_shfl_down_sync(self, mask, value, delta):
    return _collective("shfl_down_sync", mask, _shfl_value("shfl_down_sync", value), delta)


def _m_shfl_xor_sync(self, mask, value, lane_mask):
    return _collective("shfl_xor_sync", mask, _shfl_value("shfl_xor_sync", value), lane_mask)


def _m_ballot_sync(self, mask, predicate):
    return _collective("ballot_sync", mask, _predicate("ballot_sync", predicate))


def _m_all_sync(self, mask, predicate):
    return _collective("all_sync", mask, _predicate("all_sync", predicate))


def _m_any_sync(self, mask, predicate):
    return _collective("any_sync", mask, _predicate("any_sync", predicate))


def _m_eq_sync(self, mask, predicate):
    return _collective("eq_sync", mask, _predicate("eq_sync", predicate))


def _m_match_any_sync(self, mask, value):
    return _collective("match_any_sync", mask, _match_key("match_any_sync", value))


def _m_match_all_sync(self, mask, value):
    return _collective("match_all_sync", mask, _match_key("match_all_sync", value))


def _m_syncwarp(self, mask=FULL_MASK):
    _collective("syncwarp", mask)


def _m_activemask(self):
    # Emulated convergence: wait until the other live lanes are blocked or
    # exited, then answer the lanes at this same call (see module docstring).
    thread = threading.current_thread()
    warp = getattr(thread, "_bfs4k_warp", None)
    if warp is None:
        raise WarpSyncError("activemask called outside a simulated kernel thread")
    lane = thread.thread_id % WARP_SIZE
    site = []
    frame = sys._getframe(1)
    while frame is not None:
        site.append((frame.f_code, frame.f_lasti))
        frame = frame.f_back
    timeout = config.timeout
    deadline = time.monotonic() + timeout
    with warp.cond:
        warp.am_waiting[lane] = tuple(site)
        warp.try_activemask()
        while True:
            mask = warp.am_results.pop(lane, None)
            if mask is not None:
                return np.uint32(mask)
            if getattr(thread, "abort", False):
                warp.am_waiting.pop(lane, None)
                raise RuntimeError(f"abort flag set while lane {lane} waited in activemask")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                warp.am_waiting.pop(lane, None)
                busy = [
                    x
                    for x in _lanes(warp.present & ~warp.exited)
                    if not (x in warp.pending or x in warp.am_waiting or warp.in_syncthreads(x))
                    and x != lane
                ]
                raise WarpTimeoutError(
                    f"activemask in lane {lane} of {warp.where()} timed out after {timeout:g} s: "
                    f"lanes {_fmt_lanes(busy)} kept running without reaching a warp intrinsic, "
                    "syncthreads or the end of the kernel (the simulator waits for them to "
                    "decide which lanes are converged)"
                )
            warp.cond.wait(remaining)


def _m_lanemask_lt(self):
    lane = threading.current_thread().thread_id % WARP_SIZE
    return np.uint32((1 << lane) - 1)


def _m_nanosleep(self, ns):
    time.sleep((int(ns) & FULL_MASK) * 1e-9)  # the GPU takes a uint32


def _int_bits(val):
    """(unsigned bit pattern, width, numpy type or None for a Python int)."""
    if isinstance(val, np.integer):
        width = val.dtype.itemsize * 8
        return int(val) & ((1 << width) - 1), width, type(val)
    width = 64  # Numba types Python ints as int64
    return int(val) & ((1 << width) - 1), width, None


def _m_popc(self, val):
    bits, _, typ = _int_bits(val)
    n = bin(bits).count("1")
    return typ(n) if typ else n


def _m_clz(self, val):
    bits, width, typ = _int_bits(val)
    n = width - bits.bit_length()
    return typ(n) if typ else n


def _m_ffs(self, val):
    bits, _, _ = _int_bits(val)
    return np.uint32((bits & -bits).bit_length())


def _m_brev(self, val):
    bits, width, _ = _int_bits(val)
    width = 32 if width <= 32 else 64
    rev = int(format(bits & ((1 << width) - 1), f"0{width}b")[::-1], 2)
    return np.uint32(rev) if width == 32 else np.uint64(rev)


_METHODS = {
    "shfl_sync": _m_shfl_sync,
    "shfl_up_sync": _m_shfl_up_sync,
    "shfl_down_sync": _m_shfl_down_sync,
    "shfl_xor_sync": _m_shfl_xor_sync,
    "ballot_sync": _m_ballot_sync,
    "all_sync": _m_all_sync,
    "any_sync": _m_any_sync,
    "eq_sync": _m_eq_sync,
    "match_any_sync": _m_match_any_sync,
    "match_all_sync": _m_match_all_sync,
    "syncwarp": _m_syncwarp,
    "activemask": _m_activemask,
    "lanemask_lt": _m_lanemask_lt,
    "nanosleep": _m_nanosleep,
    "popc": _m_popc,
    "clz": _m_clz,
    "ffs": _m_ffs,
    "brev": _m_brev,
}


# --------------------------------------------------------------------------
# Thread-block clusters (the simulator side of kernels.cluster)

_RANK_SHIFT = 24  # a mapped address: (rank + 1) << 24 | offset in the block's shared memory
_STATIC_SHARED = 64 * 1024  # bytes of static shared arrays a block may have under run_cluster


class _ClusterShared:
    """Shared memory of a cluster launch's blocks: one arena per block, the dynamic part first and
    the static arrays after it at offsets fixed per source line for the whole launch, so that one
    variable has the same address in every block, as on the GPU (the simulator's own shared memory
    is one set of arrays for all blocks, which only works when they run one after another)."""

    def __init__(self, dynshared_size, nblocks):
        self._dyn = int(dynshared_size)
        self._next = (self._dyn + 15) & ~15
        self._layout = {}
        self._lock = threading.Lock()
        self.arenas = [np.zeros(self._next + _STATIC_SHARED, np.byte) for _ in range(nblocks)]

    def array(self, shape, dtype, alignment=None):
        from numba.cuda import types
        from numba.cuda.np import numpy_support

        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        dtype = np.dtype(dtype)
        arena = self.arenas[threading.current_thread().blockIdx.x]
        if shape == 0:
            return np.frombuffer(arena.data, dtype=dtype, count=self._dyn // dtype.itemsize)
        shape = (shape,) if np.isscalar(shape) else tuple(shape)
        count = int(np.prod(shape))
        frame = sys._getframe(1)  # the kernel's line, as the simulator's own shared arrays are keyed
        caller = (frame.f_code.co_filename, frame.f_lineno)
        with self._lock:
            offset = self._layout.get(caller)
            if offset is None:
                offset = self._layout[caller] = self._next
                self._next = (offset + count * dtype.itemsize + 15) & ~15
                if self._next > len(arena):
                    raise MemoryError(f"static shared arrays of more than {_STATIC_SHARED} bytes a block "
                                      "under kernels.sim.run_cluster")
        return np.frombuffer(arena.data, dtype=dtype, count=count, offset=offset).reshape(shape)


class _ClusterBarrier:
    """barrier.cluster: waits for every non-exited thread of the cluster's blocks."""

    def __init__(self, parties):
        self.cond = threading.Condition()
        self.parties = parties
        self.waiting = 0
        self.generation = 0
        self.broken = False

    def wait(self):
        with self.cond:
            gen = self.generation
            self.waiting += 1
            if self.waiting >= self.parties:
                self._release()
            while gen == self.generation and not self.broken:
                self.cond.wait()
            if self.broken:
                raise RuntimeError("cluster barrier broken: another block of the cluster failed")

    def leave(self):
        with self.cond:
            self.parties -= 1
            if self.waiting and self.waiting >= self.parties:
                self._release()

    def abort(self):
        with self.cond:
            self.broken = True
            self.cond.notify_all()

    def _release(self):
        self.waiting = 0
        self.generation += 1
        self.cond.notify_all()


class _ClusterBlock:
    """One block's view of its cluster: what the kernels.cluster intrinsics do under the simulator."""

    def __init__(self, shared, first, size, rank, barrier):
        self._shared = shared
        self._first = first
        self.size = size
        self.rank = rank
        self._barrier = barrier

    def thread_exited(self):
        self._barrier.leave()  # barrier.cluster waits for the non-exited threads only

    def sync(self):
        thread = threading.current_thread()
        with thread._bfs4k_warp.blocked(thread):
            self._barrier.wait()

    def address(self, array, i):
        arena = self._shared.arenas[self._first + self.rank]
        if not isinstance(array, np.ndarray):  # global arrays are the simulator's device arrays
            raise ValueError("smem_addr: the array is not in this block's shared memory")
        if array.ndim != 1 or array.dtype != np.int32:
            raise TypeError("smem_addr takes a one-dimensional int32 shared array")
        offset = array.ctypes.data + int(i) * array.strides[0] - arena.ctypes.data
        if not 0 <= offset <= len(arena) - 4:
            raise ValueError("smem_addr: the array element is not in this block's shared memory")
        return offset

    def map(self, addr, rank):
        if not 0 <= rank < self.size:
            raise IndexError(f"cluster_map: rank {int(rank)} outside the cluster of {self.size} blocks")
        return (int(rank) + 1) << _RANK_SHIFT | int(addr) & ((1 << _RANK_SHIFT) - 1)

    def _word(self, addr):
        addr = int(addr)
        rank = (addr >> _RANK_SHIFT) - 1
        offset = addr & ((1 << _RANK_SHIFT) - 1)
        words = self._shared.arenas[self._first + (self.rank if rank < 0 else rank)].view(np.int32)
        if offset % 4 or offset // 4 >= len(words):
            raise ValueError(f"shared-memory address {addr:#x} is misaligned or past the block's shared memory")
        return words, offset // 4

    def load(self, addr):
        words, i = self._word(addr)
        return words[i]

    def fetch_or(self, addr, bits):
        from numba.cuda.simulator.kernelapi import orlock  # the lock of cuda.atomic.or_

        words, i = self._word(addr)
        with orlock:
            old = words[i]
            words[i] = old | np.int32(bits)
        return old

    def fetch_add(self, addr, x):
        from numba.cuda.simulator.kernelapi import addlock  # the lock of cuda.atomic.add

        words, i = self._word(addr)
        with addlock:
            old = words[i]
            words[i] = old + np.int32(x)
        return old

    def store(self, addr, x):
        words, i = self._word(addr)
        words[i] = np.int32(x)


def cluster_of_thread() -> _ClusterBlock:
    """The calling simulated thread's cluster (kernels.cluster's Python bodies use it)."""
    manager = getattr(threading.current_thread(), "_manager", None)
    block = getattr(manager, "_bfs4k_cluster", None)
    if block is None:
        raise RuntimeError("cluster intrinsics need a cluster launch: kernels.sim.run_cluster "
                           "(explorer.launcher's cluster launch) under the simulator")
    return block


def run_cluster(kernel, cluster_size, blocks, threads, shared_bytes, *args):
    """Simulate ``kernel`` launched as ``blocks`` blocks of ``threads`` threads in clusters of
    ``cluster_size`` blocks, ``shared_bytes`` of dynamic shared memory a block: the blocks of one
    cluster run side by side, each with its own shared memory, clusters one after another. (The
    simulator's own launch runs blocks one at a time, sharing one set of shared arrays.)"""
    from numba.cuda.errors import normalize_kernel_dimensions
    from numba.cuda.simulator import kernel as simkernel
    from numba.cuda.simulator.kernelapi import FakeCUDAModule, swapped_cuda_module

    if not np.isscalar(blocks) or not np.isscalar(threads):
        raise ValueError("cluster launches are one-dimensional here")
    if cluster_size < 1 or blocks % cluster_size:
        raise ValueError(f"{blocks} blocks do not make clusters of {cluster_size}")
    install()
    grid_dim, block_dim = normalize_kernel_dimensions(blocks, threads)
    module = FakeCUDAModule(grid_dim, block_dim, shared_bytes)
    shared = module._shared = _ClusterShared(shared_bytes, blocks)
    with simkernel._push_kernel_context(module):
        retr = []
        fake_args = [_fake_arg(kernel, a, retr) for a in args]
        with swapped_cuda_module(kernel.fn, module):
            for first in range(0, blocks, cluster_size):
                barrier = _ClusterBarrier(cluster_size * threads)
                errors = []

                def run_block(b, first=first, barrier=barrier, errors=errors):
                    manager = simkernel.BlockManager(kernel.fn, grid_dim, block_dim, kernel._debug)
                    manager._bfs4k_cluster = _ClusterBlock(shared, first, cluster_size, b - first, barrier)
                    try:
                        manager.run((b, 0, 0), *fake_args)
                    except BaseException as e:  # noqa: BLE001 - re-raised below, in the caller
                        errors.append(e)
                        barrier.abort()

                runners = [threading.Thread(target=run_block, args=(b,), daemon=True)
                           for b in range(first, first + cluster_size)]
                for t in runners:
                    t.start()
                for t in runners:
                    t.join()
                if errors:  # the first failure, not the broken barriers it caused elsewhere
                    errors.sort(key=lambda e: "cluster barrier broken" in str(e))
                    raise errors[0]
        for writeback in retr:
            writeback()


def _fake_arg(kernel, arg, retr):
    """An argument as FakeCUDAKernel.__call__ passes it to the kernel's threads."""
    import functools

    from numba.cuda.simulator.args import ArgHint, InOut
    from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray, FakeWithinKernelCUDAArray

    _, arg = functools.reduce(lambda tv, ext: ext.prepare_args(*tv, stream=0, retr=retr), kernel.extensions,
                              (None, arg))
    if isinstance(arg, np.ndarray) and arg.ndim > 0:
        arg = InOut(arg).to_device(retr)
    elif isinstance(arg, ArgHint):
        arg = arg.to_device(retr)
    elif isinstance(arg, np.void):
        arg = FakeCUDAArray(arg)
    return FakeWithinKernelCUDAArray(arg) if isinstance(arg, FakeCUDAArray) else arg


# --------------------------------------------------------------------------
# Installation

_install_lock = threading.Lock()
_MARK = "_bfs4k_warp_intrinsics"


def _abort_get(thread):
    return thread.__dict__.get("_bfs4k_abort", False)


def _abort_set(thread, value):
    # The BlockManager sets ``abort`` on every thread when one of them raised;
    # wake lanes waiting in a warp barrier so they stop too.
    thread.__dict__["_bfs4k_abort"] = value
    warp = thread.__dict__.get("_bfs4k_warp")
    if value and warp is not None:
        with warp.cond:
            warp.cond.notify_all()


def _warps_of(manager):
    warps = getattr(manager, "_bfs4k_warps", None)
    if warps is None:
        nthreads = int(np.prod(manager._block_dim))
        warps = [
            _Warp(manager, w, min(WARP_SIZE, nthreads - w * WARP_SIZE))
            for w in range((nthreads + WARP_SIZE - 1) // WARP_SIZE)
        ]
        manager._bfs4k_warps = warps
    return warps


def is_installed() -> bool:
    if not simulator_enabled():
        return False
    from numba.cuda.simulator import kernelapi

    return bool(getattr(kernelapi.FakeCUDAModule, _MARK, False))


def _block_manager_run(self, grid_point, *args):
    """numba-cuda's BlockManager.run, with one change: the polling loop sleeps briefly.

    Upstream spins without releasing the GIL, so every lane woken from a warp barrier waits up
    to a whole switch interval (5 ms) for the poller; BFS kernels make thousands of warp-level
    calls, and this sleep makes them several times faster under the simulator.
    """
    from numba.cuda.simulator.kernel import BlockThread

    threads = set()
    livethreads = set()
    blockedthreads = set()
    for block_point in np.ndindex(*self._block_dim):

        def target():
            self._f(*args)

        t = BlockThread(target, self, grid_point, block_point, self._debug)
        t.start()
        threads.add(t)
        livethreads.add(t)

    while livethreads:
        time.sleep(_POLL_SECONDS)
        for t in livethreads:
            if t.syncthreads_blocked:
                blockedthreads.add(t)
            elif t.exception:
                for t_other in threads:
                    t_other.abort = True
                    t_other.syncthreads_blocked = False
                    t_other.syncthreads_event.set()
                raise t.exception[0].with_traceback(t.exception[1])
        if livethreads == blockedthreads:
            for t in blockedthreads:
                t.syncthreads_blocked = False
                t.syncthreads_event.set()
            blockedthreads = set()
        livethreads = set([t for t in livethreads if t.is_alive()])
    for t in threads:
        if t.exception:
            raise t.exception[0].with_traceback(t.exception[1])


_POLL_SECONDS = 0.0002


def install() -> bool:
    """Patch the warp intrinsics into the simulator. Idempotent and thread-safe.

    Returns True when the simulator is active (patched now or before), False
    (and does nothing) on a real GPU.
    """
    if not simulator_enabled():
        return False
    with _install_lock:
        from numba.cuda.simulator import kernel, kernelapi

        module_cls = kernelapi.FakeCUDAModule
        if getattr(module_cls, _MARK, False):
            return True

        for name, fn in _METHODS.items():
            setattr(module_cls, name, fn)

        block_manager = kernel.BlockManager
        block_thread = kernel.BlockThread
        orig_bm_init = block_manager.__init__
        orig_bt_init = block_thread.__init__
        orig_bt_run = block_thread.run
        orig_bt_syncthreads = block_thread.syncthreads

        def bm_init(self, *args, **kwargs):
            orig_bm_init(self, *args, **kwargs)
            _warps_of(self)

        def bt_init(self, f, manager, blockIdx, threadIdx, debug):
            orig_bt_init(self, f, manager, blockIdx, threadIdx, debug)
            warp = _warps_of(manager)[self.thread_id // WARP_SIZE]
            self._bfs4k_warp = warp
            warp.threads[self.thread_id % WARP_SIZE] = self

        def bt_run(self):
            # BlockThread.run stores (not raises) the kernel's exception.
            try:
                orig_bt_run(self)
            finally:
                failure = self.exception[0] if self.exception else None
                self._bfs4k_warp.lane_exited(
                    self.thread_id % WARP_SIZE, None if failure is None else str(failure)
                )
                cluster = getattr(self._manager, "_bfs4k_cluster", None)
                if cluster is not None:
                    cluster.thread_exited()

        def bt_syncthreads(self):
            # Lets activemask() see this lane as blocked (diverged).
            with self._bfs4k_warp.blocked(self):
                orig_bt_syncthreads(self)

        block_manager.__init__ = bm_init
        block_manager.run = _block_manager_run
        block_thread.syncthreads = bt_syncthreads
        block_thread.abort = property(_abort_get, _abort_set)
        block_thread.__init__ = bt_init
        block_thread.run = bt_run
        setattr(module_cls, _MARK, True)
        return True
