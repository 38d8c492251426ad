"""Shared test support: small named graphs for kernel tests (every shape that has bitten a BFS
kernel, kept tiny so each runs under the CUDA simulator in seconds), and the check every GPU
result goes through."""
import networkx as nx
import numpy as np

from explorer import graphs
from explorer.api import run_bfs
from explorer.reference import check_result


def checked_run(g, source, technique, knobs=None, **kw):
    """Run a BFS and check it: exact distances against the CPU reference, a valid Graph500 tree,
    one record per level in order, and (when instrumented) every reached vertex discovered once."""
    run = run_bfs(g, source, technique, knobs, **kw)
    levels = list(run)
    r = run.result
    report = check_result(g, r)
    assert report.ok, report.message
    d = report.expected
    assert [lv.level for lv in levels] == list(range(len(levels))) == list(range(d.max() + 1))
    if r.instrumented:
        assert sum(lv.discovered for lv in levels) == r.reached - 1
    return r


def small_graphs() -> dict:
    karate = graphs.from_networkx(nx.karate_club_graph(), name="karate")
    two_parts = graphs.from_edges(np.array([0, 1, 2, 5, 6]), np.array([1, 2, 3, 6, 7]),
                                  num_vertices=9, directed=False, name="two-parts+isolated")
    return {
        "fig2": graphs.sample_graph("bfs4k_fig2"),
        "karate": karate,
        "grid6x7": graphs.generate("grid2d", rows=6, cols=7),
        "star40": graphs.from_edges(np.zeros(40, np.int64), np.arange(1, 41), directed=False, name="star40"),
        "path25": graphs.from_edges(np.arange(24), np.arange(1, 25), directed=False, name="path25"),
        "two-parts": two_parts,
        "directed": graphs.from_networkx(nx.gnp_random_graph(40, 0.08, seed=3, directed=True), name="gnp-directed"),
        "kron6": graphs.generate("kronecker", scale=6, edge_factor=8, seed=2),
    }
