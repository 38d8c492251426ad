"""bfs4k_cluster: the single-block kernel on a thread-block cluster of C SMs (knob cluster, an
extension of the paper for compute capability 9.0+): one cluster barrier a level, the visited
bitmap split over the blocks' shared memory, the same decisions in every block."""
import functools

from numba import cuda, int32, int64
from numba.core import config

from ..args import Graph, QueuePair, Stamps, Tree
from ..cluster import cluster_load, cluster_map, cluster_rank, cluster_sync, smem_addr
from ..expand import NUM_ACC
from ..frontier_ops import A_EDGES, A_TOP
from ..primitives import FULL_MASK, clock64, uidx, warp_max, warp_sum
from .args import SingleKnobs, SingleOut
from .device import _acc_counts, _degree_bin, _use_edge_discover, _virtual_warp_size
from .layout import (CULL_ENTRIES, DEGREE_BINS, L_CLOCK, NEXT_SIZE, OVERFLOW, QLEN, R_HEAVY,
                     R_TOP, ROW, ROW_CLUSTER, ROWS_CLUSTER, S_CLOCK_START, WARP_CULL, register_cap)
from .single import _expand, _leave, _load_rows, _load_visited, _log_level


@cuda.jit(device=True)
def _share(total, rank, shift):
    """Entries of a cluster's frontier of `total` entries that block `rank` holds: the 32-entry
    chunks c with c mod 2**shift == rank (see _put_cluster)."""
    chunks = total >> 5
    n = (chunks >> shift) << 5
    extra = chunks & ((1 << shift) - 1)
    if rank < extra:
        n += 32
    elif rank == extra:
        n += total & 31
    return int32(n)


@cuda.jit(device=True)
def _frontier_pos(i, rank, shift):
    """Position in the cluster's frontier of block `rank`'s local entry i."""
    return ((((i >> 5) << shift) | rank) << 5) | (i & 31)


@cuda.jit(device=True)
def _cluster_totals(rows_addr, row, C, lv):
    """After a cluster barrier, by warp 0 of each block: the cluster's next-frontier size (block
    0's counter in counter row `row`) and the largest degree its claimers saw (every block's) into
    lv[0], lv[1] for the block, which reads them after a block barrier: one warp a block reads the
    other SMs' shared memory, not every warp. Collective over warp 0."""
    lane = cuda.laneid
    n = int32(0)
    if lane == 0:
        n = cluster_load(cluster_map(rows_addr + 4 * (row + NEXT_SIZE), 0))
    tj = int32(0)
    if lane < C:
        tj = cluster_load(cluster_map(rows_addr + 4 * (row + R_TOP), lane))
    top = warp_max(tj)
    if lane == 0:
        lv[0] = n
        lv[1] = top


@functools.cache
def _cluster_kernel(dedup: int, block_threads: int, C: int):
    """The single-block kernel spread over a thread-block cluster of C blocks (C a power of two,
    2-16; compute capability 9.0 and later): an extension of the paper, which has one block."""
    shift = C.bit_length() - 1
    options = {} if config.ENABLE_CUDASIM else {"max_registers": register_cap(block_threads)}

    @cuda.jit(cache=True, **options)
    def bfs4k_cluster(graph: Graph, tree: Tree, stamps: Stamps, queues: QueuePair, out: SingleOut,
                      knobs: SingleKnobs):
        """Levels inside one launch of one cluster while 0 < |F| < F_Threshold (= C x the single
        block's): bfs4k_single's loop (§5.5), its arguments, log and visit log, on C SMs that share
        a hardware barrier and each other's shared memory (kernels.cluster). A level has one
        cluster barrier and one block barrier, where the single block has two block barriers:

        - the visited bitmap is split over the blocks (word w in block w mod C), claimed by atomic
          OR into the owner's shared memory, so claims are exact (needs visited='shared');
        - next-frontier positions come from one counter in block 0; chunk c of 32 entries belongs
          to block c mod C, and the claimer writes the entry there with its row (first edge,
          degree: loaded at the claim instead of at the next level's start), so each block expands
          its own F_d from its own shared memory;
        - the claimers' degree sums, maxima and heavy bins are the next frontier's statistics:
          after the barrier every block reads all blocks' (warp 0's lanes j < C read block j's,
          then the block barrier) and takes the same decisions from the whole frontier, with
          #ResThreads = C x block size (§5.2, §5.4); the §5.1 binary scan is each block's choice
          (it is local to a block's warps);
        - log rows are per block: row (level - level0) x C + rank; the host sums their counts.

        Dynamic shared memory: [hash64 or culling tables: region0_words int32][F_d, F_d_new:
        f_capacity int32 each][their first edges: f_capacity int64 each][their degrees: f_capacity
        int32 each][this block's bitmap slice: bitmap_words int32].
        """
        tid = cuda.threadIdx.x
        lane = cuda.laneid
        B = cuda.blockDim.x
        if B > block_threads:  # compiled with registers for block_threads only (the launch would fail)
            return
        offsets, indices = graph
        dist = tree.dist
        qa, qb, in_a, fsize0, _, level0 = queues
        hist, log, state, visits, max_levels = out
        f_threshold, fcap, k1, k2_limit, k3, k4, hmask, k7, region0_words, bm_words = knobs
        rank = cluster_rank()
        table = cuda.shared.array(0, int64)
        sh32 = cuda.shared.array(0, int32)
        cull = sh32
        f_off = int32(region0_words)
        fn_off = int32(region0_words + fcap)
        rb_off = int32((region0_words + 2 * fcap) // 2)  # int64 indices
        rbn_off = int32(rb_off + fcap)
        deg_off = int32(region0_words + 6 * fcap)
        dgn_off = int32(deg_off + fcap)
        bm_off = int32(region0_words + 8 * fcap)
        rows = cuda.shared.array(ROWS_CLUSTER, int32)  # three in rotation, as in bfs4k_single
        lv = cuda.shared.array(2, int32)  # the cluster's frontier size and top degree (_cluster_totals)
        wsum = cuda.shared.array((3, 32), int64)
        wmax = cuda.shared.array((3, 32), int32)
        hist_c = cuda.shared.array(DEGREE_BINS, int32)
        hist_s = cuda.shared.array(DEGREE_BINS, int64)
        cull_base = (tid // 32) * CULL_ENTRIES
        min_heavy_degree = int64(k3) * B
        log_cap = int32(visits.shape[0] // 3)
        logged = int32(0)
        last = int32(0)
        if tid == 0 and rank == 0:
            state[S_CLOCK_START] = clock64()

        # The launch's frontier, dealt out as every later one is; its rows and statistics.
        fsize = int32(fsize0)
        local = _share(fsize, rank, shift)
        src = qa if in_a else qb
        i = tid
        while i < local:
            sh32[uidx(f_off + i)] = src[uidx(_frontier_pos(i, rank, shift))]
            i += B
        for i in range(tid, ROWS_CLUSTER, B):
            rows[i] = 0
        for i in range(tid, 3 * 32, B):
            wsum[i // 32, i % 32] = 0
            wmax[i // 32, i % 32] = 0
        _load_visited(sh32, bm_off, bm_words, dist, shift, rank)
        cuda.syncthreads()
        r = 0
        prev = 2  # the row holding the statistics of the level's frontier
        _load_rows(sh32, f_off, local, offsets, table, rb_off, deg_off,
                   rows[prev * ROW_CLUSTER + R_HEAVY:prev * ROW_CLUSTER + ROW], min_heavy_degree, wsum, wmax, prev)
        cuda.syncthreads()
        if tid == 0:
            rows[prev * ROW_CLUSTER + R_TOP] = wmax[prev, 0]  # the block's share's highest degree
        rows_addr = smem_addr(rows, 0)
        bm_addr = smem_addr(sh32, bm_off)
        cluster_sync()  # every block's bitmap slice, frontier and statistics are in place
        if tid < 32:
            _cluster_totals(rows_addr, prev * ROW_CLUSTER, C, lv)
        cuda.syncthreads()

        a_is_in = in_a
        level = level0
        acc = cuda.local.array(NUM_ACC, int64)
        mode = (True, True, cull, bm_off)  # claims through the bitmap
        inst = (False, stamps.claimed, stamps.kept)  # the bitmap's claims are exclusive: no duplicates to count
        filt = (dedup, table, hmask, tid, cull, cull_base)
        q = cuda.local.array((2, QLEN), int32)
        while True:
            pb = prev * ROW_CLUSTER
            cnt = rows[r * ROW_CLUSTER:(r + 1) * ROW_CLUSTER]
            r_next = r + 1 if r < 2 else 0
            top = _degree_bin(lv[1])
            local = _share(fsize, rank, shift)
            i = tid
            while i < ROW_CLUSTER:
                rows[r_next * ROW_CLUSTER + i] = 0
                i += B
            if dedup == WARP_CULL:
                for i in range(lane, CULL_ENTRIES, 32):
                    cull[cull_base + i] = -1
                cuda.syncwarp(FULL_MASK)
            for i in range(NUM_ACC):
                acc[i] = 0
            edges = int64(0)
            if tid < 32:  # this block's share of the frontier's degree sum, for the log only
                edges = warp_sum(wsum[prev, lane])
            # A heavy vertex returns the frontier to the host, as in bfs4k_single: every block
            # reads the same counts, so all leave together.
            if level > level0 and (int64(1) << top) >= min_heavy_degree:
                hj = int32(0)
                if lane < C:
                    hj = cluster_load(cluster_map(rows_addr + 4 * (pb + R_HEAVY + top), lane))
                if warp_sum(hj) <= k2_limit:
                    break

            W = int32(_virtual_warp_size(C * B, fsize, k1))
            ed = _use_edge_discover(C * B, fsize, k4)
            binary = (not ed) and local * W <= B and (int64(1) << (top + 1)) - 1 <= W
            nxt = int32(level + 1)
            cl = (int32(shift), bm_addr, cluster_map(rows_addr + 4 * (r * ROW_CLUSTER + NEXT_SIZE), 0),
                  smem_addr(sh32, fn_off), smem_addr(sh32, 2 * rbn_off), smem_addr(sh32, dgn_off), offsets,
                  min_heavy_degree, cnt[R_HEAVY:])
            src = (sh32, f_off, local, offsets, indices, table, rb_off, deg_off)
            dst = (visits, log_cap, cnt, NEXT_SIZE, OVERFLOW, sh32, fn_off, fcap, logged)  # the visit log
            ops = (nxt, tree, mode, inst, filt, dst, cl)
            _expand(ed, W, binary, src, ops, q, acc, k7)
            _acc_counts(acc, cnt, 0)
            claimed_edges = warp_sum(acc[A_EDGES])
            claimed_top = warp_max(int32(acc[A_TOP]))
            if lane == 0:
                wsum[r, tid >> 5] = claimed_edges
                if claimed_top > 0:
                    cuda.atomic.max(rows, r * ROW_CLUSTER + R_TOP, claimed_top)
            if rank == 0 and tid == B - 32:
                log[(level - level0) * C, L_CLOCK] = clock64()
            cluster_sync()  # the next frontier, its rows, size and statistics are complete everywhere

            if tid < 32:
                _cluster_totals(rows_addr, r * ROW_CLUSTER, C, lv)
            cuda.syncthreads()
            nsize = lv[0]
            if tid == 0:
                _log_level(log, (level - level0) * C + rank, fsize, edges, nsize, cnt, W, ed, binary)
            last = logged
            logged = int32(logged + nsize)
            level += 1
            prev = r
            r = r_next
            a_is_in = not a_is_in
            fsize = nsize
            # No overflow test, unlike bfs4k_single: claims through the bitmap log each vertex
            # once, so the visit log (3 |V|) cannot overflow, and the test would need every
            # block's counts (a block leaving alone would leave the others at the barrier).
            if nsize == 0 or nsize >= f_threshold or level - level0 >= max_levels:
                break
            f_off, fn_off = fn_off, f_off
            rb_off, rbn_off = rbn_off, rb_off
            deg_off, dgn_off = dgn_off, deg_off
        cluster_sync()  # no block leaves while another may still read its shared memory
        if rank != 0:
            return
        _leave(state, hist, hist_c, hist_s, offsets, visits, last, level - level0, fsize, a_is_in, last, logged)

    return bfs4k_cluster

