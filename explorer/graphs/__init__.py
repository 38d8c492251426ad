"""Graphs in CSR form: the one type every part of the explorer reads, and every way to get one.

  csr.py         CSRGraph (offsets, indices, optional weights and original ids) and GraphError
  build.py       the CSR builder; from_edges, from_networkx, from_scipy
  io.py, text.py SNAP, Matrix Market and METIS files; load_graph picks by extension
  generators.py  seeded generators of the papers' graph families; generator_size
  weights.py     seeded weights for shortest paths (the generators' weights= option), unit weights
  samples.py     the graphs of sample_graphs/
  cache.py       the on-disk cache of parsed and generated graphs
  stats.py       BFS-4K Table 1 statistics
  memory.py      the memory check made before large allocations

Vertex ids. Inside the explorer vertices are 0..n-1. "The file's own ids" are what a user reads
in the input, and they map to 0..n-1 like this:
  SNAP edge lists, from_edges(remap=True), networkx integer labels: ids are labels, possibly
    sparse (1..4, 101..112, up to 2**58). They are remapped to 0..n-1 in increasing order and
    kept in `CSRGraph.original_ids` (original_ids[v] is the label of vertex v; None when the
    labels already are 0..n-1). Only vertices that occur in some edge exist after remapping.
    remap=False keeps the id space instead (n = largest id + 1; gaps are isolated vertices).
  Matrix Market, METIS: the format numbers vertices 1..n (a row, a line), not by label; vertex v
    is row/line v+1, as scipy and networkx read these files, and original_ids is None.
  Generators, from_scipy, from_edges without remap: the ids are 0..n-1 already.
`graph.to_dense(file_id)` and `graph.to_original(v)` translate, and to_dense raises GraphError
naming the id and the input when the input has no such id. The entry points (run_bfs, run_many,
the CLI, the Explorer, the networkx backend) take the user's ids and translate them once; code
that holds vertices 0..n-1 passes them as `Vertex(v)` / `Vertices(vs)`, never as ids.

Weights. `CSRGraph.weights` (float64, aligned with indices, or None) comes from a Matrix Market
file's values, a SNAP file's third column, METIS edge weights, a networkx weight attribute,
scipy matrix values, from_edges(weights=...) or a generator's weights='uniform'/'integer' (seeded,
both arcs of an edge alike; with_weights draws them for any graph). Merged multi-edges keep the
smallest weight (graph.notes says so), symmetrized arcs carry their edge's weight; the BFS ignores
them, shortest paths (explorer.sssp) read them.
"""
from .build import from_edges, from_networkx, from_scipy
from .cache import cache_dir
from .csr import CSRGraph, GraphError, Vertex, Vertices, resolve_source
from .generators import (GENERATORS, GeneratorSpec, generate, generator_size, grid2d, grid3d,
                         kronecker, luo_scale_free, uniform_random, watts_strogatz)
from .io import load_graph, load_matrix_market, load_metis, load_snap
from .samples import SAMPLE_GRAPHS, SAMPLES_DIR, SampleGraph, sample_graph, sample_graph_path
from .stats import SearchFeatures, degree_histogram, graph_stats, keep_search_features, search_features
from .weights import WEIGHT_KINDS, unit_weights, with_weights

__all__ = [
    "CSRGraph",
    "GraphError",
    "Vertex",
    "Vertices",
    "resolve_source",
    "with_weights",
    "unit_weights",
    "WEIGHT_KINDS",
    "from_edges",
    "from_networkx",
    "from_scipy",
    "load_snap",
    "load_matrix_market",
    "load_metis",
    "load_graph",
    "sample_graph",
    "sample_graph_path",
    "SAMPLE_GRAPHS",
    "SAMPLES_DIR",
    "SampleGraph",
    "generate",
    "generator_size",
    "GENERATORS",
    "GeneratorSpec",
    "kronecker",
    "uniform_random",
    "grid2d",
    "grid3d",
    "luo_scale_free",
    "watts_strogatz",
    "graph_stats",
    "search_features",
    "keep_search_features",
    "SearchFeatures",
    "degree_histogram",
    "cache_dir",
]
