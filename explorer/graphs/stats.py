"""BFS-4K Table 1 statistics of a graph, and the features `auto` chooses by."""
from __future__ import annotations

import weakref
from dataclasses import asdict, dataclass

import numpy as np

from explorer.reference.bfs import bfs_distances, cpu_bfs

from .csr import CSRGraph

__all__ = ["SearchFeatures", "degree_histogram", "graph_stats", "keep_search_features", "probe_features",
           "search_features"]


def degree_histogram(graph: CSRGraph) -> tuple[np.ndarray, np.ndarray]:
    """(degree, count) of the degrees that occur, in increasing degree (out-degree for a
    directed graph): count[i] vertices have degree degree[i]."""
    counts = np.bincount(graph.degrees()) if graph.num_vertices else np.zeros(0, np.int64)
    deg = np.flatnonzero(counts)
    return deg, counts[deg]


def graph_stats(graph: CSRGraph) -> dict:
    """BFS-4K Table 1 characteristics of a graph.

    vertices |V|; edges |E| (undirected edges for an undirected graph, arcs for a directed one;
    `arcs` is given too); approx_diameter: double sweep lower bound (BFS from the max-degree
    vertex, then BFS from the farthest vertex it reached; the larger eccentricity), over the
    part reachable from there; avg_degree (arcs / |V|: 2|E|/|V| if undirected, loop-free),
    std_degree (population), max_degree and mode_degree (most frequent degree, smallest on
    ties). Degrees are out-degrees. BFS-4K's Table 1 column "Mode" looks like the maximum degree
    (roadNet-CA 12, Amazon0505 10), so both are reported.
    """
    n = graph.num_vertices
    deg = graph.degrees()
    out = {"vertices": n, "edges": graph.num_edges, "arcs": graph.num_arcs,
           "directed": bool(graph.directed)}
    if n == 0:
        out.update(approx_diameter=0, avg_degree=0.0, std_degree=0.0, max_degree=0,
                   mode_degree=0)
        return out
    start = int(np.argmax(deg))
    dist, _ = cpu_bfs(graph, start)
    ecc0 = int(dist.max())
    far = int(np.argmax(dist))  # first vertex at the largest distance
    dist2, _ = cpu_bfs(graph, far)
    out.update(
        approx_diameter=max(ecc0, int(dist2.max())),
        avg_degree=float(graph.num_arcs / n),
        std_degree=float(deg.std()),
        max_degree=int(deg.max()),
        mode_degree=int(np.argmax(np.bincount(deg))),
    )
    return out


@dataclass(frozen=True)
class SearchFeatures:
    """What makes one BFS technique faster than another on a graph: its size, its degrees and the
    shape of a search, from one probe (a CPU BFS from the max-degree vertex): what `auto` reads."""

    vertices: int
    arcs: int
    directed: bool
    avg_degree: float  # arcs / vertices
    max_degree: int
    levels: int  # the probe's levels (its depth + 1)
    peak: float  # the probe's widest level, as a share of the vertices
    reached: float  # the share of the vertices the probe reached

    @property
    def skew(self) -> float:
        """Largest degree over the mean: 1 on a regular graph, hundreds on a Kronecker graph."""
        return self.max_degree / max(self.avg_degree, 1.0)

    def as_dict(self) -> dict:
        return {**asdict(self), "skew": round(self.skew, 2)}


#: Each graph's SearchFeatures while the graph lives: computed once, by search_features.
_FEATURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def search_features(graph: CSRGraph) -> SearchFeatures:
    """The graph's SearchFeatures: probed once (probe_features), then kept while the graph lives."""
    f = _FEATURES.get(graph)
    if f is None:
        f = _FEATURES[graph] = probe_features(graph)
    return f


def keep_search_features(graph: CSRGraph, features: SearchFeatures) -> None:
    """Give `graph` features known without a probe (a graph built from one whose features are known)."""
    _FEATURES[graph] = features


def probe_features(graph: CSRGraph) -> SearchFeatures:
    """SearchFeatures from one CPU BFS from the max-degree vertex."""
    n = graph.num_vertices
    if n == 0:
        return SearchFeatures(0, 0, bool(graph.directed), 0.0, 0, 0, 0.0, 0.0)
    start = int(np.argmax(graph.degrees()))
    dist = bfs_distances(graph, start)
    counts = np.bincount(dist[dist >= 0])
    return SearchFeatures(vertices=n, arcs=graph.num_arcs, directed=bool(graph.directed),
                          avg_degree=graph.num_arcs / n, max_degree=graph.max_degree, levels=len(counts),
                          peak=float(counts.max() / n), reached=float(counts.sum() / n))
