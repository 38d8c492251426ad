"""Multi-search: k breadth-first searches at once, with callbacks (McLaughlin, Riedy & Bader,
"A Fast, Energy-Efficient Abstraction for Simultaneous Breadth-First Searches", HPEC 2015), and
MS-BFS's bit-parallel form (Then et al., VLDB 2014).

    from explorer import backend, graphs
    from explorer.multisearch import run_many

    backend.select("auto")
    g = graphs.sample_graph("facebook_combined")
    run = run_many(g, "all", "betweenness", method="warp-thread", T="auto")
    for p in run:                  # a Progress record per step, as it completes
        print(f"{p.searches_done}/{p.searches_total} searches, {p.elapsed_ms:.1f} ms")
    result = run.result            # values, a SearchStats per search (a SearchTable), a BatchStats per batch
    result.ranked("betweenness", top=10)

run_many(graph, sources, application, method=, T=, k=, session=, on_progress=, ...)
    sources      "all" (every vertex: exact betweenness, APSP), an int k (k distinct vertices sampled
                 at random, `seed`), or a list of vertex ids, the graph's own as run_bfs takes them
                 (repeats allowed, each its own search); results are indexed by vertex 0..n-1
    application  "distances", "hop-counts", "closeness", "eccentricity", "reachability",
                 "betweenness" (apps.APPLICATIONS), or an Application of your own (below)
    method       "warp-thread" (default: the paper's warp-thread hybrid; its former name "hybrid"
                 still works, with a FutureWarning), "warp-based", "work-efficient", "edge-parallel",
                 "bit-parallel" (Method: each member says where it comes from and when it wins)
    T            warp-thread's out-degree threshold: None (16, the paper's), an int, math.inf, or
                 "auto" (chosen from the graph's out-degree histogram; result.threshold.reason
                 says why, result.threshold.table() shows every candidate's estimated cost)
    k            the most searches in one batch (None: as many as fit in free device memory; the
                 plan, run.plan.describe(), says what fits; a larger request runs in batches; a
                 request of which not even one search fits raises MultiSearchMemoryError)
    session      an explorer.engine.Session: the graph's device arrays and buffers between runs
    on_progress  called with every Progress record (also yielded by iterating the run)
    steps        progress steps a batch is launched in (None: at most 8, each launching at least
                 as many searches as run side by side; more steps, finer progress, idler GPU)
    block_threads, slots, word_bits (32/64), direction ("auto"/"push"/"pull"), heavy, chunk:
                 see run.run_many
Energy: each BatchStats has energy_j and watts where NVML reports them, and energy_note says how
they were measured or why not (the simulator, no NVML, a GPU that does not report them).

Your own application
--------------------
An application is a set of device callbacks (kernels.multisearch.Callbacks: any may be omitted)
and its arrays (ArraySpec: name, scope, shape per row, dtype). Every callback gets first `s`, a
kernels.multisearch.Search: s.row (the search's row in the batch's per-search arrays), s.source,
s.slot (the block running it: the row of per-slot arrays), s.dist (int32[n], the level of every
vertex in this search, -1 not yet reached; READ ONLY), s.offsets, s.indices (the graph). Last it
gets `data`, a namedtuple of the application's arrays by name.

    init(s, v, data)                          every vertex v, before the search; block-parallel
    prior(s, level, data)                     once a level, one thread, before it expands
    visit_vertex(s, v, w, level, dist_w, data)
                                              every arc (v, w) out of a vertex v on `level`;
                                              dist_w is w's level once claimed (level + 1 when w
                                              is on the next level, whoever claimed it)
    post(s, level, found, data)               once a level, one thread, after it: `found`
                                              vertices are on level + 1 (0 on the last level)
    finalize(s, v, dist_v, data)              every reached vertex, the deepest level first, a
                                              block barrier between levels; block-parallel

Define them after backend.select (Numba picks the simulator or the GPU when numba.cuda is first
imported), with `cuda` a global of their module or notebook (`from numba import cuda` at the top:
the simulator swaps that global inside device functions). Callbacks must not use block barriers
or warp intrinsics: the threads calling them are not converged. Plain Python functions are
compiled as device functions. Example: the number of shortest paths from each source to vertex 7:

    from numba import cuda
    from explorer.multisearch import Application, ArraySpec, Callbacks, run_many

    @cuda.jit(device=True)
    def init(s, v, data):
        data.paths[s.slot, v] = 1.0 if v == s.source else 0.0   # per-slot: reset for each search

    @cuda.jit(device=True)
    def visit(s, v, w, level, dist_w, data):
        if dist_w == level + 1:                                   # w is one level below v
            cuda.atomic.add(data.paths, (s.slot, w), data.paths[s.slot, v])

    @cuda.jit(device=True)
    def finalize(s, v, dist_v, data):
        if v == 7:
            data.to7[s.row] = data.paths[s.slot, v]

    app = Application("paths-to-7", Callbacks(init=init, visit_vertex=visit, finalize=finalize),
                      arrays=[ArraySpec("paths", "slot", ("n",), np.float64),
                              ArraySpec("to7", "search", (), np.float64)])
    run_many(g, [0, 1, 2], app).complete().values["to7"]

Races you must guard against
----------------------------
* visit_vertex runs for many arcs of a level at once, in every thread of the block: several
  threads reach the same w in one level. Updates of w's state (paths[s.slot, w] above) need
  atomics (cuda.atomic.add/min/max/or_...). v's state is final (its level is over): read it freely.
* Different searches run at the same time in different blocks. Arrays indexed by vertex only
  (scope "run") are written by all of them: use atomics, or a "slot-sum" array (a row per block,
  summed at the end: betweenness does this) so that only one block writes each row.
* Per-search arrays (scope "search", row s.row) written from visit_vertex, init or finalize need
  atomics when two threads may write the same element (the reachability bitmap ORs its words
  atomically); prior and post run on one thread and need none.
* Per-slot arrays (scope "slot") are the block's working state: its next search finds them as
  the last left them, so init must reset every element it relies on.
* A level's visit_vertex calls see w's level (dist_w) exactly, but other state of w only as far
  as the threads before them got: read next-level state in finalize (deeper levels are final
  there) or in the next level, never in the level that writes it.
* s.dist belongs to the search: writing it breaks the search.
"""
from .apps import (APPLICATIONS, ArraySpec, Application, Betweenness, Closeness, Distances, Eccentricity,
                   FinishContext, HopCounts, Reachability, application, rescale_betweenness)
from .energy import EnergyMeter, EnergyReading
from .choose import MethodChoice
from .methods import Method
from .plan import BatchPlan, MultiSearchMemoryError, plan_batches
from .records import BatchStats, MultiSearchResult, Progress, SearchStats, SearchTable
from .run import MultiSearchRun, resolve_sources, run_many
from .threshold import T_DEFAULT, T_INFINITE, ThresholdChoice, choose_threshold, threshold_costs


def __getattr__(name):
    # Callbacks and Search are device-side types (kernels.multisearch): imported on first use, so
    # that importing this package does not import numba.cuda before a backend is chosen.
    if name in ("Callbacks", "Search"):
        from kernels import multisearch

        return getattr(multisearch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "run_many", "MultiSearchRun", "resolve_sources", "Method", "MethodChoice", "T_DEFAULT", "T_INFINITE", "ThresholdChoice",
    "choose_threshold", "threshold_costs", "Application", "ArraySpec", "FinishContext", "APPLICATIONS",
    "application", "Distances", "HopCounts", "Closeness", "Eccentricity", "Reachability", "Betweenness",
    "rescale_betweenness", "BatchPlan", "MultiSearchMemoryError", "plan_batches", "EnergyMeter",
    "EnergyReading", "Progress", "SearchStats", "SearchTable", "BatchStats", "MultiSearchResult", "Callbacks", "Search",
]
