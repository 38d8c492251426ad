"""Weighted shortest-path lengths on the engine, with networkx's semantics: the `weight` edge
attribute (an edge without it weighs 1; a multigraph's parallel edges their least; None: every
edge 1), networkx's exceptions (NodeNotFound, NetworkXNoPath, NetworkXUnbounded for a negative
cycle the search reaches) and its results' types (whole-number weights give ints).

Single-source calls run explorer.sssp.run_sssp: the Dijkstra-named functions the technique of
`dijkstra_technique` (Δ-stepping: non-negative weights, as Dijkstra needs; networkx's own
behaviour on negative weights is kept: those calls run on networkx), the Bellman-Ford-named ones
`bellman_ford_technique` (H-BF). All pairs run explorer.sssp.apsp.run_apsp: the blocked
Floyd-Warshall up to `floyd_warshall_max_n` vertices, Johnson's way above. negative_edge_cycle runs
Johnson's potentials (a virtual source joined to every vertex). eccentricity and diameter take the
rows of the all-pairs matrix (one run_apsp), or one search per node where the matrix would not be
kept. A weight *function* runs on networkx (interface.can_run says so).

Results are kept as the unweighted ones are (searches.ResultStore), keyed by the structure and a
digest of the weights: the all-pairs matrix of the default method, and single-source rows of calls
that name no technique. A single-source call reads a kept matrix's row only where the weights are
non-negative whole numbers (the matrix's sums are then exact, whatever their order): networkx's
radius, center and periphery with usebounds=True then cost no search after the eccentricities.
"""
from __future__ import annotations

from collections import defaultdict

import networkx as nx
import numpy as np

from . import searches

_UNBOUNDED = "Negative cycle detected."


def _technique(family: str, technique, knobs) -> tuple[str, dict]:
    from ..sssp.techniques import implementation, make_knobs

    cfg = searches.config()
    tech = technique or cfg.get(f"{family}_technique") or ("delta-stepping" if family == "dijkstra" else "h-bf")
    impl = implementation(tech)
    if knobs is not None and not isinstance(knobs, dict):
        raise TypeError(f"knobs must be a dict of {impl.name}'s knobs, not {type(knobs).__name__}")
    values = {**(impl.simulator_knobs if searches.on_simulator() else {}), **(knobs or {})}
    make_knobs(impl.technique, values)
    return impl.name, values


def _key(G, weight, reverse: bool, kind: str, which=None) -> tuple:
    return (G.fingerprint, "weighted", G.weights_digest(weight, reverse), reverse, kind, which)


def _keep(key, arr: np.ndarray) -> np.ndarray:
    return searches.STORE.put(key, arr, int(searches.config().get("cache_bytes", 0)))


def _whole(G, weight, reverse: bool = False) -> bool:
    from ..sssp.weights import weighting

    return weighting(G.weighted(weight, reverse)).integer


def _distances(G, s: int, weight, family: str, technique, knobs, reverse: bool = False) -> tuple[np.ndarray, bool]:
    """(float64 distances from vertex s, inf where unreached; whether they are whole numbers): a kept
    row, a kept matrix's row, or a search (always the search where the call names its technique)."""
    from ..graphs import Vertex
    from ..sssp import NegativeCycleError, run_sssp
    from ..sssp.weights import weighting

    csr = G.weighted(weight, reverse)
    named = technique is not None or knobs is not None
    tech, values = _technique(family, technique, knobs)
    w = weighting(csr)
    if not named:
        kept = searches.STORE.get(_key(G, weight, reverse, "row", s))
        if kept is None and not reverse and w.integer and w.min_weight >= 0:
            m = searches.STORE.get(_key(G, weight, False, "matrix"))
            kept = None if m is None else m[s]
        if kept is not None:
            return kept, w.integer
    searches.RUNS["run_sssp"] = searches.RUNS.get("run_sssp", 0) + 1
    searches._tell_where()
    try:
        r = run_sssp(csr, Vertex(s), tech, values, session=_session(G, weight, reverse)).complete()
    except NegativeCycleError:
        raise nx.NetworkXUnbounded(_UNBOUNDED) from None
    dist = r.as_float()
    return (dist if named else _keep(_key(G, weight, reverse, "row", s), dist)), r.dtype == "int64"


def _session(G, weight, reverse: bool):
    from ..engine import Session

    key = ("weighted", weight, reverse)
    s = G._sessions.get(key)
    if s is None:
        s = G._sessions[key] = Session(G.weighted(weight, reverse))
    return s


def _number(x: float, whole: bool):
    return int(x) if whole else float(x)


def _lengths(G, dist: np.ndarray, whole: bool, cutoff=None) -> dict:
    """{node: distance} of the reached nodes (within cutoff), nearest first, ties in graph order:
    the order in which Dijkstra settles them."""
    keep = np.isfinite(dist)
    if cutoff is not None:
        keep &= dist <= cutoff
    vs = np.flatnonzero(keep)
    vs = vs[np.argsort(dist[vs], kind="stable")]
    return dict(zip(G.names(vs), (_number(x, whole) for x in dist[vs].tolist())))


def _source(G, source, message: str) -> int:
    if source not in G:
        raise nx.NodeNotFound(message.format(source))
    return G.id_of(source)


# ------------------------------------------------------------------------------ single source
def single_source_dijkstra_path_length(G, source, cutoff=None, weight="weight", *, technique=None, knobs=None):
    s = _source(G, source, "Node {} not found in graph")
    dist, whole = _distances(G, s, weight, "dijkstra", technique, knobs)
    return _lengths(G, dist, whole, cutoff)


def single_source_bellman_ford_path_length(G, source, weight="weight", *, technique=None, knobs=None):
    s = _source(G, source, "Source {} not in G")
    dist, whole = _distances(G, s, weight, "bellman_ford", technique, knobs)
    return _lengths(G, dist, whole)


def dijkstra_path_length(G, source, target, weight="weight", *, technique=None, knobs=None):
    s = _source(G, source, "Node {} not found in graph")
    if source == target:
        return 0
    dist, whole = _distances(G, s, weight, "dijkstra", technique, knobs)
    if target not in G or not np.isfinite(dist[G.id_of(target)]):
        raise nx.NetworkXNoPath(f"Node {target} not reachable from {source}")
    return _number(dist[G.id_of(target)], whole)


def bellman_ford_path_length(G, source, target, weight="weight", *, technique=None, knobs=None):
    if source == target:
        _source(G, source, "Node {} not found in graph")
        return 0
    s = _source(G, source, "Source {} not in G")
    dist, whole = _distances(G, s, weight, "bellman_ford", technique, knobs)
    if target not in G or not np.isfinite(dist[G.id_of(target)]):
        raise nx.NetworkXNoPath(f"node {target} not reachable from {source}")
    return _number(dist[G.id_of(target)], whole)


# ------------------------------------------------------------------------------ all pairs
def _matrix(G, weight, method=None) -> tuple[np.ndarray, bool]:
    """(float64 all-pairs distances, negative diagonal kept; whether they are whole numbers): the
    kept matrix, or one run_apsp (kept where the call names no method)."""
    from ..sssp.apsp import SIMULATOR_KNOBS, APSPMethod, run_apsp

    key = _key(G, weight, False, "matrix")
    if method is None:
        kept = searches.STORE.get(key)
        if kept is not None:
            return kept, _whole(G, weight)
    cfg = searches.config()
    m = APSPMethod.parse(method or ("floyd-warshall" if len(G) <= int(cfg.get("floyd_warshall_max_n", 4096))
                                    else "johnson"))
    knobs = SIMULATOR_KNOBS[m] if searches.on_simulator() else None
    searches.RUNS["run_apsp"] = searches.RUNS.get("run_apsp", 0) + 1
    searches._tell_where()
    r = run_apsp(G.weighted(weight), m, knobs, negative_cycles="keep", session=_session(G, weight, False)).complete()
    D = r.distances if method is not None else _keep(key, r.distances)
    return D, _whole(G, weight)


def all_pairs_dijkstra_path_length(G, cutoff=None, weight="weight", *, method=None):
    if len(G) == 0:
        return
    D, whole = _matrix(G, weight, method)
    for i, u in enumerate(G):
        yield u, _lengths(G, D[i], whole, cutoff)


def _all_pairs_bellman_ford(G, weight, method=None):
    """networkx's all_pairs_bellman_ford_path_length: a source that reaches a negative cycle
    raises NetworkXUnbounded when its turn comes."""
    if len(G) == 0:
        return
    D, whole = _matrix(G, weight, method)
    on_cycle = np.diagonal(D) < 0
    for i, u in enumerate(G):
        if on_cycle.any() and np.isfinite(D[i][on_cycle]).any():
            raise nx.NetworkXUnbounded(_UNBOUNDED)
        yield u, _lengths(G, D[i], whole)


def floyd_warshall(G, weight="weight", *, method=None):
    """networkx's dict of defaultdicts: every pair present, inf where there is no path."""
    D, whole = _matrix(G, weight, method)
    out = {}
    for i, u in enumerate(G):
        row = defaultdict(lambda: float("inf"))
        row.update(zip(G, (_number(x, whole) if np.isfinite(x) else float("inf") for x in D[i].tolist())))
        out[u] = row
    return out


def floyd_warshall_numpy(G, nodelist=None, weight="weight", *, method=None):
    if nodelist is not None:
        if not (len(nodelist) == len(G) == len(set(nodelist))):
            raise nx.NetworkXError("nodelist must contain every node in G with no repeats."
                                   "If you wanted a subgraph of G use G.subgraph(nodelist)")
        try:
            order = np.array([G.id_of(x) for x in nodelist], dtype=np.int64)
        except KeyError as err:
            raise nx.NetworkXError(f"Node {err.args[0]} in nodelist is not in G") from None
    D, _ = _matrix(G, weight, method)
    return D if nodelist is None else D[np.ix_(order, order)]


def eccentricity(G, v=None, weight="weight"):
    """networkx's weighted eccentricity (its Dijkstra lengths from each node of v): whole-number
    weights read the rows of the all-pairs matrix where it fits the result store and v is a
    quarter of the nodes or more; otherwise one search per node."""
    nodes = list(G.nbunch_iter(v))
    e = {}
    if nodes:
        n = len(G)
        ids = np.array([G.id_of(x) for x in nodes], dtype=np.int64)
        whole, D = _whole(G, weight), None
        # Fractional weights: one search per node, whose sums run in path order as networkx's do
        # (the matrix's may round differently in the last place).
        if whole:
            D = searches.STORE.get(_key(G, weight, False, "matrix"))
            if D is None and 4 * len(set(ids.tolist())) >= n and 8 * n * n <= int(searches.config().get("cache_bytes", 0)):
                D, _ = _matrix(G, weight)
        for x, s in zip(nodes, ids.tolist()):
            row = D[s] if D is not None else _distances(G, s, weight, "dijkstra", None, None)[0]
            if int(np.isfinite(row).sum()) != n:
                what = "digraph is not strongly connected" if G.is_directed() else "graph is not connected"
                raise nx.NetworkXError(f"Found infinite path length because the {what}")
            e[x] = _number(row.max(), whole)
    if v in G:
        return e[v]
    return e


def diameter(G, weight="weight"):
    return max(eccentricity(G, weight=weight).values())


def negative_edge_cycle(G, weight="weight", heuristic=True, *, technique=None, knobs=None):
    """Whether G has a negative cycle anywhere: Bellman-Ford from Johnson's virtual source (every
    vertex at 0). `heuristic` is networkx's early exit; the engine's checks need none."""
    from ..sssp import NegativeCycleError, potentials

    if G.num_arcs == 0:
        return False
    tech, values = _technique("bellman_ford", technique, knobs)
    searches.RUNS["run_sssp"] = searches.RUNS.get("run_sssp", 0) + 1
    searches._tell_where()
    try:
        potentials(G.weighted(weight), tech, values, session=_session(G, weight, False)).complete()
    except NegativeCycleError:
        return True
    return False


def shortest_path_length(G, source, target, weight, method, *, technique=None, knobs=None, multisearch=None):
    """The weighted branch of networkx's shortest_path_length (weight is not None)."""
    family = "dijkstra" if method == "dijkstra" else "bellman_ford"
    if source is None:
        if target is None:
            return (all_pairs_dijkstra_path_length(G, weight=weight) if family == "dijkstra"
                    else _all_pairs_bellman_ford(G, weight))
        # lengths to the target: a search from it along the reversed arcs
        msg = "Node {} not found in graph" if family == "dijkstra" else "Source {} not in G"
        t = _source(G, target, msg)
        dist, whole = _distances(G, t, weight, family, technique, knobs, reverse=G.is_directed())
        return _lengths(G, dist, whole)
    if target is None:
        if family == "dijkstra":
            return single_source_dijkstra_path_length(G, source, weight=weight, technique=technique, knobs=knobs)
        return single_source_bellman_ford_path_length(G, source, weight=weight, technique=technique, knobs=knobs)
    if family == "dijkstra":
        return dijkstra_path_length(G, source, target, weight, technique=technique, knobs=knobs)
    return bellman_ford_path_length(G, source, target, weight, technique=technique, knobs=knobs)
