"""The networkx backend: every function against networkx itself on small graphs
(directed and undirected, string and tuple labels, a multigraph, self loops, depth limits, the
exceptions), through single-source searches and through the all-sources matrix; can_run and
should_run; the backend graph; the entry points; and networkx's own test suite with the backend
selected, in a subprocess, with its dispatch summary."""
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import entry_points
from pathlib import Path

import networkx as nx
import pytest

from explorer import backend
from explorer.knobs import KnobError
from explorer.nx_backend import searches
from explorer.nx_backend.graph import BFS4KGraph
from explorer.nx_backend.info import FUNCTIONS, get_info
from explorer.nx_backend.interface import BackendInterface, Declined, backend_interface

ROOT = Path(__file__).resolve().parent.parent
BK = {"backend": "bfs4k"}

#: networkx's suites the proof runs, in two parts (pytest's two workers share them): per part the
#: functions it must have dispatched to bfs4k and at least how many tests it runs and how many of
#: them dispatch (test_distance_measures is networkx.algorithms.distance_measures').
NX_PARTS = {
    "traversal-paths-components-distances": (
        ["networkx.algorithms.tests.test_distance_measures", "networkx.algorithms.traversal",
         "networkx.algorithms.shortest_paths.tests.test_unweighted", "networkx.algorithms.components"],
        ("eccentricity", "diameter", "bfs_edges", "bfs_layers", "bfs_labeled_edges",
         "single_source_shortest_path_length", "shortest_path_length", "connected_components", "is_connected"),
        200, 120),
    "centrality": (["networkx.algorithms.centrality"], ("closeness_centrality", "betweenness_centrality"),
                   250, 100),
    # the weighted functions (explorer.sssp): about 2 minutes of CPU under the simulator
    "weighted-paths": (
        ["networkx.algorithms.shortest_paths.tests.test_weighted", "networkx.algorithms.shortest_paths.tests.test_dense",
         "networkx.algorithms.shortest_paths.tests.test_dense_numpy",
         "networkx.algorithms.shortest_paths.tests.test_generic"],
        ("single_source_dijkstra_path_length", "dijkstra_path_length", "bellman_ford_path_length",
         "single_source_bellman_ford_path_length", "all_pairs_dijkstra_path_length", "floyd_warshall",
         "floyd_warshall_numpy", "negative_edge_cycle", "shortest_path_length"),
        90, 35),
}
NX_TIMEOUT_S = 1500

pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs are saved:UserWarning")


def undirected(name=str):
    """String labels, neighbours added out of order, a self loop, a second component, an isolate."""
    G = nx.Graph()
    G.add_edges_from((name(u), name(v)) for u, v in [("a", "d"), ("a", "b"), ("b", "c"), ("d", "e"), ("c", "e"),
                                                     ("e", "e"), ("b", "e"), ("e", "f"), ("x", "y")])
    G.add_node(name("iso"))
    return G


def directed():
    """Tuple labels on a random digraph with a cycle through most of it."""
    D = nx.gnp_random_graph(14, 0.18, seed=5, directed=True)
    D.add_edges_from([(13, 0), (5, 13)])
    return nx.relabel_nodes(D, {v: (v % 3, f"n{v}") for v in D})


def multigraph():
    M = nx.MultiDiGraph()
    M.add_edges_from([(3, "p"), (3, "p"), ("p", 1), (1, 3), (1, "q"), ("q", "q"), ("q", 2), (2, 1)])
    return M


GRAPHS = {"undirected": (undirected, ["a", "x"]), "directed": (directed, [(0, "n0"), (1, "n13")]),
          "multigraph": (multigraph, [3, "q"])}


@pytest.fixture(params=["run_bfs", "matrix"])
def search(request):
    """run_bfs: every distance from a single-source search (all-sources functions run their own
    multi-search applications); matrix: the test first computes the graph's distance matrices (one
    multi-search each way) with prime(), and every single-source call reads their rows."""
    cfg = nx.config.backends.bfs4k
    old = cfg.matrix_work
    cfg.matrix_work = 0 if request.param == "run_bfs" else 8192
    searches.STORE.clear()
    before = dict(searches.RUNS)
    yield request.param
    cfg.matrix_work = old
    ran = {k: searches.RUNS[k] - before[k] for k in before}
    if request.param == "run_bfs":
        assert ran["run_bfs"] > 0, ran
    else:
        assert ran["run_many"] > 0 and ran["run_bfs"] == 0, ran


def prime(G, search):
    """In the matrix mode, the all-sources functions compute and keep the distance matrices (out-arcs
    and, for a digraph, in-arcs) that the single-source calls then read."""
    if search == "matrix":
        dict(nx.all_pairs_shortest_path_length(G, **BK))
        nx.closeness_centrality(G, **BK)


def same(f, *args, **kw):
    """f's result with the backend equals networkx's (lists keep their order)."""
    got = f(*args, **kw, **BK)
    want = f(*args, **kw)
    if hasattr(want, "__next__"):
        got, want = list(got), list(want)
    assert got == want, (f.__name__, args, kw)
    return got


def same_error(f, *args, **kw):
    """f raises the same exception, with the same message, with the backend and without."""
    with pytest.raises(Exception) as want:
        r = f(*args, **kw)
        list(r) if hasattr(r, "__next__") else r
    with pytest.raises(want.type) as got:
        r = f(*args, **kw, **BK)
        list(r) if hasattr(r, "__next__") else r
    assert str(got.value) == str(want.value), (f.__name__, args)


@pytest.mark.parametrize("name", GRAPHS)
def test_traversals_in_networkx_order(name, search):
    make, sources = GRAPHS[name]
    G = make()
    prime(G, search)
    for s in sources:
        for limit in (None, 0, 1, 2, -1, 2.5):
            same(nx.bfs_edges, G, s, depth_limit=limit)
            same(nx.bfs_edges, G, s, reverse=True, depth_limit=limit)
            same(nx.generic_bfs_edges, G, s, depth_limit=limit)
            same(nx.bfs_predecessors, G, s, depth_limit=limit)
            same(nx.bfs_successors, G, s, depth_limit=limit)
            T, T0 = nx.bfs_tree(G, s, depth_limit=limit, **BK), nx.bfs_tree(G, s, depth_limit=limit)
            assert list(T.edges) == list(T0.edges) and list(T) == list(T0)
        same(nx.bfs_layers, G, s)
        same(nx.bfs_labeled_edges, G, s)
        assert same(nx.descendants, G, s) == nx.descendants(G, s)
        same(nx.ancestors, G, s)
        for d in (-1, 0, 1, 2, 3, 9):
            same(nx.descendants_at_distance, G, s, d)
    same(nx.bfs_layers, G, sources)
    same(nx.bfs_layers, G, [*sources, sources[0]])
    same(nx.bfs_labeled_edges, G, sources)
    same(nx.bfs_labeled_edges, G, sources[::-1])


@pytest.mark.parametrize("name", GRAPHS)
def test_lengths(name, search):
    make, sources = GRAPHS[name]
    G = make()
    prime(G, search)
    for s in sources:
        for cutoff in (None, 1, 2.5, 0, -1):
            assert list(same(nx.single_source_shortest_path_length, G, s, cutoff).items()) == \
                list(nx.single_source_shortest_path_length(G, s, cutoff).items())
            assert list(same(nx.single_target_shortest_path_length, G, s, cutoff).items()) == \
                list(nx.single_target_shortest_path_length(G, s, cutoff).items())
        assert list(same(nx.shortest_path_length, G, s).items()) == list(nx.shortest_path_length(G, s).items())
        assert list(same(nx.shortest_path_length, G, target=s).items()) == \
            list(nx.shortest_path_length(G, target=s).items())
        for t in list(G)[:6]:
            same(nx.has_path, G, s, t)
            if nx.has_path(G, s, t):
                same(nx.shortest_path_length, G, s, t)
            else:
                same_error(nx.shortest_path_length, G, s, t)
    for cutoff in (None, 1, 2.5):
        got = dict(nx.all_pairs_shortest_path_length(G, cutoff, **BK))
        assert list(got) == list(G)
        assert got == dict(nx.all_pairs_shortest_path_length(G, cutoff))
        # the one documented difference: within a level, the graph's node order
        rank = {v: i for i, v in enumerate(G)}
        for row in got.values():
            keys = list(row)
            assert keys == sorted(keys, key=lambda v: (row[v], rank[v]))
    assert dict(nx.shortest_path_length(G, **BK)) == dict(nx.shortest_path_length(G))


def close(a, b):
    assert a.keys() == b.keys() and list(a) == list(b)
    for k in a:
        assert a[k] == pytest.approx(b[k], rel=1e-12, abs=1e-12, nan_ok=True), k


@pytest.mark.parametrize("name", GRAPHS)
def test_centrality(name, search):
    G = GRAPHS[name][0]()
    prime(G, search)
    for wf in (True, False):
        close(nx.closeness_centrality(G, wf_improved=wf, **BK), nx.closeness_centrality(G, wf_improved=wf))
    for u in GRAPHS[name][1]:
        assert nx.closeness_centrality(G, u, **BK) == nx.closeness_centrality(G, u)
    for kw in ({}, {"normalized": False}, {"endpoints": True}, {"endpoints": True, "normalized": False},
               {"k": 4, "seed": 3}, {"k": 4, "seed": 3, "endpoints": True}, {"k": 1, "seed": 2},
               {"k": 5, "seed": 1, "normalized": False}, {"k": len(G), "seed": 1}):
        close(nx.betweenness_centrality(G, **kw, **BK), nx.betweenness_centrality(G, **kw))
    big = max(nx.strongly_connected_components(G) if G.is_directed() else nx.connected_components(G), key=len)
    H = nx.MultiDiGraph(G.subgraph(big)) if G.is_multigraph() else G.subgraph(big).copy()
    assert same(nx.eccentricity, H) == nx.eccentricity(H)
    v = next(iter(H))
    same(nx.eccentricity, H, v)
    same(nx.eccentricity, H, [v, v, "not a node"])
    same(nx.eccentricity, H, [])
    same(nx.diameter, H)
    lonely = G.copy()
    lonely.add_node("lonely")  # not connected: networkx's infinite-path-length error
    same_error(nx.eccentricity, lonely)
    same_error(nx.diameter, lonely)
    if G.is_directed():
        same(nx.diameter, H, usebounds=True)  # networkx ignores usebounds on digraphs


def test_components(search):
    G = undirected()
    G.add_nodes_from(["iso2", 7])
    prime(G, search)
    assert same(nx.connected_components, G) == list(nx.connected_components(G))
    for v in ("a", "x", "iso", 7):
        same(nx.node_connected_component, G, v)
    same(nx.is_connected, G)
    H = nx.path_graph(4)
    prime(H, search)
    same(nx.is_connected, H)


def test_one_node_with_a_self_loop():
    G = nx.Graph([(0, 0)])
    for f in (nx.is_connected, nx.connected_components, nx.descendants, nx.bfs_labeled_edges):
        same(f, G, *([0] if f in (nx.descendants, nx.bfs_labeled_edges) else []))
    same(nx.closeness_centrality, G)
    same(nx.eccentricity, G)
    same(nx.betweenness_centrality, G)


def test_integer_labels_with_gaps_are_nodes_never_vertices(search):
    # Ids as a SNAP file has them (Wiki-Vote's start at 3, with gaps): node 2 is vertex 1 and
    # vertex 2 is node 7, so a label taken for a vertex would search from the wrong node.
    G = nx.Graph([(30, 2), (2, 7), (7, 100), (100, 41), (5, 6), (6, 3)])
    assert BFS4KGraph.from_networkx(G).id_of(2) == 1
    prime(G, search)
    for s in (2, 7, 3):
        same(nx.bfs_layers, G, s)
        same(nx.single_source_shortest_path_length, G, s)
    same(nx.bfs_layers, G, [2, 5])  # several sources: one search from a super-source
    same(nx.shortest_path_length, G, 2, 41)
    same(nx.closeness_centrality, G)
    same(nx.betweenness_centrality, G, k=3, seed=1)  # sampled sources: run_many from vertices


def test_exceptions_are_networkx_own():
    G, D = undirected(), directed()
    for f, args in [(nx.bfs_edges, (G, "zz")), (nx.bfs_edges, (D, "zz")), (nx.bfs_edges, (D, "zz", True)),
                    (nx.bfs_tree, (G, "zz")), (nx.generic_bfs_edges, (G, "zz")), (nx.descendants, (D, "zz")),
                    (nx.ancestors, (D, "zz")), (nx.bfs_layers, (G, "zz")), (nx.bfs_layers, (G, ["a", "zz"])),
                    (nx.bfs_labeled_edges, (G, ["a", "zz", "b"])), (nx.descendants_at_distance, (G, "zz", 1)),
                    (nx.single_source_shortest_path_length, (G, "zz")),
                    (nx.single_target_shortest_path_length, (D, "zz")), (nx.shortest_path_length, (G, "zz")),
                    (nx.shortest_path_length, (G, None, "zz")), (nx.shortest_path_length, (G, "zz", "a")),
                    (nx.shortest_path_length, (G, "a", "zz")), (nx.shortest_path_length, (G, "a", "x")),
                    (nx.has_path, (G, "zz", "a")), (nx.has_path, (G, "a", "zz")),
                    (nx.closeness_centrality, (D, "zz")), (nx.node_connected_component, (G, "zz")),
                    (nx.is_connected, (nx.Graph(),)), (nx.eccentricity, (G,)), (nx.eccentricity, (D,)),
                    (nx.eccentricity, (G, 3.5)), (nx.eccentricity, (G, [["unhashable"]])), (nx.diameter, (nx.Graph(),)),
                    (nx.betweenness_centrality, (G, len(G) + 1, True, None, False, 1)),
                    (nx.shortest_path_length, (G, "a", "b", None, "bfs"))]:
        same_error(f, *args)
    # an unhashable source: networkx's TypeError, wherever networkx raises one
    for f in (nx.descendants, nx.ancestors, nx.bfs_edges, nx.generic_bfs_edges, nx.bfs_tree, nx.bfs_successors,
              nx.bfs_predecessors, nx.descendants_at_distance, nx.node_connected_component,
              nx.single_source_shortest_path_length, nx.shortest_path_length, nx.has_path):
        for graph in (G, D):
            args = (graph, ["a"], 1) if f in (nx.descendants_at_distance, nx.has_path) else (graph, ["a"])
            if f is nx.node_connected_component and graph is D:
                continue  # undirected only
            same_error(f, *args)
    # generators raise at the first next(), as networkx's
    nx.bfs_layers(G, "zz", **BK)
    nx.bfs_edges(G, "zz", **BK)
    with pytest.raises(nx.NetworkXNotImplemented):
        nx.connected_components(D, **BK)


def test_labeled_edges_stop_at_a_missing_source():
    G = undirected()
    got = []
    with pytest.raises(KeyError):
        for e in nx.bfs_labeled_edges(G, ["a", "zz", "x"], **BK):
            got.append(e)
    want = []
    with pytest.raises(KeyError):
        for e in nx.bfs_labeled_edges(G, ["a", "zz", "x"]):
            want.append(e)
    assert got == want and got


def test_extra_parameters_and_their_errors():
    G = nx.path_graph(6)
    before = searches.RUNS["run_bfs"]
    assert nx.descendants(G, 0, technique="topdown-queue", **BK) == {1, 2, 3, 4, 5}
    assert nx.descendants(G, 0, technique="topdown-queue", **BK) == {1, 2, 3, 4, 5}
    assert searches.RUNS["run_bfs"] == before + 2  # a named technique runs, stored rows or not
    with pytest.raises(ValueError, match="nope"):
        nx.descendants(G, 0, technique="nope", **BK)
    with pytest.raises(KnobError, match="K1"):
        nx.descendants(G, 0, technique="bfs4k", knobs={"K1": 10**9}, **BK)
    with pytest.raises(ValueError, match="multi-search method|method"):
        nx.closeness_centrality(G, multisearch="nope", **BK)


@pytest.fixture
def bfs4k_config():
    """nx.config.backends.bfs4k, restored after the test."""
    cfg = nx.config.backends.bfs4k
    old = dict(cfg)
    yield cfg
    for k, v in old.items():
        setattr(cfg, k, v)


def test_auto_is_the_default_and_gives_networkx_answers():
    assert get_info()["default_config"]["technique"] == "auto" == nx.config.backends.bfs4k.technique
    # auto applies the simulator's knobs itself: none are merged into its (they would raise)
    opts = searches.Options.of()
    assert (opts.technique, opts.knobs, opts.named) == ("auto", {}, False)
    G, D = undirected(), directed()
    searches.STORE.clear()
    before = dict(searches.RUNS)
    same(nx.bfs_edges, G, "a")
    same(nx.bfs_layers, G, "a")
    same(nx.bfs_layers, G, ["a", "x"])  # one search from a super-source
    same(nx.single_source_shortest_path_length, G, "a")
    same(nx.shortest_path_length, G, "a", "e")
    assert same(nx.connected_components, G) == list(nx.connected_components(G))
    same(nx.is_connected, G)
    same(nx.descendants, D, (0, "n0"))
    same(nx.ancestors, D, (0, "n0"))  # the in-arcs
    assert searches.RUNS["run_bfs"] > before["run_bfs"] and searches.RUNS["run_many"] == before["run_many"]
    last = searches.LAST
    assert last["technique"] != "auto" and last["reason"].startswith("auto: "), last
    assert sum(searches.CHOSEN.values()) >= searches.RUNS["run_bfs"] - before["run_bfs"]
    # technique="auto" named: a search, stored rows or not
    runs = searches.RUNS["run_bfs"]
    assert nx.descendants(G, "a", technique="auto", **BK) == nx.descendants(G, "a")
    assert searches.RUNS["run_bfs"] == runs + 1 and searches.LAST["reason"].startswith("auto: ")


def test_knobs_with_auto_are_an_error_that_names_the_option(bfs4k_config):
    G = nx.path_graph(6)
    with pytest.raises(KnobError, match=r"technique 'auto' \(nx.config.backends.bfs4k.technique\) chooses its "
                                        r"own knobs, but knobs= gives \{'K1': 8\}"):
        nx.descendants(G, 0, knobs={"K1": 8}, **BK)
    with pytest.raises(KnobError, match="technique='auto' chooses its own knobs, but knobs= gives"):
        list(nx.bfs_layers(G, 0, technique="auto", knobs={"K1": 8}, **BK))
    bfs4k_config.knobs = {"K1": 8}
    with pytest.raises(KnobError, match=r"but nx.config.backends.bfs4k.knobs gives \{'K1': 8\}: name a technique"):
        nx.descendants(G, 0, **BK)
    with pytest.raises(KnobError, match="nx.config.backends.bfs4k.knobs"):
        nx.closeness_centrality(G, **BK)  # the config is checked on every call
    # a named technique takes the config's knobs
    assert nx.descendants(G, 0, technique="bfs4k", **BK) == {1, 2, 3, 4, 5}
    assert searches.LAST["technique"] == "bfs4k" and searches.LAST["knobs"]["K1"] == 8
    assert searches.LAST["reason"] is None


def test_a_named_technique_runs_with_its_knobs(bfs4k_config):
    G = undirected()
    searches.STORE.clear()
    assert list(nx.bfs_layers(G, "a", technique="bfs4k", knobs={"K1": 8}, **BK)) == list(nx.bfs_layers(G, "a"))
    assert searches.LAST["technique"] == "bfs4k" and searches.LAST["knobs"]["K1"] == 8
    bfs4k_config.technique, bfs4k_config.knobs = "bfs4k", {"K1": 4}
    searches.STORE.clear()
    assert list(nx.bfs_edges(G, "a", **BK)) == list(nx.bfs_edges(G, "a"))
    assert searches.LAST["technique"] == "bfs4k" and searches.LAST["knobs"]["K1"] == 4
    with pytest.raises(KnobError, match="K1"):
        nx.descendants(G, "a", knobs={"K1": 10**9}, **BK)


def test_can_run_declines_what_the_engine_cannot_honour():
    G, D = undirected(), directed()
    cases = [("bfs_edges", (G, "a"), {"sort_neighbors": sorted}, "sort_neighbors"),
             ("bfs_tree", (G, "a", False, None, sorted), {}, "sort_neighbors"),
             ("generic_bfs_edges", (G, "a"), {"neighbors": G.neighbors}, "neighbors"),
             ("shortest_path_length", (G, "a"), {"weight": lambda u, v, d: 1}, "a weight function"),
             ("betweenness_centrality", (G,), {"weight": "w"}, "weight"),
             ("closeness_centrality", (G,), {"distance": "w"}, "distance"),
             ("eccentricity", (G,), {"sp": {}}, "sp gives"),
             ("diameter", (G,), {"e": {}}, "e gives"),
             ("diameter", (G,), {"usebounds": True}, "usebounds")]
    for name, args, kw, why in cases:
        with pytest.raises(Declined, match=f"bfs4k cannot run {name}: .*{why}"):
            backend_interface.can_run(name, args, kw)
        with pytest.raises(NotImplementedError, match=f"bfs4k cannot run {name}: .*{why}"):  # the reason, to the user
            r = getattr(nx, name)(*args, **kw, **BK)
            list(r) if hasattr(r, "__next__") else r
    assert backend_interface.can_run("diameter", (D,), {"usebounds": True}) is True
    assert backend_interface.can_run("bfs_layers", (G, "a"), {}) is True
    if backend.current().is_simulator:
        assert "simulator" in searches.size_problem(300_000)
        big = nx.path_graph(nx.config.backends.bfs4k.simulator_max_arcs)
        with pytest.raises(NotImplementedError, match=r"under the CUDA simulator .* at most [\d,]+ arcs"):
            nx.descendants(big, 0, **BK)
        with nx.config(backend_priority=["bfs4k"]):  # declined where networkx chose the backend: it runs the call
            assert nx.descendants(big, 0) == set(range(1, len(big)))
    with nx.config(backend_priority=["bfs4k"]):  # networkx's priority: declined calls run on networkx
        assert list(nx.bfs_edges(G, "a", sort_neighbors=sorted)) == \
            list(nx.bfs_edges(G, "a", sort_neighbors=sorted, backend="networkx"))


def test_should_run_keeps_small_work_on_networkx(monkeypatch):
    G = nx.path_graph(50)
    if backend.current().is_simulator:
        assert "simulator" in backend_interface.should_run("bfs_layers", (G, 0), {})
    monkeypatch.setattr(searches, "on_simulator", lambda: False)
    assert "min_work" in backend_interface.should_run("bfs_layers", (G, 0), {})
    # all-sources functions: sources x arcs (50 x 98 < 50,000; 600 x 1,198 above it)
    assert "min_work" in backend_interface.should_run("betweenness_centrality", (G,), {})
    assert backend_interface.should_run("betweenness_centrality", (nx.path_graph(600),), {}) is True
    assert "min_work" in backend_interface.should_run("betweenness_centrality", (nx.path_graph(600),), {"k": 4})


def test_backend_graph():
    M = multigraph()
    bg = backend_interface.convert_from_nx(M)
    assert isinstance(bg, BFS4KGraph) and bg.__networkx_backend__ == "bfs4k"
    assert list(bg) == list(M) and len(bg) == 5 and bg.is_directed() and bg.is_multigraph()
    assert "p" in bg and 3 in bg and [1] not in bg and "zz" not in bg
    assert bg.csr.num_arcs == 7  # parallel edges are one arc; the self loop is kept
    back = backend_interface.convert_to_nx(bg)
    assert type(back) is nx.MultiDiGraph and list(back) == list(M) and set(back.edges()) == set(M.edges())
    G = undirected()
    bu = BFS4KGraph.from_networkx(G)
    assert set(map(frozenset, bu.to_networkx().edges())) == set(map(frozenset, G.edges()))
    # the CSR rows are networkx's neighbour order
    assert bu.names(bu.csr.neighbors(bu.id_of("a"))) == list(G["a"])
    # the fingerprint is the structure: same for a relabelled copy, different reversed or reordered
    assert BFS4KGraph.from_networkx(undirected(str.upper)).fingerprint == bu.fingerprint
    assert BFS4KGraph.from_networkx(G.to_directed()).fingerprint != bu.fingerprint
    H = nx.Graph()
    H.add_nodes_from(G)
    H.add_edges_from(reversed(list(G.edges())))
    assert BFS4KGraph.from_networkx(H).fingerprint != bu.fingerprint
    dense = BFS4KGraph.from_networkx(nx.path_graph(3))
    assert 1.0 in dense and True in dense and 3 not in dense and dense.id_of(2.0) == 2
    assert list(dense.nbunch_iter([0, 7, 2])) == [0, 2]
    for bad in (3.5, [[0]]):
        with pytest.raises(nx.NetworkXError) as want:
            list(nx.path_graph(3).nbunch_iter(bad))
        with pytest.raises(nx.NetworkXError, match=re.escape(str(want.value))):
            list(dense.nbunch_iter(bad))
    assert backend_interface.convert_to_nx([1, 2]) == [1, 2]


def test_backend_graph_passed_to_networkx():
    bg = backend_interface.convert_from_nx(undirected())
    assert list(nx.bfs_layers(bg, "a")) == list(nx.bfs_layers(undirected(), "a"))


def test_info_imports_nothing_and_lists_the_interface():
    code = ("import sys; from explorer.nx_backend.info import get_info; i = get_info(); "
            "assert not {'networkx', 'numba', 'numpy'} & set(sys.modules), sorted(sys.modules); print(len(i['functions']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    info = get_info()
    assert info["backend_name"] == "bfs4k" and set(info["functions"]) == set(FUNCTIONS)
    public = {k for k in vars(BackendInterface) if not k.startswith("_")}
    assert set(FUNCTIONS) <= public
    for name in FUNCTIONS:
        assert name in nx.utils.backends._registered_algorithms, name  # networkx's own name
        assert "bfs4k" in getattr(nx, name).backends
    params = info["functions"]["bfs_edges"]["additional_parameters"]
    assert any(p.startswith("technique") for p in params) and any(p.startswith("knobs") for p in params)
    names = {ep.name: ep.value for ep in entry_points(group="networkx.backends")}
    assert names.get("bfs4k") == "explorer.nx_backend.interface:backend_interface"
    names = {ep.name: ep.value for ep in entry_points(group="networkx.backend_info")}
    assert names.get("bfs4k") == "explorer.nx_backend.info:get_info"


def test_without_gpu_or_simulator_it_declines(tmp_path):
    code = """
import os
import re
os.environ.pop("NUMBA_ENABLE_CUDASIM", None)
from explorer import backend
backend.gpu_present = lambda: (False, "no GPU in this test")
import networkx as nx
from explorer.nx_backend.interface import backend_interface
G = nx.path_graph(4)
try:
    list(nx.bfs_layers(G, 0, backend="bfs4k"))
    raise SystemExit("ran without GPU or simulator")
except NotImplementedError as err:  # the reason and the way out reach the user
    why = str(err)
    assert "No CUDA GPU" in why and "select('simulator')" in why, why
with nx.config(backend_priority=["bfs4k"], fallback_to_nx=True):
    assert list(nx.bfs_layers(G, 0)) == [[0], [1], [2], [3]]
print("declined:", why)
"""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "declined" in out.stdout


def test_summaries_of_processes_side_by_side_merge_into_one(tmp_path):
    # networkx's suites split over processes (BFS4K_NX_PROCESSES): tests and calls add up, reasons
    # merge, and the time is the slowest process's.
    from explorer.nx_backend import testing

    def part(test, outcome, calls, seconds):
        return {"backend": "bfs4k", "kernels_ran_on": "here", "config": {}, "seconds": seconds,
                "tests": {"total": 1, outcome: 1}, "tests_dispatching_to_bfs4k": 1,
                "tests_whose_bfs4k_functions_all_fell_back": 0, "tests_calling_no_bfs4k_function": 0,
                "calls_dispatched": {"bfs_edges": calls}, "calls_fell_back_other_functions": 0,
                "calls_fell_back": {"bfs_edges": {"calls": 1, "why": {"sort_neighbors": 1}}},
                "engine_runs": {"run_bfs": calls}, "result_store": {"hits": 1, "misses": 2, "bytes": 3},
                "failed": [test] if outcome == "failed" else [],
                "per_test": {test: {"outcome": outcome, "dispatched": {"bfs_edges": calls}, "fell_back": {}}}}

    a = {**part("a", "passed", 2, 5.0), "auto_chose": {"bfs4k, one block of 1024": 2}}
    s = testing.merge([a, part("b", "failed", 3, 7.0)])
    assert s["tests"] == {"total": 2, "passed": 1, "failed": 1} and s["failed"] == ["b"]
    assert s["auto_chose"] == {"bfs4k, one block of 1024": 2}
    assert s["calls_dispatched"] == {"bfs_edges": 5} and s["engine_runs"] == {"run_bfs": 5}
    assert s["calls_fell_back"] == {"bfs_edges": {"calls": 2, "why": {"sort_neighbors": 2}}}
    assert s["seconds"] == 7.0 and s["result_store"] == {"hits": 2, "misses": 4, "bytes": 6}
    testing.write(s, tmp_path / "merged.json")
    assert "2 processes side by side" in (tmp_path / "merged.md").read_text()


@pytest.mark.parametrize("part", NX_PARTS)
def test_networkx_own_tests_pass_with_the_backend(tmp_path, part):
    """networkx's own tests, every call of a function bfs4k has dispatched to it (networkx's test
    mode ignores should_run), zero failures; the summary says which dispatched and which fell back.
    In parts, so that pytest's two workers can share them. Under the simulator (2 cores) they took
    about 120, 60 and (the weighted functions) 80 s, with 100 cases of each parametrized test and 5
    of the 500 random-graph cases of test_use_bounds_on_off_consistency (a dozen all-pairs searches
    each), evenly spread, and without TestBarycenter::test_trees (50 all-pairs searches, 50 s); all
    of them on a GPU. Set BFS4K_NX_SUMMARY_DIR to keep the summaries."""
    from explorer.nx_backend import testing

    suites, functions, least_tests, least_dispatching = NX_PARTS[part]
    env = dict(os.environ, NETWORKX_TEST_BACKEND="bfs4k", NETWORKX_FALLBACK_TO_NX="True")
    args = []
    if backend.current().is_simulator:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
        # each case of test_use_bounds_on_off_consistency runs a dozen all-pairs searches
        args += ["--bfs4k-max-cases=100", "--bfs4k-max-cases=test_use_bounds_on_off_consistency=5",
                 "--bfs4k-leave-out=TestBarycenter::test_trees"]
    # BFS4K_NX_PROCESSES > 1 splits a part's suites over that many processes side by side (a GPU
    # host's cores compile each process's kernels at once); CI's two cores keep one per part.
    processes = max(1, min(len(suites), int(os.environ.get("BFS4K_NX_PROCESSES", "1"))))
    paths = [tmp_path / f"part{i}.json" for i in range(processes)]
    with ThreadPoolExecutor(processes) as pool:
        runs = list(pool.map(lambda i: testing.run_suites(suites[i::processes], paths[i], env, NX_TIMEOUT_S,
                                                          tmp_path, args), range(processes)))
    tail = "".join(log for _, log in runs)
    assert all(code == 0 for code, _ in runs), tail
    s = testing.merge([json.loads(p.read_text()) for p in paths])
    name = f"nx-backend-tests-{part}"
    testing.write(s, tmp_path / f"{name}.json")
    assert s["tests"].get("failed", 0) == 0 and not s["failed"], tail
    assert s["tests"]["total"] > least_tests and s["tests_dispatching_to_bfs4k"] > least_dispatching, s["tests"]
    ran = s["calls_dispatched"]
    for f in functions:
        assert ran.get(f, 0) > 0, f
    assert s["engine_runs"]["run_many"] > 0
    out_dir = os.environ.get("BFS4K_NX_SUMMARY_DIR")
    if out_dir:  # keep the summaries (CI artifacts, the GPU run)
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        for f in tmp_path.glob(f"{name}.*"):
            (Path(out_dir) / f.name).write_text(f.read_text())


def test_max_cases_keeps_an_even_spread_of_every_parametrized_test_and_of_a_named_one(tmp_path):
    from explorer.nx_backend import testing

    (tmp_path / "many_cases.py").write_text(
        "import pytest\n"
        "@pytest.mark.parametrize('i', range(10))\ndef test_many(i): pass\n"
        "@pytest.mark.parametrize('i', range(10))\ndef test_few(i): pass\n"
        "def test_one(): pass\n"
        "def test_two(): pass\n"
        "class TestLong:\n    def test_two(self): pass\n    def test_three(self): pass\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    summary = tmp_path / "s.json"
    code, log = testing.run_suites(["many_cases"], summary, env, 120, tmp_path,
                                   ["--bfs4k-max-cases=4", "--bfs4k-max-cases=test_few=2",
                                    "--bfs4k-leave-out=TestLong::test_two", "--bfs4k-leave-out=test_three"])
    assert code == 0, log
    s = json.loads(summary.read_text())
    assert s["tests"]["total"] == 4 + 2 + 2  # test_one and the module's test_two
    assert s["left_out"] == ["many_cases.py::TestLong::test_two", "many_cases.py::TestLong::test_three"]
    assert "Tests left out (--bfs4k-leave-out):" in summary.with_suffix(".md").read_text()
    assert sorted(s["sampled"].values()) == ["2 of 10 cases", "4 of 10 cases"]
    assert {t for t in s["per_test"] if "test_few" in t} == {"many_cases.py::test_few[0]", "many_cases.py::test_few[5]"}
    code, log = testing.run_suites(["many_cases"], summary, env, 120, tmp_path, ["--bfs4k-max-cases=test_few=two"])
    assert code != 0 and "--bfs4k-max-cases=test_few=two: expected N or TEST=N" in log


def test_networkx_tests_that_overrun_leave_no_process_behind(tmp_path):
    # A run that timed out left its pytest child busy for 20 minutes: the group is killed now.
    from explorer.nx_backend import testing

    slow = tmp_path / "slow_suite.py"
    slow.write_text("import subprocess, sys, time\n"
                    "def test_sleeps():\n"
                    "    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
                    "    open('pids', 'w').write(f'{child.pid}')\n"
                    "    time.sleep(600)\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    # 20 s: long enough for the child's pytest to start and spawn the grandchild on a loaded machine
    with pytest.raises(TimeoutError, match="ran past 20 s; their processes were killed"):
        testing.run_suites(["slow_suite"], tmp_path / "s.json", env, 20, tmp_path)
    grandchild = int((tmp_path / "pids").read_text())
    deadline = time.monotonic() + 10
    while _running(grandchild) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(grandchild)


def _running(pid: int) -> bool:
    """Whether the process exists and is not a zombie waiting for its reaper."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def test_a_super_source_search_takes_the_graphs_features_without_a_second_probe(monkeypatch):
    from explorer.graphs import stats

    G = nx.grid_2d_graph(5, 6)
    want = list(nx.bfs_layers(G, [(0, 0), (4, 5)]))
    list(nx.bfs_layers(G, (0, 0), backend="bfs4k"))  # the converted graph's features, probed once
    probes = []
    real = stats.probe_features
    monkeypatch.setattr(stats, "probe_features", lambda g: probes.append(g.name) or real(g))
    assert list(nx.bfs_layers(G, [(0, 0), (4, 5)], backend="bfs4k")) == want
    assert not [p for p in probes if "super-source" in p]
