"""Multi-search: many breadth-first searches at once (device code only).

Two families:

* **The multi-search abstraction** (McLaughlin, Riedy & Bader, HPEC 2015, Algorithm 1): one search
  per block; the block loops over its sources, taking the next one from a global counter, and runs
  each search with its own queues, calling the user's callbacks `init`, `prior`, `visit_vertex`,
  `post` and `finalize` (any may be omitted). `search_kernel(callbacks, warp_queue, thread_queue)`
  makes the kernel of the warp-thread hybrid (§III-B: out-degree < T to the thread queue, the
  others to the warp queue, whose vertices the block's warps take one by one through a
  shared-memory counter; only a warp queue is the warp-based method, T = 0; only a thread queue
  the work-efficient one, T = infinity); `edge_kernel(callbacks)` makes §IV's edge-parallel one (a
  thread per arc of the graph every level). Kernels are cached by the callback set. Both take
  the arguments `SearchArgs` declares, in named groups.
* **MS-BFS** (Then et al., "The More the Merrier: Efficient Multi-Source Graph Traversal", VLDB
  2014): 32 or 64 searches share a machine word per vertex; a level is word operations over the
  graph, top-down (push: frontier words OR-ed into the neighbours' next words, atomically) or
  bottom-up (pull: each open word ORs its in-neighbours' frontier words, stopping when every
  missing search is found), chosen per level by the host as in direction-optimising BFS (Beamer
  et al.). It counts hop distances (vertices found per search and level) and can write them;
  it has no callbacks. `bit_kernels(word_bits)`; each kernel's arguments are declared in
  `BIT_ARGS`.

An argument declaration (a namedtuple class) is the one place a kernel's argument order is
written: the kernel's parameters carry its field names, the host builds a launch's arguments by
name (`go(kernel, blocks, threads, 0, *SearchArgs(graph=..., ...))`) and a compile signature is
the same namedtuple of types.

The search kernels' state (per block, "slot"): `dist[slot, v]`, the level of v in the slot's
current search (-1 unreached), and `order[slot, :]`, every vertex the search reached in BFS order:
the thread queue's vertices from the front, the warp queue's from the back (a vertex enters one of
them once, so n entries hold both). A level's part of each is its queue; `finalize` walks them
backwards level by level (Brandes' dependency accumulation needs exactly that order).

Blocks must be a multiple of 32 threads (the warp queue is taken warp by warp).
"""
import functools
from collections import namedtuple
from typing import NamedTuple

from numba import cuda, int32, int64, uint32, uint64

from .primitives import FULL_MASK, clock64, warp_sum

#: The first argument of every callback: which search it is called for.
#:   row      the search's row in this batch's per-search arrays (0..k_batch-1)
#:   source   its source vertex
#:   slot     the block running it: the row of per-slot (working) arrays, reused by its next search
#:   dist     int32[n], the level of every vertex in this search (-1: not reached yet); read only
#:   offsets, indices   the graph (CSR) the search runs on
Search = namedtuple("Search", "row source slot dist offsets indices")

#: T = infinity: every vertex to the thread queue (the work-efficient method).
T_INFINITE = 2**31 - 1

# Per-search statistics, stats[row, :], written by the block that ran the search.
ST_LEVELS = 0  # BFS levels (eccentricity + 1)
ST_VISITED = 1  # vertices reached, the source included
ST_EDGES = 2  # adjacency entries inspected (edge-parallel: every arc, every level)
ST_CYCLES = 3  # the search's duration in its SM's cycles (simulator: nanoseconds)
NUM_STATS = 4

# The block's shared counters.
_SEARCH, _SMALL, _BIG, _WARP, _FOUND, _LO_S, _LO_B = 0, 1, 2, 3, 4, 5, 6
_NUM_SHARED = 8

#: The search kernels' arguments (search_kernel's and edge_kernel's), in order:
#:   graph    SearchGraph
#:   sources  int32[k], the batch's sources by row
#:   row0, count   this launch runs the searches of rows row0 .. row0 + count - 1
#:   state    BlockState
#:   T        out-degree below which a vertex goes to the thread queue (the edge kernel has none)
#:   data     the application's arrays, a namedtuple by name (every callback's `data`)
SearchArgs = namedtuple("SearchArgs", "graph sources row0 count state T data")
#: The graph: CSR offsets (int64[n + 1]) and indices (int32[m]); arc_source (int32[m]) is the
#: source vertex of every arc for the edge kernel (search_kernel reads none: give it int32[1]).
SearchGraph = namedtuple("SearchGraph", "offsets indices arc_source")
#: What the blocks share: next_search (int64[1], zeroed before a launch: deals the searches out),
#: dist (int32[slots, n]: each block's levels), order (int32[slots, n]: each block's BFS order; the
#: edge kernel keeps none: give it int32[1, 1]) and stats (int64[k, NUM_STATS], by row).
BlockState = namedtuple("BlockState", "next_search dist order stats")


class Callbacks(NamedTuple):
    """A multi-search application's device functions (Numba `cuda.jit(device=True)` functions,
    or plain Python functions, which are compiled as such). Omitted ones do nothing. Signatures
    (s is a `Search`, data the application's arrays):

      init(s, v, data)                      every vertex v, before the search (block-parallel)
      prior(s, level, data)                 once a level, by one thread, before it expands
      visit_vertex(s, v, w, level, dist_w, data)
                                            every arc (v, w) from a vertex v at `level`; dist_w is
                                            w's level once claimed (level + 1: w is on the next level)
      post(s, level, found, data)           once a level, by one thread, after it: `found` vertices
                                            are on level + 1
      finalize(s, v, dist_v, data)          every reached vertex, deepest level first, a barrier
                                            between levels (block-parallel)
    """

    init: object = None
    prior: object = None
    visit_vertex: object = None
    post: object = None
    finalize: object = None


@cuda.jit(device=True)
def _skip_init(s, v, data):
    pass


@cuda.jit(device=True)
def _skip_prior(s, level, data):
    pass


@cuda.jit(device=True)
def _skip_visit(s, v, w, level, dist_w, data):
    pass


@cuda.jit(device=True)
def _skip_post(s, level, found, data):
    pass


@cuda.jit(device=True)
def _skip_finalize(s, v, dist_v, data):
    pass


@functools.cache
def device_function(fn):
    """`fn` as a device function: itself when it already is one, else compiled (once)."""
    if hasattr(fn, "py_func"):
        return fn
    return cuda.jit(device=True)(fn)


def _resolved(cb: Callbacks):
    skips = (_skip_init, _skip_prior, _skip_visit, _skip_post, _skip_finalize)
    return tuple(skip if f is None else device_function(f) for f, skip in zip(cb, skips))


@cuda.jit(device=True)
def _claim(D, w, nxt):
    """(w's level as this thread found it, whether this thread claimed w): a vertex not reached
    yet (-1) goes to level nxt by compare-and-swap, so exactly one thread claims it."""
    dw = D[w]
    if dw != -1:
        return dw, False
    old = cuda.atomic.cas(D, w, int32(-1), nxt)
    if old == -1:
        return nxt, True
    return old, False


@cuda.jit(device=True)
def _first_at(order, dist, n, back, end, level):
    """First k in [0, end) whose vertex is at `level` or deeper: the k-th vertex of the front part
    is order[k], of the back part order[n - 1 - k]; levels never decrease along either."""
    lo = 0
    hi = end
    while lo < hi:
        mid = (lo + hi) // 2
        p = n - 1 - mid if back else mid
        if dist[order[p]] < level:
            lo = mid + 1
        else:
            hi = mid
    return lo


@functools.cache
def search_kernel(callbacks: Callbacks, warp_queue: bool, thread_queue: bool):
    """Algorithm 1 with these callbacks: the warp-thread hybrid (both queues), warp-based (warp
    queue only) or work-efficient (thread queue only). Launch one block per slot (blocks of 32k
    threads) with the arguments of `SearchArgs`:

      kernel[slots, threads](*SearchArgs(graph=..., sources=..., row0=..., count=..., state=..., T=..., data=...))
    """
    if not (warp_queue or thread_queue):
        raise ValueError("a search kernel needs the warp queue, the thread queue or both")
    init, prior, visit, post, finalize = _resolved(callbacks)
    has_finalize = callbacks.finalize is not None

    @cuda.jit(device=True)
    def enqueue(O, sh, offsets, n, T, w):
        """w to the thread queue (from the front of O) if out-degree < T or there is no warp
        queue, else to the warp queue (from the back)."""
        if thread_queue and (not warp_queue or offsets[w + 1] - offsets[w] < T):
            O[cuda.atomic.add(sh, _SMALL, 1)] = w
        else:
            O[n - 1 - cuda.atomic.add(sh, _BIG, 1)] = w

    @cuda.jit
    def multisearch(graph, sources, row0, count, state, T, data):
        offsets = graph.offsets
        indices = graph.indices
        next_search = state.next_search
        stats = state.stats
        sh = cuda.shared.array(_NUM_SHARED, int32)
        sh_edges = cuda.shared.array(1, int64)
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        lane = cuda.laneid
        slot = cuda.blockIdx.x
        n = offsets.shape[0] - 1
        D = state.dist[slot]
        O = state.order[slot]
        while True:
            if tid == 0:
                sh[_SEARCH] = cuda.atomic.add(next_search, 0, 1)
                sh_edges[0] = 0
            cuda.syncthreads()
            i = sh[_SEARCH]
            if i >= count:
                return  # every thread read the same i
            row = row0 + i
            src = sources[row]
            t0 = clock64()
            s = Search(row, src, slot, D, offsets, indices)
            for v in range(tid, n, nthreads):
                D[v] = -1
                init(s, v, data)
            cuda.syncthreads()
            if tid == 0:
                D[src] = 0
                sh[_SMALL] = 0
                sh[_BIG] = 0
                enqueue(O, sh, offsets, n, T, src)
            cuda.syncthreads()
            s_lo = 0
            b_lo = 0
            level = int32(0)
            edges = int64(0)
            while True:
                s_hi = sh[_SMALL]
                b_hi = sh[_BIG]
                if s_hi == s_lo and b_hi == b_lo:
                    break  # the frontier is empty: every thread saw the same counts
                if tid == 0:
                    prior(s, level, data)
                    sh[_WARP] = b_lo
                cuda.syncthreads()
                nxt = int32(level + 1)
                if warp_queue:
                    # Warps take the next vertex of the warp queue through the shared counter
                    # (§III-A's dynamic scheduling) and gather its neighbours lane by lane.
                    while True:
                        j = int32(0)
                        if lane == 0:
                            j = cuda.atomic.add(sh, _WARP, 1)
                        j = cuda.shfl_sync(FULL_MASK, j, 0)
                        if j >= b_hi:
                            break
                        v = O[n - 1 - j]
                        begin = offsets[v]
                        end = offsets[v + 1]
                        if lane == 0:
                            edges += end - begin
                        for e in range(begin + lane, end, 32):
                            w = indices[e]
                            dw, claimed = _claim(D, w, nxt)
                            if claimed:
                                enqueue(O, sh, offsets, n, T, w)
                            visit(s, v, w, level, dw, data)
                if thread_queue:
                    for p in range(s_lo + tid, s_hi, nthreads):
                        v = O[p]
                        begin = offsets[v]
                        end = offsets[v + 1]
                        edges += end - begin
                        for e in range(begin, end):
                            w = indices[e]
                            dw, claimed = _claim(D, w, nxt)
                            if claimed:
                                enqueue(O, sh, offsets, n, T, w)
                            visit(s, v, w, level, dw, data)
                cuda.syncthreads()
                if tid == 0:
                    post(s, level, sh[_SMALL] - s_hi + sh[_BIG] - b_hi, data)
                s_lo = s_hi
                b_lo = b_hi
                level = nxt
                cuda.syncthreads()
            cuda.atomic.add(sh_edges, 0, edges)
            if has_finalize:
                # Brandes' order: the deepest level first, every vertex of a level before the next.
                s_end = s_lo
                b_end = b_lo
                lv = level - 1
                while lv >= 0:
                    if tid == 0:
                        sh[_LO_S] = _first_at(O, D, n, False, s_end, lv)
                        sh[_LO_B] = _first_at(O, D, n, True, b_end, lv)
                    cuda.syncthreads()
                    s_start = sh[_LO_S]
                    b_start = sh[_LO_B]
                    front = s_end - s_start
                    for q in range(tid, front + b_end - b_start, nthreads):
                        if q < front:
                            v = O[s_start + q]
                        else:
                            v = O[n - 1 - (b_start + q - front)]
                        finalize(s, v, int32(lv), data)
                    cuda.syncthreads()
                    s_end = s_start
                    b_end = b_start
                    lv -= 1
            cuda.syncthreads()
            if tid == 0:
                stats[row, ST_LEVELS] = level
                stats[row, ST_VISITED] = s_lo + b_lo
                stats[row, ST_EDGES] = sh_edges[0]
                stats[row, ST_CYCLES] = clock64() - t0

    return multisearch


@functools.cache
def edge_kernel(callbacks: Callbacks):
    """§IV's edge-parallel method with these callbacks: every level, the block's threads take every
    arc of the graph and expand those whose source is on the level (Jia et al.). One block per
    slot, with the arguments of `SearchArgs` (graph.arc_source read, state.order and T not)."""
    init, prior, visit, post, finalize = _resolved(callbacks)
    has_finalize = callbacks.finalize is not None

    @cuda.jit
    def multisearch_edges(graph, sources, row0, count, state, T, data):
        offsets = graph.offsets
        indices = graph.indices
        arc_source = graph.arc_source
        next_search = state.next_search
        stats = state.stats
        sh = cuda.shared.array(_NUM_SHARED, int32)
        tid = cuda.threadIdx.x
        nthreads = cuda.blockDim.x
        slot = cuda.blockIdx.x
        n = offsets.shape[0] - 1
        m = indices.shape[0]
        D = state.dist[slot]
        while True:
            if tid == 0:
                sh[_SEARCH] = cuda.atomic.add(next_search, 0, 1)
            cuda.syncthreads()
            i = sh[_SEARCH]
            if i >= count:
                return
            row = row0 + i
            src = sources[row]
            t0 = clock64()
            s = Search(row, src, slot, D, offsets, indices)
            for v in range(tid, n, nthreads):
                D[v] = -1
                init(s, v, data)
            cuda.syncthreads()
            if tid == 0:
                D[src] = 0
            level = int32(0)
            visited = 1
            while True:
                if tid == 0:
                    prior(s, level, data)
                    sh[_FOUND] = 0
                cuda.syncthreads()
                nxt = int32(level + 1)
                for e in range(tid, m, nthreads):
                    u = arc_source[e]
                    if D[u] == level:
                        w = indices[e]
                        dw, claimed = _claim(D, w, nxt)
                        if claimed:
                            cuda.atomic.add(sh, _FOUND, 1)
                        visit(s, u, w, level, dw, data)
                cuda.syncthreads()
                found = sh[_FOUND]
                if tid == 0:
                    post(s, level, found, data)
                cuda.syncthreads()
                level = nxt
                visited += found
                if found == 0:
                    break
            if has_finalize:
                lv = level - 1
                while lv >= 0:
                    for v in range(tid, n, nthreads):
                        if D[v] == lv:
                            finalize(s, v, int32(lv), data)
                    cuda.syncthreads()
                    lv -= 1
            if tid == 0:
                stats[row, ST_LEVELS] = level
                stats[row, ST_VISITED] = visited
                stats[row, ST_EDGES] = int64(m) * level
                stats[row, ST_CYCLES] = clock64() - t0

    return multisearch_edges


# ------------------------------------------------------------------------------ MS-BFS
# A level's statistics, out[0:BP_COUNTS], then out[BP_COUNTS + b]: vertices search b found.
BP_NEW = 0  # (vertex, word) pairs with a new bit: the next frontier's words
BP_PUSH = 1  # their out-arcs: what a top-down step would read next
BP_OPEN = 2  # (vertex, word) pairs in which a search has not found the vertex yet
BP_PULL = 3  # their in-arcs: the most a bottom-up step would read next
BP_EDGES = 4  # (arc, word) pairs this level's step examined
BP_COUNTS = 8

#: Defaults of the host's split: vertices with BP_HEAVY arcs or more (in the step's direction) are
#: cut into items of BP_CHUNK arcs, a warp each (the light kernels skip them: `heavy`); the others
#: get a thread per (vertex, word): one thread walking a hub's whole list would hold the level up.
BP_HEAVY = 128
BP_CHUNK = 512
#: A bottom-up lane of a heavy item publishes what it found (atomic OR into the next word, which
#: returns what the other lanes and items found) every BP_PUBLISH arcs, and stops once the word
#: has every search it lacked.
BP_PUBLISH = 8


class BitKernels(NamedTuple):
    seed: object  # S[v, j] = pads[j] (the padding bits count as seen)
    sources: object  # search b starts at sources[b], level 0
    push_light: object  # top-down: a thread per (light vertex, word) of the frontier
    push_heavy: object  # top-down: a warp per heavy item
    pull_light: object  # bottom-up: a thread per (light vertex, word) not yet full
    pull_heavy: object  # bottom-up: a warp per heavy item
    finish: object  # S |= N; the level's counts and statistics


#: A CSR as an MS-BFS step reads it: offsets (int64[n + 1]) and indices (int32[m]) of the out-arcs
#: (push) or of the in-arcs (pull).
BitGraph = namedtuple("BitGraph", "offsets indices")
#: The heavy vertices (in the step's direction) cut into chunks of arcs, a warp each: item i is
#: vertex[i]'s arcs begin[i] .. end[i] - 1 (int32, int64, int64).
HeavyItems = namedtuple("HeavyItems", "vertex begin end")
#: Each MS-BFS kernel's arguments, in order. F, N, S: frontier, next and seen words (W a vertex);
#: out: int64[BP_COUNTS + searches], a level's statistics and counts; dist: int32[searches, n],
#: written when write_dist; heavy: arcs from which a vertex is left to the heavy kernels (the
#: light kernels read it, the heavy ones read `items`).
BIT_ARGS = BitKernels(
    seed=namedtuple("SeedArgs", "S pads W"),
    sources=namedtuple("SourcesArgs", "F S sources W dist write_dist"),
    **dict.fromkeys(("push_light", "push_heavy", "pull_light", "pull_heavy"),
                    namedtuple("StepArgs", "graph items F S N W heavy out")),
    finish=namedtuple("FinishArgs", "N S W level out dist write_dist out_offsets in_offsets"),
)


@functools.cache
def bit_kernels(word_bits: int) -> BitKernels:
    """MS-BFS's kernels for words of `word_bits` (32 or 64) bits. Arrays F (frontier), N (next)
    and S (seen) hold W words per vertex, vertex-major: word j of v at v * W + j, bit b of word j
    for search j * word_bits + b. W is a power of two up to 32, or a multiple of 32 (the heavy
    items spread a vertex's words over the lanes). Launch with blocks of 32k threads and the
    arguments BIT_ARGS declares for each kernel."""
    if word_bits not in (32, 64):
        raise ValueError(f"word_bits={word_bits} is invalid: 32 or 64")
    WT = uint64 if word_bits == 64 else uint32

    @cuda.jit
    def seed(S, pads, W):
        for t in range(cuda.grid(1), S.shape[0], cuda.gridsize(1)):
            S[t] = pads[t % W]

    @cuda.jit
    def sources(F, S, sources, W, dist, write_dist):
        for b in range(cuda.grid(1), sources.shape[0], cuda.gridsize(1)):
            v = sources[b]
            t = v * W + b // word_bits
            bit = WT(1) << WT(b % word_bits)
            cuda.atomic.or_(F, t, bit)
            cuda.atomic.or_(S, t, bit)
            if write_dist:
                dist[b, v] = 0

    @cuda.jit(device=True)
    def count_edges(examined, out):
        examined = warp_sum(examined)
        if cuda.laneid == 0 and examined > 0:
            cuda.atomic.add(out, BP_EDGES, examined)

    @cuda.jit
    def push_light(graph, items, F, S, N, W, heavy, out):
        offsets = graph.offsets
        indices = graph.indices
        zero = WT(0)
        examined = int64(0)
        for t in range(cuda.grid(1), (offsets.shape[0] - 1) * W, cuda.gridsize(1)):
            x = F[t]
            if x != zero:
                v = t // W
                j = t - v * W
                begin = offsets[v]
                end = offsets[v + 1]
                if end - begin < heavy:
                    examined += end - begin
                    for a in range(begin, end):
                        q = indices[a] * W + j
                        y = x & ~S[q]
                        if y != zero:
                            cuda.atomic.or_(N, q, y)
        count_edges(examined, out)

    @cuda.jit
    def push_heavy(graph, items, F, S, N, W, heavy, out):
        indices = graph.indices
        item_vertex = items.vertex
        item_begin = items.begin
        item_end = items.end
        zero = WT(0)
        lane = cuda.laneid
        examined = int64(0)
        for it in range(cuda.grid(1) // 32, item_vertex.shape[0], cuda.gridsize(1) // 32):
            v = item_vertex[it]
            begin = item_begin[it]
            end = item_end[it]
            if W <= 32:  # 32 // W arcs a step, W words each
                j = lane % W
                x = F[v * W + j]
                if x != zero:
                    for a in range(begin + lane // W, end, 32 // W):
                        examined += 1
                        q = indices[a] * W + j
                        y = x & ~S[q]
                        if y != zero:
                            cuda.atomic.or_(N, q, y)
            else:  # a lane per word
                for j in range(lane, W, 32):
                    x = F[v * W + j]
                    if x != zero:
                        examined += end - begin
                        for a in range(begin, end):
                            q = indices[a] * W + j
                            y = x & ~S[q]
                            if y != zero:
                                cuda.atomic.or_(N, q, y)
        count_edges(examined, out)

    @cuda.jit
    def pull_light(graph, items, F, S, N, W, heavy, out):
        offsets = graph.offsets
        indices = graph.indices
        zero = WT(0)
        full = ~zero
        examined = int64(0)
        for t in range(cuda.grid(1), (offsets.shape[0] - 1) * W, cuda.gridsize(1)):
            s = S[t]
            if s != full:
                v = t // W
                j = t - v * W
                begin = offsets[v]
                end = offsets[v + 1]
                if end - begin < heavy:
                    need = ~s
                    acc = zero
                    for a in range(begin, end):
                        acc |= F[indices[a] * W + j]
                        examined += 1
                        if (acc & need) == need:
                            break  # every search this word lacked has found v
                    acc &= need
                    if acc != zero:
                        N[t] = acc
        count_edges(examined, out)

    @cuda.jit(device=True)
    def pull_word(t, j, first, end, step, indices, F, need, N, W):
        """OR the frontier words j of in-neighbours indices[first:end:step] into N[t], publishing
        every BP_PUBLISH arcs and stopping once N[t] holds `need`. Returns the arcs read."""
        zero = WT(0)
        acc = zero
        k = 0
        for a in range(first, end, step):
            acc |= F[indices[a] * W + j]
            k += 1
            if k % BP_PUBLISH == 0:
                old = cuda.atomic.or_(N, t, acc & need)
                if ((old | acc) & need) == need:
                    return k
        acc &= need
        if acc != zero:
            cuda.atomic.or_(N, t, acc)
        return k

    @cuda.jit
    def pull_heavy(graph, items, F, S, N, W, heavy, out):
        indices = graph.indices
        item_vertex = items.vertex
        item_begin = items.begin
        item_end = items.end
        full = ~WT(0)
        lane = cuda.laneid
        examined = int64(0)
        for it in range(cuda.grid(1) // 32, item_vertex.shape[0], cuda.gridsize(1) // 32):
            v = item_vertex[it]
            begin = item_begin[it]
            end = item_end[it]
            if W <= 32:
                j = lane % W
                s = S[v * W + j]
                if s != full:
                    examined += pull_word(v * W + j, j, begin + lane // W, end, 32 // W, indices, F, ~s, N, W)
            else:
                for j in range(lane, W, 32):
                    s = S[v * W + j]
                    if s != full:
                        examined += pull_word(v * W + j, j, begin, end, 1, indices, F, ~s, N, W)
        count_edges(examined, out)

    @cuda.jit
    def finish(N, S, W, level, out, dist, write_dist, out_offsets, in_offsets):
        """S |= N; per search, the vertices found (a ballot per bit over 32 vertices, counted in
        the lane of that bit, one atomic per lane and item); the next level's statistics. A warp
        takes word j of a range of vertex groups, so its counts belong to one word."""
        n = out_offsets.shape[0] - 1
        lane = cuda.laneid
        warp = cuda.grid(1) // 32
        nwarps = cuda.gridsize(1) // 32
        zero = WT(0)
        full = ~zero
        one = WT(1)
        ranges = max(1, nwarps // W)
        groups = (n + 31) // 32
        new_pairs = int64(0)
        push = int64(0)
        open_pairs = int64(0)
        pull = int64(0)
        for it in range(warp, ranges * W, nwarps):
            j = it % W
            c_lo = int64(0)
            c_hi = int64(0)
            for g in range(it // W, groups, ranges):
                v = g * 32 + lane
                x = zero
                if v < n:
                    t = v * W + j
                    x = N[t]
                    s = S[t]
                    if x != zero:
                        s |= x
                        S[t] = s
                        new_pairs += 1
                        push += out_offsets[v + 1] - out_offsets[v]
                    if s != full:
                        open_pairs += 1
                        pull += in_offsets[v + 1] - in_offsets[v]
                if cuda.any_sync(FULL_MASK, x != zero):
                    for b in range(word_bits):
                        bit = (x >> WT(b)) & one
                        found = int32(cuda.popc(cuda.ballot_sync(FULL_MASK, bit != zero)))
                        if lane == (b & 31):
                            if b < 32:
                                c_lo += found
                            else:
                                c_hi += found
                        if write_dist and bit != zero:
                            dist[j * word_bits + b, v] = level
            if c_lo > 0:
                cuda.atomic.add(out, BP_COUNTS + j * word_bits + lane, c_lo)
            if c_hi > 0:
                cuda.atomic.add(out, BP_COUNTS + j * word_bits + 32 + lane, c_hi)
        new_pairs = warp_sum(new_pairs)
        push = warp_sum(push)
        open_pairs = warp_sum(open_pairs)
        pull = warp_sum(pull)
        if lane == 0:
            cuda.atomic.add(out, BP_NEW, new_pairs)
            cuda.atomic.add(out, BP_PUSH, push)
            cuda.atomic.add(out, BP_OPEN, open_pairs)
            cuda.atomic.add(out, BP_PULL, pull)

    return BitKernels(seed, sources, push_light, push_heavy, pull_light, pull_heavy, finish)


# ------------------------------------------------------------------------------ shipped callback sets
# `data` is the application's namedtuple of arrays (explorer.multisearch.apps declares them:
# per-search arrays have a row per search, per-slot arrays a row per block).

@cuda.jit(device=True)
def _distances_init(s, v, data):
    data.distances[s.row, v] = -1


@cuda.jit(device=True)
def _distances_finalize(s, v, dist_v, data):
    data.distances[s.row, v] = dist_v


#: The hop-distance matrix: distances[row, v] (-1: unreachable).
DISTANCES = Callbacks(init=_distances_init, finalize=_distances_finalize)


@cuda.jit(device=True)
def _hops_init(s, v, data):
    if v == s.source:
        data.histogram[s.row, 0] = 1


@cuda.jit(device=True)
def _hops_post(s, level, found, data):
    if found > 0 and level + 1 < data.histogram.shape[1]:
        data.histogram[s.row, level + 1] = found


#: Vertices at each hop distance: histogram[row, d] (as wide as the array; the host checks).
HOP_COUNTS = Callbacks(init=_hops_init, post=_hops_post)


@cuda.jit(device=True)
def _closeness_post(s, level, found, data):
    # One thread per search calls post: no atomics needed for the search's own row.
    data.total[s.row] += int64(level + 1) * found
    data.reached[s.row] += found


#: Sum of distances and vertices reached (the source excluded), per search.
CLOSENESS = Callbacks(post=_closeness_post)


@cuda.jit(device=True)
def _eccentricity_post(s, level, found, data):
    if found > 0:
        data.eccentricity[s.row] = level + 1
        data.reached[s.row] += found


#: The deepest level reached and the vertices reached, per search.
ECCENTRICITY = Callbacks(post=_eccentricity_post)


@cuda.jit(device=True)
def _reachability_finalize(s, v, dist_v, data):
    # Threads of the block finalize different vertices of one word at once: an atomic OR.
    cuda.atomic.or_(data.reachable, (s.row, v >> 5), uint32(1) << uint32(v & 31))


#: The vertices each search reached, as bits: reachable[row, v // 32] bit v % 32.
REACHABILITY = Callbacks(finalize=_reachability_finalize)


@cuda.jit(device=True)
def _brandes_init(s, v, data):
    data.sigma[s.slot, v] = 1.0 if v == s.source else 0.0
    data.delta[s.slot, v] = 0.0


@cuda.jit(device=True)
def _brandes_visit(s, v, w, level, dist_w, data):
    # sigma[v] is final (v's level is done); threads of the block reach w from several v at once.
    if dist_w == level + 1:
        cuda.atomic.add(data.sigma, (s.slot, w), data.sigma[s.slot, v])


@cuda.jit(device=True)
def _brandes_finalize(s, v, dist_v, data):
    # The deeper levels are final: delta(v) = sum over successors w of sigma(v)/sigma(w) (1 + delta(w)).
    acc = 0.0
    sv = data.sigma[s.slot, v]
    for e in range(s.offsets[v], s.offsets[v + 1]):
        w = s.indices[e]
        if s.dist[w] == dist_v + 1:
            acc += sv / data.sigma[s.slot, w] * (1.0 + data.delta[s.slot, w])
    data.delta[s.slot, v] = acc
    if v != s.source:
        data.betweenness[s.slot, v] += acc  # the slot's own row: the searches of one block add in turn


#: Brandes: shortest-path counts forward (sigma), dependencies backward (delta), accumulated per slot.
BETWEENNESS = Callbacks(init=_brandes_init, visit_vertex=_brandes_visit, finalize=_brandes_finalize)
