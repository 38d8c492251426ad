"""Warp intrinsics for Numba's CUDA simulator, with real lock-step semantics.

numba-cuda's simulator runs every CUDA thread of a block as a Python thread and swaps the global
name ``cuda`` inside kernels and device functions for a ``FakeCUDAModule`` instance, which has no
warp intrinsics. ``kernels.cudasim.install`` adds the methods below (:data:`METHODS`) to it, so
kernels written for the GPU run unchanged under the simulator:

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

It also replaces the simulator's ``popc``/``clz``/``ffs``/``brev``, which format the value with
``'{:032b}'`` and therefore give wrong answers for negative or 64-bit values (``popc(int32(-1))``
was 1, not 32). That matters because ``ballot_sync`` returns a *signed* int32 in numba-cuda: a
ballot with lane 31 set is negative.

Hardware details reproduced exactly
-----------------------------------
* The shuffle offset/lane argument is truncated to 5 bits, as PTX ``shfl.sync`` does
  (``b[4:0]``): ``shfl_up_sync(m, v, 33)`` behaves like delta 1, ``shfl_sync(m, v, 35)`` reads
  lane 3. There is no ``width`` argument: numba-cuda 0.30.4's shuffles take exactly three
  arguments (the CUDA C++ ``width`` is hard-wired to 32).
* Return types follow numba-cuda's typing: a shuffle returns the type of ``value`` (int32, int64,
  float32 or float64; a Python int is int64 and a Python float float64 under Numba, so they come
  back as ``np.int64`` / ``np.float64``). Any other value type (bool, uint32, int16, float16, ...)
  raises ``TypeError`` here because it is a TypingError on the GPU. ``ballot_sync`` and
  ``match_*_sync`` return int32 (signed!), ``all/any/eq_sync`` bool, ``activemask``/``lanemask_lt``
  uint32. Predicates must be integers or booleans (a float predicate is a TypingError on the GPU
  and a ``TypeError`` here).
* Masks are truncated to 32 bits, so an int32 ballot result (e.g. -1) can be used as a mask.

Lock step
---------
A warp is 32 consecutive linear thread ids (``x + y*blockDim.x + z*blockDim.x*blockDim.y``). A
block whose size is not a multiple of 32 has a partial last warp; its missing lanes are absent.
Each warp has one barrier (condition variable + pending table) owned by the block. A lane calling
a ``*_sync`` intrinsic registers (intrinsic, mask, value) and waits until every lane named in
``mask`` is waiting too; then all results are computed at once from the values passed at that
call and every participant is released. Disjoint masks (divergent branches) synchronise
independently, as on Volta and later. Misuse that is undefined behaviour on hardware raises
:class:`WarpSyncError` with the block, warp and lanes:

* the calling lane is not in its own mask;
* lanes of one barrier disagree on the intrinsic or on the mask;
* the mask names a lane that has exited the kernel or does not exist (partial warp) -- see the
  ``exited_lanes`` setting;
* a shuffle reads from a lane that does not take part in the call (not in the mask, exited or
  absent) -- see the ``undefined_read`` setting.

A barrier that cannot complete (one lane in ``shfl_sync``, another in ``syncthreads`` or in a
different ``*_sync`` that never meets it) raises :class:`WarpTimeoutError` after
``config.timeout`` seconds naming the intrinsic, the warp, the missing lanes and what each of them
is doing. The simulator's own ``syncthreads`` keeps its semantics: its BlockManager only counts
threads blocked in ``syncthreads``, and a thread waiting in a warp barrier simply counts as running.

Limits (what still differs from hardware)
-----------------------------------------
* No lock step outside the sync intrinsics: between two ``*_sync`` calls the lanes of a warp are
  ordinary Python threads scheduled in any order. Warp-synchronous code that relies on implicit
  lock step (pre-Volta style, no ``syncwarp``) is not emulated -- it is wrong on Volta+ too.
* ``activemask()`` cannot see divergence directly: the simulator has no program counter per warp.
  It emulates it instead: the calling lane waits until every other live lane of its warp is
  blocked (in a ``*_sync`` intrinsic, in ``syncthreads``, a cluster or grid barrier, or in
  ``activemask``) or has exited, then returns the lanes waiting in ``activemask`` at the *same
  call stack*. Converged code therefore gets all non-exited lanes and an ``if/else`` gets its
  branch's lanes, as on hardware. It differs when lanes of one branch on hardware are still
  running elsewhere: a lane that is merely slower but at the same call joins the group (the
  hardware might have split them, so the simulator can only be more converged), and a lane that
  never blocks (a spin loop waiting for the caller) stalls it until the timeout. Exited lanes are
  never included (they drop out whenever they exit, so with the simple "all non-exited lanes"
  rule a lane that finishes early would make the answer depend on timing).
* Arithmetic follows NumPy scalar rules, not Numba typing: ``int32 + int32`` stays int32 here but
  is int64 on the GPU. Values derived from shuffles keep the dtype they had. A bit intrinsic of such
  an expression counts another width: ``clz(u - 1)`` of an int32 ``u`` is a 32-bit count here and a
  64-bit one on the GPU (32 more), so a kernel right here can be wrong there. Cast the argument:
  ``clz(int32(u - 1))``.
* ``nanosleep(ns)`` really sleeps ``ns`` nanoseconds of wall time (the GPU caps it at about 1 ms);
  use it only to shake up scheduling in tests.
"""

from __future__ import annotations

import sys
import threading
import time
from contextlib import contextmanager

import numpy as np

from .common import FULL_MASK, WARP_SIZE, WarpSyncError, WarpTimeoutError, config
from .common import fmt_ranges as _fmt_lanes
from .common import lanes_of as _lanes


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
                "the live lanes (cudasim.settings(exited_lanes='ignore') to allow it)"
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


def warps_of(manager):
    """The warps of the block a BlockManager runs, made on first use."""
    warps = getattr(manager, "_bfs4k_warps", None)
    if warps is None:
        nthreads = int(np.prod(manager._block_dim))
        warps = [
            _Warp(manager, w, min(WARP_SIZE, nthreads - w * WARP_SIZE))
            for w in range((nthreads + WARP_SIZE - 1) // WARP_SIZE)
        ]
        manager._bfs4k_warps = warps
    return warps


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
                    "the same *_sync intrinsic (kernels.cudasim.config.timeout sets the bound)"
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
                    "hardware (cudasim.settings(undefined_read='poison') to allow it)"
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


METHODS = {
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

