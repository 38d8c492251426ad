"""A plain persistent multi-block BFS of the 2-D grid with a hand-made grid barrier (GPU only).

    python3 -m benchmarks.yardsticks.plain_persistent [--side 1000]

G blocks stay resident for every level of one launch (at most one block per SM, so all of
them run at once) and meet at a grid barrier after each level: an arrival counter in global
memory that one thread of each block increments and polls (Luo et al.'s inter-block
synchronisation). The visited flags are the distances (atomic compare-and-swap), both frontiers
are global queues, each claim writes its level and parent at once. No statistics, no policy: what
spreading the grid's levels over several SMs costs, against the one SM of plain_single_block.

On an H100 (benchmarks/README.md): 10-12.5 ms for every block count from 8 to 132, about 10 µs a
level: the barrier's fences and round trips to L2 cost more than one SM's whole level in BFS-4K's
single-block kernel, so this design is not one of the engine's kernels.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import cuda, int32, types
from numba.cuda import cgutils
from numba.cuda.extending import intrinsic

from benchmarks import harness
from benchmarks.yardsticks.common import grid_case, report, show
from kernels.primitives import warp_reserve

QLEN = 16


@intrinsic
def ld_acquire(typingctx, array, index):
    """array[index] by `ld.acquire.gpu` (int32): a load the compiler may not move or merge, and
    that sees other SMs' writes. (Numba's cuda.ldcv is an inline asm declared without side
    effects, which the compiler may hoist out of a polling loop; a first version of this kernel
    that polled with it and read the queues with cuda.ldcg gave wrong distances.)"""
    if not (isinstance(array, types.Array) and array.dtype == types.int32):
        return None

    def codegen(context, builder, sig, args):
        arr_t, _ = sig.args
        arr = context.make_array(arr_t)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, arr_t, arr, [args[1]], wraparound=False)
        fnty = ir.FunctionType(ir.IntType(32), [ptr.type])
        asm = ir.InlineAsm(fnty, "ld.acquire.gpu.global.b32 $0, [$1];", "=r,l,~{memory}", side_effect=True)
        return builder.call(asm, [ptr])

    return types.int32(array, index), codegen


@cuda.jit(device=True)
def grid_barrier(sync, target):
    """Every block of the grid has arrived once more (sync[0] reaches target). Collective per
    block. The fences make each block's writes before the barrier visible to every block after it."""
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.threadfence()
        cuda.atomic.add(sync, 0, 1)
        while ld_acquire(sync, 0) < target:  # a load, not an atomic: 132 pollers would queue atomics
            pass
        cuda.threadfence()
    cuda.syncthreads()


def persistent_kernel():
    @cuda.jit
    def plain_persistent(offsets, indices, dist, parent, qa, qb, sync, levels_out):
        # sync: [0] barrier arrivals, [1..3] next-frontier sizes in rotation (level L adds to
        # 1 + L % 3 and clears 1 + (L + 1) % 3, read by everyone before the previous barrier).
        tid = cuda.threadIdx.x
        B = cuda.blockDim.x
        G = cuda.gridDim.x
        lane = cuda.laneid
        nthreads = G * B
        fsize = int32(1)
        level = int32(0)
        q = cuda.local.array(QLEN, int32)
        shared_fsize = cuda.shared.array(1, int32)
        a_in = True
        while fsize > 0:
            slot = 1 + level % 3
            if cuda.blockIdx.x == 0 and tid == 0:
                sync[1 + (level + 1) % 3] = 0
            nxt = level + 1
            fin = qa if a_in else qb
            fout = qb if a_in else qa
            i = cuda.blockIdx.x * B + tid
            while i - lane < fsize:  # warp-uniform
                qn = int32(0)
                u = int32(0)
                beg = int32(0)
                end = int32(0)
                if i < fsize:
                    u = fin[i]
                    beg = int32(offsets[u])
                    end = int32(offsets[u + 1])
                e = beg
                while e < end:
                    v = indices[e]
                    if cuda.atomic.cas(dist, v, -1, nxt) == -1:
                        parent[v] = u
                        q[qn] = v
                        qn += 1
                    e += 1
                b = warp_reserve(sync, slot, qn)
                for k in range(qn):
                    fout[b + k] = q[k]
                i += nthreads
            grid_barrier(sync, (level + 1) * G)
            if tid == 0:
                shared_fsize[0] = ld_acquire(sync, slot)
            cuda.syncthreads()
            fsize = shared_fsize[0]  # rewritten only after the next level's barrier
            level += 1
            a_in = not a_in
        if cuda.blockIdx.x == 0 and tid == 0:
            levels_out[0] = level
    return plain_persistent


def main(argv=None) -> int:
    case = grid_case(__doc__.splitlines()[0], argv)
    side, n, src = case.args.side, case.g.num_vertices, case.src
    sms = cuda.get_current_device().MULTIPROCESSOR_COUNT
    print(f"{case.env['gpu']}: plain persistent BFS of the {side} x {side} grid from its centre, "
          f"grid barrier by atomic counter, {sms} SMs")
    kern = persistent_kernel()

    def fresh():
        """dist, parent, both queues (the source in A), the barrier's counters, the level count."""
        d0 = np.full(n, -1, np.int32)
        d0[src] = 0
        p0 = np.full(n, -1, np.int32)
        p0[src] = src
        return (cuda.to_device(d0), cuda.to_device(p0), cuda.to_device(np.array([src] + [0] * (4 * side), np.int32)),
                cuda.device_array(4 * side + 1, np.int32), cuda.to_device(np.zeros(4, np.int32)),
                cuda.device_array(1, np.int32))

    rows = []
    for blocks in sorted({8, 16, 32, 66, sms}):
        for threads in (256, 512, 1024):
            times, (dist, *_, levels) = harness.time_launches(
                case.args.repeats, fresh, lambda a: kern[blocks, threads](case.offsets, case.indices, *a))
            rows.append(show(harness.Timed(f"{blocks} blocks x {threads} threads", times,
                                           harness.check_distances(case.ref, dist.copy_to_host()),
                                           {"levels": int(levels.copy_to_host()[0])})))
    return report(case, "plain_persistent", "A plain persistent BFS of the grid", rows)


if __name__ == "__main__":
    raise SystemExit(main())
