"""A plain single-block BFS of the 2-D grid, as a yardstick for BFS-4K's single-block kernel (GPU only).

    python3 -m benchmarks.yardsticks.plain_single_block [--side 1000]

One block of 1024 threads runs every level in one launch: the visited flags are a bitmap in shared
memory, F_d and F_d_new are in shared memory, a thread takes one frontier vertex (two neighbours a
round), warps append to the next frontier with a shuffle scan and one shared atomic, one barrier a
level. No per-level statistics, no policy, no instrumentation: what a Numba kernel that only
searches costs, on the 1000 x 1000 grid from its centre (1001 levels).

Variants: `dist+parent` writes each claim's level and parent to global memory at once (a plain
kernel's choice); `no writes` leaves them out (wrong output: it shows what the level loop alone
costs, the floor for any kernel that writes them later; its level count is checked); `W=2`
gives each vertex two lanes.
"""
from __future__ import annotations

import numpy as np
from numba import cuda, int32, uint32

from benchmarks import harness
from benchmarks.yardsticks.common import grid_case, levels_check, report, show
from explorer.engine.launcher import Launcher
from kernels.primitives import warp_reserve

FULL = 0xFFFFFFFF
QLEN = 16
FCAP = 4096  # F_d / F_d_new entries: the grid's frontiers stay under 2,000


def plain_kernel(write: bool, W: int):
    @cuda.jit
    def plain_bfs(offsets, indices, dist, parent, src, nwords, levels_out):
        sh = cuda.shared.array(0, int32)  # [bitmap: nwords][F_d: FCAP][F_d_new: FCAP]
        ctr = cuda.shared.array(3, int32)  # next-frontier sizes, three in rotation: one barrier a level
        tid = cuda.threadIdx.x
        B = cuda.blockDim.x
        lane = cuda.laneid
        i = tid
        while i < nwords:
            sh[i] = 0
            i += B
        f_off = nwords
        fn_off = nwords + FCAP
        cuda.syncthreads()
        if tid == 0:
            sh[src >> 5] = int32(uint32(1) << uint32(src & 31))
            sh[f_off] = src
            dist[src] = 0
            parent[src] = src
            ctr[0] = 0
            ctr[1] = 0
            ctr[2] = 0
        cuda.syncthreads()
        fsize = int32(1)
        level = int32(0)
        slot = 0
        q = cuda.local.array(QLEN, int32)
        l = lane & (W - 1)
        while fsize > 0:
            if tid == 0:
                ctr[(slot + 1) % 3] = 0
            nxt = level + 1
            first = int32((tid & ~31) // W)  # uniform over the warp
            while first < fsize:
                i = first + lane // W
                qn = int32(0)
                u = int32(0)
                beg = int32(0)
                end = int32(0)
                if l == 0 and i < fsize:
                    u = sh[f_off + i]
                    beg = int32(offsets[u])
                    end = int32(offsets[u + 1])
                if W > 1:
                    u = cuda.shfl_sync(FULL, u, lane - l)
                    beg = cuda.shfl_sync(FULL, beg, lane - l)
                    end = cuda.shfl_sync(FULL, end, lane - l)
                e = beg + l
                while cuda.any_sync(FULL, e < end):
                    has_a = e < end
                    has_b = e + W < end
                    va = int32(0)
                    vb = int32(0)
                    if has_a:
                        va = indices[e]
                    if has_b:
                        vb = indices[e + W]
                    e += 2 * W
                    fa = False
                    fb = False
                    if has_a:
                        bit = int32(uint32(1) << uint32(va & 31))
                        fa = (cuda.atomic.or_(sh, va >> 5, bit) & bit) == 0
                    if has_b:
                        bit = int32(uint32(1) << uint32(vb & 31))
                        fb = (cuda.atomic.or_(sh, vb >> 5, bit) & bit) == 0
                    if fa:
                        if write:
                            dist[va] = nxt
                            parent[va] = u
                        q[qn] = va
                        qn += 1
                    if fb:
                        if write:
                            dist[vb] = nxt
                            parent[vb] = u
                        q[qn] = vb
                        qn += 1
                b = warp_reserve(ctr, slot, qn)
                for k in range(qn):
                    sh[fn_off + b + k] = q[k]
                first += B // W
            cuda.syncthreads()
            fsize = ctr[slot]
            slot = (slot + 1) % 3
            level += 1
            f_off, fn_off = fn_off, f_off
        if tid == 0:
            levels_out[0] = level  # levels with a frontier
    return plain_bfs


def main(argv=None) -> int:
    case = grid_case(__doc__.splitlines()[0], argv)
    side, n = case.args.side, case.g.num_vertices
    nwords = (n + 31) // 32
    launch = Launcher.shared()  # opts in to more than 48 KB of shared memory
    print(f"{case.env['gpu']}: plain single-block BFS of the {side} x {side} grid from its centre, 1024 threads")
    rows = []
    for label, write, W in (("dist+parent", True, 1), ("no writes", False, 1), ("dist+parent, W=2", True, 2)):
        kern = plain_kernel(write, W)
        times, (dist, parent, levels) = harness.time_launches(
            case.args.repeats,
            lambda: (cuda.to_device(np.full(n, -1, np.int32)), cuda.to_device(np.full(n, -1, np.int32)),
                     cuda.device_array(1, np.int32)),
            lambda a: launch(kern, 1, 1024, 4 * (nwords + 2 * FCAP), case.offsets, case.indices, *a[:2], case.src,
                             nwords, a[2]))
        lv = int(levels.copy_to_host()[0])
        check = (harness.check_distances(case.ref, dist.copy_to_host()) if write
                 else levels_check(case.ref, lv, " (distances not written)"))
        rows.append(show(harness.Timed(label, times, check, {"levels": lv})))
    return report(case, "plain_single_block", "A plain single-block BFS of the grid", rows)


if __name__ == "__main__":
    raise SystemExit(main())
