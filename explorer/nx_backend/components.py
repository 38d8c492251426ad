"""Connected components of undirected graphs (networkx refuses directed ones before dispatching)."""
from __future__ import annotations

import networkx as nx
import numpy as np

from . import searches
from .searches import Options


def connected_components(G, *, technique=None, knobs=None):
    # networkx's order: a component per unseen node, in the graph's node order. A node without
    # neighbours is its own component without a search.
    opts = Options.of(technique, knobs)
    n = len(G)
    seen = np.zeros(n, dtype=bool)
    degree = np.diff(G.csr.offsets)
    for v in range(n):
        if seen[v]:
            continue
        if degree[v] == 0:
            seen[v] = True
            yield {G.labels[v]}
            continue
        members = np.flatnonzero(searches.row(G, v, opts) >= 0)
        seen[members] = True
        yield set(G.names(members))


def node_connected_component(G, n, *, technique=None, knobs=None):
    if n not in G:
        hash(n)  # an unhashable node raises TypeError, as networkx's `seen = {source}`
        raise KeyError(n)  # networkx: adj[n]
    dist = searches.row(G, G.id_of(n), Options.of(technique, knobs))
    return set(G.names(np.flatnonzero(dist >= 0)))


def is_connected(G, *, technique=None, knobs=None):
    n = len(G)
    if n == 0:
        raise nx.NetworkXPointlessConcept("Connectivity is undefined for the null graph.")
    dist = searches.row(G, 0, Options.of(technique, knobs))
    return bool(np.count_nonzero(dist >= 0) == n)
