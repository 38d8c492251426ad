"""Warp intrinsics and the grid barrier: simulator (kernels.cudasim) against numpy references.

Every test that is not marked ``simulator_only`` runs unchanged on a real GPU,
where it checks that the simulator's semantics are the hardware's. The
simulator-only tests cover misuse that is undefined behaviour on hardware
(exited lanes, reads from non-participating lanes, divergent barriers).
"""
import os
import re
import subprocess
import sys
import threading
import time
from importlib import metadata

import numpy as np
import pytest
from numba import config as numba_config
from numba import cuda, int32

from kernels import cudasim

SIM = bool(numba_config.ENABLE_CUDASIM)
simulator_only = pytest.mark.skipif(not SIM, reason="simulator-only check (undefined on hardware)")
FULL = 0xFFFFFFFF
EVEN = 0x55555555
ODD = 0xAAAAAAAA
DTYPES = [np.int32, np.int64, np.float32, np.float64]


@pytest.fixture(autouse=True, scope="module")
def _install():
    cudasim.install()
    yield


def _drain_sim_threads(timeout=5.0):
    """After a kernel failed in the simulator, let its aborted threads finish."""
    if not SIM:
        return
    from numba.cuda.simulator.kernel import BlockThread

    deadline = time.monotonic() + timeout
    for t in threading.enumerate():
        if isinstance(t, BlockThread):
            t.join(max(0.0, deadline - time.monotonic()))


def _warp_masks(nthreads, pattern=FULL):
    """Per-warp masks: ``pattern`` restricted to the lanes that exist."""
    masks = []
    for w in range((nthreads + 31) // 32):
        nl = min(32, nthreads - 32 * w)
        masks.append(pattern & ((1 << nl) - 1))
    return np.array(masks, dtype=np.int64)


def _values(rng, n, dtype):
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    return (rng.standard_normal(n) * 1e6).astype(dtype)


def _ref_shfl(mode, vals, args, masks):
    """PTX shfl.sync with width 32: b is used modulo 32."""
    out = vals.copy()
    for i in range(len(vals)):
        w, lane = divmod(i, 32)
        m = int(masks[w])
        if not m >> lane & 1:
            continue
        b = int(args[i]) & 31
        if mode == "up":
            j = lane - b if lane - b >= 0 else lane
        elif mode == "down":
            j = lane + b if lane + b <= 31 else lane
        elif mode == "xor":
            j = lane ^ b
        else:
            j = b
        assert m >> j & 1, "test bug: reads a non-participating lane"
        out[i] = vals[32 * w + j]
    return out


# --------------------------------------------------------------------------
# kernels (all valid on hardware)


@cuda.jit
def k_shfl_idx(vals, args, masks, out):
    i = cuda.threadIdx.x
    lane = i % 32
    m = masks[i // 32]
    if m >> lane & 1:
        out[i] = cuda.shfl_sync(m, vals[i], args[i])


@cuda.jit
def k_shfl_up(vals, args, masks, out):
    i = cuda.threadIdx.x
    lane = i % 32
    m = masks[i // 32]
    if m >> lane & 1:
        out[i] = cuda.shfl_up_sync(m, vals[i], args[i])


@cuda.jit
def k_shfl_down(vals, args, masks, out):
    i = cuda.threadIdx.x
    lane = i % 32
    m = masks[i // 32]
    if m >> lane & 1:
        out[i] = cuda.shfl_down_sync(m, vals[i], args[i])


@cuda.jit
def k_shfl_xor(vals, args, masks, out):
    i = cuda.threadIdx.x
    lane = i % 32
    m = masks[i // 32]
    if m >> lane & 1:
        out[i] = cuda.shfl_xor_sync(m, vals[i], args[i])


SHFL_KERNELS = {"idx": k_shfl_idx, "up": k_shfl_up, "down": k_shfl_down, "xor": k_shfl_xor}


@cuda.jit
def k_vote(preds, masks, ballot, all_, any_, eq):
    i = cuda.threadIdx.x
    lane = i % 32
    m = masks[i // 32]
    if m >> lane & 1:
        p = preds[i]
        ballot[i] = cuda.ballot_sync(m, p)
        all_[i] = cuda.all_sync(m, p)
        any_[i] = cuda.any_sync(m, p)
        eq[i] = cuda.eq_sync(m, p)


@cuda.jit
def k_split_groups(vals, out):
    # Even and odd lanes run different intrinsics with disjoint masks at the
    # same time (independent thread scheduling).
    i = cuda.threadIdx.x
    if i % 2 == 0:
        out[i] = cuda.shfl_xor_sync(EVEN, vals[i], 2)
    else:
        out[i] = cuda.ballot_sync(ODD, vals[i] > 0)


@cuda.jit
def k_syncwarp_rounds(sleep_ns, out):
    # Each round: write own slot, syncwarp, read the neighbour's slot. The
    # sleeps make some lanes late; without a real barrier the reader would see
    # the previous round's value.
    sh = cuda.shared.array(64, int32)
    i = cuda.threadIdx.x
    lane = i % 32
    base = i - lane
    nl = min(32, cuda.blockDim.x - base)
    m = FULL if nl == 32 else (1 << nl) - 1
    for r in range(out.shape[0]):
        if sleep_ns[r, i] > 0:
            cuda.nanosleep(sleep_ns[r, i])
        sh[i] = r * 100 + lane
        cuda.syncwarp(m)
        out[r, i] = sh[base + (lane + 1) % nl]
        cuda.syncwarp(m)


@cuda.jit
def k_shfl_rounds(sleep_ns, out):
    # Each round's exchanged values are the ones passed in that round, even
    # when fast lanes could already be in the next round.
    i = cuda.threadIdx.x
    lane = i % 32
    base = i - lane
    nl = min(32, cuda.blockDim.x - base)
    m = FULL if nl == 32 else (1 << nl) - 1
    for r in range(out.shape[0]):
        v = r * 1000 + lane * 7
        if sleep_ns[r, i] > 0:
            cuda.nanosleep(sleep_ns[r, i])
        out[r, i] = cuda.shfl_xor_sync(m, v, 1)


@cuda.jit
def k_linear_warps(out):
    # Warps are 32 consecutive *linear* thread ids, also for 2D/3D blocks.
    tid = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    n = cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z
    base = tid - tid % 32
    nl = min(32, n - base)
    m = FULL if nl == 32 else (1 << nl) - 1
    out[tid, 0] = cuda.shfl_sync(m, tid, 0)
    out[tid, 1] = cuda.laneid
    out[tid, 2] = cuda.lanemask_lt()


@cuda.jit
def k_activemask(out):
    i = cuda.threadIdx.x
    base = i - i % 32
    nl = min(32, cuda.blockDim.x - base)
    m = FULL if nl == 32 else (1 << nl) - 1
    cuda.syncwarp(m)
    out[i] = cuda.activemask()


@cuda.jit
def k_bits(preds, out):
    i = cuda.threadIdx.x
    b = cuda.ballot_sync(FULL, preds[i])
    out[i, 0] = b
    out[i, 1] = cuda.popc(b)
    out[i, 2] = cuda.ffs(b)
    out[i, 3] = cuda.clz(b)


@cuda.jit
def k_match(vals, any_out, all_out, pred_out):
    i = cuda.threadIdx.x
    any_out[i] = cuda.match_any_sync(FULL, vals[i])
    mask, pred = cuda.match_all_sync(FULL, vals[i])
    all_out[i] = mask
    pred_out[i] = pred


@cuda.jit
def k_exit_then_ballot(out):
    i = cuda.threadIdx.x
    if i % 32 >= 16:
        return
    out[i] = cuda.ballot_sync(FULL, True)


@cuda.jit
def k_shfl_bool(x, out):
    i = cuda.threadIdx.x
    out[i] = cuda.shfl_sync(FULL, x[i] > 0, 0)


@cuda.jit
def k_shfl_uint32(x, out):
    i = cuda.threadIdx.x
    out[i] = cuda.shfl_sync(FULL, x[i], 0)


# --------------------------------------------------------------------------
# shuffles


@pytest.mark.parametrize("nthreads", [32, 64])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "mode,arg", [("idx", 5), ("up", 1), ("up", 3), ("down", 1), ("down", 16), ("xor", 1), ("xor", 31)]
)
def test_shfl_full_mask(mode, arg, dtype, nthreads):
    rng = np.random.default_rng(nthreads + arg)
    vals = _values(rng, nthreads, dtype)
    args = np.full(nthreads, arg, dtype=np.int32)
    masks = _warp_masks(nthreads)
    out = np.zeros_like(vals)
    SHFL_KERNELS[mode][1, nthreads](vals, args, masks, out)
    np.testing.assert_array_equal(out, _ref_shfl(mode, vals, args, masks))


@pytest.mark.parametrize("mode,arg", [("up", 33), ("up", 0), ("down", 32 + 4), ("xor", 32 + 3), ("idx", 37), ("idx", -1)])
def test_shfl_lane_argument_uses_five_bits(mode, arg):
    vals = np.arange(64, dtype=np.int32) * 3
    args = np.full(64, arg, dtype=np.int32)
    masks = _warp_masks(64)
    out = np.zeros_like(vals)
    SHFL_KERNELS[mode][1, 64](vals, args, masks, out)
    np.testing.assert_array_equal(out, _ref_shfl(mode, vals, args, masks))


def test_shfl_idx_per_lane_source():
    rng = np.random.default_rng(7)
    vals = _values(rng, 64, np.int64)
    args = rng.integers(0, 32, 64).astype(np.int32)
    masks = _warp_masks(64)
    out = np.zeros_like(vals)
    k_shfl_idx[1, 64](vals, args, masks, out)
    np.testing.assert_array_equal(out, _ref_shfl("idx", vals, args, masks))


@pytest.mark.parametrize("mode,arg", [("idx", 6), ("up", 2), ("up", 4), ("down", 2), ("xor", 2), ("xor", 6)])
def test_shfl_even_lanes_only(mode, arg):
    rng = np.random.default_rng(arg)
    vals = _values(rng, 64, np.int32)
    args = np.full(64, arg, dtype=np.int32)
    masks = _warp_masks(64, EVEN)
    out = np.full_like(vals, -7)
    SHFL_KERNELS[mode][1, 64](vals, args, masks, out)
    expected = _ref_shfl(mode, vals, args, masks)
    expected[1::2] = -7  # odd lanes do not take part
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("mode,arg", [("idx", 15), ("up", 1), ("up", 8), ("xor", 1), ("xor", 8)])
def test_shfl_partial_last_warp(mode, arg):
    # 48 threads: warp 1 has only lanes 0-15, so its mask is 0xFFFF.
    rng = np.random.default_rng(arg)
    vals = _values(rng, 48, np.float64)
    args = np.full(48, arg, dtype=np.int32)
    masks = _warp_masks(48)
    assert masks.tolist() == [FULL, 0xFFFF]
    out = np.zeros_like(vals)
    SHFL_KERNELS[mode][1, 48](vals, args, masks, out)
    np.testing.assert_array_equal(out, _ref_shfl(mode, vals, args, masks))


# --------------------------------------------------------------------------
# votes


def _ref_vote(preds, masks):
    n = len(preds)
    ballot = np.zeros(n, np.int64)
    all_ = np.zeros(n, np.int32)
    any_ = np.zeros(n, np.int32)
    eq = np.zeros(n, np.int32)
    for i in range(n):
        w, lane = divmod(i, 32)
        m = int(masks[w])
        if not m >> lane & 1:
            continue
        lanes = [x for x in range(32) if m >> x & 1]
        p = [bool(preds[32 * w + x]) for x in lanes]
        ballot[i] = sum(1 << x for x, q in zip(lanes, p) if q)
        all_[i], any_[i], eq[i] = all(p), any(p), len(set(p)) == 1
    return ballot.astype(np.uint32).view(np.int32), all_, any_, eq


@pytest.mark.parametrize("nthreads,pattern", [(32, FULL), (64, FULL), (64, EVEN), (48, FULL), (48, ODD)])
@pytest.mark.parametrize("density", [0.0, 0.5, 1.0])
def test_votes(nthreads, pattern, density):
    rng = np.random.default_rng(int(density * 10) + nthreads)
    # non-zero predicates other than 1 count as true
    preds = ((rng.random(nthreads) < density) * rng.integers(1, 9, nthreads)).astype(np.int32)
    masks = _warp_masks(nthreads, pattern)
    outs = [np.zeros(nthreads, np.int32) for _ in range(4)]
    k_vote[1, nthreads](preds, masks, *outs)
    for got, want in zip(outs, _ref_vote(preds, masks)):
        np.testing.assert_array_equal(got, want)


def test_ballot_lane31_is_negative_int32_and_bit_ops():
    preds = np.zeros(32, np.int32)
    preds[[3, 31]] = 1
    out = np.zeros((32, 4), np.int64)
    k_bits[1, 32](preds, out)
    b = np.int32(np.uint32((1 << 3) | (1 << 31)).view(np.int32))
    # numba-cuda types ballot_sync as int32: bit 31 makes it negative.
    assert (out[:, 0] == b).all() and b < 0
    assert (out[:, 1] == 2).all()  # popc
    assert (out[:, 2] == 4).all()  # ffs: 1-based position of bit 3
    assert (out[:, 3] == 0).all()  # clz


def test_independent_groups_with_disjoint_masks():
    vals = np.arange(-16, 16, dtype=np.int32)
    out = np.zeros(32, np.int32)
    k_split_groups[1, 32](vals, out)
    even = np.arange(0, 32, 2)
    np.testing.assert_array_equal(out[even], vals[even ^ 2])
    odd_ballot = sum(1 << i for i in range(1, 32, 2) if vals[i] > 0)
    assert (out[1::2] == np.uint32(odd_ballot).view(np.int32)).all()


def test_match_any_all():
    vals = (np.arange(32) % 3).astype(np.int64)
    any_out = np.zeros(32, np.int32)
    all_out = np.zeros(32, np.int32)
    pred_out = np.zeros(32, np.int32)
    k_match[1, 32](vals, any_out, all_out, pred_out)
    for i in range(32):
        want = sum(1 << j for j in range(32) if vals[j] == vals[i])
        assert any_out[i] == np.uint32(want).view(np.int32)
    assert (all_out == 0).all() and (pred_out == 0).all()
    vals[:] = 9
    k_match[1, 32](vals, any_out, all_out, pred_out)
    assert (all_out == -1).all() and (pred_out == 1).all()


# --------------------------------------------------------------------------
# lock step, warp layout, activemask


@pytest.mark.parametrize("nthreads", [32, 48, 64])
def test_syncwarp_orders_memory_between_rounds(nthreads):
    rounds = 3
    rng = np.random.default_rng(nthreads)
    # about one lane in five is late by 0.2-1 ms in each round
    sleep = (rng.random((rounds, nthreads)) < 0.2) * rng.integers(200_000, 1_000_000, (rounds, nthreads))
    out = np.full((rounds, nthreads), -1, np.int32)
    k_syncwarp_rounds[1, nthreads](sleep.astype(np.int64), out)
    lane = np.arange(nthreads) % 32
    nl = np.minimum(32, nthreads - (np.arange(nthreads) - lane))
    for r in range(rounds):
        np.testing.assert_array_equal(out[r], r * 100 + (lane + 1) % nl)


@pytest.mark.parametrize("nthreads", [32, 48])
def test_shfl_values_are_from_the_same_call(nthreads):
    rounds = 4
    rng = np.random.default_rng(3)
    sleep = (rng.random((rounds, nthreads)) < 0.25) * rng.integers(100_000, 800_000, (rounds, nthreads))
    out = np.full((rounds, nthreads), -1, np.int64)
    k_shfl_rounds[1, nthreads](sleep.astype(np.int64), out)
    lane = np.arange(nthreads) % 32
    for r in range(rounds):
        np.testing.assert_array_equal(out[r], r * 1000 + (lane ^ 1) * 7)


@pytest.mark.parametrize("block", [(64,), (16, 4), (8, 4, 2), (8, 3, 2)])
def test_warps_follow_linear_thread_id(block):
    n = int(np.prod(block))
    out = np.zeros((n, 3), np.int64)
    k_linear_warps[1, block](out)
    tid = np.arange(n)
    np.testing.assert_array_equal(out[:, 0], tid - tid % 32)
    np.testing.assert_array_equal(out[:, 1], tid % 32)
    np.testing.assert_array_equal(out[:, 2], (1 << (tid % 32)) - 1)


@pytest.mark.parametrize("nthreads", [32, 48])
def test_activemask_converged(nthreads):
    out = np.zeros(nthreads, np.int64)
    k_activemask[1, nthreads](out)
    expected = [int(m) & 0xFFFFFFFF for m in _warp_masks(nthreads)]
    np.testing.assert_array_equal(out, [expected[i // 32] for i in range(nthreads)])


@cuda.jit
def k_activemask_divergent(out):
    i = cuda.threadIdx.x
    if i % 32 < 10:
        out[i, 0] = cuda.activemask()
    else:
        out[i, 1] = cuda.activemask()


def test_activemask_in_divergent_branches():
    out = np.zeros((64, 2), np.int64)
    k_activemask_divergent[1, 64](out)
    low = np.arange(64) % 32 < 10
    assert (out[low, 0] == 0x3FF).all() and (out[low, 1] == 0).all()
    assert (out[~low, 1] == 0xFFFFFC00).all() and (out[~low, 0] == 0).all()


@cuda.jit
def k_activemask_after_exit(out):
    i = cuda.threadIdx.x
    if i % 32 >= 20:
        return
    out[i] = cuda.activemask()


def test_activemask_excludes_exited_lanes():
    out = np.zeros(64, np.int64)
    k_activemask_after_exit[1, 64](out)
    live = np.arange(64) % 32 < 20
    assert (out[live] == 0xFFFFF).all() and (out[~live] == 0).all()


def test_exited_lanes_are_ignored_when_allowed():
    # Documented hardware behaviour: exited lanes named in the mask are
    # skipped. The simulator raises by default; opt in to the lenient mode.
    out = np.zeros(64, np.int32)
    with cudasim.settings(exited_lanes="ignore", timeout=20):
        k_exit_then_ballot[1, 64](out)
    assert (out.reshape(2, 32)[:, :16] == 0xFFFF).all()


@pytest.mark.parametrize("kernel,dtype", [(k_shfl_bool, np.int32), (k_shfl_uint32, np.uint32)])
def test_shfl_rejects_types_numba_cannot_shuffle(kernel, dtype):
    x = np.ones(32, dtype)
    out = np.zeros(32, dtype)
    with pytest.raises(Exception, match="32- and 64-bit ints and floats"):
        kernel[1, 32](x, out)
    _drain_sim_threads()


# --------------------------------------------------------------------------
# simulator-only: return types and misuse that is undefined on hardware


@cuda.jit
def k_types(flags):
    i = cuda.threadIdx.x
    flags[i, 0] = isinstance(cuda.shfl_sync(FULL, np.int32(i), 0), np.int32)
    flags[i, 1] = isinstance(cuda.shfl_up_sync(FULL, np.float32(i), 1), np.float32)
    flags[i, 2] = isinstance(cuda.shfl_down_sync(FULL, i, 1), np.int64)  # Python int is int64
    flags[i, 3] = isinstance(cuda.shfl_xor_sync(FULL, 1.5, 1), np.float64)
    flags[i, 4] = isinstance(cuda.ballot_sync(FULL, True), np.int32)
    flags[i, 5] = isinstance(cuda.all_sync(FULL, 1), bool)
    flags[i, 6] = isinstance(cuda.activemask(), np.uint32)
    flags[i, 7] = isinstance(cuda.lanemask_lt(), np.uint32)
    flags[i, 8] = isinstance(cuda.match_any_sync(FULL, i), np.int32)


@simulator_only
def test_return_types_match_numba_typing():
    flags = np.zeros((32, 9), np.bool_)
    k_types[1, 32](flags)
    assert flags.all(), np.argwhere(~flags)


@cuda.jit
def k_exit_then_shfl(out):
    i = cuda.threadIdx.x
    if i >= 16:
        return
    out[i] = cuda.shfl_sync(FULL, i, 0)


@simulator_only
def test_mask_naming_exited_lane_raises():
    out = np.zeros(32, np.int64)
    with pytest.raises(cudasim.WarpSyncError,
                       match=r"shfl_sync in lane \d+ of block \(0, 0, 0\), warp 0 .*names lanes"):
        k_exit_then_shfl[1, 32](out)
    _drain_sim_threads()


@simulator_only
def test_full_mask_in_partial_warp_raises():
    vals = np.zeros(48, np.int32)
    args = np.zeros(48, np.int32)
    masks = np.array([FULL, FULL], np.int64)
    with pytest.raises(cudasim.WarpSyncError, match=r"warp 1 .*lanes 16-31 .*does not exist"):
        k_shfl_idx[1, 48](vals, args, masks, np.zeros(48, np.int32))
    _drain_sim_threads()


@simulator_only
@pytest.mark.parametrize("policy,expect", [("raise", None), ("poison", np.int32(-559038737))])
def test_read_from_non_participating_lane(policy, expect):
    # Even lanes only, but delta 1 reads odd lanes: undefined on hardware.
    vals = np.arange(32, dtype=np.int32)
    args = np.ones(32, np.int32)
    masks = np.array([EVEN], np.int64)
    out = np.full(32, -1, np.int32)
    with cudasim.settings(undefined_read=policy):
        if expect is None:
            with pytest.raises(cudasim.WarpSyncError, match=r"reads lane \d+, which does not take part"):
                k_shfl_up[1, 32](vals, args, masks, out)
            _drain_sim_threads()
        else:
            k_shfl_up[1, 32](vals, args, masks, out)
            assert out[0] == 0  # lane 0 - 1 < 0: own value
            assert (out[2::2] == expect).all()


@cuda.jit
def k_mismatched_intrinsics(out):
    i = cuda.threadIdx.x
    if i < 16:
        out[i] = cuda.shfl_sync(FULL, i, 0)
    else:
        out[i] = cuda.ballot_sync(FULL, True)


@simulator_only
def test_lanes_in_different_intrinsics_raise():
    with pytest.raises(cudasim.WarpSyncError, match="disagree on the intrinsic"):
        k_mismatched_intrinsics[1, 32](np.zeros(32, np.int64))
    _drain_sim_threads()


@cuda.jit
def k_not_in_own_mask(out):
    i = cuda.threadIdx.x
    out[i] = cuda.ballot_sync(0xFFFF, True)


@simulator_only
def test_lane_outside_its_own_mask_raises():
    with pytest.raises(cudasim.WarpSyncError, match=r"not in its own mask 0x0000ffff"):
        k_not_in_own_mask[1, 32](np.zeros(32, np.int64))
    _drain_sim_threads()


@cuda.jit
def k_shfl_vs_syncthreads(out):
    i = cuda.threadIdx.x
    if i == 0:
        out[i] = cuda.shfl_sync(FULL, i, 0)
    else:
        cuda.syncthreads()


@simulator_only
def test_divergent_barrier_times_out_with_diagnosis():
    t0 = time.monotonic()
    with cudasim.settings(timeout=1.5):
        with pytest.raises(cudasim.WarpTimeoutError) as info:
            k_shfl_vs_syncthreads[1, 32](np.zeros(32, np.int64))
    _drain_sim_threads()
    msg = str(info.value)
    assert "shfl_sync in lane 0" in msg and "timed out after 1.5 s" in msg
    assert "waiting for lanes 1-31" in msg
    # On a loaded CI machine some lanes may not have reached syncthreads yet.
    assert re.search(r"lane 31 (waits in syncthreads|is running)", msg), msg
    assert time.monotonic() - t0 < 30


@cuda.jit
def k_lane_fails_while_others_wait(out):
    i = cuda.threadIdx.x
    if i == 5:
        out[i + 1000] = 1  # IndexError in the simulator
    out[i] = cuda.shfl_sync(FULL, i, 5)


@simulator_only
def test_lane_error_releases_the_lanes_waiting_for_it():
    t0 = time.monotonic()
    with pytest.raises(Exception, match="out of bounds") as info:
        k_lane_fails_while_others_wait[1, 64](np.zeros(64, np.int64))
    # Either the IndexError itself or the error of a lane that waited for
    # lane 5, which quotes it.
    assert isinstance(info.value, (IndexError, cudasim.WarpSyncError))
    _drain_sim_threads(timeout=10)
    assert not any(t.is_alive() for t in threading.enumerate() if type(t).__name__ == "BlockThread")
    assert time.monotonic() - t0 < 30  # nobody sat out the 60 s barrier timeout


def test_syncthreads_still_works_between_warp_calls():
    @cuda.jit
    def kern(out):
        sh = cuda.shared.array(64, int32)
        i = cuda.threadIdx.x
        sh[i] = cuda.shfl_xor_sync(FULL, i, 1)
        cuda.syncthreads()
        out[i] = sh[63 - i]

    out = np.zeros(64, np.int32)
    kern[1, 64](out)
    np.testing.assert_array_equal(out, (63 - np.arange(64)) ^ 1)


def test_install_is_idempotent():
    assert cudasim.install() == SIM
    assert cudasim.install() == SIM
    assert cudasim.is_installed() == SIM


def test_settings_validate_and_restore():
    before = repr(cudasim.config)
    with pytest.raises(ValueError):
        with cudasim.settings(exited_lanes="sometimes"):
            pass
    with cudasim.settings(timeout=1, undefined_read="poison"):
        assert cudasim.config.timeout == 1.0 and cudasim.config.undefined_read == "poison"
    assert repr(cudasim.config) == before
    assert re.search(r"timeout=", before)


# --------------------------------------------------------------------------
# the extension itself: explicit installation, the numba-cuda release it follows


def test_importing_kernels_installs_nothing_until_the_backend_selects_the_simulator():
    code = (
        "import pkgutil, importlib, kernels\n"
        "for m in pkgutil.walk_packages(kernels.__path__, 'kernels.'):\n"
        "    importlib.import_module(m.name)\n"
        "from kernels import cudasim\n"
        "print(cudasim.is_installed())\n"
        "from explorer import backend\n"
        "backend.select('auto')\n"
        "print(cudasim.is_installed())\n"
    )
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120,
                       cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["False", "True"]


def test_block_manager_copy_follows_the_installed_numba_cuda():
    problem = cudasim.upstream_mismatch()
    assert problem is None, problem


def test_upstream_mismatch_says_what_to_recheck(monkeypatch):
    from kernels.cudasim import blockmanager

    installed = metadata.version("numba-cuda")
    monkeypatch.setattr(blockmanager, "FOLLOWS", "0.29.0")
    msg = blockmanager.upstream_mismatch()
    assert f"follows numba-cuda 0.29.0, but numba-cuda {installed} is installed" in msg
    assert "numba_cuda/numba/cuda/simulator/kernel.py" in msg and "update FOLLOWS" in msg
    monkeypatch.setitem(blockmanager.UPSTREAM_FILES, "numba_cuda/numba/cuda/simulator/kernelapi.py", "0" * 64)
    assert "changed there: numba_cuda/numba/cuda/simulator/kernelapi.py" in blockmanager.upstream_mismatch()


# --------------------------------------------------------------------------
# grid-wide synchronisation: cuda.cg.this_grid().sync() across every block (a cooperative launch on
# a GPU; blocks side by side under the simulator)


def _cooperative_blocks(kernel, threads):
    """Numba's bound on a cooperative grid for this kernel (the simulator's cap under it)."""
    signature = None if SIM else kernel.signatures[0]
    return kernel.overloads[signature].max_cooperative_grid_blocks(threads)


def _grid_graph(rows, cols):
    """CSR of a rows x cols 4-neighbour grid, and the distances from vertex 0 (breadth-first)."""
    adj = [[] for _ in range(rows * cols)]
    for r in range(rows):
        for c in range(cols):
            v = r * cols + c
            adj[v] += [v - cols] * (r > 0) + [v + cols] * (r + 1 < rows) + [v - 1] * (c > 0) + [v + 1] * (c + 1 < cols)
    offsets = np.cumsum([0] + [len(a) for a in adj]).astype(np.int32)
    indices = np.array([u for a in adj for u in a], np.int32)
    dist = np.array([r + c for r in range(rows) for c in range(cols)], np.int32)  # Manhattan from 0
    return offsets, indices, dist


@cuda.jit
def k_grid_bfs(offsets, indices, dist, found):
    """Level-synchronous BFS in one launch: each level every thread claims, over a grid stride, the
    unvisited neighbours of the vertices at that level; one grid barrier ends the level, after
    which every thread reads how many were found (written by any block) to decide whether to go on."""
    grid = cuda.cg.this_grid()
    n = dist.shape[0]
    level = 0
    while level < found.shape[0]:
        for v in range(cuda.grid(1), n, cuda.gridsize(1)):
            if dist[v] == level:
                for e in range(offsets[v], offsets[v + 1]):
                    if cuda.atomic.cas(dist, indices[e], -1, level + 1) == -1:
                        cuda.atomic.add(found, level, 1)
        grid.sync()
        if found[level] == 0:
            break
        level += 1


def test_grid_sync_bfs_levels_across_blocks():
    rows, cols = 6, 30  # 180 vertices over 4 x 32 threads: every block's stride reaches the others' rows
    offsets, indices, ref = _grid_graph(rows, cols)
    dist = np.full(rows * cols, -1, np.int32)
    dist[0] = 0
    found = np.zeros(rows + cols, np.int32)
    k_grid_bfs[4, 32](offsets, indices, dist, found)
    np.testing.assert_array_equal(dist, ref)
    levels = ref.max()
    np.testing.assert_array_equal(found[:levels], np.bincount(ref)[1:])
    assert found[levels:].sum() == 0
    assert _cooperative_blocks(k_grid_bfs, 32) >= 4


@cuda.jit(device=True)
def _exchange_round(data, out, r, gid, nthreads):
    """One round: write, grid barrier, read another block's write, grid barrier (before the next
    round overwrites it). Called in a loop: repeated barriers from a device function."""
    data[gid] = r * 1000 + gid
    cuda.cg.this_grid().sync()
    out[r, gid] = data[(gid + cuda.blockDim.x) % nthreads]
    cuda.cg.this_grid().sync()


@cuda.jit
def k_grid_exchange(data, out, own):
    sh = cuda.shared.array(1, int32)
    gid = cuda.grid(1)
    nthreads = cuda.gridsize(1)
    if cuda.threadIdx.x == 0:
        sh[0] = cuda.blockIdx.x
    cuda.syncthreads()
    for r in range(out.shape[0]):
        _exchange_round(data, out, r, gid, nthreads)
    own[gid] = sh[0]  # every block kept its own shared memory through the barriers


@pytest.mark.parametrize("blocks,threads", [(4, 32), (3, 64), (1, 32)])
def test_grid_sync_repeated_in_a_device_function(blocks, threads):
    n, rounds = blocks * threads, 5
    data = np.zeros(n, np.int64)
    out = np.full((rounds, n), -1, np.int64)
    own = np.full(n, -1, np.int32)
    k_grid_exchange[blocks, threads](data, out, own)
    gid = np.arange(n)
    expect = np.arange(rounds)[:, None] * 1000 + (gid + threads) % n
    np.testing.assert_array_equal(out, expect)
    np.testing.assert_array_equal(own, gid // threads)


@cuda.jit
def k_grid_returns_early(out):
    if cuda.blockIdx.x == 2 and cuda.threadIdx.x == 5:
        return
    cuda.cg.this_grid().sync()
    out[cuda.grid(1)] = 1


@cuda.jit
def k_grid_block_returns(out):
    if cuda.blockIdx.x == 0:
        return  # block 0 finishes before block 1 reaches the barrier
    cuda.cg.this_grid().sync()
    out[cuda.grid(1)] = 1


@simulator_only
@pytest.mark.parametrize("kernel,who", [(k_grid_returns_early, r"block \(2, 0, 0\): threads 5\)"),
                                        (k_grid_block_returns, r"block \(0, 0, 0\): threads 0-31\)")])
def test_grid_sync_with_a_thread_that_returned_raises(kernel, who):
    t0 = time.monotonic()
    with pytest.raises(cudasim.GridSyncError, match=r"have returned from the kernel and will never arrive \(" + who):
        kernel[4, 32](np.zeros(128, np.int32))
    _drain_sim_threads()
    assert time.monotonic() - t0 < 30


@cuda.jit
def k_grid_vs_syncthreads(out):
    if cuda.blockIdx.x == 1 and cuda.threadIdx.x == 0:
        cuda.syncthreads()  # never met: the rest of its block is at the grid barrier
    else:
        cuda.cg.this_grid().sync()
    out[cuda.grid(1)] = 1


@simulator_only
def test_grid_sync_that_cannot_complete_times_out_with_diagnosis():
    with cudasim.settings(timeout=1.5):
        with pytest.raises(cudasim.GridTimeoutError) as info:
            k_grid_vs_syncthreads[2, 32](np.zeros(64, np.int32))
    _drain_sim_threads()
    msg = str(info.value)
    assert "timed out after 1.5 s waiting for block (1, 0, 0), threads 0 (thread 0: " in msg
    assert re.search(r"thread 0: lane 0 (waits in syncthreads|is running)", msg), msg


@simulator_only
def test_grid_larger_than_the_simulator_runs_side_by_side_raises():
    with cudasim.settings(grid_threads=64):
        assert _cooperative_blocks(k_grid_exchange, 32) == 2
        with pytest.raises(cudasim.GridSyncError, match=r"4 blocks of 32 threads, but the simulator runs at most 2"):
            k_grid_exchange[4, 32](np.zeros(128, np.int64), np.zeros((1, 128), np.int64), np.zeros(128, np.int32))
    _drain_sim_threads()
    with pytest.raises(ValueError, match="grid_threads must be at least 1"):
        with cudasim.settings(grid_threads=0):
            pass


@cuda.jit
def k_grid_fails_while_others_wait(out):
    if cuda.blockIdx.x == 3 and cuda.threadIdx.x == 7:
        out[10_000] = 1  # IndexError in the simulator
    cuda.cg.this_grid().sync()
    out[cuda.grid(1)] = 1


@simulator_only
def test_grid_sync_failure_in_one_block_releases_the_others():
    t0 = time.monotonic()
    with pytest.raises(IndexError, match="out of bounds"):
        k_grid_fails_while_others_wait[4, 32](np.zeros(128, np.int32))
    _drain_sim_threads(timeout=10)
    assert not any(t.is_alive() for t in threading.enumerate() if type(t).__name__ == "BlockThread")
    assert time.monotonic() - t0 < 30
