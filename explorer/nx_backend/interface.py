"""The object networkx loads through the `networkx.backends` entry point: conversions, can_run,
should_run, the networkx-test hook, and the functions (networkx/utils/backends.py's protocol)."""
from __future__ import annotations

import inspect
import logging

import networkx as nx

from . import centrality, components, paths, searches, traversal, weighted
from .graph import BFS4KGraph

_log = logging.getLogger(__name__)

_SORT = ("sort_neighbors", "sort_neighbors calls a Python function on each node's neighbours: "
         "networkx runs it")
_WEIGHT = "bfs4k counts hops: a weighted call ({param} given) runs on networkx"
_WEIGHT_FUNCTION = ("weight", lambda v, G: callable(v),
                    "a weight function is called on every edge (and may hide edges): networkx runs it")


def _negative_weight(weight, G) -> bool:
    """Whether an edge of G weighs less than 0 by attribute `weight` (missing: 1)."""
    if weight is None or callable(weight) or G is None:
        return False
    if isinstance(G, BFS4KGraph):
        w = G.weights.get(weight)
        return w is not None and w[0].size > 0 and float(w[0].min()) < 0
    # the data dicts, not data=weight: networkx reads weight=True as the attribute named True
    edges = G.edges(keys=True, data=True) if G.is_multigraph() else G.edges(data=True)
    return any((x := e[-1].get(weight, 1)) is not None and x < 0 for e in edges)


_NEGATIVE = ("weight", _negative_weight,
             "a negative weight: networkx's Dijkstra has its own behaviour there (it may raise 'Contradictory "
             "paths found'); the engine's Δ-stepping refuses it")
_WEIGHTED_DIJKSTRA = [_WEIGHT_FUNCTION, _NEGATIVE]

#: name -> [(parameter, when it declines, why)]: what the engine cannot honour.
_DECLINE = {
    "bfs_edges": [(_SORT[0], lambda v, G: v is not None, _SORT[1])],
    "bfs_tree": [(_SORT[0], lambda v, G: v is not None, _SORT[1])],
    "bfs_predecessors": [(_SORT[0], lambda v, G: v is not None, _SORT[1])],
    "bfs_successors": [(_SORT[0], lambda v, G: v is not None, _SORT[1])],
    "generic_bfs_edges": [("neighbors", lambda v, G: v is not None,
                           "a neighbors function runs on networkx (the engine walks the graph's own arcs)")],
    "shortest_path_length": [_WEIGHT_FUNCTION],
    "single_source_dijkstra_path_length": _WEIGHTED_DIJKSTRA,
    "dijkstra_path_length": _WEIGHTED_DIJKSTRA,
    "all_pairs_dijkstra_path_length": _WEIGHTED_DIJKSTRA,
    "bellman_ford_path_length": [_WEIGHT_FUNCTION],
    "single_source_bellman_ford_path_length": [_WEIGHT_FUNCTION],
    "floyd_warshall": [_WEIGHT_FUNCTION],
    "floyd_warshall_numpy": [_WEIGHT_FUNCTION],
    "negative_edge_cycle": [_WEIGHT_FUNCTION],
    "betweenness_centrality": [("weight", lambda v, G: v is not None, _WEIGHT)],
    "closeness_centrality": [("distance", lambda v, G: v is not None, _WEIGHT)],
    "eccentricity": [("sp", lambda v, G: v is not None, "sp gives the lengths already: nothing to search"),
                     *_WEIGHTED_DIJKSTRA],
    "diameter": [("e", lambda v, G: v is not None, "e gives the eccentricities already: nothing to search"),
                 *_WEIGHTED_DIJKSTRA,
                 ("usebounds", lambda v, G: v is True and not G.is_directed(),
                  "usebounds=True runs networkx's bounding search (its own sequence of BFS)")],
}

#: Functions that search from every node (or k sampled nodes): their work is sources x arcs.
_ALL_SOURCES = {"all_pairs_shortest_path_length", "closeness_centrality", "betweenness_centrality",
                "eccentricity", "diameter", "all_pairs_dijkstra_path_length", "floyd_warshall",
                "floyd_warshall_numpy"}


def _arcs(G) -> int:
    if isinstance(G, BFS4KGraph):
        return G.num_arcs
    return G.number_of_edges() * (1 if G.is_directed() else 2)


def _searches(name, bound: dict, G) -> int:
    """How many searches the call makes: every node for the all-sources functions (k for a sampled
    betweenness, one for closeness of one node), else one."""
    if name in _ALL_SOURCES or (name == "shortest_path_length" and bound.get("source") is None
                                and bound.get("target") is None):
        k = bound.get("k") if name == "betweenness_centrality" else None
        if name == "closeness_centrality" and bound.get("u") is not None:
            return 1
        v = bound.get("v") if name == "eccentricity" else None
        if v is not None:
            return 1 if v in G else len(v) if hasattr(v, "__len__") else len(G)
        return k if isinstance(k, int) and k > 0 else len(G)
    return 1


def _bound(name, args, kwargs):
    """The call's arguments by name (defaults applied), or None when they do not fit networkx's
    signature (the call itself then raises networkx's TypeError)."""
    try:
        b = inspect.signature(getattr(nx, name)).bind(*args, **kwargs)
    except (TypeError, AttributeError):
        return None
    b.apply_defaults()
    return b.arguments


class Declined(NotImplementedError):
    """Why the backend does not run a call (no GPU and no simulator, a graph over the simulator's
    size, a parameter the engine cannot honour)."""


_IN_NETWORKX_TESTS = False  # set by on_start_tests: networkx's own suites run with the backend


def _why_not(name, args, kwargs) -> str | None:
    """Why the engine cannot honour this call, or None."""
    bound = _bound(name, args, kwargs)
    if bound is None:
        return None
    G = bound.get("G")
    for param, declines, why in _DECLINE.get(name, ()):
        if param in bound and declines(bound[param], G):
            return why.format(param=param, value=bound[param])
    if (name == "shortest_path_length" and bound.get("method") == "dijkstra"
            and _negative_weight(bound.get("weight"), G)):
        return _NEGATIVE[2]
    problem = searches.engine_problem()
    if problem is None and G is not None:
        problem = searches.size_problem(_arcs(G), _searches(name, bound, G))
    return problem


class BackendInterface:
    """networkx's view of the bfs4k backend."""

    @staticmethod
    def convert_from_nx(graph, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False,
                        preserve_node_attrs=False, preserve_graph_attrs=False, name=None, graph_name=None):
        # Edge attributes are kept as the weighted functions ask (edge_attrs: {attribute: default}).
        if isinstance(graph, BFS4KGraph):
            return graph
        return BFS4KGraph.from_networkx(graph, edge_attrs=edge_attrs if isinstance(edge_attrs, dict) else None)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        if isinstance(obj, BFS4KGraph):
            return obj.to_networkx()
        return obj

    @staticmethod
    def can_run(name, args, kwargs):
        """True, or why the engine cannot honour this call, raised as Declined (a
        NotImplementedError): networkx says only "not implemented ... for the given arguments"
        when a call that named backend="bfs4k" is refused by a returned reason, so the reason is
        raised to reach the user; where networkx chooses the backend itself (backend_priority) it
        catches the error and runs the call on networkx. Under networkx's test mode, which does not
        catch it, the reason is returned (networkx then runs the call)."""
        why = _why_not(name, args, kwargs)
        if why is None:
            return True
        if _IN_NETWORKX_TESTS:
            return why
        raise Declined(f"bfs4k cannot run {name}: {why}")

    @staticmethod
    def should_run(name, args, kwargs):
        """Automatic dispatch (nx.config.backend_priority): True where the GPU should win, else why
        not. A call with backend="bfs4k" runs regardless, and so does every call of networkx's test
        mode (NETWORKX_TEST_BACKEND): networkx asks can_run only there."""
        if searches.on_simulator():
            return ("the CUDA simulator runs every GPU thread as a Python thread: networkx is faster "
                    "(backend='bfs4k' runs it anyway)")
        bound = _bound(name, args, kwargs) or {}
        G = bound.get("G")
        if G is None:
            return True
        work = _arcs(G) * _searches(name, bound, G)
        least = int(searches.config().get("min_work", 0))
        if work < least:
            return (f"a call of {work:,} arc visits (below nx.config.backends.bfs4k.min_work = {least:,}) "
                    "costs less on networkx than a GPU launch")
        return True

    @staticmethod
    def on_start_tests(items):
        """networkx's test mode (NETWORKX_TEST_BACKEND=bfs4k): says where kernels run. No test is
        marked: every call the backend cannot honour falls back by can_run."""
        global _IN_NETWORKX_TESTS
        _IN_NETWORKX_TESTS = True
        problem = searches.engine_problem()
        where = problem or searches.backend.current().describe()
        _log.warning("bfs4k backend under networkx's tests: %s", where)

    # The functions (networkx names them; each accepts the extra parameters listed in info.py).
    bfs_edges = staticmethod(traversal.bfs_edges)
    bfs_tree = staticmethod(traversal.bfs_tree)
    bfs_predecessors = staticmethod(traversal.bfs_predecessors)
    bfs_successors = staticmethod(traversal.bfs_successors)
    bfs_layers = staticmethod(traversal.bfs_layers)
    bfs_labeled_edges = staticmethod(traversal.bfs_labeled_edges)
    generic_bfs_edges = staticmethod(traversal.generic_bfs_edges)
    descendants = staticmethod(traversal.descendants)
    ancestors = staticmethod(traversal.ancestors)
    descendants_at_distance = staticmethod(traversal.descendants_at_distance)
    single_source_shortest_path_length = staticmethod(paths.single_source_shortest_path_length)
    single_target_shortest_path_length = staticmethod(paths.single_target_shortest_path_length)
    all_pairs_shortest_path_length = staticmethod(paths.all_pairs_shortest_path_length)
    shortest_path_length = staticmethod(paths.shortest_path_length)
    has_path = staticmethod(paths.has_path)
    closeness_centrality = staticmethod(centrality.closeness_centrality)
    betweenness_centrality = staticmethod(centrality.betweenness_centrality)
    eccentricity = staticmethod(centrality.eccentricity)
    diameter = staticmethod(centrality.diameter)
    node_connected_component = staticmethod(components.node_connected_component)
    connected_components = staticmethod(components.connected_components)
    is_connected = staticmethod(components.is_connected)
    single_source_dijkstra_path_length = staticmethod(weighted.single_source_dijkstra_path_length)
    dijkstra_path_length = staticmethod(weighted.dijkstra_path_length)
    bellman_ford_path_length = staticmethod(weighted.bellman_ford_path_length)
    single_source_bellman_ford_path_length = staticmethod(weighted.single_source_bellman_ford_path_length)
    all_pairs_dijkstra_path_length = staticmethod(weighted.all_pairs_dijkstra_path_length)
    floyd_warshall = staticmethod(weighted.floyd_warshall)
    floyd_warshall_numpy = staticmethod(weighted.floyd_warshall_numpy)
    negative_edge_cycle = staticmethod(weighted.negative_edge_cycle)


backend_interface = BackendInterface()
