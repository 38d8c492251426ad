"""A plain BFS of the 2-D grid by one thread-block cluster (compute capability 9.0 and later).

    python3 -m benchmarks.yardsticks.plain_cluster [--side 1000]

The single-block kernel's loop, spread over the C blocks (one per SM) of one cluster: Hopper
runs a cluster's blocks at once on the SMs of one GPC, gives them a hardware barrier
(`barrier.cluster`) and lets each read and atomically update the others' shared memory
(distributed shared memory). The visited bitmap is split between the blocks' shared memory
(word w lives in block w mod C); each block appends what it claims to its own F_d_new; the next
level's frontier is the blocks' queues one after the other, read across the cluster 32 / W
entries a warp (W lanes a vertex), dealt out warp by warp over the blocks. One cluster barrier a
level; claims write their level and parent at once, as plain_single_block's `dist+parent` does.
No statistics, no policy: whether more SMs with a cheap barrier beat one SM on the grid's 1001 small levels.

Numba has neither clusters nor distributed shared memory: kernels.cluster supplies them (inline
PTX; Python under the simulator, where kernels.cudasim.run_cluster runs a cluster's blocks side by
side), and explorer.launcher launches with a cluster dimension (`cuLaunchKernelEx`).
tests/test_cluster.py runs this kernel on small grids under the simulator.
"""
from __future__ import annotations

import functools
import itertools

import numpy as np
from numba import cuda, int32, uint32

from benchmarks import harness
from benchmarks.yardsticks.common import grid_case, levels_check, report, show
from explorer.engine.launcher import Launcher
from kernels.cluster import cluster_load, cluster_map, cluster_or, cluster_rank, cluster_sync, smem_addr
from kernels.primitives import warp_inclusive_scan, warp_reserve

FULL = 0xFFFFFFFF
QLEN = 16
FCAP = 4096  # each block's F_d / F_d_new entries: the grid's whole frontiers stay under 2,000


@functools.cache
def cluster_kernel(C: int, W: int = 1, write: bool = True):
    """The kernel for clusters of C blocks (a power of two). W (1, 2, 4, ... 32) lanes share a
    frontier vertex and take its edges W apart, so that its claims are in flight together instead
    of one after another. write=False leaves out the claims' level and parent (wrong output: what
    the loop alone costs)."""
    shift = C.bit_length() - 1
    wshift = W.bit_length() - 1

    @cuda.jit
    def plain_cluster(offsets, indices, dist, parent, src, bwords, out):
        sh = cuda.shared.array(0, int32)  # [bitmap slice: bwords][F_d: FCAP][F_d_new: FCAP]
        ctr = cuda.shared.array(3, int32)  # this block's next-frontier sizes, three in rotation
        tid = cuda.threadIdx.x
        B = cuda.blockDim.x
        lane = cuda.laneid
        rank = cluster_rank()
        i = tid
        while i < bwords:
            sh[i] = 0
            i += B
        if tid < 3:
            ctr[tid] = 0
        cuda.syncthreads()
        w = src >> 5
        if tid == 0 and (w & (C - 1)) == rank:
            sh[w >> shift] = int32(uint32(1) << uint32(src & 31))
        if tid == 0 and rank == 0:
            sh[bwords] = src
            ctr[0] = 1
            dist[src] = 0
            parent[src] = src
        bm = smem_addr(sh, 0)
        ctr_addr = smem_addr(ctr, 0)
        f_off = bwords
        fn_off = bwords + FCAP
        slot = 0
        level = int32(0)
        q = cuda.local.array(QLEN, int32)
        sub = lane & (W - 1)
        per_warp = 32 >> wshift  # frontier entries a warp takes at once
        cluster_sync()  # every bitmap slice is clear before any block claims
        while True:
            # The current frontier: block j's F_d holds counts[j] entries; lanes j < C read them.
            cj = int32(0)
            if lane < C:
                cj = cluster_load(cluster_map(ctr_addr + 4 * slot, lane))
            incl = warp_inclusive_scan(cj)
            total = cuda.shfl_sync(FULL, incl, 31)
            if total == 0:
                break
            if tid == 0:
                ctr[(slot + 2) % 3] = 0  # read by every block before the last barrier
            nxt = level + 1
            fa = smem_addr(sh, f_off)
            chunk = (tid >> 5) * C + rank  # per_warp entries a warp, warps dealt out over the blocks
            while chunk * per_warp < total:
                g = chunk * per_warp + (lane >> wshift)
                s = int32(0)
                for j in range(C):
                    if g >= cuda.shfl_sync(FULL, incl, j):
                        s += 1
                s = min(s, C - 1)
                start = cuda.shfl_sync(FULL, incl - cj, s)
                qn = int32(0)
                if g < total:
                    u = cluster_load(cluster_map(fa + 4 * (g - start), s))
                    e = int32(offsets[u]) + sub
                    end = int32(offsets[u + 1])
                    while e < end:
                        v = indices[e]
                        e += W
                        wv = v >> 5
                        bit = int32(uint32(1) << uint32(v & 31))
                        old = cluster_or(cluster_map(bm + 4 * (wv >> shift), wv & (C - 1)), bit)
                        if (old & bit) == 0:
                            if write:
                                dist[v] = nxt
                                parent[v] = u
                            if qn < QLEN:
                                q[qn] = v
                            qn += 1
                b = warp_reserve(ctr, (slot + 1) % 3, qn)
                for k in range(min(qn, QLEN)):
                    if b + k < FCAP:
                        sh[fn_off + b + k] = q[k]
                    else:
                        out[1] = 1  # overflow: the result is wrong, and says so
                if qn > QLEN:
                    out[1] = 1
                chunk += (B >> 5) * C
            cluster_sync()  # claims, F_d_new and its size are complete in every block
            slot = (slot + 1) % 3
            level += 1
            f_off, fn_off = fn_off, f_off
        if tid == 0 and rank == 0:
            out[0] = level  # levels with a frontier
        cluster_sync()  # no block leaves while another may still read its shared memory

    return plain_cluster


def search(launcher, kern, C, threads, offsets, indices, dist, parent, src, n, out):
    """One BFS from src by a cluster of C blocks: dist and parent filled (-1 before), out[0] = the
    levels, out[1] = 1 if a block's F_d_new overflowed (the result is then wrong)."""
    bwords = -(-((n + 31) // 32) // C)  # each block's slice of the visited bitmap
    launcher.cluster(kern, C, C, threads, 4 * (bwords + 2 * FCAP), offsets, indices, dist, parent, src, bwords, out)


def main(argv=None) -> int:
    case = grid_case(__doc__.splitlines()[0], argv)
    side, n = case.args.side, case.g.num_vertices
    launcher = Launcher.shared()
    print(f"{case.env['gpu']}: plain BFS of the {side} x {side} grid from its centre by one cluster "
          f"of C blocks (bitmap split over their shared memory, one cluster barrier a level)")
    cases = [(C, threads, W, True) for C, threads, W in itertools.product((1, 4, 8, 16), (512, 1024), (1, 2, 4))]
    cases += [(8, 512, 1, False), (8, 512, 4, False)]
    rows = []
    for C, threads, W, write in cases:
        kern = cluster_kernel(C, W, write)
        label = f"C={C:2d} x {threads:4d} threads, W={W}{'' if write else ', no writes'}"
        try:
            times, (dist, parent, out) = harness.time_launches(
                case.args.repeats,
                lambda: (cuda.to_device(np.full(n, -1, np.int32)), cuda.to_device(np.full(n, -1, np.int32)),
                         cuda.to_device(np.zeros(2, np.int32))),
                lambda a: search(launcher, kern, C, threads, case.offsets, case.indices, *a[:2], case.src, n, a[2]))
        except Exception as exc:  # noqa: BLE001 - a cluster size this GPU refuses: say so, go on
            print(f"  {label:40s} failed: {exc}", flush=True)
            continue
        o = out.copy_to_host()
        if o[1]:
            check = harness.Check(False, "a block's F_d_new overflowed")
        elif write:
            check = harness.check_distances(case.ref, dist.copy_to_host())
        else:
            check = levels_check(case.ref, int(o[0]), " (distances not written)")
        rows.append(show(harness.Timed(label, times, check, {"levels": int(o[0])})))
    return report(case, "plain_cluster", "A plain BFS of the grid by one thread-block cluster", rows)


if __name__ == "__main__":
    raise SystemExit(main())
