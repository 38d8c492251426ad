"""networkx's BFS traversals on the engine: the distances come from a search, their order from
order.py. Generators stay generators (their errors come at the first next(), as networkx's)."""
from __future__ import annotations

import networkx as nx
import numpy as np
from networkx.algorithms.traversal.breadth_first_search import (FORWARD_EDGE, LEVEL_EDGE, REVERSE_EDGE,
                                                                  TREE_EDGE)

from . import order, searches
from .searches import Options

_LABELS = {order.TREE: TREE_EDGE, order.LEVEL: LEVEL_EDGE, order.FORWARD: FORWARD_EDGE,
           order.REVERSE: REVERSE_EDGE}


def not_in_graph(G, node) -> str:
    """networkx's message for a missing node in G.neighbors / successors / predecessors."""
    return f"The node {node} is not in the {'digraph' if G.is_directed() else 'graph'}."


def check_node(G, source) -> None:
    """networkx's errors for a source its neighbour lookups cannot find: TypeError for an
    unhashable one (`G.neighbors([1])` hashes it), else NetworkXError when absent."""
    hash(source)
    if source not in G:
        raise nx.NetworkXError(not_in_graph(G, source))


def searched(G, source, opts: Options, reverse: bool = False) -> np.ndarray:
    """Distances from `source` (a node), with networkx's errors (check_node)."""
    check_node(G, source)
    return searches.row(G, G.id_of(source), opts, reverse)


def tree_pairs(G, source, reverse: bool, depth_limit, opts: Options) -> tuple[list, list]:
    """(parents, children) of networkx's generic_bfs_edges, in its order (nodes)."""
    check_node(G, source)
    limit = len(G) if depth_limit is None else depth_limit
    if not 0 < limit:
        return [], []
    s = G.id_of(source)
    dist = searches.row(G, s, opts, reverse)
    csr = G.rcsr if reverse else G.csr
    layers, parents = order.discovery(csr.offsets, csr.indices, dist, [s], limit)
    if len(layers) == 1:
        return [], []
    return G.names(np.concatenate(parents[1:])), G.names(np.concatenate(layers[1:]))


def generic_bfs_edges(G, source, neighbors=None, depth_limit=None, *, technique=None, knobs=None):
    if neighbors is not None:
        raise NotImplementedError("bfs4k runs generic_bfs_edges with the graph's own neighbours only "
                                  "(neighbors=None); a neighbors function runs on networkx")
    opts = Options.of(technique, knobs)
    yield from zip(*tree_pairs(G, source, False, depth_limit, opts))


def bfs_edges(G, source, reverse=False, depth_limit=None, sort_neighbors=None, *, technique=None, knobs=None):
    if sort_neighbors is not None:
        raise NotImplementedError("bfs4k does not run sort_neighbors (a Python function per node): "
                                  "it runs on networkx")
    opts = Options.of(technique, knobs)
    yield from zip(*tree_pairs(G, source, bool(reverse) and G.is_directed(), depth_limit, opts))


def bfs_tree(G, source, reverse=False, depth_limit=None, sort_neighbors=None, *, technique=None, knobs=None):
    T = nx.DiGraph()
    T.add_node(source)
    T.add_edges_from(bfs_edges(G, source, reverse, depth_limit, sort_neighbors, technique=technique,
                               knobs=knobs))
    return T


def bfs_predecessors(G, source, depth_limit=None, sort_neighbors=None, *, technique=None, knobs=None):
    for s, t in bfs_edges(G, source, depth_limit=depth_limit, sort_neighbors=sort_neighbors,
                          technique=technique, knobs=knobs):
        yield (t, s)


def bfs_successors(G, source, depth_limit=None, sort_neighbors=None, *, technique=None, knobs=None):
    # networkx's grouping, kept as it is (an isolated source yields (source, [])).
    parent = source
    children = []
    for p, c in bfs_edges(G, source, depth_limit=depth_limit, sort_neighbors=sort_neighbors,
                          technique=technique, knobs=knobs):
        if p == parent:
            children.append(c)
            continue
        yield (parent, children)
        children = [c]
        parent = p
    yield (parent, children)


def bfs_layers(G, sources, *, technique=None, knobs=None):
    if sources in G:
        sources = [sources]
    visited = set(sources)
    current = list(visited)
    for source in current:
        if source not in G:
            raise nx.NetworkXError(f"The node {source} is not in the graph.")
    if not current:
        return
    opts = Options.of(technique, knobs)
    ids = np.array([G.id_of(s) for s in current], dtype=np.int64)
    dist = searches.multi_source(G, ids, opts)
    layers, _ = order.discovery(G.csr.offsets, G.csr.indices, dist, ids)
    yield current  # the sources as given, in networkx's order (its set's)
    for layer in layers[1:]:
        yield G.names(layer)


def bfs_labeled_edges(G, sources, *, technique=None, knobs=None):
    if sources in G:
        sources = [sources]
    firsts = list(dict.fromkeys(sources))  # networkx's `depth` dict: its keys, in order
    valid = [s for s in firsts if s in G]
    # networkx raises KeyError when it dequeues a node not in G, after the earlier sources' edges.
    bad = next((i for i, s in enumerate(firsts) if s not in G), None)
    if not valid:
        if bad is not None:
            raise KeyError(firsts[bad])
        return
    opts = Options.of(technique, knobs)
    ids = np.array([G.id_of(s) for s in valid], dtype=np.int64)
    dist = searches.multi_source(G, ids, opts)
    csr = G.csr
    layers, parents = order.discovery(csr.offsets, csr.indices, dist, ids)
    queue = np.concatenate(layers)
    parent = np.full(len(G), -1, dtype=np.int64)
    parent[queue] = np.concatenate(parents)
    upto = None if bad is None else bad  # the valid sources before the bad one
    u, v, lab = order.labeled_arcs(csr.offsets, csr.indices, dist, queue, parent, G.is_directed(), upto)
    for a, b, x in zip(G.names(u), G.names(v), lab.tolist()):
        yield a, b, _LABELS[x]
    if bad is not None:
        raise KeyError(firsts[bad])


def descendants_at_distance(G, source, distance, *, technique=None, knobs=None):
    if source not in G:
        raise nx.NetworkXError(f"The node {source} is not in the graph.")
    if distance == 0:
        return {source}
    dist = searches.row(G, G.id_of(source), Options.of(technique, knobs))
    for i in range(1, int(dist.max()) + 1):
        if i == distance:
            return set(G.names(np.flatnonzero(dist == i)))
    return set()


def descendants(G, source, *, technique=None, knobs=None):
    dist = searched(G, source, Options.of(technique, knobs))
    return set(G.names(np.flatnonzero(dist > 0)))


def ancestors(G, source, *, technique=None, knobs=None):
    dist = searched(G, source, Options.of(technique, knobs), reverse=G.is_directed())
    return set(G.names(np.flatnonzero(dist > 0)))
