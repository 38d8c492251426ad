"""What networkx reads about the backend before loading it (the `networkx.backend_info` entry
point). networkx calls get_info() while it is being imported: this module imports nothing."""

_TECHNIQUE = ("technique : str, optional",
              "The explorer technique a single-source search runs (`python3 -m explorer techniques`), or "
              "'auto': the technique and its knobs chosen per graph by a calibrated cost model "
              "(explorer.auto); default nx.config.backends.bfs4k.technique ('auto'). Naming a technique "
              "always runs it, with the given knobs.")
_KNOBS = ("knobs : dict, optional",
          "The named technique's knobs (`python3 -m explorer knobs --technique NAME`); default "
          "nx.config.backends.bfs4k.knobs. Under the simulator the technique's small simulator "
          "knobs come first. 'auto' sets its own: knobs with it (here or in the config) are an error.")
_METHOD = ("multisearch : str, optional",
           "The multi-search method (explorer.multisearch.Method: 'warp-thread', 'warp-based', "
           "'work-efficient', 'edge-parallel', 'bit-parallel'); default nx.config.backends.bfs4k.method.")

_SSSP_TECHNIQUE = ("technique : str, optional",
                   "The shortest-path technique (explorer.sssp: 'bellman-ford', 'h-bf', 'delta-stepping'); default "
                   "nx.config.backends.bfs4k.dijkstra_technique or bellman_ford_technique, by the function's name.")
_SSSP_KNOBS = ("knobs : dict, optional", "The technique's knobs (`python3 -m explorer sssp --list`).")
_APSP = ("method : str, optional",
         "'floyd-warshall' or 'johnson' (explorer.sssp.apsp); default: Floyd-Warshall up to "
         "nx.config.backends.bfs4k.floyd_warshall_max_n vertices, Johnson's way above.")
_WEIGHTED = ("Weighted distances (the `weight` edge attribute; a weight function runs on networkx) from "
             "explorer.sssp.run_sssp; whole-number weights give ints, nearest nodes first.")
_WEIGHTED_DIJKSTRA = _WEIGHTED + " Negative weights run on networkx (its Dijkstra's own behaviour)."
_ALL_PAIRS = ("All pairs by explorer.sssp.apsp.run_apsp (the blocked Floyd-Warshall, or Johnson's way on "
              "large graphs); a negative cycle is not an error (networkx's matrices hold what their loops "
              "leave there, these what the blocked rounds leave: both meaningless there).")

_SINGLE = "Distances from a single-source search (explorer.api.run_bfs); the order of the output " \
          "is networkx's, rebuilt on the host from the distances and the graph's neighbour order."
_MANY = "Every source at once through explorer.multisearch.run_many."

#: name -> (what the backend does, its extra parameters)
FUNCTIONS = {
    "bfs_edges": (_SINGLE + " sort_neighbors runs on networkx.", (_TECHNIQUE, _KNOBS)),
    "bfs_tree": (_SINGLE + " sort_neighbors runs on networkx.", (_TECHNIQUE, _KNOBS)),
    "bfs_predecessors": (_SINGLE + " sort_neighbors runs on networkx.", (_TECHNIQUE, _KNOBS)),
    "bfs_successors": (_SINGLE + " sort_neighbors runs on networkx.", (_TECHNIQUE, _KNOBS)),
    "bfs_layers": (_SINGLE + " Several sources: one search from a super-source.", (_TECHNIQUE, _KNOBS)),
    "bfs_labeled_edges": (_SINGLE + " Several sources: one search from a super-source.", (_TECHNIQUE, _KNOBS)),
    "generic_bfs_edges": (_SINGLE + " A given `neighbors` function runs on networkx.", (_TECHNIQUE, _KNOBS)),
    "descendants": (_SINGLE, (_TECHNIQUE, _KNOBS)),
    "ancestors": (_SINGLE + " Directed graphs search the in-arcs.", (_TECHNIQUE, _KNOBS)),
    "descendants_at_distance": (_SINGLE, (_TECHNIQUE, _KNOBS)),
    "single_source_shortest_path_length": (_SINGLE, (_TECHNIQUE, _KNOBS)),
    "single_target_shortest_path_length": (_SINGLE + " Directed graphs search the in-arcs.", (_TECHNIQUE, _KNOBS)),
    "all_pairs_shortest_path_length": (
        _MANY + " Each dict lists its targets level by level, within a level in the graph's node "
                "order (networkx: discovery order); the dicts are equal.", (_METHOD,)),
    "shortest_path_length": (_SINGLE + " No source and no target: as all_pairs_shortest_path_length. With a "
                                       "weight: as the weighted functions (technique= and knobs= are then "
                                       "explorer.sssp's).", (_TECHNIQUE, _KNOBS, _METHOD)),
    "single_source_dijkstra_path_length": (_WEIGHTED_DIJKSTRA, (_SSSP_TECHNIQUE, _SSSP_KNOBS)),
    "dijkstra_path_length": (_WEIGHTED_DIJKSTRA, (_SSSP_TECHNIQUE, _SSSP_KNOBS)),
    "bellman_ford_path_length": (_WEIGHTED + " A negative cycle the search reaches raises NetworkXUnbounded.",
                                 (_SSSP_TECHNIQUE, _SSSP_KNOBS)),
    "single_source_bellman_ford_path_length": (_WEIGHTED + " A negative cycle the search reaches raises "
                                               "NetworkXUnbounded.", (_SSSP_TECHNIQUE, _SSSP_KNOBS)),
    "all_pairs_dijkstra_path_length": (_ALL_PAIRS + " Negative weights run on networkx.", (_APSP,)),
    "floyd_warshall": (_ALL_PAIRS, (_APSP,)),
    "floyd_warshall_numpy": (_ALL_PAIRS, (_APSP,)),
    "negative_edge_cycle": ("Bellman-Ford from Johnson's virtual source (every vertex at distance 0): a negative "
                            "cycle anywhere. `heuristic` changes nothing.", (_SSSP_TECHNIQUE, _SSSP_KNOBS)),
    "has_path": (_SINGLE, (_TECHNIQUE, _KNOBS)),
    "closeness_centrality": (_MANY + " Unweighted only (distance=None).", (_METHOD,)),
    "betweenness_centrality": (_MANY + " Brandes' algorithm, exact or from k sampled sources (the "
                                       "same sample as networkx for the same seed); unweighted only.",
                               (_METHOD,)),
    "eccentricity": (_MANY + " Without sp. With a weight: the rows of the all-pairs matrix (whole-number "
                             "weights), else one search per node; negative weights run on networkx.", (_METHOD,)),
    "diameter": (_MANY + " Without e; usebounds=True on an undirected graph runs on networkx. With a weight: "
                         "as eccentricity.", (_METHOD,)),
    "node_connected_component": (_SINGLE, (_TECHNIQUE, _KNOBS)),
    "connected_components": (_SINGLE + " One search per component of two or more nodes.", (_TECHNIQUE, _KNOBS)),
    "is_connected": (_SINGLE, (_TECHNIQUE, _KNOBS)),
}

#: nx.config.backends.bfs4k
DEFAULT_CONFIG = {
    # Single-source searches run this technique with these knobs (a call's technique=/knobs= win);
    # "auto" chooses the technique and its knobs per graph (explorer.auto), so it takes no knobs.
    "technique": "auto",
    "knobs": {},
    # The multi-search method of the all-sources functions.
    "method": "warp-thread",
    # The weighted functions' techniques (explorer.sssp), by the function's name, and the largest
    # graph whose all-pairs functions run the blocked Floyd-Warshall (Johnson's way above).
    "dijkstra_technique": "delta-stepping",
    "bellman_ford_technique": "h-bf",
    "floyd_warshall_max_n": 4096,
    # should_run: automatic dispatch (nx.config.backend_priority) takes calls of at least this much
    # work (arcs, times the sources for all-sources functions) to the GPU; smaller ones stay on
    # networkx. backend="bfs4k" always runs.
    "min_work": 50_000,
    # Search results kept, by graph structure (bytes; 0 keeps none). See searches.py.
    "cache_bytes": 256 * 2**20,
    # Graphs whose vertices x arcs is at most this get every row of the distance matrix from one
    # multi-search on the first distance asked (0: never).
    "matrix_work": 8192,
    # Under the CUDA simulator (every GPU thread a Python thread, a level of a search costs
    # milliseconds) the backend takes graphs of at most this many arcs, and all-sources functions
    # graphs of at most this many vertices x arcs; larger ones are declined (can_run says so).
    # A GPU takes any.
    "simulator_max_arcs": 2_000,
    "simulator_max_work": 65536,
}


def get_info() -> dict:
    """The backend's metadata for networkx (docs of each function's Backends section, defaults)."""
    functions = {
        name: {"additional_docs": doc,
               "additional_parameters": {p: d for p, d in params}}
        for name, (doc, params) in FUNCTIONS.items()
    }
    return {
        "backend_name": "bfs4k",
        "project": "bfs4k-explorer",
        "package": "bfs4k-explorer",
        "short_summary": "GPU breadth-first search (BFS-4K and other techniques) and weighted shortest paths "
                         "(H-BF, Δ-stepping, Floyd-Warshall; Numba CUDA; the CUDA simulator on small graphs)",
        "functions": functions,
        "default_config": dict(DEFAULT_CONFIG),
    }
