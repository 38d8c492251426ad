"""Unweighted shortest-path lengths on the engine (weighted.py: the weighted ones)."""
from __future__ import annotations

import networkx as nx
import numpy as np

from . import order, searches
from .searches import Options

#: all_pairs_shortest_path_length: rows of the distance matrix held on the host at once, at most
#: this many entries (a multi-search per chunk of sources).
CHUNK_ENTRIES = 2**24


def lengths_from(G, source, cutoff, opts: Options, reverse: bool, who: str) -> dict:
    """networkx's single-source (or, reversed, single-target) length dict, in its order."""
    if source not in G:
        raise nx.NodeNotFound(f"{who} {source} is not in G")
    s = G.id_of(source)
    dist = searches.row(G, s, opts, reverse)
    csr = G.rcsr if reverse else G.csr
    layers, _ = order.discovery(csr.offsets, csr.indices, dist, [s], cutoff)
    out = {source: 0}
    for depth, layer in enumerate(layers[1:], start=1):
        out.update(dict.fromkeys(G.names(layer), depth))
    return out


def single_source_shortest_path_length(G, source, cutoff=None, *, technique=None, knobs=None):
    return lengths_from(G, source, cutoff, Options.of(technique, knobs), False, "Source")


def single_target_shortest_path_length(G, target, cutoff=None, *, technique=None, knobs=None):
    return lengths_from(G, target, cutoff, Options.of(technique, knobs), G.is_directed(), "Target")


def all_pairs_shortest_path_length(G, cutoff=None, *, multisearch=None):
    opts = Options.of(multisearch=multisearch)
    n = len(G)
    if n == 0:
        return
    m = searches.small_matrix(G, opts, False)
    step = n if m is not None else max(1, CHUNK_ENTRIES // n)
    for lo in range(0, n, step):
        ids = np.arange(lo, min(n, lo + step))
        rows = m[ids] if m is not None else \
            searches.run_many_values(G, ids.astype(np.int32), "distances", opts)["distances"]
        for i, s in enumerate(ids.tolist()):
            vs, ds = order.level_sorted(rows[i], cutoff)
            yield G.labels[s], dict(zip(G.names(vs), ds.tolist()))


def shortest_path_length(G, source=None, target=None, weight=None, method="dijkstra", *, technique=None,
                         knobs=None, multisearch=None):
    if method not in ("dijkstra", "bellman-ford"):
        raise ValueError(f"method not supported: {method}")
    if weight is not None:  # explorer.sssp's techniques (an SSSP technique= and its knobs=)
        from . import weighted

        return weighted.shortest_path_length(G, source, target, weight, method, technique=technique, knobs=knobs)
    if source is None:
        if target is None:
            return all_pairs_shortest_path_length(G, multisearch=multisearch)
        # networkx: single-source lengths on the reversed graph (its message names a source)
        return lengths_from(G, target, None, Options.of(technique, knobs), G.is_directed(), "Source")
    if target is None:
        return lengths_from(G, source, None, Options.of(technique, knobs), False, "Source")
    return _pair_length(G, source, target, Options.of(technique, knobs))


def _pair_length(G, source, target, opts: Options) -> int | None:
    """Hop count from source to target (NodeNotFound and NetworkXNoPath as networkx's)."""
    if source not in G:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    if target not in G:
        raise nx.NodeNotFound(f"Target {target} is not in G")
    s, t = G.id_of(source), G.id_of(target)
    if s == t:
        return 0
    d = int(searches.row(G, s, opts)[t])
    if d < 0:
        raise nx.NetworkXNoPath(f"No path between {source} and {target}.")
    return d


def has_path(G, source, target, *, technique=None, knobs=None):
    try:
        _pair_length(G, source, target, Options.of(technique, knobs))
    except nx.NetworkXNoPath:
        return False
    return True
