"""What a level of a BFS of the 1000 x 1000 grid costs on one SM, and on a cluster of SMs (GPU only).

    python3 -m benchmarks.yardsticks.level_floor [--side 1000] [--repeats 5]

The grid's 1001 levels from its centre hold frontiers of up to 2,000 vertices: a search of it is
a thousand small levels, and what a level costs decides it (Harish's one launch a level takes
about 39 ms on an H100). These kernels, each a complete search but for its floors, find out what
a level can cost at best:

* floors: 1001 levels of a block barrier and nothing else, then of N dependent global loads a
  thread (the L2's latency); a cluster barrier, then one load or atomic in another block's shared
  memory a thread (distributed shared memory);
* `batched_kernel`: one block, visited bitmap and frontiers in shared memory, warp-aggregated
  appends; a thread takes V frontier vertices at once and loads up to 4 neighbours of each before
  it claims any. Claims write nothing (`none`: wrong output, the loop alone), their level and
  parent at once (`direct`), (vertex, parent) to a visit log, coalesced (`log`), or claim by
  compare-and-swap on the distance in global memory, parent written at once (`cas`, no bitmap:
  Luo et al.'s claim, a thread per frontier vertex as in their kernels);
* `lanes_kernel`: one block, W lanes a frontier vertex (a warp's load of an edge touches 32 / W
  cache lines, not 32), each lane group taking R vertices at once, rows loaded by lane pairs; with
  `timing`, the SM cycles of each phase of a level; and with 64 KB more shared memory requested
  than it uses, which takes that much from the SM's L1 cache;
* `cluster_lanes_kernel`: the same on a thread-block cluster of C SMs (compute capability 9.0+),
  the bitmap split over the blocks, each block appending to its own next frontier, the next level
  dealt out in C contiguous shares; optionally with one cluster-wide queue tail (a counter in
  block 0 that every warp's append also adds to), as BFS-4K's cluster form has.

No statistics, no policy: lower bounds for what the product's kernels do a level. Each time is
the median of --repeats runs by CUDA events after one that compiles, every search's output
checked. tests/test_level_floor.py runs the searches on small graphs under the simulator.
"""
from __future__ import annotations

import functools

import numpy as np
from numba import cuda, int32, uint32

from benchmarks import harness
from benchmarks.yardsticks.common import grid_case, report, show
from explorer.engine.launcher import Launcher
from kernels.cluster import cluster_add, cluster_load, cluster_map, cluster_or, cluster_rank, cluster_sync, smem_addr
from kernels.primitives import clock64, warp_inclusive_scan, warp_reserve

FULL = 0xFFFFFFFF
FCAP = 4096  # entries of F_d and F_d_new in shared memory: the grid's frontiers stay under 2,000
GATHER = 4  # neighbours of a vertex batched_kernel loads together
PHASES = ("rows", "edges+claims", "reserve", "writes", "barrier wait")


@functools.cache
def barrier_kernel(chain: int):
    """`levels` rounds of `chain` dependent loads a thread (each at a new address: L1 misses, L2
    hits), then a block barrier after which every thread reads what thread 0 wrote."""
    @cuda.jit
    def k(indices, mask, levels, out):
        ctr = cuda.shared.array(3, int32)
        tid = cuda.threadIdx.x
        if tid == 0:
            ctr[0] = 1
            ctr[1] = 1
            ctr[2] = 1
        cuda.syncthreads()
        p = int32(tid * 4)
        acc = int32(0)
        slot = 0
        level = int32(0)
        while level < levels:
            for _ in range(chain):
                p = indices[(p + level * 8191) & mask]
            if tid == 0:
                ctr[slot] = p
            cuda.syncthreads()
            acc += ctr[slot]
            level += 1
            slot = slot + 1 if slot < 2 else 0
        if tid == 0:
            out[0] = acc
    return k


@functools.cache
def batched_kernel(V: int, mode: str):
    """mode: 'none', 'direct', 'log' or 'cas' (see the module's docstring)."""
    bitmap = mode != "cas"
    VG = V * GATHER  # a constant for local.array

    @cuda.jit
    def k(offsets, indices, dist, parent, src, nwords, vlog, out, phases):
        sh = cuda.shared.array(0, int32)  # [bitmap: nwords][F_d: FCAP][F_d_new: FCAP]
        ctr = cuda.shared.array(3, int32)
        tid = cuda.threadIdx.x
        B = cuda.blockDim.x
        if bitmap:
            i = tid
            while i < nwords:
                sh[i] = 0
                i += B
        f_off = nwords
        fn_off = nwords + FCAP
        cuda.syncthreads()
        if tid == 0:
            if bitmap:
                sh[src >> 5] = int32(uint32(1) << uint32(src & 31))
            sh[f_off] = src
            dist[src] = 0
            parent[src] = src
            ctr[0] = 0
            ctr[1] = 0
            ctr[2] = 0
        cuda.syncthreads()
        us = cuda.local.array(V, int32)
        bs = cuda.local.array(V, int32)
        es = cuda.local.array(V, int32)
        ws = cuda.local.array(VG, int32)
        fsize = int32(1)
        level = int32(0)
        slot = 0
        logged = int32(1)
        if tid == 0:
            vlog[0] = src
            vlog[vlog.shape[0] // 2] = src
        half = vlog.shape[0] // 2
        while fsize > 0:
            nslot = slot + 1 if slot < 2 else 0  # this level's next-frontier size
            if tid == 0:
                ctr[nslot + 1 if nslot < 2 else 0] = 0  # the next level's: last read two barriers ago
            nxt = level + 1
            first = int32(0)
            while first < fsize:
                for j in range(V):
                    i = first + tid + j * B
                    u = int32(0)
                    if i < fsize:
                        u = sh[f_off + i]
                    us[j] = u
                for j in range(V):
                    i = first + tid + j * B
                    b = int32(0)
                    e = int32(0)
                    if i < fsize:
                        b = int32(offsets[us[j]])
                        e = int32(offsets[us[j] + 1])
                    bs[j] = b
                    es[j] = e
                more = True
                while cuda.any_sync(FULL, more):
                    for j in range(V):
                        for g in range(GATHER):
                            w = int32(-1)
                            if bs[j] + g < es[j]:
                                w = indices[bs[j] + g]
                            ws[j * GATHER + g] = w
                    more = False
                    for j in range(V):
                        bs[j] += GATHER
                        more = more or bs[j] < es[j]
                    n = int32(0)
                    for j in range(V):
                        for g in range(GATHER):
                            w = ws[j * GATHER + g]
                            if w >= 0:
                                if bitmap:
                                    bit = int32(uint32(1) << uint32(w & 31))
                                    won = (cuda.atomic.or_(sh, w >> 5, bit) & bit) == 0
                                else:
                                    won = cuda.atomic.cas(dist, w, -1, nxt) == -1
                                if won:
                                    n += 1
                                else:
                                    ws[j * GATHER + g] = -1
                    pos = warp_reserve(ctr, nslot, n)
                    for j in range(V):
                        for g in range(GATHER):
                            w = ws[j * GATHER + g]
                            if w >= 0:
                                if pos < FCAP:
                                    sh[fn_off + pos] = w
                                else:
                                    out[2] = 1  # overflow: the result is wrong, and says so
                                if mode == "direct":
                                    dist[w] = nxt
                                    parent[w] = us[j]
                                elif mode == "cas":
                                    parent[w] = us[j]
                                elif mode == "log":
                                    vlog[logged + pos] = w
                                    vlog[half + logged + pos] = us[j]
                                pos += 1
                first += V * B
            cuda.syncthreads()
            fsize = ctr[nslot]
            logged += fsize
            slot = nslot
            level += 1
            f_off, fn_off = fn_off, f_off
        if tid == 0:
            out[0] = level
            out[1] = logged
    return k


@cuda.jit(device=True, inline="always")
def _next_edges(indices, bs, es, ws, W, R):
    """One round of the lanes searches: ws[j] = the next edge of row j for each of the lane's R
    rows (-1 where the row is done), every load issued before any is used; each row then steps W
    edges on. Returns whether the lane has edges left."""
    for j in range(R):
        w = int32(-1)
        if bs[j] < es[j]:
            w = indices[bs[j]]
        ws[j] = w
    more = False
    for j in range(R):
        bs[j] += W
        more = more or bs[j] < es[j]
    return more


@functools.cache
def lanes_kernel(W: int, R: int, log: bool, timing: bool = False):
    """W lanes a frontier vertex, each lane group taking R vertices at once: the R rows are loaded
    by lane pairs (lane 0 the row's start, lane 1 its end: one cache line a vertex), then each round
    loads one edge a lane of every one of the R vertices before any claim, so a warp's load of an
    edge touches 32 / W lines, not 32. Claims write (vertex, parent) to the visit log when `log`.
    timing: lane 0 of each warp adds up the SM cycles of the level's phases into phases[warp]:
    rows, edges and claims, the reservation, the writes, the wait at the barrier."""
    VR = R  # a constant for local.array

    @cuda.jit
    def k(offsets, indices, dist, parent, src, nwords, vlog, out, phases):
        sh = cuda.shared.array(0, int32)
        ctr = cuda.shared.array(3, int32)
        tid = cuda.threadIdx.x
        B = cuda.blockDim.x
        lane = cuda.laneid
        l = lane & (W - 1)
        leader = lane - l
        groups = B // W
        g = tid // W
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
        us = cuda.local.array(VR, int32)
        bs = cuda.local.array(VR, int32)
        es = cuda.local.array(VR, int32)
        ws = cuda.local.array(VR, int32)
        half = vlog.shape[0] // 2
        if tid == 0:
            vlog[0] = src
            vlog[half] = src
        fsize = int32(1)
        level = int32(0)
        slot = 0
        logged = int32(1)
        t = clock64()
        while fsize > 0:
            nslot = slot + 1 if slot < 2 else 0  # this level's next-frontier size
            if tid == 0:
                ctr[nslot + 1 if nslot < 2 else 0] = 0  # the next level's: last read two barriers ago
            first = int32(0)
            while first < fsize:
                for j in range(R):
                    i = first + g + j * groups
                    u = int32(0)
                    r = int32(0)
                    if i < fsize:
                        u = sh[f_off + i]
                        if W > 1:
                            if l < 2:
                                r = int32(offsets[u + l])
                        else:
                            r = int32(offsets[u])
                            es[j] = int32(offsets[u + 1])
                    us[j] = u
                    bs[j] = r
                    if i >= fsize:
                        es[j] = 0
                if W > 1:
                    for j in range(R):
                        es[j] = cuda.shfl_sync(FULL, bs[j], leader + 1)
                        bs[j] = cuda.shfl_sync(FULL, bs[j], leader) + l
                if timing:
                    t = _phase(phases, 0, t, es[0] + es[R - 1], True)
                more = True
                while cuda.any_sync(FULL, more):
                    more = _next_edges(indices, bs, es, ws, W, R)
                    n = int32(0)
                    for j in range(R):
                        w = ws[j]
                        if w >= 0:
                            bit = int32(uint32(1) << uint32(w & 31))
                            if (cuda.atomic.or_(sh, w >> 5, bit) & bit) == 0:
                                n += 1
                            else:
                                ws[j] = -1
                    if timing:
                        t = _phase(phases, 1, t, n, True)
                    pos = warp_reserve(ctr, nslot, n)
                    if timing:
                        t = _phase(phases, 2, t, pos, True)
                    for j in range(R):
                        w = ws[j]
                        if w >= 0:
                            if pos < FCAP:
                                sh[fn_off + pos] = w
                            else:
                                out[2] = 1
                            if log:
                                vlog[logged + pos] = w
                                vlog[half + logged + pos] = us[j]
                            pos += 1
                    if timing:
                        t = _phase(phases, 3, t, 0, True)
                first += R * groups
            cuda.syncthreads()
            if timing:
                t = _phase(phases, 4, t, ctr[nslot], True)
            fsize = ctr[nslot]
            logged += fsize
            slot = nslot
            level += 1
            f_off, fn_off = fn_off, f_off
        if tid == 0:
            out[0] = level
            out[1] = logged
    return k


@cuda.jit(device=True)
def _phase(phases, k, t, dep, on):
    """Lane 0 adds the cycles since t to phases[warp, k] when `on`. `dep` is a value the phase
    computed: a (never taken) branch on it makes the clock wait for its arrival."""
    if dep == -0x7654321:
        phases[31, 7] = dep
    now = clock64()
    if on and cuda.laneid == 0:
        phases[cuda.threadIdx.x >> 5, k] += now - t
    return now


@functools.cache
def cluster_lanes_kernel(C: int, W: int, R: int, write: bool, timing: bool = False, also_global: bool = False):
    """lanes_kernel's search on a cluster of C blocks (C a power of two): the visited bitmap split over the
    blocks (word w in block w mod C, claimed by atomic OR there), each block appends its claims to
    its own next frontier (a local reservation), and the next level deals the cluster's frontier
    out in C contiguous shares, block b taking share b, which is mostly its own entries (read from
    its own shared memory; the rest from the neighbouring blocks'). One cluster barrier a level; the
    blocks' frontier sizes read after it by lanes j < C of every warp. write: claims store their
    level and parent at once. timing: as lanes_kernel's, block 0's warps. also_global: each warp's
    reservation also adds to a counter in block 0 and waits for the answer (what one cluster-wide
    queue tail costs: its atomics contend from every SM)."""
    shift = C.bit_length() - 1
    VR = R

    @cuda.jit
    def k(offsets, indices, dist, parent, src, bwords, out, phases):
        sh = cuda.shared.array(0, int32)  # [bitmap slice: bwords][F_d: FCAP][F_d_new: FCAP]
        ctr = cuda.shared.array(6, int32)  # [3]: the blocks' sizes; [3:] also_global's counter
        tid = cuda.threadIdx.x
        B = cuda.blockDim.x
        lane = cuda.laneid
        rank = cluster_rank()
        l = lane & (W - 1)
        leader = lane - l
        groups = B // W
        g = tid // W
        i = tid
        while i < bwords:
            sh[i] = 0
            i += B
        if tid < 6:
            ctr[tid] = 0
        cuda.syncthreads()
        w0 = src >> 5
        if tid == 0 and (w0 & (C - 1)) == rank:
            sh[w0 >> shift] = int32(uint32(1) << uint32(src & 31))
        if tid == 0 and rank == 0:
            sh[bwords] = src
            ctr[0] = 1
            dist[src] = 0
            parent[src] = src
        bm = smem_addr(sh, 0)
        ctr_addr = smem_addr(ctr, 0)
        f_off = bwords
        fn_off = bwords + FCAP
        us = cuda.local.array(VR, int32)
        bs = cuda.local.array(VR, int32)
        es = cuda.local.array(VR, int32)
        ws = cuda.local.array(VR, int32)
        slot = 0
        level = int32(0)
        cluster_sync()
        t = clock64()
        while True:
            cj = int32(0)
            if lane < C:
                cj = cluster_load(cluster_map(ctr_addr + 4 * slot, lane))
            incl = warp_inclusive_scan(cj)
            total = cuda.shfl_sync(FULL, incl, 31)
            if total == 0:
                break
            nslot = slot + 1 if slot < 2 else 0
            if tid == 0:
                ctr[nslot + 1 if nslot < 2 else 0] = 0  # the next level's: read by every block two barriers ago
            nxt = level + 1
            lo = (total * rank) >> shift  # this block's share of the positions
            hi = (total * (rank + 1)) >> shift
            fa = smem_addr(sh, f_off)
            first = lo
            while first < hi:
                for j in range(R):
                    p = first + g + j * groups
                    pc = p if p < hi else lo  # the shuffles below need every lane
                    sb = int32(0)  # the block holding position p
                    for c in range(1, C):
                        if pc >= cuda.shfl_sync(FULL, incl, c - 1):
                            sb = c
                    li = pc - cuda.shfl_sync(FULL, incl - cj, sb)
                    u = int32(0)
                    r = int32(0)
                    if p < hi:
                        if sb == rank:
                            u = sh[f_off + li]
                        else:
                            u = cluster_load(cluster_map(fa + 4 * li, sb))
                        if l < 2:
                            r = int32(offsets[u + l])
                    us[j] = u
                    bs[j] = r
                for j in range(R):
                    es[j] = cuda.shfl_sync(FULL, bs[j], leader + 1)
                    bs[j] = cuda.shfl_sync(FULL, bs[j], leader) + l
                    if first + g + j * groups >= hi:
                        es[j] = 0
                if timing:
                    t = _phase(phases, 0, t, es[0] + es[R - 1], rank == 0)
                more = True
                while cuda.any_sync(FULL, more):
                    more = _next_edges(indices, bs, es, ws, W, R)
                    n = int32(0)
                    for j in range(R):
                        w = ws[j]
                        if w >= 0:
                            wv = w >> 5
                            bit = int32(uint32(1) << uint32(w & 31))
                            if (cluster_or(cluster_map(bm + 4 * (wv >> shift), wv & (C - 1)), bit) & bit) == 0:
                                n += 1
                            else:
                                ws[j] = -1
                    if timing:
                        t = _phase(phases, 1, t, n, rank == 0)
                    pos = warp_reserve(ctr, nslot, n)
                    if also_global:
                        tot = cuda.shfl_sync(FULL, warp_inclusive_scan(n), 31)
                        if lane == 0 and tot > 0:
                            if cluster_add(cluster_map(ctr_addr + 4 * nslot + 12, 0), tot) == -0x7654321:
                                out[2] = 2
                    if timing:
                        t = _phase(phases, 2, t, pos, rank == 0)
                    for j in range(R):
                        w = ws[j]
                        if w >= 0:
                            if pos < FCAP:
                                sh[fn_off + pos] = w
                            else:
                                out[2] = 1  # overflow: the result is wrong, and says so
                            if write:
                                dist[w] = nxt
                                parent[w] = us[j]
                            pos += 1
                    if timing:
                        t = _phase(phases, 3, t, 0, rank == 0)
                first += R * groups
            cluster_sync()
            if timing:
                t = _phase(phases, 4, t, 0, rank == 0)
            slot = nslot
            level += 1
            f_off, fn_off = fn_off, f_off
        if tid == 0 and rank == 0:
            out[0] = level
        cluster_sync()
    return k


@functools.cache
def cluster_floor_kernel(C: int, what: str):
    """A cluster of C blocks, `levels` levels of: nothing ('barrier'), one load from another block's
    shared memory ('load') or one atomic there ('atomic') a thread, its value waited for; then
    one cluster barrier."""
    @cuda.jit
    def k(levels, out):
        ctr = cuda.shared.array(64, int32)
        tid = cuda.threadIdx.x
        rank = cluster_rank()
        if tid < 64:
            ctr[tid] = 0
        a = smem_addr(ctr, 0)
        cluster_sync()
        acc = int32(0)
        level = int32(0)
        while level < levels:
            peer = (rank + 1) & (C - 1)
            if what == "load":
                acc += cluster_load(cluster_map(a + 4 * ((tid + acc) & 63), peer))
            elif what == "atomic":
                acc += cluster_or(cluster_map(a + 4 * ((tid + acc) & 63), peer), 0)
            if acc == -0x7654321:
                out[1] = acc
            cluster_sync()
            level += 1
        if tid == 0 and rank == 0:
            out[0] = level + acc
    return k


def one_block(launch, kern, threads, words, pad, offsets, indices, n, src):
    """A function that runs `kern` (batched_kernel's or lanes_kernel's) as one block, for time_launches:
    fresh arrays (dist, parent, visit log, out, phases), then the launch with `pad` bytes of shared
    memory beyond what the kernel uses."""
    def fresh():
        return (cuda.to_device(np.full(n, -1, np.int32)), cuda.to_device(np.full(n, -1, np.int32)),
                cuda.device_array(2 * n, np.int32), cuda.to_device(np.zeros(3, np.int32)),
                cuda.to_device(np.zeros((32, 8), np.int64)))

    def go(a):
        launch(kern, 1, threads, 4 * (words + 2 * FCAP) + pad, offsets, indices, *a[:2], src, words, *a[2:])
    return fresh, go


def cluster_search(launch, kern, C, threads, offsets, indices, n, src):
    """The same for cluster_lanes_kernel's kernels (arrays: dist, parent, out, phases)."""
    bwords = -(-((n + 31) // 32) // C)

    def fresh():
        return (cuda.to_device(np.full(n, -1, np.int32)), cuda.to_device(np.full(n, -1, np.int32)),
                cuda.to_device(np.zeros(3, np.int32)), cuda.to_device(np.zeros((32, 8), np.int64)))

    def go(a):
        launch.cluster(kern, C, C, threads, 4 * (bwords + 2 * FCAP), offsets, indices, *a[:2], src, bwords, *a[2:])
    return fresh, go


def check(mode, ref, dist, vlog, out) -> harness.Check:
    """Whether a run's output is right: distances (claims that write them), the visit log (every
    reachable vertex once, each after a vertex one level closer to the source), and for every
    mode the level count (out[0]) and no queue overflow (out[2])."""
    n = len(ref)
    o = out.copy_to_host()
    depth = int(ref.max()) + 1
    if o[2]:
        return harness.Check(False, "a queue overflowed")
    if o[0] != depth:
        return harness.Check(False, f"{o[0]} levels, the reference has {depth}")
    if mode in ("direct", "cas"):
        return harness.check_distances(ref, dist.copy_to_host())
    reachable = int((ref >= 0).sum())
    if o[1] != reachable:
        return harness.Check(False, f"{o[1]} vertices entered a frontier, {reachable} are reachable")
    if mode == "log":
        log = vlog.copy_to_host()
        order, parents = log[:o[1]], log[n:n + o[1]]
        ok = (len(np.unique(order)) == o[1] and ref[order[0]] == 0
              and bool(np.all(ref[parents[1:]] == ref[order[1:]] - 1)))
        return harness.Check(ok, "the visit log holds every reachable vertex once, each after its parent" if ok else
                             "the visit log misses a vertex, repeats one or logs one before its parent")
    return harness.Check(True, f"{o[0]} levels, every reachable vertex in a frontier once (nothing written)")


def phase_means(phases, threads, levels) -> dict:
    """SM cycles a level of each phase, the mean over the warps."""
    ph = phases.copy_to_host()[: threads // 32, :5] / max(levels, 1)
    return {name: round(float(m)) for name, m in zip(PHASES, ph.mean(0))}


def phase_line(phases, threads, levels) -> str:
    ph = phases.copy_to_host()[: threads // 32, :5] / max(levels, 1)
    return "      SM cycles a level (mean / max over warps): " + ", ".join(
        f"{name} {m:.0f}/{x:.0f}" for name, m, x in zip(PHASES, ph.mean(0), ph.max(0)))


def main(argv=None) -> int:
    case = grid_case(__doc__.splitlines()[0], argv)
    n, ref, src, offsets, indices, repeats = case.g.num_vertices, case.ref, case.src, case.offsets, case.indices, \
        case.args.repeats
    nwords = (n + 31) // 32
    launch = Launcher.shared()  # opts in to more than 48 KB of shared memory; launches clusters
    mask = (1 << (len(case.g.indices).bit_length() - 1)) - 1
    side = case.args.side
    print(f"{case.env['gpu']}: the {side} x {side} grid from its centre; medians of {repeats} runs")
    rows = []
    print("Floors: 1001 levels of a block barrier (or a cluster barrier) and nothing, or N dependent loads")
    for chain in (0, 1, 2, 3):
        kern = barrier_kernel(chain)
        for T in (512, 1024):
            times, _ = harness.time_launches(repeats, lambda: (cuda.device_array(2, np.int32),),
                                             lambda a: launch(kern, 1, T, 0, indices, mask, 1001, a[0]))
            label = "block barrier" if not chain else f"+ {chain} global load{'s' if chain > 1 else ''}"
            rows.append(show(harness.Timed(f"{label}, {T} threads", times, None)))
    for what in ("barrier", "load", "atomic"):
        for C in (1, 2, 4, 8, 16):
            kern = cluster_floor_kernel(C, what)
            times, _ = harness.time_launches(repeats, lambda: (cuda.device_array(2, np.int32),),
                                             lambda a: launch.cluster(kern, C, C, 512, 0, 1001, a[0]))
            label = {"barrier": "cluster barrier", "load": "+ remote load", "atomic": "+ remote atomic"}[what]
            rows.append(show(harness.Timed(f"{label}, C={C} x 512 threads", times, None)))
    print("One block, the whole search (visited bitmap in shared memory but for 'cas')")
    cases = [(f"batched V={V} {mode}", T, batched_kernel(V, mode), mode, 0)
             for mode in ("none", "direct", "log", "cas") for T, V in ((1024, 1), (1024, 2), (512, 4))]
    cases += [(f"lanes W={W} R={R} {'log' if log else 'none'}", T, lanes_kernel(W, R, log), "log" if log else "none", 0)
              for T, W, R, log in ((1024, 4, 8, False), (1024, 4, 8, True), (1024, 4, 4, True), (1024, 2, 4, True),
                                   (1024, 1, 2, True), (512, 4, 16, True))]
    # The same kernel with 64 KB more shared memory: the SM's L1 cache is what shared memory leaves.
    cases += [("lanes W=4 R=8 log, +64 KB", 1024, lanes_kernel(4, 8, True), "log", 64 << 10)]
    cases += [(f"timed lanes W={W} R={R} log", T, lanes_kernel(W, R, True, True), "log", 0)
              for T, W, R in ((1024, 4, 8), (1024, 1, 2))]
    for label, T, kern, mode, pad in cases:
        words = nwords if mode != "cas" else 0
        fresh, go = one_block(launch, kern, T, words, pad, offsets, indices, n, src)
        times, (dist, _, vlog, out, phases) = harness.time_launches(repeats, fresh, go)
        levels = int(out.copy_to_host()[0])
        regs = max(kern.get_regs_per_thread().values())
        rows.append(show(harness.Timed(f"{label}, {T} threads", times, check(mode, ref, dist, vlog, out),
                                       {"levels": levels, "registers": regs})))
        if label.startswith("timed"):
            print(phase_line(phases, T, levels))
            rows[-1].extra["sm_cycles_a_level"] = phase_means(phases, T, levels)
    print("One cluster: lanes, bitmap split over the blocks, claims write level and parent at once")
    for C, T, W, R, tail, timing in ((16, 256, 4, 2, False, False), (16, 256, 4, 4, False, False),
                                     (16, 512, 4, 2, False, False), (16, 256, 2, 4, False, False),
                                     (8, 512, 4, 4, False, False), (16, 256, 4, 2, True, False),
                                     (16, 512, 4, 2, True, False), (16, 256, 4, 2, False, True)):
        kern = cluster_lanes_kernel(C, W, R, True, timing, tail)
        fresh, go = cluster_search(launch, kern, C, T, offsets, indices, n, src)
        times, (dist, _, out, phases) = harness.time_launches(repeats, fresh, go)
        levels = int(out.copy_to_host()[0])
        label = f"cluster C={C} x {T}, W={W} R={R}{' + one tail' if tail else ''}{' timed' if timing else ''}"
        rows.append(show(harness.Timed(label, times, check("direct", ref, dist, None, out), {"levels": levels})))
        if timing:
            print(phase_line(phases, T, levels).replace("warps", "block 0's warps"))
            rows[-1].extra["sm_cycles_a_level"] = phase_means(phases, T, levels)
    return report(case, "level_floor", "What a level of the grid costs at best", rows)


if __name__ == "__main__":
    raise SystemExit(main())
