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
