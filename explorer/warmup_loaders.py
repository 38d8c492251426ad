"""The graph loaders' warm-up steps (explorer.warmup's "loaders" units): each loads or builds tiny
graphs in every form its code takes, so that Numba compiles the loaders' CPU code into its disk
cache."""
from __future__ import annotations

import tempfile
from pathlib import Path

#: Generator parameters that build in milliseconds (a generator missing here runs at its defaults).
TINY_GENERATORS = {
    "kronecker": {"scale": 6, "edge_factor": 4},
    "uniform_random": {"n": 64, "m": 256},
    "grid2d": {"rows": 4, "cols": 5},
    "grid3d": {"nx": 3, "ny": 3, "nz": 3},
    "luo_scale_free": {"n": 2000, "hub_fraction": 0.005, "hub_degree": 50, "avg_degree": 4, "max_degree": 5},
    "watts_strogatz": {"n": 64, "k": 4},
}


def _load_snap(tmp: Path) -> None:
    from . import graphs

    (tmp / "a.txt").write_text("# ids with gaps, as SNAP files have\n1 2\n2 5\n5 1\n7 2\n")
    (tmp / "w.txt").write_text("0 1 0.5\n1 2 1.5\n2 0 2.5\n")
    import gzip

    (tmp / "b.txt.gz").write_bytes(gzip.compress(b"0 1\n1 2\n"))
    for opts in ({}, {"directed": False}, {"symmetrize": True}, {"remap": False}):
        graphs.load_graph(tmp / "a.txt", cache=False, **opts)
    graphs.load_graph(tmp / "w.txt", cache=False)
    graphs.load_graph(tmp / "w.txt", cache=False, directed=False)
    graphs.load_graph(tmp / "b.txt.gz", cache=False)


def _load_matrix_market(tmp: Path) -> None:
    from . import graphs

    (tmp / "p.mtx").write_text("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 2\n")
    (tmp / "r.mtx").write_text("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 0.5\n2 3 1\n3 1 2\n")
    for f in ("p.mtx", "r.mtx"):
        graphs.load_graph(tmp / f, cache=False)
        graphs.load_graph(tmp / f, cache=False, directed=False)


def _load_metis(tmp: Path) -> None:
    from . import graphs

    (tmp / "a.graph").write_text("3 2\n2\n1 3\n2\n")
    (tmp / "w.graph").write_text("3 2 1\n2 4\n1 4 3 5\n2 5\n")
    for f in ("a.graph", "w.graph"):
        graphs.load_graph(tmp / f, cache=False)


def _generators(tmp: Path) -> None:
    from . import graphs

    for kind, spec in graphs.GENERATORS.items():
        graphs.generate(kind, cache=False, **TINY_GENERATORS.get(kind, {}))


def _reference(tmp: Path) -> None:
    import numpy as np

    from . import graphs
    from .reference import assert_valid_bfs, bfs_layers, cpu_bfs, traversed_edges

    for directed in (True, False):
        g = graphs.from_edges(np.array([0, 1, 2, 2]), np.array([1, 2, 0, 3]), 5, directed=directed)
        dist, parent = cpu_bfs(g, 0)
        assert_valid_bfs(g, 0, dist, parent)
        traversed_edges(g, dist)
        list(bfs_layers(g, [0]))
        graphs.graph_stats(g)


def _graph_cache(tmp: Path) -> None:
    import numpy as np

    from . import graphs
    from .graphs import cache

    for weights in (None, np.array([1.0, 2.0, 3.0])):
        g = graphs.from_edges(np.array([0, 1, 2]), np.array([1, 2, 0]), 3, weights=weights)
        path = tmp / f"g{weights is None}.npz"
        cache.store(path, g)
        cache.load(path)
    labelled = graphs.load_graph(_write(tmp / "ids.txt", "10 20\n20 30\n"), cache=False)
    cache.store(tmp / "ids.npz", labelled)
    cache.load(tmp / "ids.npz")


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _in_tmp(step):
    def run():
        with tempfile.TemporaryDirectory(prefix="bfs4k-warmup-") as d:
            step(Path(d))
    return run


_LOADERS = {"snap": _in_tmp(_load_snap), "matrix-market": _in_tmp(_load_matrix_market),
            "metis": _in_tmp(_load_metis), "generators": _in_tmp(_generators),
            "reference": _in_tmp(_reference), "graph-cache": _in_tmp(_graph_cache)}
