"""Graphs in CSR form: the one type every part of the explorer reads.

Loaders (SNAP, Matrix Market, METIS, networkx, scipy, numpy arrays), seeded generators of the
papers' graph families, the on-disk cache and BFS-4K Table-1 statistics live here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class GraphError(ValueError):
    """A graph file or array could not be turned into a CSRGraph; the message names where."""


@dataclass(eq=False)
class CSRGraph:
    """Compressed sparse row graph.

    offsets:  int64[n+1], the neighbours of v are indices[offsets[v]:offsets[v+1]]
    indices:  int32[m], column indices (one entry per arc; an undirected edge is two arcs)
    directed: False when every arc has its reverse (the graph was symmetric or symmetrized)
    ids:      original vertex ids (int64[n]) when the input ids were remapped, else None
    notes:    what building did to the input (symmetrized, self loops dropped, multi-edges merged)
    """

    offsets: np.ndarray
    indices: np.ndarray
    directed: bool
    name: str = "graph"
    ids: np.ndarray | None = None
    notes: dict = field(default_factory=dict)

    @property
    def num_vertices(self) -> int:
        return len(self.offsets) - 1

    @property
    def num_arcs(self) -> int:
        return len(self.indices)

    def degrees(self) -> np.ndarray:
        return np.diff(self.offsets)
