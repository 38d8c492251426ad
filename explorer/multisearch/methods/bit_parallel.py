"""Bit-parallel MS-BFS (Then et al., VLDB 2014): 32 or 64 searches share a machine word per vertex.

A batch is a set-up step (the seen words' padding, the sources at level 0), then a step per level:
top-down (push) or bottom-up (pull), chosen per level by Beamer et al.'s rule from the counts the
previous level read back, light vertices a thread per (vertex, word), heavy ones cut into items of
`chunk` arcs a warp each, then the level's counts. One progress record per step. Hop distances
only: the applications with `bit_parallel` turn the counts (and distance rows or seen bits) into
their values.
"""
from __future__ import annotations

import numpy as np

from ...stats import Direction
from ..plan import per_search_rows, plan_words, words_for
from ..records import SearchTable
from . import Method
from .base import BatchLoop, ManyContext, MultiSearchMethod, Step

#: Bottom-up when a top-down step would read more than 1/ALPHA of what a bottom-up step reads at
#: most (Beamer et al.'s alpha = 14; the bottom-up step stops early, so it reads less).
ALPHA = 14.0


def reverse_csr(g) -> tuple:
    """(offsets, indices) of the reversed graph: the in-neighbours of every vertex."""
    n = g.num_vertices
    order = np.argsort(g.indices, kind="stable")
    src = np.repeat(np.arange(n, dtype=np.int32), g.degrees())
    counts = np.bincount(g.indices, minlength=n)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets, src[order]


def heavy_items(g, reverse: bool, heavy: int, chunk: int) -> tuple:
    """MS-BFS's heavy items: every vertex with >= `heavy` arcs (in-arcs when `reverse`) cut into
    chunks of `chunk` arcs: (vertex int32, first arc int64, end int64)."""
    offsets = reverse_csr(g)[0] if reverse and g.directed else g.offsets
    deg = np.diff(offsets)
    big = np.flatnonzero(deg >= heavy)
    pieces = -(-deg[big] // chunk)
    vertex = np.repeat(big, pieces).astype(np.int32)
    first = np.repeat(offsets[big], pieces) + chunk * (np.arange(pieces.sum()) - np.repeat(np.cumsum(pieces) - pieces, pieces))
    end = np.minimum(first + chunk, np.repeat(offsets[big + 1], pieces))
    return vertex, first.astype(np.int64), end.astype(np.int64)


class BitParallel(MultiSearchMethod):
    method = Method.BIT_PARALLEL

    def check(self, app) -> None:
        if not app.bit_parallel:
            raise ValueError(f"application {app.name!r} cannot run bit-parallel: MS-BFS counts hop distances only "
                             "(no callbacks, no shortest-path counts); use method 'warp-thread'")

    def plan(self, graph, total, app, *, resident_slots, free, memory_note, k, word_bits, slots):
        n, m = graph.num_vertices, graph.num_arcs
        # Reverse CSR and the heavy items (at most one per 128 arcs, 16 bytes each) of both directions.
        fixed = (8 * (n + 1) + 4 * m if graph.directed else 0) + 2 * 16 * (m // 128 + 1)
        return plan_words(graph, total, app, self.method, fixed=fixed, free=free, memory_note=memory_note, k=k,
                          word_bits=word_bits)

    def start_batch(self, ctx, b, lo, hi):
        return WordBatch(ctx, b, lo, hi)


class WordBatch(BatchLoop):
    """One batch of MS-BFS: the set-up step, then a step a level until no word gains a bit."""

    def __init__(self, ctx: ManyContext, b: int, lo: int, hi: int):
        from kernels import multisearch as km

        self.km, self.ctx, self.b, self.lo = km, ctx, b, lo
        rt, g, st = ctx.runtime, ctx.graph, ctx.settings
        n, rows, bits, threads = g.num_vertices, hi - lo, st.word_bits, st.threads
        self.n, self.rows, self.threads = n, rows, threads
        self.W = W = words_for(rows, bits)
        wt = np.uint64 if bits == 64 else np.uint32
        self.bk = km.bit_kernels(bits)
        self.graphs = self._graphs(ctx)
        self.F, self.N, self.S = (ctx.buffer(f"bp.{x}", n * W, wt) for x in "FNS")
        nout = km.BP_COUNTS + W * bits
        self.out = ctx.buffer("bp.out", nout, np.int64)
        self.out_host = ctx.buffer("bp.out", nout, np.int64, host=True)
        self.readback = (self.out, self.out_host)
        self.R = R = per_search_rows(ctx.plan)
        self.write_dist = ctx.app.needs_distances
        self.dist = ctx.buffer("bp.dist", R * n, np.int32) if self.write_dist else ctx.buffer("bp.nodist", 1, np.int32)
        self.dist2 = self.dist.reshape((R, n) if self.write_dist else (1, 1))
        pads = np.zeros(W, dtype=wt)
        for j in range(W):
            valid = min(max(rows - j * bits, 0), bits)
            pads[j] = wt(0) if valid == bits else ~wt((1 << valid) - 1)
        self.pads, self.sources = rt.to_device(pads), rt.to_device(ctx.sources[lo:hi])
        if rt.kind == "simulator":
            self.most = 1  # every thread is a Python thread there
        else:
            self.most = rt.limits.sm_count * max(1, rt.limits.max_threads_per_sm // threads)
        self.zero_run = list(ctx.zero_run) if b == 0 else []
        deg_out = np.diff(g.offsets)
        self.push_cost, self.pull_cost = int(deg_out[ctx.sources[lo:hi]].sum()), None
        self.counts = [np.ones(rows, dtype=np.int64)]
        self.alive = np.ones(rows, dtype=bool)
        self.level = -1  # the set-up step comes first
        self.pull = False

    def _graphs(self, ctx) -> dict:
        """Per direction ("out": push, "in": pull), the CSR and the heavy items (derived once a session)."""
        km, g, st = self.km, ctx.graph, ctx.settings
        offsets, indices = ctx.graph_arrays
        rev = ctx.derived("multisearch.reverse-csr", reverse_csr) if g.directed else (offsets, indices)
        items = {d: km.HeavyItems(*ctx.derived(f"multisearch.items.{d}.{st.heavy}.{st.chunk}",
                                               lambda gr, d=d: heavy_items(gr, d == "in", st.heavy, st.chunk)))
                 for d in ("out", "in")}
        graphs = {"out": km.BitGraph(offsets, indices), "in": km.BitGraph(*rev)}
        return {d: (ctx.group(f"bp.graph.{d}", graphs[d]), ctx.group(f"bp.items.{d}", items[d])) for d in graphs}

    def blocks(self, work: int) -> int:
        return max(1, min(self.most, -(-work // self.threads)))

    def launch(self, go) -> None:
        bk, A, W, threads = self.bk, self.km.BIT_ARGS, self.W, self.threads
        if self.level < 0:
            for arr in self.zero_run:
                go.zero(arr)
            go.zero(self.F)
            go.zero(self.out)
            if self.write_dist:
                from kernels import common

                go(common.fill_int32, self.blocks(self.R * self.n), threads, 0, self.dist, -1)
            go(bk.seed, self.blocks(self.n * W), threads, 0, *A.seed(S=self.S, pads=self.pads, W=W))
            go(bk.sources, self.blocks(self.rows), threads, 0,
               *A.sources(F=self.F, S=self.S, sources=self.sources, W=W, dist=self.dist2, write_dist=self.write_dist))
            return
        graph, items = self.graphs["in" if self.pull else "out"]
        # The four step kernels share one declaration (the light ones read no items, the heavy ones no heavy).
        args = A.push_light(graph=graph, items=items, F=self.F, S=self.S, N=self.N, W=W, heavy=self.ctx.settings.heavy,
                            out=self.out)
        light, heavy = (bk.pull_light, bk.pull_heavy) if self.pull else (bk.push_light, bk.push_heavy)
        go.zero(self.N)
        go.zero(self.out)
        go(light, self.blocks(self.n * W), threads, 0, *args)
        if items.vertex.shape[0]:
            go(heavy, self.blocks(32 * items.vertex.shape[0]), threads, 0, *args)
        go(bk.finish, self.blocks(self.n * W), threads, 0,
           *A.finish(N=self.N, S=self.S, W=W, level=self.level + 1, out=self.out, dist=self.dist2,
                     write_dist=self.write_dist, out_offsets=self.graphs["out"][0].offsets,
                     in_offsets=self.graphs["in"][0].offsets))

    def collect(self, ms: float) -> Step:
        km, out, rows = self.km, self.out_host, self.rows
        if self.level < 0:
            step = Step(done=0, visited=rows, edges=0, level=0)
        else:
            found = out[km.BP_COUNTS:km.BP_COUNTS + rows].copy()
            ended = self.alive & (found == 0)
            self.alive &= found > 0
            if found.any():
                self.counts.append(found)
            self.push_cost, self.pull_cost = int(out[km.BP_PUSH]), int(out[km.BP_PULL])
            self.F, self.N = self.N, self.F
            step = Step(done=int(ended.sum()), visited=int(found.sum()), edges=int(out[km.BP_EDGES]),
                        level=self.level + 1, direction=Direction.BOTTOM_UP if self.pull else Direction.TOP_DOWN)
            self.converged = bool(out[km.BP_NEW] == 0)
        self.level += 1
        d = self.ctx.settings.direction
        self.pull = d == "pull" or (d == "auto" and self.pull_cost is not None
                                    and self.push_cost * ALPHA > self.pull_cost)
        return step

    def finish(self) -> tuple[dict, SearchTable]:
        ctx, rt, rows, n = self.ctx, self.ctx.runtime, self.rows, self.n
        C = np.stack(self.counts)
        dist_host = rt.to_host(self.dist)[:rows * n].reshape(rows, n) if self.write_dist else None
        seen = None
        if ctx.app.needs_seen:
            words = rt.to_host(self.S).reshape(n, self.W)
            seen = np.unpackbits(words.view(np.uint8), axis=1, bitorder="little")[:, :rows].T.astype(bool)
        values = ctx.app.from_levels(C, dist_host, seen, n)
        found = C > 0
        depth = C.shape[0] - np.argmax(found[::-1], axis=0)
        stats = SearchTable(row=self.lo + np.arange(rows), source=ctx.sources[self.lo:self.lo + rows], batch=self.b,
                            levels=depth, visited=C.sum(axis=0))
        return values, stats
