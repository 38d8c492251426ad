"""Warp- and block-level building blocks (Numba CUDA device functions).

Generic scan/reduce/search primitives used by the BFS-4K kernels (paper
sections 5.1, 5.4 and 5.6) but free of any graph knowledge. They run on a
real GPU with numba-cuda 0.30.4 and under the simulator once
``kernels.cudasim.install()`` has supplied the warp intrinsics (selecting the
simulator in ``explorer.backend`` does that).

Conventions
-----------
* Warp functions must be called by **all 32 lanes of a full warp** (they use
  mask ``0xFFFFFFFF``); launch blocks whose size is a multiple of 32. Under
  the simulator a partial warp raises ``WarpSyncError`` instead of computing
  garbage as the GPU would.
* Types are preserved: an int32 input gives int32 results on the GPU as in the
  simulator (sums are cast back, see ``_cast_like``), so each shuffle step
  moves 32 bits. Sums wrap around on overflow like C. Supported value types
  are the shuffle types: int32, int64, float32, float64 (Python ints are
  int64). Lane indices and counts are returned as int32.
* All functions are ``inline="always"`` device functions (Numba IR inlining;
  ``forceinline`` is not accepted by the simulator's ``jit``).

API
---
``warp_inclusive_scan(v) -> incl``
``warp_exclusive_scan(v) -> excl``                   (lane 0 gets 0)
``warp_exclusive_scan_total(v) -> (excl, total)``    total = sum over the warp
``warp_reserve(counter, i, n) -> first``             n queue slots per lane, one atomic a warp
``warp_binary_exclusive_scan(pred) -> (offset, total)``  pred is 0/1 (bool or int)
``warp_sum(v)``, ``warp_min(v)``, ``warp_max(v)``    butterfly, result in every lane
``block_exclusive_scan(v, scratch) -> (excl, total)`` whole block, see below
``warp_search_owner(prefix, item) -> owner``
``warp_search_owner_rank(prefix, item) -> (owner, rank)``
``clock64()``                                        the SM's cycle counter (int64)
"""

import time

import numpy as np
from numba import cuda, int32, uint32, uint64

from . import cudasim as _sim

FULL_MASK = 0xFFFFFFFF
WARP_SIZE = 32
LOG2_WARP_SIZE = 5


def _cast_like(x, like):
    """``x`` converted to the type of ``like`` (wrapping like a C cast).

    Numba promotes ``int32 + int32`` to int64; casting back keeps scans of
    int32 data at one 32-bit shuffle per step. This Python body is what the
    simulator runs; on the GPU the overload below replaces it.
    """
    if isinstance(like, np.generic):
        if type(x) is type(like):
            return x
        return np.asarray(x).astype(type(like))[()]
    return x


if not _sim.simulator_enabled():
    from numba.cuda import types as _types
    from numba.cuda.extending import overload as _overload

    @_overload(_cast_like, target="cuda")
    def _cast_like_cuda(x, like):
        target = _types.unliteral(like)
        if isinstance(target, _types.Number):

            def impl(x, like):
                return target(x)

            return impl
        return None


def clock64():
    """The cycle counter of the thread's SM (PTX ``%clock64``), for timing phases of a
    one-block kernel; differences are meaningful within one SM only. Numba has no such
    intrinsic. This Python body is what the simulator runs: the host's nanosecond clock."""
    return np.int64(time.perf_counter_ns())


if not _sim.simulator_enabled():
    from llvmlite import ir as _ir
    from numba.cuda.extending import intrinsic as _intrinsic

    @_intrinsic
    def _read_clock64(typingctx):
        def codegen(context, builder, sig, args):
            fnty = _ir.FunctionType(_ir.IntType(64), [])
            # side_effect: two reads must not be merged or moved past the code they time.
            asm = _ir.InlineAsm(fnty, "mov.u64 $0, %clock64;", "=l", side_effect=True)
            return builder.call(asm, [])

        return _types.int64(), codegen

    @_overload(clock64, target="cuda")
    def _clock64_cuda():
        def impl():
            return _read_clock64()

        return impl


_device = cuda.jit(device=True, inline="always")


@_device
def warp_inclusive_scan(v):
    """Inclusive prefix sum over the warp: lane i gets v[0] + ... + v[i].

    Hillis-Steele scan with ``shfl_up_sync`` in log2(32) = 5 steps (BFS-4K
    Fig. 3).
    """
    lane = cuda.laneid
    for i in range(LOG2_WARP_SIZE):
        d = 1 << i
        n = cuda.shfl_up_sync(FULL_MASK, v, d)
        if lane >= d:
            v = _cast_like(v + n, v)
    return v


@_device
def warp_exclusive_scan_total(v):
    """(exclusive prefix sum, warp total): lane i gets v[0] + ... + v[i-1]."""
    inc = warp_inclusive_scan(v)
    total = cuda.shfl_sync(FULL_MASK, inc, WARP_SIZE - 1)
    # Shift right by one lane, as in the paper; exact for floats too.
    exc = cuda.shfl_up_sync(FULL_MASK, inc, 1)
    if cuda.laneid == 0:
        exc = _cast_like(0, inc)
    return exc, total


@_device
def warp_reserve(counter, i, n):
    """Room for n entries per lane at the end of a queue whose length is counter[i] (int32):
    one atomic add for the whole warp. Returns this lane's first position; lanes in order."""
    excl, total = warp_exclusive_scan_total(n)
    base = int32(0)
    if cuda.laneid == 0 and total > 0:
        base = cuda.atomic.add(counter, i, total)
    return cuda.shfl_sync(FULL_MASK, base, 0) + excl


@_device
def warp_exclusive_scan(v):
    """Exclusive prefix sum over the warp (lane 0 gets 0)."""
    inc = warp_inclusive_scan(v)
    exc = cuda.shfl_up_sync(FULL_MASK, inc, 1)
    if cuda.laneid == 0:
        exc = _cast_like(0, inc)
    return exc


@_device
def warp_binary_exclusive_scan(pred):
    """Exclusive prefix count of a 0/1 predicate: (offset, total), both int32.

    One ``ballot_sync`` plus two ``popc``: the cheap variant BFS-4K uses when
    every lane contributes at most one item. ``pred`` is a bool or an integer
    (non-zero counts as 1).
    """
    ballot = cuda.ballot_sync(FULL_MASK, pred)
    # ballot is a signed int32 (numba-cuda); & with the uint32 lanemask
    # widens to int64 and drops nothing, since lanemask_lt < 2**31.
    offset = int32(cuda.popc(ballot & cuda.lanemask_lt()))
    total = int32(cuda.popc(ballot))
    return offset, total


@_device
def warp_sum(v):
    """Sum over the warp, returned in every lane (xor butterfly)."""
    for i in range(LOG2_WARP_SIZE):
        n = cuda.shfl_xor_sync(FULL_MASK, v, 16 >> i)
        v = _cast_like(v + n, v)
    return v


@_device
def warp_min(v):
    """Minimum over the warp, returned in every lane (xor butterfly)."""
    for i in range(LOG2_WARP_SIZE):
        n = cuda.shfl_xor_sync(FULL_MASK, v, 16 >> i)
        v = min(v, n)
    return v


@_device
def warp_max(v):
    """Maximum over the warp, returned in every lane (xor butterfly)."""
    for i in range(LOG2_WARP_SIZE):
        n = cuda.shfl_xor_sync(FULL_MASK, v, 16 >> i)
        v = max(v, n)
    return v


@_device
def block_exclusive_scan(v, scratch):
    """Exclusive prefix sum over the whole block: (excl, block total).

    Must be called by every thread of the block (it contains
    ``syncthreads``), with a block of at most 1024 threads whose size is a
    multiple of 32. Threads are ordered by linear id
    ``x + y*bdx + z*bdx*bdy``.

    ``scratch`` is a shared-memory array of **at least 32 elements** whose
    dtype holds the block total (e.g. ``cuda.shared.array(32, int32)``). It
    is overwritten; a trailing ``syncthreads`` makes it safe to reuse the
    same scratch in the next call. Results have the type of ``v``.
    """
    tid = cuda.threadIdx.x + cuda.blockDim.x * (
        cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z
    )
    nwarps = (cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z) // WARP_SIZE
    warp = tid // WARP_SIZE
    lane = cuda.laneid

    exc, wtotal = warp_exclusive_scan_total(v)
    if lane == WARP_SIZE - 1:
        scratch[warp] = wtotal
    cuda.syncthreads()

    if warp == 0:
        # Second level: inclusive scan of the per-warp totals, 32 entries.
        t = _cast_like(0, wtotal)
        if lane < nwarps:
            t = _cast_like(scratch[lane], wtotal)
        scratch[lane] = warp_inclusive_scan(t)
    cuda.syncthreads()

    base = _cast_like(0, exc)
    if warp > 0:
        base = _cast_like(scratch[warp - 1], exc)
    total = _cast_like(scratch[nwarps - 1], exc)
    cuda.syncthreads()  # everyone has read scratch before it can be reused
    return _cast_like(exc + base, exc), total


@_device
def warp_search_owner(prefix, item):
    """Lane whose segment holds work item ``item`` (edge-discover search).

    ``prefix`` is each lane's **inclusive** prefix sum of its segment length
    (e.g. ``warp_inclusive_scan(degree)``), so lane j owns items
    ``prefix[j-1] <= item < prefix[j]``. Returns, as int32, the number of
    lanes j with ``prefix[j] <= item``, i.e. the first lane whose prefix
    exceeds ``item``; zero-length segments are skipped naturally.

    Branch-free binary search with exactly log2(32) = 5 ``shfl_sync`` steps;
    each lane may search a different item (usually ``laneid`` or
    ``round * 32 + laneid``). Only meaningful for ``0 <= item < total``
    (total = ``prefix`` of lane 31); otherwise the result is 31 or less and
    must be ignored by the caller.

    BFS-4K Fig. 6: degrees 3,1,4,6,3,3 (then zeros) give prefix
    3,4,8,14,17,20,20,...; item 5 -> lane 2, items 14-16 -> lane 4.
    """
    lo = 0
    for i in range(LOG2_WARP_SIZE):
        step = 16 >> i
        probe = cuda.shfl_sync(FULL_MASK, prefix, lo + step - 1)
        if probe <= item:
            lo += step
    return int32(lo)


@_device
def warp_search_owner_rank(prefix, item):
    """(owner, rank): ``warp_search_owner`` plus the item's index in its segment.

    ``rank = item - prefix[owner - 1]`` (``item`` itself for owner 0); one more
    shuffle. Same preconditions as ``warp_search_owner``.
    """
    owner = warp_search_owner(prefix, item)
    # owner - 1 = -1 reads lane 31 (shfl uses 5 bits); the value is unused.
    start = cuda.shfl_sync(FULL_MASK, prefix, owner - 1)
    if owner == 0:
        start = _cast_like(0, prefix)
    return owner, item - start


# Index and bit helpers of the kernels' hot loops (plain device functions, inlined by LLVM).
@cuda.jit(device=True)
def uidx(i):
    """An index known to be >= 0, as unsigned: Numba then skips the negative-index wraparound
    (a compare, a select and a 64-bit add on every access of the hot loops)."""
    return uint64(i)


@cuda.jit(device=True)
def popc(x):
    return cuda.popc(uint32(x))
