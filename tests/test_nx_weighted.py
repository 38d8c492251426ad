"""The networkx backend's weighted functions beyond networkx's own suites (tests/test_nx_backend.py
runs those): networkx's results and exceptions on multigraphs, reversed searches and missing
attributes, and the calls it leaves to networkx with the reason."""
import networkx as nx
import numpy as np
import pytest

pytestmark = pytest.mark.filterwarnings("ignore:Note. conversions to backend graphs are saved:UserWarning")


def _weighted_digraph():
    G = nx.MultiDiGraph()
    G.add_edge("a", "b", weight=5)
    G.add_edge("a", "b", weight=2)  # parallel: the least counts
    G.add_edge("b", "c", weight=1)
    G.add_edge("c", "a")  # no attribute: weighs 1
    G.add_edge("d", "c", weight=4)
    return G


def test_lengths_equal_networkx_on_a_multigraph_with_missing_attributes():
    G = _weighted_digraph()
    for f, args in ((nx.single_source_dijkstra_path_length, ("a",)),
                    (nx.single_source_bellman_ford_path_length, ("d",)),
                    (nx.dijkstra_path_length, ("d", "b")), (nx.bellman_ford_path_length, ("a", "c"))):
        got, want = f(G, *args, backend="bfs4k"), f(G, *args)
        assert got == want and type(got) is type(want), f.__name__
    assert nx.floyd_warshall(G, backend="bfs4k") == nx.floyd_warshall(G)
    assert np.array_equal(nx.floyd_warshall_numpy(G, backend="bfs4k"), nx.floyd_warshall_numpy(G))
    # lengths to a target follow the arcs backwards
    assert (nx.shortest_path_length(G, target="c", weight="weight", backend="bfs4k")
            == nx.shortest_path_length(G, target="c", weight="weight"))
    assert nx.single_source_dijkstra_path_length(G, "a", cutoff=3, backend="bfs4k") == {"a": 0, "b": 2, "c": 3}


def test_networkx_exceptions():
    G = _weighted_digraph()
    with pytest.raises(nx.NodeNotFound, match="Node z not found in graph"):
        nx.single_source_dijkstra_path_length(G, "z", backend="bfs4k")
    with pytest.raises(nx.NodeNotFound, match="Source z not in G"):
        nx.single_source_bellman_ford_path_length(G, "z", backend="bfs4k")
    with pytest.raises(nx.NetworkXNoPath, match="Node d not reachable from a"):
        nx.dijkstra_path_length(G, "a", "d", backend="bfs4k")
    with pytest.raises(nx.NetworkXNoPath, match="node d not reachable from a"):
        nx.bellman_ford_path_length(G, "a", "d", backend="bfs4k")
    G.add_edge("c", "b", weight=-3)  # b -> c -> b weighs -2
    with pytest.raises(nx.NetworkXUnbounded, match="Negative cycle detected."):
        nx.single_source_bellman_ford_path_length(G, "d", backend="bfs4k")
    assert nx.bellman_ford_path_length(G, "a", "a", backend="bfs4k") == 0
    assert nx.negative_edge_cycle(G, backend="bfs4k") and not nx.negative_edge_cycle(_weighted_digraph(), backend="bfs4k")
    und = nx.path_graph(3)
    und[0][1]["weight"] = -1  # an undirected negative edge is a negative cycle
    assert nx.negative_edge_cycle(und, backend="bfs4k")
    assert not nx.negative_edge_cycle(nx.empty_graph(3), backend="bfs4k")


def test_calls_it_cannot_honour_are_refused_with_the_reason():
    G = _weighted_digraph()
    with pytest.raises(NotImplementedError, match="a weight function is called on every edge"):
        nx.single_source_dijkstra_path_length(G, "a", weight=lambda u, v, d: 1, backend="bfs4k")
    G.add_edge("b", "d", weight=-1)
    with pytest.raises(NotImplementedError, match="a negative weight: networkx's Dijkstra"):
        nx.dijkstra_path_length(G, "a", "d", backend="bfs4k")
    with pytest.raises(NotImplementedError, match="a negative weight"):
        nx.shortest_path_length(G, "a", "d", weight="weight", method="dijkstra", backend="bfs4k")
    assert nx.shortest_path_length(G, "a", "d", weight="weight", method="bellman-ford", backend="bfs4k") == 1
    for f in (nx.eccentricity, nx.diameter):  # their lengths are networkx's Dijkstra's
        with pytest.raises(NotImplementedError, match="a negative weight"):
            f(G, weight="weight", backend="bfs4k")
        with pytest.raises(NotImplementedError, match="a weight function"):
            f(G, weight=lambda u, v, d: 1, backend="bfs4k")


def test_all_pairs_by_both_methods_and_every_technique():
    G = nx.grid_2d_graph(3, 4)
    for i, (u, v) in enumerate(G.edges):
        G[u][v]["weight"] = 0.5 + i % 3
    want = dict(nx.all_pairs_dijkstra_path_length(G))
    for method in ("floyd-warshall", "johnson"):
        assert dict(nx.all_pairs_dijkstra_path_length(G, backend="bfs4k", method=method)) == want
    for tech in ("bellman-ford", "h-bf", "delta-stepping"):
        got = nx.single_source_dijkstra_path_length(G, (0, 0), backend="bfs4k", technique=tech)
        assert got == want[(0, 0)] and list(got.values()) == sorted(got.values()), tech


@pytest.fixture
def gpu_first(monkeypatch):
    """networkx's backend_priority chooses bfs4k for every call it can run (should_run says the
    simulator is slower than networkx): the functions networkx runs itself (radius, center) call
    the backend's."""
    from explorer.nx_backend.interface import BackendInterface

    monkeypatch.setattr(BackendInterface, "should_run", staticmethod(lambda name, args, kwargs: True))
    with nx.config(backend_priority=["bfs4k"]):
        yield


def _weighted_graph(seed: int, directed: bool, whole: bool):
    import random

    rng = random.Random(seed)
    G = nx.gnp_random_graph(9, 0.45, seed=seed, directed=directed)
    G.add_edges_from(zip(range(8), range(1, 9)))  # connected (strongly: and back)
    if directed:
        G.add_edges_from(zip(range(1, 9), range(8)))
    for u, v in G.edges:
        G[u][v]["w"] = rng.randint(0, 9) if whole else rng.choice([0.1, 0.2, 0.7, 1.3])
    return G


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("whole", [True, False])
def test_weighted_eccentricity_and_diameter_equal_networkx(directed, whole, gpu_first):
    G = _weighted_graph(3, directed, whole)
    got, want = nx.eccentricity(G, weight="w", backend="bfs4k"), nx.eccentricity(G, weight="w")
    assert got == want and [type(x) for x in got.values()] == [type(x) for x in want.values()]
    assert nx.eccentricity(G, v=4, weight="w", backend="bfs4k") == want[4]
    assert nx.eccentricity(G, v=[2, 5], weight="w", backend="bfs4k") == {2: want[2], 5: want[5]}
    assert nx.diameter(G, weight="w", backend="bfs4k") == nx.diameter(G, weight="w")
    for f in (nx.radius, nx.center, nx.periphery):  # networkx's, on the backend's eccentricities
        assert f(G, weight="w") == f.orig_func(G, weight="w")
    G.add_node("alone")
    with pytest.raises(nx.NetworkXError, match="Found infinite path length because the (di)?graph is not"):
        nx.eccentricity(G, weight="w", backend="bfs4k")


def test_single_source_calls_read_the_kept_matrix_and_a_changed_weight_is_searched_again(gpu_first):
    from explorer.nx_backend import searches

    G = _weighted_graph(5, False, True)
    ecc = nx.eccentricity(G, weight="w", backend="bfs4k")
    runs = dict(searches.RUNS)
    # networkx's bounded radius: single-source searches, each a row of the matrix kept above
    assert nx.radius(G, weight="w", usebounds=True) == min(ecc.values())
    assert nx.shortest_path_length(G, 3, weight="w", backend="bfs4k") == nx.shortest_path_length(G, 3, weight="w")
    assert searches.RUNS["run_sssp"] == runs["run_sssp"] and searches.RUNS["run_apsp"] == runs["run_apsp"]
    # a named technique runs
    nx.single_source_dijkstra_path_length(G, 3, weight="w", backend="bfs4k", technique="delta-stepping")
    assert searches.RUNS["run_sssp"] == runs["run_sssp"] + 1
    H = G.copy()  # another graph, the same structure, one weight changed
    u, v = next(iter(H.edges))
    H[u][v]["w"] += 50
    assert nx.eccentricity(H, weight="w", backend="bfs4k") == nx.eccentricity(H, weight="w")
    assert searches.RUNS["run_apsp"] == runs["run_apsp"] + 1
    assert nx.shortest_path_length(H, u, weight="w", backend="bfs4k") == nx.shortest_path_length(H, u, weight="w")


def test_a_weight_that_is_not_a_string_names_an_attribute_as_in_networkx():
    # networkx reads weight=True as the edge attribute named True (none here: every edge weighs 1)
    C = nx.cycle_graph(7)
    assert nx.shortest_path_length(C, 0, 3, weight=True, backend="bfs4k") == 3
    C[0][1][True] = -1
    with pytest.raises(NotImplementedError, match="a negative weight"):
        nx.shortest_path_length(C, 0, 3, weight=True, backend="bfs4k")
