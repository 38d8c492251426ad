"""The searches of benchmarks/yardsticks/level_floor.py on small graphs: their times are floors for the product's
kernels only if they search correctly. Under the simulator, and unchanged on a GPU (the cluster
kernels need compute capability 9.0)."""
import numpy as np
import pytest
from numba import config as numba_config
from numba import cuda

from benchmarks.yardsticks import level_floor as lf
from explorer import graphs
from explorer.engine.launcher import Launcher, PlainLauncher
from explorer.reference import cpu_bfs, validate
from kernels import cudasim

SIM = bool(numba_config.ENABLE_CUDASIM)


@pytest.fixture(scope="module")
def launcher():
    cudasim.install()
    return PlainLauncher() if SIM else Launcher.shared()


@pytest.fixture(scope="module")
def cluster_launcher(launcher):
    if not SIM and cuda.get_current_device().compute_capability < (9, 0):
        pytest.skip("thread-block clusters need compute capability 9.0")
    return launcher


def _graph(name):
    """A grid (degrees up to 4: one gather round), or a Kronecker graph (hubs: several rounds,
    and unreachable vertices)."""
    if name == "grid":
        return graphs.generate("grid2d", rows=9, cols=11), 9 * 5 + 3
    g = graphs.generate("kronecker", scale=6, edge_factor=6, seed=3)
    return g, int(np.argmax(np.diff(g.offsets)))


def _device(g):
    return cuda.to_device(g.offsets), cuda.to_device(g.indices.astype(np.int32))


def _assert_right(mode, g, src, ref, dist, parent, vlog, out):
    checked = lf.check(mode, ref, dist, vlog, out)
    assert checked.ok, checked.message
    o = out.copy_to_host()
    assert o[0] == ref.max() + 1  # levels with a frontier
    assert o[2] == 0  # no overflow
    if mode in ("direct", "cas"):
        assert validate(g, src, dist.copy_to_host().astype(np.int64), parent.copy_to_host().astype(np.int64)).ok
    if mode in ("none", "log"):
        assert o[1] == (ref >= 0).sum()  # every reachable vertex entered a frontier once


@pytest.mark.parametrize("name", ["grid", "kron"])
@pytest.mark.parametrize("mode,V", [("none", 1), ("direct", 2), ("log", 1), ("log", 2), ("cas", 2)])
def test_batched_searches(launcher, name, mode, V):
    g, src = _graph(name)
    ref = cpu_bfs(g, src)[0]
    offsets, indices = _device(g)
    words = (g.num_vertices + 31) // 32 if mode != "cas" else 0
    fresh, go = lf.one_block(launcher, lf.batched_kernel(V, mode), 32, words, 0, offsets, indices,
                             g.num_vertices, src)
    arrays = fresh()
    go(arrays)
    dist, parent, vlog, out, _ = arrays
    _assert_right(mode, g, src, ref, dist, parent, vlog, out)


@pytest.mark.parametrize("name", ["grid", "kron"])
@pytest.mark.parametrize("W,R,log,timing", [(4, 2, True, False), (2, 1, True, False), (1, 2, False, False),
                                            (4, 1, True, True)])
def test_lanes_searches(launcher, name, W, R, log, timing):
    g, src = _graph(name)
    ref = cpu_bfs(g, src)[0]
    offsets, indices = _device(g)
    words = (g.num_vertices + 31) // 32
    fresh, go = lf.one_block(launcher, lf.lanes_kernel(W, R, log, timing), 64, words, 0, offsets, indices,
                             g.num_vertices, src)
    arrays = fresh()
    go(arrays)
    dist, parent, vlog, out, phases = arrays
    _assert_right("log" if log else "none", g, src, ref, dist, parent, vlog, out)
    ph = phases.copy_to_host()
    assert (ph[0, :5] > 0).all() if timing else not ph.any()  # warp 0 holds the source: every phase ran


@pytest.mark.parametrize("name", ["grid", "kron"])
@pytest.mark.parametrize("C,W,R,tail,timing", [(2, 4, 2, False, False), (4, 2, 1, True, False),
                                               (4, 4, 2, False, True)])
def test_cluster_lanes_searches(cluster_launcher, name, C, W, R, tail, timing):
    g, src = _graph(name)
    ref = cpu_bfs(g, src)[0]
    offsets, indices = _device(g)
    kern = lf.cluster_lanes_kernel(C, W, R, True, timing, tail)
    fresh, go = lf.cluster_search(cluster_launcher, kern, C, 32, offsets, indices, g.num_vertices, src)
    arrays = fresh()
    go(arrays)
    dist, parent, out, phases = arrays
    _assert_right("direct", g, src, ref, dist, parent, None, out)
    assert phases.copy_to_host().any() == timing
