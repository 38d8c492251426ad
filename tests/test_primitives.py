"""kernels.primitives against numpy, on the simulator and unchanged on a GPU."""
import numpy as np
import pytest
from numba import config as numba_config
from numba import cuda, int64

from kernels import primitives as P
from kernels import cudasim as sim

SIM = bool(numba_config.ENABLE_CUDASIM)


@pytest.fixture(autouse=True, scope="module")
def _install():
    sim.install()
    yield


def _per_warp(x, fn):
    return np.concatenate([fn(w) for w in x.reshape(-1, 32)])


def _random(rng, n, dtype, lo=-1000, hi=1000):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(lo, hi, n).astype(dtype)
    return rng.uniform(lo, hi, n).astype(dtype)


# --------------------------------------------------------------------------
# kernels


@cuda.jit
def k_scans(x, incl, excl, excl2, total):
    i = cuda.grid(1)
    v = x[i]
    incl[i] = P.warp_inclusive_scan(v)
    excl[i] = P.warp_exclusive_scan(v)
    e, t = P.warp_exclusive_scan_total(v)
    excl2[i] = e
    total[i] = t


@cuda.jit
def k_reduce(x, s, mn, mx):
    i = cuda.grid(1)
    v = x[i]
    s[i] = P.warp_sum(v)
    mn[i] = P.warp_min(v)
    mx[i] = P.warp_max(v)


@cuda.jit
def k_binary(pred, offset, total):
    i = cuda.grid(1)
    o, t = P.warp_binary_exclusive_scan(pred[i])
    offset[i] = o
    total[i] = t


@cuda.jit
def k_binary_bool(x, offset, total):
    i = cuda.grid(1)
    o, t = P.warp_binary_exclusive_scan(x[i] > 0)
    offset[i] = o
    total[i] = t


@cuda.jit
def k_block_scan(x, excl, total, repeats):
    scratch = cuda.shared.array(32, int64)
    i = cuda.threadIdx.x + cuda.blockDim.x * (cuda.threadIdx.y + cuda.blockDim.y * cuda.threadIdx.z)
    g = cuda.blockIdx.x * cuda.blockDim.x * cuda.blockDim.y * cuda.blockDim.z + i
    v = x[g]
    acc = v - v
    # Calling it repeatedly with the same scratch checks the trailing barrier.
    for r in range(repeats):
        e, t = P.block_exclusive_scan(v + r, scratch)
        acc += e
        total[g] = t
    excl[g] = acc


@cuda.jit
def k_search(lengths, items, owner, rank, owner_only):
    # One segment length per lane; items holds one work item per (round,
    # lane), as a multi-round edge-discover loop would use them.
    i = cuda.grid(1)
    p = P.warp_inclusive_scan(lengths[i])
    for r in range(items.shape[0]):
        o, k = P.warp_search_owner_rank(p, items[r, i])
        owner[r, i] = o
        rank[r, i] = k
        owner_only[r, i] = P.warp_search_owner(p, items[r, i])


@cuda.jit
def k_reserve(n, counter, first):
    i = cuda.grid(1)
    first[i] = P.warp_reserve(counter, 1, n[i])


# --------------------------------------------------------------------------
# scans and reductions


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
@pytest.mark.parametrize("seed", [0, 1])
def test_warp_scans(dtype, seed):
    rng = np.random.default_rng(seed)
    n = 64
    x = _random(rng, n, dtype)
    incl, excl, excl2, total = (np.zeros(n, dtype) for _ in range(4))
    k_scans[1, n](x, incl, excl, excl2, total)
    want_incl = _per_warp(x, np.cumsum)
    want_excl = want_incl - x
    want_total = _per_warp(x, lambda w: np.full(32, w.sum()))
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(incl, want_incl)
        np.testing.assert_array_equal(excl, want_excl)
        np.testing.assert_array_equal(excl2, want_excl)
        np.testing.assert_array_equal(total, want_total)
    else:  # a tree order of additions, not numpy's sequential one
        for got, want in ((incl, want_incl), (excl, want_excl), (excl2, want_excl), (total, want_total)):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)
        assert (excl[::32] == 0).all()


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_warp_scan_int32_wraps_like_c():
    x = np.full(32, 2**30, np.int32)
    incl, excl, excl2, total = (np.zeros(32, np.int32) for _ in range(4))
    with np.errstate(over="ignore"):
        k_scans[1, 32](x, incl, excl, excl2, total)
        want = np.cumsum(x, dtype=np.int32)
    np.testing.assert_array_equal(incl, want)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float32])
@pytest.mark.parametrize("seed", [0, 1])
def test_warp_reductions(dtype, seed):
    rng = np.random.default_rng(seed)
    n = 64
    x = _random(rng, n, dtype)
    s, mn, mx = (np.zeros(n, dtype) for _ in range(3))
    k_reduce[1, n](x, s, mn, mx)
    if np.issubdtype(dtype, np.integer):
        np.testing.assert_array_equal(s, _per_warp(x, lambda w: np.full(32, w.sum())))
    else:
        np.testing.assert_allclose(s, _per_warp(x, lambda w: np.full(32, w.sum())), rtol=1e-5)
    np.testing.assert_array_equal(mn, _per_warp(x, lambda w: np.full(32, w.min())))
    np.testing.assert_array_equal(mx, _per_warp(x, lambda w: np.full(32, w.max())))


@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_warp_binary_exclusive_scan(density):
    rng = np.random.default_rng(int(density * 10))
    n = 64
    flags = rng.random(n) < density
    pred = flags * rng.integers(1, 5, n)  # any non-zero counts as 1
    offset, total = np.zeros(n, np.int32), np.zeros(n, np.int32)
    k_binary[1, n](pred.astype(np.int32), offset, total)
    f = flags.astype(np.int32)
    np.testing.assert_array_equal(offset, _per_warp(f, np.cumsum) - f)
    np.testing.assert_array_equal(total, _per_warp(f, lambda w: np.full(32, w.sum())))
    # boolean predicates too
    k_binary_bool[1, n](np.where(flags, 1, -1).astype(np.int64), offset, total)
    np.testing.assert_array_equal(offset, _per_warp(f, np.cumsum) - f)


def test_warp_reserve_gives_each_warp_its_own_run_of_slots():
    rng = np.random.default_rng(5)
    n = rng.integers(0, 4, 128).astype(np.int32)
    n[64:96] = 0  # a warp that asks for nothing takes nothing
    counter = np.array([5, 100, 7], np.int32)
    first = np.zeros(128, np.int64)
    k_reserve[2, 64](n, counter, first)
    assert counter.tolist() == [5, 100 + n.sum(), 7]
    runs = []
    for w in range(4):
        lanes = slice(32 * w, 32 * w + 32)
        base = first[lanes] - (np.cumsum(n[lanes]) - n[lanes])  # lanes in order after one base
        assert (base == base[0]).all()
        if n[lanes].sum():
            runs.append((base[0], base[0] + n[lanes].sum()))
    runs.sort()  # the warps' runs tile [100, 100 + total) in whatever order they came
    assert runs[0][0] == 100 and runs[-1][1] == 100 + n.sum()
    assert all(a[1] == b[0] for a, b in zip(runs, runs[1:]))


@pytest.mark.parametrize("block,grid", [((32,), 1), ((96,), 2), ((128,), 1), ((32, 2), 1)])
def test_block_exclusive_scan(block, grid):
    rng = np.random.default_rng(len(block) * 1000 + block[0])
    nb = int(np.prod(block))
    x = rng.integers(0, 100, nb * grid).astype(np.int64)
    excl, total = np.zeros_like(x), np.zeros_like(x)
    repeats = 2
    k_block_scan[grid, block](x, excl, total, repeats)
    for b in range(grid):
        xb = x[b * nb : (b + 1) * nb]
        want = sum(np.cumsum(xb + r) - (xb + r) for r in range(repeats))
        np.testing.assert_array_equal(excl[b * nb : (b + 1) * nb], want)
        assert (total[b * nb : (b + 1) * nb] == (xb + repeats - 1).sum()).all()


# --------------------------------------------------------------------------
# edge-discover owner search


def _search_reference(degrees, items):
    incl = np.cumsum(degrees)
    owner = np.searchsorted(incl, items, side="right")
    start = np.concatenate([[0], incl])[owner]
    return owner, items - start


def test_search_owner_paper_fig6():
    # BFS-4K Fig. 6: 20 threads over 6 frontier vertices of degrees 3,1,4,6,3,3.
    deg = np.zeros(32, np.int32)
    deg[:6] = [3, 1, 4, 6, 3, 3]
    items = np.arange(32, dtype=np.int32)[None, :]
    owner, rank, owner2 = (np.full((1, 32), -1, np.int32) for _ in range(3))
    k_search[1, 32](deg, items, owner, rank, owner2)
    np.testing.assert_array_equal(owner, owner2)
    expected = [0, 0, 0, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5]
    assert owner[0, :20].tolist() == expected
    assert owner[0, 5] == 2 and owner[0, 14:17].tolist() == [4, 4, 4]
    assert rank[0, :20].tolist() == [0, 1, 2, 0, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("seed", range(4))
def test_search_owner_random_multi_round(seed):
    rng = np.random.default_rng(seed)
    n = 64
    # many zero degrees (vertices with no edges) and some long segments
    deg = np.where(rng.random(n) < 0.3, 0, rng.integers(1, 12, n)).astype(np.int32)
    deg[rng.integers(0, n)] = 70
    totals = deg.reshape(-1, 32).sum(axis=1)
    rounds = int(totals.max() + 31) // 32
    items = np.zeros((rounds, n), np.int64)
    for r in range(rounds):
        items[r] = r * 32 + np.arange(n) % 32
    owner, rank, owner2 = (np.full((rounds, n), -1, np.int32) for _ in range(3))
    k_search[1, n](deg, items, owner, rank, owner2)
    for w in range(n // 32):
        sl = slice(32 * w, 32 * w + 32)
        valid = items[:, sl] < totals[w]
        want_owner, want_rank = _search_reference(deg[sl], items[:, sl])
        np.testing.assert_array_equal(owner[:, sl][valid], want_owner[valid])
        np.testing.assert_array_equal(owner2[:, sl][valid], want_owner[valid])
        np.testing.assert_array_equal(rank[:, sl][valid], want_rank[valid])
        assert (deg[sl][owner[:, sl][valid]] > 0).all()  # zero-length segments never own


# --------------------------------------------------------------------------
# type preservation


@cuda.jit
def k_scan_types(x32, f32, flags):
    i = cuda.threadIdx.x
    flags[i, 0] = isinstance(P.warp_inclusive_scan(x32[i]), np.int32)
    flags[i, 1] = isinstance(P.warp_exclusive_scan_total(x32[i])[1], np.int32)
    flags[i, 2] = isinstance(P.warp_sum(f32[i]), np.float32)
    o, t = P.warp_binary_exclusive_scan(x32[i] > 0)
    flags[i, 3] = isinstance(o, np.int32) and isinstance(t, np.int32)
    flags[i, 4] = isinstance(P.warp_search_owner(x32[i], 3), np.int32)


@pytest.mark.skipif(not SIM, reason="inspects Python types of simulated values")
def test_results_keep_input_types_in_simulator():
    flags = np.zeros((32, 5), np.bool_)
    k_scan_types[1, 32](np.ones(32, np.int32), np.ones(32, np.float32), flags)
    assert flags.all(), np.argwhere(~flags)


@cuda.jit
def k_scan_only(x, out):
    i = cuda.grid(1)
    out[i] = P.warp_inclusive_scan(x[i])


@pytest.mark.skipif(SIM, reason="needs PTX from a real GPU compile")
def test_int32_scan_uses_one_32bit_shuffle_per_step():
    # Without the cast back to int32, Numba promotes the running sum to
    # int64 and every step needs two shuffles.
    x = np.ones(32, np.int32)
    k_scan_only[1, 32](x, np.zeros(32, np.int32))
    ptx = next(iter(k_scan_only.inspect_asm().values()))
    assert ptx.count("shfl.sync.up") == 5, ptx


@cuda.jit
def k_clock(out, work):
    t0 = P.clock64()
    acc = 0
    for i in range(work[0]):
        acc += i
    t1 = P.clock64()
    if cuda.grid(1) == 0:
        out[0] = t0
        out[1] = t1
        out[2] = acc


def test_clock64_counts_forward():
    out = cuda.to_device(np.zeros(3, np.int64))
    k_clock[1, 32](out, np.array([1000], np.int64))
    t0, t1, acc = out.copy_to_host()
    assert acc == 999 * 1000 // 2
    assert t1 > t0 > 0
