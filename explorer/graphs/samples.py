"""The graphs shipped in the top-level sample_graphs/ folder, by name (see its README.md)."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from .csr import CSRGraph, GraphError
from .io import load_graph

__all__ = ["SAMPLE_GRAPHS", "SAMPLES_DIR", "SampleGraph", "sample_graph", "sample_graph_path"]

SAMPLES_DIR = Path(__file__).resolve().parents[2] / "sample_graphs"


class SampleGraph(NamedTuple):
    file: str
    directed: bool  # the graph's natural reading; pass directed=/symmetrize= to override
    family: str
    origin: str


#: The graphs in sample_graphs/ and how each is naturally read (see sample_graphs/README.md).
SAMPLE_GRAPHS: dict[str, SampleGraph] = {
    "bfs4k_fig2": SampleGraph("bfs4k_fig2.txt", False, "teaching graph (BFS-4K Fig. 2)",
                              "hand-drawn for this project"),
    "facebook_combined": SampleGraph("facebook_combined.txt.gz", False,
                                     "social (SNAP ego-Facebook)", "SNAP"),
    "Wiki-Vote": SampleGraph("Wiki-Vote.txt.gz", True, "social voting (SNAP)", "SNAP"),
    "p2p-Gnutella31": SampleGraph("p2p-Gnutella31.txt.gz", True, "peer-to-peer (SNAP)", "SNAP"),
    "3elt": SampleGraph("3elt.mtx.gz", False, "2-D finite-element mesh (Walshaw)",
                        "SuiteSparse DIMACS10"),
    "delaunay_n16": SampleGraph("delaunay_n16.mtx.gz", False, "triangulation mesh (DIMACS10)",
                                "SuiteSparse DIMACS10"),
    "luxembourg_osm": SampleGraph("luxembourg_osm.mtx.gz", False,
                                  "road network (DIMACS10, OpenStreetMap)", "SuiteSparse DIMACS10"),
}


def _sample_key(name: str) -> str:
    if name in SAMPLE_GRAPHS:
        return name
    for key, info in SAMPLE_GRAPHS.items():
        if name.lower() in (key.lower(), info.file.lower()):
            return key
    raise GraphError(f"unknown sample graph {name!r}; available: {', '.join(SAMPLE_GRAPHS)}")


def sample_graph_path(name: str) -> Path:
    return SAMPLES_DIR / SAMPLE_GRAPHS[_sample_key(name)].file


def sample_graph(name: str, **opts) -> CSRGraph:
    """Load a graph of sample_graphs/ by name (a SAMPLE_GRAPHS key or its file name), read the
    way SAMPLE_GRAPHS says (directedness); `opts` override that and go to the loader."""
    key = _sample_key(name)
    opts = {"directed": SAMPLE_GRAPHS[key].directed, "name": key, **opts}
    return load_graph(SAMPLES_DIR / SAMPLE_GRAPHS[key].file, **opts)
