"""Multi-search: every method and application against networkx on tiny graphs, under the simulator
in CI (every CUDA thread is a Python thread: blocks of 32 threads, graphs of tens of vertices) and
on a GPU; the batch plan, the choice of T, energy, progress records, the method registry, the
kernels' argument declarations and bad inputs."""
import ast
import ctypes
import inspect
import threading
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numba import cuda  # after tests/conftest.py chose the GPU or the simulator

from explorer import graphs
from explorer.engine import Session
from explorer.multisearch import (Application, ArraySpec, HopCounts, Method, MultiSearchMemoryError, T_INFINITE,
                                  choose_threshold, plan_batches, run_many, threshold_costs)
from explorer.multisearch import energy as energy_mod
from explorer.multisearch import run as run_mod
from explorer.multisearch.methods import implementation
from explorer.multisearch.methods.block import BlockSearch
from explorer.multisearch.plan import words_for
from explorer.stats import Direction

ROOT = Path(__file__).resolve().parent.parent
#: Every registered method, and those that run an application's callbacks (a block per search).
METHODS = [m.value for m in Method]
SEARCH_METHODS = [m.value for m in Method if isinstance(implementation(m), BlockSearch)]


@pytest.fixture(scope="module")
def karate():
    return graphs.from_networkx(nx.karate_club_graph(), name="karate")


@pytest.fixture(scope="module")
def fig2():
    return graphs.sample_graph("bfs4k_fig2")


@pytest.fixture(scope="module")
def directed():
    return graphs.from_networkx(nx.gnp_random_graph(24, 0.1, seed=3, directed=True), name="gnp-directed")


def _nx(g):
    return g.to_networkx()


def _apsp(g, sources):
    sp = dict(nx.all_pairs_shortest_path_length(_nx(g)))
    ref = np.full((len(sources), g.num_vertices), -1, dtype=np.int32)
    for i, s in enumerate(sources):
        for v, d in sp[int(s)].items():
            ref[i, v] = d
    return ref


def _by_vertex(d, n):
    return np.array([d[v] for v in range(n)])


# ------------------------------------------------------------------ every method, every application

@pytest.mark.parametrize("method", METHODS)
def test_apsp_by_every_method_matches_networkx(fig2, method):
    run = run_many(fig2, "all", "distances", method=method)
    records = list(run)
    r = run.result
    assert np.array_equal(r.values["distances"], _apsp(fig2, r.sources))
    assert records[-1].searches_done == fig2.num_vertices and records[-1].batch_done is not None
    assert [s.levels for s in r.searches] == list(r.values["distances"].max(axis=1) + 1)


@pytest.mark.parametrize("graph,method,T", [("karate", "warp-thread", None), ("karate", "warp-thread", 4),
                                            ("directed", "warp-thread", "auto"), ("fig2", "warp-based", None),
                                            ("fig2", "work-efficient", None), ("directed", "edge-parallel", None)])
def test_exact_betweenness_matches_networkx(request, graph, method, T):
    g = request.getfixturevalue(graph)
    r = run_many(g, "all", "betweenness", method=method, T=T).complete()
    ref = _by_vertex(nx.betweenness_centrality(_nx(g)), g.num_vertices)
    assert np.allclose(r.values["betweenness"], ref)
    assert r.ranked(top=3)[0][0] == int(np.argmax(ref))


@pytest.mark.parametrize("normalized", [True, False])
def test_sampled_betweenness_is_scaled_as_networkx(karate, normalized):
    G = _nx(karate)
    sample = random.Random(7).sample(list(G.nodes()), 6)  # the sample networkx draws with this seed
    ref = nx.betweenness_centrality(G, k=6, normalized=normalized, seed=random.Random(7))
    app = run_mod._apps.Betweenness(normalized=normalized)
    r = run_many(karate, sample, app).complete()
    assert np.allclose(r.values["betweenness"], _by_vertex(ref, karate.num_vertices))


@pytest.mark.parametrize("graph,method", [("karate", "warp-thread"), ("directed", "bit-parallel"),
                                          ("directed", "work-efficient")])
def test_closeness_matches_networkx(request, graph, method):
    g = request.getfixturevalue(graph)
    r = run_many(g, "all", "closeness", method=method).complete()
    G = _nx(g)
    # networkx measures distances to a vertex: the reversed graph's closeness is the outward one.
    ref = nx.closeness_centrality(G.reverse() if g.directed else G)
    assert np.allclose(r.values["closeness"], _by_vertex(ref, g.num_vertices))


@pytest.mark.parametrize("method", ["warp-based", "bit-parallel"])
def test_eccentricity_and_diameter_match_networkx(karate, method):
    r = run_many(karate, "all", "eccentricity", method=method).complete()
    G = _nx(karate)
    assert list(r.values["eccentricity"]) == list(_by_vertex(nx.eccentricity(G), 34))
    assert r.values["diameter"] == nx.diameter(G) and r.values["radius"] == nx.radius(G)
    assert r.values["connected"]


@pytest.mark.parametrize("method", ["work-efficient", "bit-parallel"])
def test_reachability_matches_networkx(directed, method):
    sources = [0, 3, 3, 17]
    r = run_many(directed, sources, "reachability", method=method).complete()
    G = _nx(directed)
    for i, s in enumerate(sources):
        assert set(np.flatnonzero(r.values["reachable"][i])) == nx.descendants(G, s) | {s}
        assert r.values["reached"][i] == len(nx.descendants(G, s))
    assert not run_many(directed, "all", "eccentricity").complete().values["connected"]


@pytest.mark.parametrize("method", ["warp-thread", "bit-parallel"])
def test_hop_counts_match_networkx(karate, method):
    r = run_many(karate, [0, 16, 33], "hop-counts", method=method).complete()
    sp = dict(nx.all_pairs_shortest_path_length(_nx(karate)))
    for i, s in enumerate([0, 16, 33]):
        want = np.bincount(list(sp[s].values()))
        assert list(r.values["histogram"][i][:len(want)]) == list(want) and r.values["histogram"][i][len(want):].sum() == 0


def test_hop_counts_too_narrow_names_the_width():
    path = graphs.from_edges(np.arange(7), np.arange(1, 8), directed=False, name="path8")
    with pytest.raises(ValueError, match=r"HopCounts\(max_levels=8\)"):
        run_many(path, [0], HopCounts(max_levels=3)).complete()


@pytest.mark.parametrize("graph", ["fig2", "gnp"])
def test_every_application_matches_networkx(fig2, graph):
    g = fig2 if graph == "fig2" else graphs.from_networkx(nx.gnp_random_graph(14, 0.2, seed=5), name="gnp")
    G, n = _nx(g), g.num_vertices
    sp = dict(nx.all_pairs_shortest_path_length(G))
    v = {app: run_many(g, "all", app).complete().values
         for app in ("distances", "hop-counts", "closeness", "eccentricity", "reachability", "betweenness")}
    assert np.array_equal(v["distances"]["distances"], _apsp(g, range(n)))
    assert all(list(v["hop-counts"]["histogram"][s][:max(sp[s].values()) + 1]) == list(np.bincount(list(sp[s].values())))
               for s in range(n))
    assert np.allclose(v["closeness"]["closeness"], _by_vertex(nx.closeness_centrality(G), n))
    assert list(v["eccentricity"]["eccentricity"]) == [max(sp[s].values()) for s in range(n)]
    assert all(set(np.flatnonzero(v["reachability"]["reachable"][s])) == set(sp[s]) for s in range(n))
    assert np.allclose(v["betweenness"]["betweenness"], _by_vertex(nx.betweenness_centrality(G), n))


def test_graphs_without_arcs(fig2):
    edgeless = graphs.from_edges(np.zeros(0, np.int64), np.zeros(0, np.int64), num_vertices=3, directed=False,
                                 name="edgeless")
    for method in ("warp-thread", "edge-parallel", "bit-parallel"):
        r = run_many(edgeless, "all", "distances", method=method).complete()
        assert np.array_equal(r.values["distances"], np.where(np.eye(3, dtype=bool), 0, -1))
    e = run_many(edgeless, "all", "eccentricity").complete().values
    assert e["diameter"] == 0 and not e["connected"]


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 10), p=st.floats(0.1, 0.6), seed=st.integers(0, 10**6),
       directed_graph=st.booleans(), method=st.sampled_from(METHODS))
def test_random_graphs_distances_match_networkx(n, p, seed, directed_graph, method):
    g = graphs.from_networkx(nx.gnp_random_graph(n, p, seed=seed, directed=directed_graph), name="hyp")
    r = run_many(g, "all", "distances", method=method, T=2 if method == "warp-thread" else None).complete()
    assert np.array_equal(r.values["distances"], _apsp(g, r.sources))


# ------------------------------------------------------------------ MS-BFS

@pytest.mark.parametrize("kw,first", [({"direction": "push"}, Direction.TOP_DOWN),
                                      ({"direction": "pull", "word_bits": 32}, Direction.BOTTOM_UP),
                                      ({"direction": "auto", "heavy": 3, "chunk": 4}, Direction.TOP_DOWN),
                                      ({"direction": "pull", "heavy": 3, "chunk": 4}, Direction.BOTTOM_UP)])
def test_bit_parallel_push_pull_heavy_items_and_padding(karate, kw, first):
    sources = list(range(34)) * 2 + [0, 5]  # 70 searches: several words, the last one padded
    run = run_many(karate, sources, "distances", method="bit-parallel", **kw)
    records = list(run)
    assert np.array_equal(run.result.values["distances"], _apsp(karate, sources))
    dirs = [r.direction for r in records[1:]]
    assert dirs[0] is first
    if kw["direction"] != "auto":
        assert set(dirs) == {first}
    else:
        assert Direction.BOTTOM_UP in dirs  # Beamer's rule turns to pull once the frontier is wide
    assert run.plan.words == words_for(70, kw.get("word_bits", 64))


def test_bit_parallel_heavy_items_of_a_directed_graph_use_in_arcs(directed):
    sources = list(range(24))
    for direction in ("push", "pull"):
        r = run_many(directed, sources, "distances", method="bit-parallel", direction=direction, heavy=2,
                     chunk=2).complete()
        assert np.array_equal(r.values["distances"], _apsp(directed, sources))


def test_bit_parallel_words_wider_than_a_warp():
    # 33 words of 32 bits: W rounds up to 64, a lane per word in the heavy items' form.
    edge = graphs.from_edges(np.array([0]), np.array([1]), directed=False, name="edge")
    sources = [0, 1] * 528
    r = run_many(edge, sources, "eccentricity", method="bit-parallel", word_bits=32, direction="pull",
                 heavy=1).complete()
    assert r.plan.words == 64
    assert list(r.values["eccentricity"]) == [1] * len(sources)


# ------------------------------------------------------------------ progress, batches, memory

def test_progress_streams_per_search_and_aggregate_records(karate):
    seen = []
    run = run_many(karate, "all", "closeness", k=10, on_progress=seen.append)
    it = iter(run)
    first = next(it)
    with pytest.raises(RuntimeError, match="has not finished"):
        run.result
    records = [first, *it]
    assert seen == records
    r = run.result
    assert len(r.batches) == len(run.plan.batches) == 4 and [b.searches for b in r.batches] == [9, 9, 8, 8]
    done = [p.searches_done for p in records]
    assert done == sorted(done) and done[-1] == 34
    ends = [i for i, p in enumerate(records) if p.batch_done is not None]
    assert len(ends) == 4 and ends[-1] == len(records) - 1
    assert all(records[i].batch != records[i + 1].batch for i in ends[:-1])
    assert sum(len(p.searches) for p in records) == 34
    deg = karate.degrees()
    d = _apsp(karate, r.sources)
    for s in r.searches:  # every reached vertex's arcs inspected once; its levels are its eccentricity + 1
        assert s.visited == np.count_nonzero(d[s.row] >= 0) and s.edges_examined == deg[d[s.row] >= 0].sum()
        assert s.levels == d[s.row].max() + 1 and s.time_ms > 0
    assert records[-1].visited == sum(s.visited for s in r.searches)
    assert records[-1].edges_examined == r.edges_examined
    for b in r.batches:
        if run.runtime.kind == "simulator":
            assert b.energy_j is None and b.watts is None and "simulator" in b.energy_note
        elif b.energy_j is None:  # a GPU without NVML or without energy and power readings says why
            assert b.watts is None and b.energy_note.startswith(("no energy", "this GPU reports neither"))
        else:
            assert "NVML" in b.energy_note and b.energy_j >= 0 and b.energy_s > 0
            assert b.watts == pytest.approx(b.energy_j / b.energy_s)
            if b.energy_s >= 0.1:  # NVML's counter ticks every ~10 ms: a shorter batch may read 0 J
                assert b.energy_j > 0
    with pytest.raises(RuntimeError, match="iterated once"):
        iter(run)
    assert [len(p.searches) for p in run_many(karate, [0, 1, 2, 3, 4], "closeness", steps=3)] == [2, 2, 1]


def test_a_search_table_reads_as_its_records_and_travels_as_columns():
    import pickle

    from explorer.multisearch.records import SearchStats, SearchTable

    t = SearchTable(row=[0, 1, 2], source=[7, 5, 9], batch=1, levels=[3, 4, 2], visited=[10, 11, 4],
                    time_ms=[0.5, 0.25, 1.0])
    assert t[1] == SearchStats(row=1, source=5, batch=1, levels=4, visited=11, edges_examined=None, time_ms=0.25)
    assert list(t) == [t[0], t[1], t[2]] and t[-1].source == 9 and len(t[1:]) == 2
    with pytest.raises(IndexError):
        t[3]
    back = pickle.loads(pickle.dumps(t))
    assert back == t and back.column("edges_examined") is None
    moved = t.replace(row=t.column("row") + 4, batch=0)
    assert [s.row for s in moved] == [4, 5, 6] and {s.batch for s in moved} == {0} and t.column("row")[0] == 0
    both = SearchTable.concat([t, SearchTable.empty(), moved])
    assert [s.row for s in both] == [0, 1, 2, 4, 5, 6] and both.column("time_ms").tolist() == [0.5, 0.25, 1.0] * 2
    with pytest.raises(ValueError, match="time_ms"):
        SearchTable.concat([t, SearchTable(row=[0], source=[0], batch=0, levels=[1], visited=[1])])
    with pytest.raises(ValueError, match="levels"):
        SearchTable(row=[0, 1], source=[0, 1], batch=0, levels=[1], visited=[1, 1])
    with pytest.raises(ValueError):
        t.column("row")[0] = 5  # read-only: a result's records cannot be edited through a column


def _free(monkeypatch, usable):
    monkeypatch.setattr(run_mod, "free_device_memory", lambda rt: (int(usable / 0.9) + 1, "test"))


def test_batches_follow_free_memory_and_refuse_what_cannot_fit(karate, monkeypatch):
    n = karate.num_vertices
    block = 8 * n + 24 * n  # a block's levels and BFS order, sigma, delta and its betweenness row
    _free(monkeypatch, 3 * block + 27 * 36)  # three blocks and 27 searches' statistics
    run = run_many(karate, "all", "betweenness", slots=3)
    assert run.plan.slots == 3 and run.plan.batches == ((0, 17), (17, 34))
    r = run.complete()  # the blocks' betweenness rows add up over both batches
    assert np.allclose(r.values["betweenness"], _by_vertex(nx.betweenness_centrality(_nx(karate)), n))
    _free(monkeypatch, 2 * 8 * n + 10 * (36 + 4 * n))  # two blocks, ten distance rows
    # slots=2: otherwise the plan starts from the device's resident blocks (2 under the simulator, 1,056 on
    # an H100) and fits 4 blocks and 6 rows on a GPU.
    run = run_many(karate, "all", "distances", slots=2)
    assert [hi - lo for lo, hi in run.plan.batches] == [9, 9, 8, 8] and "4 batches" in run.plan.describe()
    r = run.complete()
    assert np.array_equal(r.values["distances"], _apsp(karate, r.sources)) and len(r.batches) == 4
    monkeypatch.setattr(run_mod, "free_device_memory", lambda rt: (1000, "test"))
    with pytest.raises(MultiSearchMemoryError, match=r"one betweenness search of karate .* needs [\d.]+ KB"):
        run_many(karate, "all", "betweenness")


def test_plan_splits_evenly_and_sizes_words():
    g = graphs.generate("grid2d", rows=10, cols=10)
    app = run_mod._apps.Distances()
    usable = 4 * 8 * 100 + 512 * (36 + 4 * 100)  # four blocks' levels and order, 512 distance rows
    plan = plan_batches(g, 1025, app, Method.WARP_THREAD, resident_slots=4, free=int(usable / 0.9) + 1)
    assert plan.slots == 4 and plan.per_batch == 512
    assert [hi - lo for lo, hi in plan.batches] == [342, 342, 341]
    bp = plan_batches(g, 1000, run_mod._apps.Closeness(), Method.BIT_PARALLEL, resident_slots=1,
                      free=10**9, word_bits=64)
    assert bp.words == 16 and bp.per_batch == 1000
    assert [words_for(k, 64) for k in (1, 64, 65, 200, 2048, 2049)] == [1, 1, 2, 4, 32, 64]


def test_sessions_keep_the_graph_between_runs(fig2, karate):
    with Session(fig2) as s:
        a = run_many(fig2, [0, 1], "distances", session=s).complete()
        b = run_many(fig2, [0, 1], "eccentricity", method="bit-parallel", session=s).complete()
    assert list(b.values["eccentricity"]) == list(a.values["distances"].max(axis=1))
    with pytest.raises(ValueError, match="session holds graph"):
        run_many(karate, [0], "distances", session=Session(fig2))


# ------------------------------------------------------------------ your own callbacks

# A user's callbacks reach `cuda` as a module global: the simulator swaps that name in a device
# function's globals (a `cuda` imported inside a function would stay the host module).
@cuda.jit(device=True)
def _paths_init(s, v, data):
    data.paths[s.slot, v] = 1.0 if v == s.source else 0.0


@cuda.jit(device=True)
def _paths_visit(s, v, w, level, dist_w, data):
    if dist_w == level + 1:
        cuda.atomic.add(data.paths, (s.slot, w), data.paths[s.slot, v])


def _paths_finalize(s, v, dist_v, data):  # a plain function is compiled as a device function
    data.count[s.row, v] = data.paths[s.slot, v]


def test_custom_application_counts_shortest_paths(fig2):
    from explorer.multisearch import Callbacks

    app = Application("paths", Callbacks(init=_paths_init, visit_vertex=_paths_visit, finalize=_paths_finalize),
                      arrays=[ArraySpec("paths", "slot", ("n",), np.float64),
                              ArraySpec("count", "search", ("n",), np.float64)])
    r = run_many(fig2, [0, 4, 9], app, method="warp-thread", T=2).complete()
    G = _nx(fig2)
    for i, s in enumerate([0, 4, 9]):
        want = [len(list(nx.all_shortest_paths(G, s, t))) if nx.has_path(G, s, t) else 0 for t in range(10)]
        assert list(r.values["count"][i]) == want


def test_omitted_callbacks_do_nothing_and_kernels_are_cached(fig2):
    from kernels import multisearch as km

    from explorer.multisearch import Callbacks

    def post(s, level, found, data):
        data.sizes[s.row, level + 1] = found

    app = Application("sizes", Callbacks(post=post), arrays=[ArraySpec("sizes", "search", (12,), np.int64)])
    r = run_many(fig2, [0], app).complete()
    assert list(r.values["sizes"][0][1:5]) == [3, 4, 2, 0]
    cb = app.callbacks()
    assert km.search_kernel(cb, True, True) is km.search_kernel(cb, True, True)
    assert km.search_kernel(cb, True, False) is not km.search_kernel(cb, True, True)


# ------------------------------------------------------------------ T from the out-degree histogram

def test_threshold_choice_says_why():
    grid = graphs.generate("grid2d", rows=20, cols=20)
    c = choose_threshold(grid)
    assert c.T == 16 and "100% of the reachable vertices have out-degree < 16" in c.reason
    assert "cost the same here" in c.reason and {row["T"] for row in c.table()} >= {"0", "16", "∞"}
    # ldoor (§IV-B): degrees 30-76, mostly below 64: a warp per vertex idles, threads win.
    ldoor = threshold_costs(np.random.default_rng(1).integers(30, 77, 5000))
    assert ldoor[T_INFINITE] < ldoor[16] and ldoor[T_INFINITE] < ldoor[0]
    # A hub among leaves: thread-per-vertex leaves one thread the hub's whole list.
    star = graphs.from_edges(np.zeros(200, np.int64), np.arange(1, 201), directed=False, name="star")
    costs = threshold_costs(star.degrees())
    assert costs[16] < costs[T_INFINITE] and costs[16] < costs[0]
    r = run_many(star, [0, 1], "eccentricity", T="auto")
    assert r.T == 16 and r.threshold is not None


# ------------------------------------------------------------------ energy

class _FakeNVML:
    """libnvidia-ml's calls the meter makes, with an energy counter or a power reading or neither."""

    def __init__(self, counter=True, power=True):
        self.counter, self.power, self.start = counter, power, time.perf_counter()

    def nvmlInit_v2(self):
        return 0

    def nvmlErrorString(self, rc):
        return b"Not Supported"

    def nvmlDeviceGetHandleByPciBusId_v2(self, bus, h):
        return 0

    def nvmlDeviceGetHandleByIndex_v2(self, i, h):
        return 0

    def nvmlDeviceGetTotalEnergyConsumption(self, h, out):
        if not self.counter:
            return 3
        mj = 1000 + round(200 * (time.perf_counter() - self.start) * 1e3)  # 200 W since the driver loaded
        ctypes.cast(out, ctypes.POINTER(ctypes.c_ulonglong)).contents.value = mj
        return 0

    def nvmlDeviceGetPowerUsage(self, h, out):
        if not self.power:
            return 3
        ctypes.cast(out, ctypes.POINTER(ctypes.c_uint)).contents.value = 200_000  # 200 W
        return 0


def test_energy_from_the_counter_from_sampled_power_or_said_unsupported():
    for lib, mode in ((_FakeNVML(), "counter"), (_FakeNVML(counter=False), "sampled")):
        m = energy_mod.EnergyMeter("gpu", "00000000:01:00.0", lib=lib)
        assert m.mode == mode and "every 10 ms" in m.note
        for _ in range(2):  # two batches: two steps with a pause between them (not counted), then one
            m.begin()
            time.sleep(0.03)
            m.end()
            time.sleep(0.05)  # the caller holding a record
            m.begin()
            time.sleep(0.03)
            m.end()
            r = m.take()
            assert r.seconds == pytest.approx(0.06, abs=0.01), mode
            assert r.watts == pytest.approx(200, rel=0.1) and r.joules == pytest.approx(200 * r.seconds, rel=0.1), mode
        assert m.take().joules == 0
        m.close()
        assert m._thread is None
    m = energy_mod.EnergyMeter("gpu", None, lib=_FakeNVML(counter=False, power=False))
    assert not m.supported and "neither its energy nor its power" in m.note and m.take() is None
    assert "simulator" in energy_mod.EnergyMeter("simulator").note


# ------------------------------------------------------------------ bad inputs

@pytest.mark.parametrize("kwargs,message", [
    ({"method": "sideways"}, "unknown multi-search method 'sideways'; methods: warp-thread"),
    ({"application": "pagerank"}, "unknown multi-search application 'pagerank'"),
    ({"application": "betweenness", "method": "bit-parallel"}, "cannot run bit-parallel"),
    ({"method": "warp-based", "T": 16}, "does not apply to method 'warp-based'"),
    ({"T": -1}, "T=-1 is invalid"),
    ({"T": "sometimes"}, "T='sometimes' is invalid"),
    ({"sources": [0, 99]}, "source vertex 99 is out of range"),
    ({"sources": []}, "non-empty list"),
    ({"sources": 0}, "sample between 1 and 10"),
    ({"sources": "some"}, "sources='some' is invalid"),
    ({"sources": [1, 1], "application": "betweenness"}, "distinct sources"),
    ({"k": 0}, "k=0 is invalid"),
    ({"block_threads": 48}, "multiple of 32"),
    ({"word_bits": 16}, "32 or 64"),
    ({"direction": "up"}, "direction='up' is invalid"),
    ({"heavy": 0}, "heavy=0 is invalid"),
    ({"steps": 0}, "steps=0 is invalid: progress steps per batch"),
])
def test_bad_inputs_name_the_problem(fig2, kwargs, message):
    kw = {"sources": "all", "application": "distances", **kwargs}
    with pytest.raises(ValueError) as err:
        run_many(fig2, **kw)
    assert message in str(err.value)


def test_sources_are_the_graphs_own_ids_as_run_bfs_takes_them():
    # A file's ids 10, 20, ...: vertex id 30 is the third vertex, as in run_bfs; results stay indexed
    # by vertex 0..n-1, the order of graph.original_ids.
    from explorer.api import run_bfs

    g = graphs.from_edges(np.array([10, 20, 30, 40]), np.array([20, 30, 40, 70]), directed=False, name="ids",
                          remap=True)
    r = run_many(g, [30, 70], "distances").complete()
    assert list(r.sources) == [2, 4]
    for row, own in enumerate([30, 70]):
        assert r.values["distances"][row].tolist() == run_bfs(g, own, "topdown-queue").complete().distances.tolist()
    with pytest.raises(ValueError, match="source vertex id 3 is not in graph 'ids': its 5 ids run from 10 to 70"):
        run_many(g, [3], "distances")


def test_methods_are_documented_and_the_package_imports_no_device_code():
    src = inspect.getsource(Method)
    for m in Method:  # the `#:` comment above each member says where it comes from and when it wins
        comment = src.split(f"    {m.name} = ")[0].rsplit("\n\n", 1)[-1]
        assert comment.strip().startswith("#:") and "Wins" in comment and m.doc, m
    code = "import sys, explorer.multisearch; assert 'numba.cuda' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


# ------------------------------------------------------------------ the registry and the engine

def test_every_method_is_its_module_and_one_registry_line():
    from explorer.multisearch import methods
    from explorer.multisearch.methods.base import MultiSearchMethod

    assert set(methods._REGISTRY) == set(Method)
    for m in Method:
        impl = methods.implementation(m)
        assert isinstance(impl, MultiSearchMethod) and impl.method is m and impl.name == m.value
    # A method module imports the shared ones (base, block, the package), never another method's.
    shared = {"base", "block"}
    folder = Path(methods.__file__).parent
    own = {spec.partition(":")[0] for spec in methods._REGISTRY.values()}
    for name in own:
        tree = ast.parse((folder / f"{name}.py").read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 1}
        assert not (imported - shared - {None}), (name, imported)


def test_the_former_name_hybrid_runs_the_warp_thread_hybrid_and_says_so(fig2):
    with pytest.warns(FutureWarning, match="'hybrid' is now called 'warp-thread'") as caught:
        old = run_many(fig2, [0, 4], "distances", method="hybrid", T=2).complete()
    assert caught[0].filename == __file__  # the warning names the caller's line
    new = run_many(fig2, [0, 4], "distances", method="warp-thread", T=2).complete()
    assert old.method == new.method == "warp-thread" and old.T == 2
    assert np.array_equal(old.values["distances"], new.values["distances"])
    with pytest.warns(FutureWarning):
        assert Method.parse(" Hybrid") is Method.WARP_THREAD
    assert "hybrid" not in [m.value for m in Method]


class _Meter:
    """Stands in for NVML's meter: logs when it is asked to measure."""

    note = "a test meter"

    def __init__(self, events):
        self.events = events

    def begin(self):
        self.events.append("begin")

    def end(self):
        self.events.append("end")

    def take(self):
        self.events.append("take")
        return energy_mod.EnergyReading(joules=1.5, seconds=0.5)

    def close(self):
        self.events.append("close")


class _Launches:
    """The runtime's launcher, logging each kernel a step launches."""

    def __init__(self, launcher, events):
        self.launcher, self.events = launcher, events

    def __call__(self, *args):
        self.events.append("launch")
        self.launcher(*args)

    def __getattr__(self, name):
        return getattr(self.launcher, name)


@pytest.mark.parametrize("method", ["warp-thread", "bit-parallel"])
def test_every_step_is_an_enactor_step_in_its_energy_window(karate, monkeypatch, method):
    # The engine's step loop runs every batch's steps: launches, then the read-back, inside the meter's
    # window; a batch's energy is what the meter measured over its steps.
    events = []
    monkeypatch.setattr(run_mod, "EnergyMeter", lambda kind, bus=None: _Meter(events))
    run = run_many(karate, "all", "closeness", method=method, k=20, steps=2, word_bits=32)
    rt = run.runtime
    rt.launcher = _Launches(rt.launcher, events)
    read = rt.read
    monkeypatch.setattr(rt, "read", lambda dev, host: (events.append("read"), read(dev, host)))
    windows = []
    for p in run:
        windows.append((p, events[:]))
        events.clear()
    assert events == ["close"] and len(run.result.batches) == 2
    for p, ev in windows:
        tail = ["read", "end"] + (["take"] if p.batch_done is not None else [])
        assert ev[0] == "begin" and set(ev[1:-len(tail)]) == {"launch"} and ev[-len(tail):] == tail, ev
    for b in run.result.batches:
        assert (b.energy_j, b.watts, b.energy_s, b.energy_note) == (1.5, 3.0, 0.5, "a test meter")
    assert run.result.energy_j == 3.0


class _Arguments:
    """The runtime's launcher, keeping the arguments of every kernel launch."""

    def __init__(self, launcher, seen):
        self.launcher, self.seen = launcher, seen

    def __call__(self, kernel, blocks, threads, shared, *args):
        self.seen.append(args)
        self.launcher(kernel, blocks, threads, shared, *args)

    def __getattr__(self, name):
        return getattr(self.launcher, name)


@pytest.mark.parametrize("method", ["warp-thread", "bit-parallel"])
def test_argument_groups_are_the_same_objects_in_every_batch_and_run_of_a_session(karate, method):
    # The GPU's launcher keeps a kernel's marshalled arguments while they are the same objects: a
    # namedtuple of arguments made anew for a batch is typed and marshalled again inside its timed step.
    seen = []
    with Session(karate) as s:
        for _ in range(2):
            run = run_many(karate, "all", "closeness", method=method, k=20, session=s)
            run.runtime.launcher = _Arguments(run.runtime.launcher, seen)
            run.complete()
    groups = {}
    for args in seen:
        for i, a in enumerate(args):
            if isinstance(a, tuple):
                groups.setdefault((type(a).__name__, i), set()).add(id(a))
    most = 1 if method == "warp-thread" else 2  # MS-BFS: the out-arcs' and the in-arcs' groups
    assert groups and all(len(ids) <= most for ids in groups.values()), groups


def test_runs_in_several_threads_take_turns(fig2):
    # The simulator keeps its threads' state in Numba's globals: without the engine's step lock,
    # which the multi-search's steps now take, runs in several threads failed ('Thread' object has
    # no attribute 'blockIdx').
    ref = _apsp(fig2, range(fig2.num_vertices))
    results, errors = {}, []

    def work(method):
        try:
            results[method] = run_many(fig2, "all", "distances", method=method).complete().values["distances"]
        except Exception as err:  # collected, reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(m,)) for m in ("work-efficient", "edge-parallel", "bit-parallel")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert all(np.array_equal(d, ref) for d in results.values()) and len(results) == 3


def test_kernels_take_their_declared_argument_groups():
    from kernels import multisearch as km

    cb = km.Callbacks()
    for kernel in (km.search_kernel(cb, True, True), km.edge_kernel(cb)):
        assert tuple(inspect.signature(kernel.py_func).parameters) == km.SearchArgs._fields
    bk = km.bit_kernels(64)
    for name, args in km.BIT_ARGS._asdict().items():
        assert tuple(inspect.signature(getattr(bk, name).py_func).parameters) == args._fields, name
    tree = ast.parse(inspect.getsource(km))
    wide = [(f.name, len(f.args.args)) for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef) and len(f.args.args) > 12]
    assert not wide, wide


# ------------------------------------------------------------------ the GPU's compiler

_PTX_SCRIPT = """
from types import SimpleNamespace
import numpy as np
from numba import cuda, typeof, types
from numba.cuda import dispatcher
dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=(9, 0))  # no GPU needed
from kernels import multisearch as km
from explorer.multisearch import apps

# Signatures by name from the kernels' argument declarations, as the host builds its launches.
i64, i32 = types.int64, types.int32
A = lambda t, nd=1: types.Array(t, nd, "C")
def data_type(app, rows=2, n=5):
    arrays = {}
    for a in app.arrays:
        lead = () if a.scope == "run" else (rows,)
        arrays[a.name] = np.zeros(lead + a.row_shape(n), a.dtype)
    return typeof(app.data(arrays)) if arrays else typeof(())
graph = typeof(km.SearchGraph(np.zeros(6, np.int64), np.zeros(8, np.int32), np.zeros(8, np.int32)))
state = typeof(km.BlockState(next_search=np.zeros(1, np.int64), dist=np.zeros((2, 5), np.int32),
                             order=np.zeros((2, 5), np.int32), stats=np.zeros((2, km.NUM_STATS), np.int64)))
def search_sig(dt):
    return tuple(km.SearchArgs(graph=graph, sources=A(i32), row0=i64, count=i64, state=state, T=i64, data=dt))
def ptx(kernel, sig):
    cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0))
done = 0
bc = apps.Betweenness()
for wq, tq in ((True, True), (True, False), (False, True)):
    ptx(km.search_kernel(bc.callbacks(), wq, tq), search_sig(data_type(bc))); done += 1
ptx(km.edge_kernel(bc.callbacks()), search_sig(data_type(bc))); done += 1
for app in (apps.Distances(), apps.HopCounts(8), apps.Closeness(), apps.Eccentricity(), apps.Reachability()):
    ptx(km.search_kernel(app.callbacks(), True, True), search_sig(data_type(app)))
    done += 1
ptx(km.search_kernel(km.Callbacks(), True, True), search_sig(typeof(())))
done += 1
bk, W, args = km.bit_kernels(64), A(types.uint64), km.BIT_ARGS
bit_graph = typeof(km.BitGraph(np.zeros(6, np.int64), np.zeros(8, np.int32)))
items = typeof(km.HeavyItems(np.zeros(2, np.int32), np.zeros(2, np.int64), np.zeros(2, np.int64)))
step = args.push_light(graph=bit_graph, items=items, F=W, S=W, N=W, W=i64, heavy=i64, out=A(i64))
sigs = dict(seed=args.seed(S=W, pads=W, W=i64),
            sources=args.sources(F=W, S=W, sources=A(i32), W=i64, dist=A(i32, 2), write_dist=types.boolean),
            push_light=step, push_heavy=step, pull_light=step, pull_heavy=step,
            finish=args.finish(N=W, S=W, W=i64, level=i64, out=A(i64), dist=A(i32, 2), write_dist=types.boolean,
                               out_offsets=A(i64), in_offsets=A(i64)))
for name, sig in sigs.items():
    ptx(getattr(bk, name), tuple(sig)); done += 1
print(f"compiled {done} kernels")
"""

def _nvvm() -> bool:
    try:
        from numba.cuda.cudadrv import nvvm  # noqa: F401
    except Exception:
        return False
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    return any(Path(p).exists() for p in (home, "/usr/local/cuda-13.0", "/usr/local/cuda-12.8"))


def test_new_instances_of_an_application_launch_the_same_types():
    # Numba types the callbacks' `data` (a namedtuple) by its class: one class per instance made
    # every run_many(..., "closeness") and every networkx call compile the kernels again on a GPU
    # (networkx's own suites did not finish in 500 s on an H100).
    from numba import typeof

    from explorer.multisearch import Betweenness, Closeness
    from explorer.nx_backend import centrality

    def data(app):
        return app.data({a.name: np.zeros((2,) + a.row_shape(5), a.dtype) for a in app.arrays})

    for make in (Closeness, Betweenness, centrality._raw_betweenness):
        a, b = make(), make()
        assert typeof(data(a)) == typeof(data(b)) and type(data(a)) is type(data(b)), make


@pytest.mark.slow
@pytest.mark.skipif(not _nvvm(), reason="needs the CUDA toolkit's NVVM to compile PTX")
def test_kernels_compile_for_the_gpu():
    # The simulator runs the kernels as Python: this compiles them as the GPU would (typing,
    # lowering, PTX for sm_90) in a process without the simulator, so GPU-only type errors show here.
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", _PTX_SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=600)
    if "cannot find libnvvm" in out.stderr or "NvvmSupportError" in out.stderr:
        pytest.skip("NVVM is not usable here")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "compiled 17 kernels" in out.stdout




# ------------------------------------------------------------------ method "auto"

def test_auto_method_runs_the_chosen_method_and_says_why():
    from explorer import backend

    g = graphs.generate("kronecker", scale=5, edge_factor=4, seed=2)
    run = run_many(g, "all", "closeness", method="auto")
    res = run.complete()
    c = run.method_choice
    assert res.method == c.method and res.summary()["chosen"]["method"] == c.method
    same = run_many(g, "all", "closeness", method=c.method).complete()
    assert np.array_equal(res.values["closeness"], same.values["closeness"])
    if backend.current().is_simulator:  # simulated times decide nothing: the default, untimed
        assert c.method == "warp-thread" and c.measured == {} and "simulator" in c.reason()


class _Timed:
    def __init__(self, ms):
        self.time_ms = ms


def test_auto_method_times_each_able_method_once_per_graph_and_application(monkeypatch):
    from explorer.multisearch import choose as ch

    g = graphs.generate("kronecker", scale=7, edge_factor=4, seed=5)
    app = run_mod._apps.application("betweenness")
    monkeypatch.setattr(ch, "EDGE_PARALLEL_ARCS", 0)
    speed = {"warp-thread": 3.0, "warp-based": 1.0, "work-efficient": 2.0}
    timed = []

    def run(m, sample):
        timed.append((m.value, len(sample)))
        return _Timed(speed[m.value] * len(sample))

    srcs = np.arange(g.num_vertices)
    c = ch.choose_method(g, srcs, app, simulator=False, resident=40, run=run)
    assert c.method == "warp-based" and list(c.measured) == ["warp-based", "work-efficient", "warp-thread"]
    assert c.measured["warp-based"] == pytest.approx(1.0) and c.sample == 32 == timed[0][1]
    assert "bit-parallel" in c.excluded and "every arc" in c.excluded["edge-parallel"]
    assert f"timed on 32 of the {g.num_vertices} sources" in c.reason()
    again = ch.choose_method(g, srcs, app, simulator=False, resident=40, run=run)
    assert len(timed) == 3 and again.method == c.method and again.sample == c.sample and "earlier run" in again.reason()


def test_auto_method_times_again_on_twice_the_sources_while_cheap_and_judges_at_the_runs_size(monkeypatch):
    """A method whose time hardly grows with its sources (bit-parallel on a small graph) looks slow
    per search on a quarter of them: cheap trials go on to the whole list, where it wins."""
    from explorer.multisearch import choose as ch

    g = graphs.generate("kronecker", scale=7, edge_factor=4, seed=7)
    app = run_mod._apps.application("closeness")
    monkeypatch.setattr(ch, "EDGE_PARALLEL_ARCS", 0)
    cost = {"warp-thread": lambda k: 3.0 * k, "warp-based": lambda k: 1.0 * k, "work-efficient": lambda k: 2.0 * k,
            "bit-parallel": lambda k: 80.0}  # ms: per search, or flat
    timed = []

    def run(m, sample):
        timed.append((m.value, len(sample)))
        return _Timed(cost[m.value](len(sample)))

    srcs = np.arange(128)
    monkeypatch.setattr(ch, "GROW_MS", 2 * sum(f(32) for f in cost.values()))  # one round more, not two
    c = ch.choose_method(g, srcs, app, simulator=False, resident=1000, run=run)
    assert sorted({k for _, k in timed}) == [32, 64] and c.sample == 64 and c.method == "warp-based"
    assert c.measured["bit-parallel"] == pytest.approx(1.25) and "timed on 64 of the 128 sources" in c.reason()
    ch._CHOICES.pop(g, None)
    monkeypatch.setattr(ch, "GROW_MS", 1e9)  # every round cheap: up to all 128 sources, and no further
    timed.clear()
    c = ch.choose_method(g, srcs, app, simulator=False, resident=1000, run=run)
    assert sorted({k for _, k in timed}) == [32, 64, 128] and c.sample == 128
    assert c.method == "bit-parallel" and c.measured["bit-parallel"] == pytest.approx(0.625)
    assert len(timed) == 3 * len(c.measured)
    ch._CHOICES.pop(g, None)
    monkeypatch.setattr(ch, "GROW_MS", 0.0)  # no round is cheap: the quarter's per-search times decide
    c = ch.choose_method(g, srcs, app, simulator=False, resident=1000, run=run)
    assert c.sample == 32 and c.method == "warp-based"
    assert list(ch.spread(srcs, 200)) == list(srcs) and len(ch.spread(srcs, 64)) == 64


def test_auto_methods_trials_run_each_method_for_real_and_the_choice_is_exact(monkeypatch):
    # The GPU's path under the simulator: a sample of 2 sources allowed, the trials not skipped.
    from explorer import backend
    from explorer.multisearch import choose as ch

    real = ch.choose_method
    monkeypatch.setattr(ch, "FEWEST", 1)
    monkeypatch.setattr(ch, "GROW_MS", 0.0)  # the first round decides: its sample is known
    monkeypatch.setattr(run_mod, "choose_method", lambda *a, simulator, **kw: real(*a, simulator=False, **kw))
    g = graphs.generate("kronecker", scale=4, edge_factor=4, seed=11)
    run = run_many(g, "all", "closeness", method="auto")
    res = run.complete()
    c = run.method_choice
    able = {m.value for m in Method} - set(c.excluded)
    resident = 2 if backend.current().is_simulator else g.num_vertices  # the simulator runs 2 at once
    assert c.sample == min(resident, g.num_vertices // 4) and set(c.measured) == able and len(able) >= 3
    assert all(ms > 0 for ms in c.measured.values()) and c.method == min(c.measured, key=c.measured.get)
    assert res.method == c.method and f"timed on {c.sample} of the {g.num_vertices}" in c.reason()
    ref = run_many(g, "all", "closeness", method="warp-thread").complete()
    assert np.array_equal(res.values["closeness"], ref.values["closeness"])


def test_auto_method_with_too_few_sources_takes_the_default_untimed():
    from explorer.multisearch import choose as ch

    g = graphs.generate("kronecker", scale=5, edge_factor=4, seed=6)
    app = run_mod._apps.application("closeness")
    c = ch.choose_method(g, np.arange(100), app, simulator=False, resident=1000,
                         run=lambda m, s: pytest.fail("timed with too few sources"))
    assert c.method == "warp-thread" and c.measured == {} and "fewer than 128 sources" in c.reason()


@pytest.mark.parametrize("kwargs, message", [({"T": 8}, "warp-thread method's"),
                                             ({"client": object()}, "this process's GPU")])
def test_auto_method_refuses_what_it_cannot_honour(kwargs, message):
    g = graphs.generate("kronecker", scale=4, edge_factor=4, seed=1)
    with pytest.raises(ValueError, match=message):
        run_many(g, "all", "closeness", method="auto", **kwargs)
