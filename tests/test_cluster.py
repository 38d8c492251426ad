"""Thread-block clusters (kernels.cluster) and the plain cluster BFS of benchmarks/yardsticks/plain_cluster.py:
under the simulator (kernels.cudasim.run_cluster) and unchanged on a GPU of compute capability 9.0+."""
import networkx as nx
import numpy as np
import pytest
from numba import config as numba_config
from numba import cuda, int32, int64

from benchmarks.yardsticks import plain_cluster
from explorer import graphs
from explorer.engine.launcher import Launcher, PlainLauncher
from explorer.reference import cpu_bfs, validate
from kernels import cudasim
from kernels.cluster import (cluster_add, cluster_load, cluster_map, cluster_or, cluster_rank, cluster_store,
                             counter_add, counter_load,
                             cluster_sync, smem_addr)

SIM = bool(numba_config.ENABLE_CUDASIM)


@pytest.fixture(scope="module")
def launcher():
    cudasim.install()
    if SIM:
        return PlainLauncher()
    if cuda.get_current_device().compute_capability < (9, 0):
        pytest.skip("thread-block clusters need compute capability 9.0")
    return Launcher.shared()


@cuda.jit
def k_exchange(out, hits):
    """Each block writes its rank into its shared memory, then reads its right neighbour's and
    ORs one bit per thread into block 0's word; the barriers order it all."""
    sh = cuda.shared.array(0, int32)  # [0]: the rank; [1]: bits from every thread of the cluster
    tid = cuda.threadIdx.x
    rank = cluster_rank()
    C = cuda.gridDim.x
    if tid == 0:
        sh[0] = rank * 10
        sh[1] = 0
    cluster_sync()
    base = smem_addr(sh, 0)
    cluster_or(cluster_map(base + 4, 0), 1 << (rank * 4 + tid % 4))
    cluster_sync()
    if tid == 0:
        out[rank, 0] = cluster_load(cluster_map(base, (rank + 1) % C))
        out[rank, 1] = cluster_load(cluster_map(smem_addr(sh, 1), 0))
    cluster_sync()  # no block leaves while another may read its shared memory
    hits[cuda.blockIdx.x * cuda.blockDim.x + tid] = 1


@pytest.mark.parametrize("C", [1, 2, 4])
def test_blocks_of_a_cluster_share_memory_and_a_barrier(launcher, C):
    out = cuda.to_device(np.full((C, 2), -1, np.int32))
    hits = cuda.to_device(np.zeros(C * 64, np.int32))
    launcher.cluster(k_exchange, C, C, 64, 8, out, hits)
    got = out.copy_to_host()
    assert got[:, 0].tolist() == [((r + 1) % C) * 10 for r in range(C)]
    assert got[:, 1].tolist() == [(1 << 4 * C) - 1] * C  # four bits from each block, seen by all
    assert hits.copy_to_host().all()


@cuda.jit
def k_deal(out):
    """Every thread of the cluster takes a slot from one counter in block 0 and stores its global
    thread id at that slot in the slot's owner block (slot mod C), as BFS-4K's cluster kernel deals
    out its next frontier; then each block copies what it was given to out."""
    sh = cuda.shared.array(0, int32)  # [0]: block 0's counter; [1:]: entries given to this block
    tid = cuda.threadIdx.x
    rank = cluster_rank()
    C = cuda.gridDim.x
    if tid == 0:
        sh[0] = 0
    cluster_sync()
    slot = cluster_add(cluster_map(smem_addr(sh, 0), 0), 1)
    cluster_store(cluster_map(smem_addr(sh, 1 + slot // C), slot % C), rank * cuda.blockDim.x + tid)
    cluster_sync()
    out[rank, tid] = sh[1 + tid]  # a block is given blockDim.x entries: slots rank, rank + C, ...
    if rank == 0 and tid == 0:
        out[C, 0] = sh[0]
    cluster_sync()


@pytest.mark.parametrize("C", [1, 2, 4])
def test_cluster_add_and_store_deal_entries_out(launcher, C):
    threads = 32
    out = cuda.to_device(np.full((C + 1, threads), -1, np.int32))
    launcher.cluster(k_deal, C, C, threads, 4 * (1 + threads), out)
    got = out.copy_to_host()
    assert got[C, 0] == C * threads  # every thread took one slot
    assert sorted(got[:C].ravel().tolist()) == list(range(C * threads))  # each id stored once, somewhere


@cuda.jit
def k_counters(glob, out):
    """Every thread adds a value past 2**32 to int64 counter 1 of block 0's shared memory and of a
    global array through counter_add (its old values summed), then block 0 reads both back."""
    sh = cuda.shared.array(3, int64)
    tid = cuda.threadIdx.x
    rank = cluster_rank()
    if tid < 3:
        sh[tid] = 0
    cluster_sync()
    x = (int64(1) << 33) + rank * cuda.blockDim.x + tid
    shared_at = cluster_map(smem_addr(sh, 0), 0)
    counter_add(shared_at, 1, x)
    counter_add(glob, 1, x)
    cluster_sync()
    if rank == 0 and tid == 0:
        out[0] = counter_load(shared_at, 1)
        out[1] = counter_load(glob, 1)
        out[2] = counter_load(shared_at, 0) + counter_load(shared_at, 2)  # the neighbours untouched
    cluster_sync()


@pytest.mark.parametrize("C", [1, 2])
def test_counters_add_64_bits_in_shared_or_global_memory(launcher, C):
    threads = 32
    glob = cuda.to_device(np.zeros(3, np.int64))
    out = cuda.to_device(np.full(3, -1, np.int64))
    launcher.cluster(k_counters, C, C, threads, 0, glob, out)
    want = sum((1 << 33) + i for i in range(C * threads))
    assert out.copy_to_host().tolist() == [want, want, 0]


@pytest.mark.skipif(not SIM, reason="simulator's error messages")
def test_cluster_intrinsics_name_their_misuse(launcher):
    @cuda.jit
    def k_bad_rank(out):
        sh = cuda.shared.array(0, int32)
        out[0] = cluster_load(cluster_map(smem_addr(sh, 0), 2))

    out = cuda.to_device(np.zeros(1, np.int32))
    with pytest.raises(IndexError, match="rank 2 outside the cluster of 2 blocks"):
        launcher.cluster(k_bad_rank, 2, 2, 32, 8, out)
    with pytest.raises(RuntimeError, match="need a cluster launch"):
        k_bad_rank[1, 32, 0, 8](out)
    with pytest.raises(ValueError, match="do not make clusters of 4"):
        launcher.cluster(k_bad_rank, 4, 6, 32, 8, out)

    @cuda.jit
    def k_global_addr(out):
        out[0] = smem_addr(out, 0)

    with pytest.raises(ValueError, match="not in this block's shared memory"):
        launcher.cluster(k_global_addr, 1, 1, 32, 8, out)


def _regular():
    return graphs.from_networkx(nx.random_regular_graph(6, 400, seed=1), name="regular6")


# The frontier is dealt out 32 / W entries a warp, warps over the blocks: only frontiers wider than 32
# entries reach the other blocks (the 24 x 24 grid's reach 46, the regular graph's 250).
@pytest.mark.parametrize("C,name,threads,W", [(1, "grid7", 64, 1), (2, "grid24", 64, 1), (2, "regular", 32, 1),
                                               (4, "regular", 32, 1), (4, "regular", 32, 4), (2, "grid24", 64, 2)])
def test_plain_cluster_bfs(launcher, C, name, threads, W):
    g = _regular() if name == "regular" else graphs.generate("grid2d", rows=int(name[4:]), cols=int(name[4:]))
    n = g.num_vertices
    src = n // 2
    offsets, indices = cuda.to_device(g.offsets), cuda.to_device(g.indices.astype(np.int32))
    dist = cuda.to_device(np.full(n, -1, np.int32))
    parent = cuda.to_device(np.full(n, -1, np.int32))
    out = cuda.to_device(np.zeros(2, np.int32))
    plain_cluster.search(launcher, plain_cluster.cluster_kernel(C, W), C, threads, offsets, indices, dist,
                         parent, src, n, out)
    ref, _ = cpu_bfs(g, src)
    d, p, o = dist.copy_to_host(), parent.copy_to_host(), out.copy_to_host()
    assert np.array_equal(d, ref)
    assert validate(g, src, d.astype(np.int64), p.astype(np.int64)).ok
    assert o.tolist() == [ref.max() + 1, 0]  # levels with a frontier, no overflow
