"""The CPU multicore BFS steps: the CS406 report's OpenMP design (§4, Appendices 1 and 2) in Numba
parallel=True.

Each step splits its work into chunks run by `prange` (about eight a thread, handed out one at a
time, like the report's schedule(guided)); every chunk keeps its own local frontier in its own
region of a scratch array, and the chunks' counts are merged by prefix sums into the next
frontier (§4.2.1), with no lock and no atomic increment.

* `topdown_step`: chunks of the frontier holding equal numbers of edges (a prefix sum of the
  frontier's degrees), so a hub does not leave one thread all the work; chunk c's region is its
  edges' range in that prefix sum, which bounds its claims. A vertex is claimed by
  compare-and-swap on its distance (`_cas`; the report checks and writes without one, which can
  enqueue a vertex twice), so each vertex enters the next frontier once.
* `bottomup_step`: chunks of consecutive vertices (whole 64-bit words); an unvisited vertex walks
  its in-edges and stops at the first one whose source is in the frontier's bit-set (§4.2.2).
  Each chunk writes its own words of the next bit-set and its found vertices into its own vertex
  range of the scratch array: nothing is shared.
* `bits_from_dist`: the bit-set of the vertices at a level, a word a time (a top-down level
  leaves its frontier as a queue; the distances hold it too).

Each step writes its counts into a small `out` array; arrays are numpy (explorer.engine.runtime.CPURuntime).
Arguments come in the kernels' groups (kernels.args: Graph, Tree, Level) and `Chunks`, the
steps' work space.
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import prange, types
from numba.core import cgutils
from numba.extending import intrinsic

WORD = 64  # vertices a bit-set word holds
# A step's counts, in its `out` array (int64).
FOUND = 0  # vertices found: the next frontier's size
EDGES = 1  # adjacency entries inspected
CHECKED = 2  # unvisited vertices that looked for a parent (bottom-up)
NUM_OUT = 3


class Chunks(NamedTuple):
    """A step's work space for `count` chunks: per chunk (count + 1 int64 entries each) the vertices
    it found, the edges it inspected, the unvisited vertices it checked, its first position in the
    next frontier and (top-down) its first frontier entry; the frontier's degree prefix sum (|V| + 1
    entries) and the scratch array in which each chunk keeps its own local frontier."""

    count: int
    found: np.ndarray
    edges: np.ndarray
    checked: np.ndarray
    starts: np.ndarray
    bounds: np.ndarray
    prefix: np.ndarray
    scratch: np.ndarray


@intrinsic
def _cas(typingctx, arr, idx, expected, value):
    """Atomic compare-and-swap of arr[idx] (Numba has none on the CPU): returns the old value."""
    if not isinstance(arr, types.Array) or not isinstance(arr.dtype, types.Integer):
        return None
    sig = arr.dtype(arr, types.intp, arr.dtype, arr.dtype)

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]])
        pair = builder.cmpxchg(ptr, args[2], args[3], "monotonic", "monotonic")
        return builder.extract_value(pair, 0)

    return sig, codegen


@numba.njit(cache=True, inline="always")
def _exclusive_scan(counts, nc, starts):
    """starts[c] = counts[0] + ... + counts[c-1] for c <= nc (sequential: nc is small)."""
    run = 0
    for c in range(nc):
        starts[c] = run
        run += counts[c]
    starts[nc] = run
    return run


@numba.njit(cache=True, parallel=True)
def topdown_step(graph, tree, queues, chunks, out):
    """One top-down level over queues.frontier[:size]; the next frontier goes to queues.out.
    out[FOUND] and out[EDGES] get the vertices found and the edges examined."""
    offsets, indices = graph
    dist, parent = tree
    frontier, size, nxt, _, level = queues
    nchunks, counts, prefix, bounds, starts, scratch = (chunks.count, chunks.found, chunks.prefix, chunks.bounds,
                                                        chunks.starts, chunks.scratch)
    nc = max(1, min(nchunks, size))
    step = -(-size // nc)
    # The frontier's degree prefix sum, chunk by chunk.
    for c in prange(nc):
        s = 0
        for i in range(c * step, min(size, (c + 1) * step)):
            u = frontier[i]
            s += offsets[u + 1] - offsets[u]
        counts[c] = s
    edges = _exclusive_scan(counts, nc, starts)
    for c in prange(nc):
        acc = starts[c]
        for i in range(c * step, min(size, (c + 1) * step)):
            prefix[i] = acc
            u = frontier[i]
            acc += offsets[u + 1] - offsets[u]
    prefix[size] = edges
    # Chunks of equal edges: chunk c starts at the first vertex whose prefix reaches c * edges / nc.
    for c in range(nc + 1):
        bounds[c] = np.searchsorted(prefix[:size + 1], c * edges // nc) if c < nc else size
    bounds[0] = 0
    nxt_level = level + 1
    for c in prange(nc):
        base = prefix[bounds[c]]
        k = 0
        for i in range(bounds[c], bounds[c + 1]):
            u = frontier[i]
            for e in range(offsets[u], offsets[u + 1]):
                v = indices[e]
                if dist[v] == -1 and _cas(dist, v, -1, nxt_level) == -1:
                    parent[v] = u
                    scratch[base + k] = v
                    k += 1
        counts[c] = k
    found = _exclusive_scan(counts, nc, starts)
    for c in prange(nc):
        base = prefix[bounds[c]]
        for k in range(counts[c]):
            nxt[starts[c] + k] = scratch[base + k]
    out[FOUND], out[EDGES], out[CHECKED] = found, edges, 0


@numba.njit(cache=True, parallel=True)
def bottomup_step(in_graph, tree, bits, next_bits, level, chunks, nxt, want_queue, out):
    """One bottom-up level over the in-edges: the frontier is `bits`, the next one goes to
    `next_bits` (every word) and, with want_queue, to nxt. out gets the vertices found, the
    in-edges inspected and the unvisited vertices checked."""
    in_offsets, in_indices = in_graph
    dist, parent = tree
    nchunks, counts, edges, checked, starts, scratch = (chunks.count, chunks.found, chunks.edges, chunks.checked,
                                                        chunks.starts, chunks.scratch)
    n = dist.shape[0]
    words = bits.shape[0]
    nc = max(1, min(nchunks, words))
    step = -(-words // nc)
    one = np.uint64(1)
    nxt_level = level + 1
    for c in prange(nc):
        k = 0
        e_count = 0
        v_count = 0
        lo = c * step
        for w in range(lo, min(words, lo + step)):
            word = np.uint64(0)
            for b in range(WORD):
                v = w * WORD + b
                if v >= n:
                    break
                if dist[v] != -1:
                    continue
                v_count += 1
                for e in range(in_offsets[v], in_offsets[v + 1]):
                    u = in_indices[e]
                    e_count += 1
                    if (bits[u // WORD] >> np.uint64(u % WORD)) & one:
                        dist[v] = nxt_level
                        parent[v] = u
                        word |= one << np.uint64(b)
                        scratch[lo * WORD + k] = v
                        k += 1
                        break
            next_bits[w] = word
        counts[c] = k
        edges[c] = e_count
        checked[c] = v_count
    found = _exclusive_scan(counts, nc, starts)
    if want_queue:
        for c in prange(nc):
            base = c * step * WORD
            for k in range(counts[c]):
                nxt[starts[c] + k] = scratch[base + k]
    out[FOUND], out[EDGES], out[CHECKED] = found, edges[:nc].sum(), checked[:nc].sum()


@numba.njit(cache=True, parallel=True)
def bits_from_dist(dist, level, bits):
    """bits = the set of vertices with dist == level."""
    n = dist.shape[0]
    for w in prange(bits.shape[0]):
        word = np.uint64(0)
        for b in range(min(WORD, n - w * WORD)):
            if dist[w * WORD + b] == level:
                word |= np.uint64(1) << np.uint64(b)
        bits[w] = word
