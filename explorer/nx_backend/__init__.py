"""A networkx backend ("bfs4k") on the explorer's engine: networkx code keeps its calls and runs
them on the GPU (or Numba's CUDA simulator, small graphs only).

    import networkx as nx
    nx.bfs_layers(G, s, backend="bfs4k")                 # one call
    NETWORKX_BACKEND_PRIORITY=bfs4k python3 my_script.py  # every call worth a GPU (should_run)

  info.py        get_info(): the functions and their extra parameters, the config's defaults
                 (networkx reads it while importing: it imports nothing)
  interface.py   what networkx loads: convert_from_nx/convert_to_nx, can_run, should_run,
                 on_start_tests, the functions
  graph.py       BFS4KGraph: nodes of any hashable type as 0..n-1, the CSR in networkx's
                 neighbour order, in-arcs of directed graphs; the one conversion of nodes in
                 (`id_of`, `index`) and out (`names`, `label_array`)
  searches.py    the searches the functions run on the explorer's engine (technique and knobs,
                 run_bfs / super-source / run_many, all on vertices 0..n-1), the result store
  order.py       networkx's output orders rebuilt from the distances
  traversal.py, paths.py, centrality.py, components.py   the functions
  testing.py     a pytest plugin: which networkx tests dispatched to bfs4k, which fell back and why

Importing this package imports neither networkx nor numba.
"""
from .info import get_info

__all__ = ["get_info"]
