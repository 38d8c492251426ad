"""edge-parallel: Jia et al.'s thread per arc. What makes it edge-parallel: every level inspects
all |E| arcs (work O(E·D)) while only the frontier's arcs are expanded; the arcs' sources (COO)
are built once a session."""
import numpy as np
import pytest

from explorer import graphs
from explorer.api import run_bfs
from explorer.engine import Session
from explorer.reference import cpu_bfs
from explorer.techniques import edge_parallel

from _support import checked_run, small_graphs

SMALL = small_graphs()
KNOBS = {"block_threads": 32}


@pytest.mark.parametrize("name", ["fig2", "star40", "two-parts", "directed"])
def test_every_level_inspects_all_arcs(name):
    g = SMALL[name]
    r = checked_run(g, "max-degree", "edge-parallel", KNOBS)
    d, _ = cpu_bfs(g, r.source)
    assert [lv.arcs_inspected for lv in r.levels] == [g.num_arcs] * (d.max() + 1)
    deg = g.degrees()
    assert [lv.edges_examined for lv in r.levels] == [int(deg[d == i].sum()) for i in range(d.max() + 1)]
    assert all(lv.launches == 1 and lv.dup_generated == 0 for lv in r.levels)


def test_uninstrumented_counts_are_none():
    r = checked_run(SMALL["kron6"], "max-degree", "edge-parallel", KNOBS, instrument=False)
    assert all(lv.arcs_inspected is None and lv.edges_examined is None for lv in r.levels)


def test_arc_sources_are_the_coo_sources_in_csr_order():
    g = SMALL["directed"]
    (src,) = edge_parallel.arc_sources(g)
    assert src.dtype == np.int32 and len(src) == g.num_arcs
    for v in range(g.num_vertices):
        assert (src[g.offsets[v]:g.offsets[v + 1]] == v).all()
    (none,) = edge_parallel.arc_sources(graphs.from_edges(np.array([], np.int64), np.array([], np.int64),
                                                          num_vertices=3, name="edgeless"))
    assert len(none) == 0


def test_arc_sources_built_once_a_session(monkeypatch):
    calls = []
    build = edge_parallel.arc_sources
    monkeypatch.setattr(edge_parallel, "arc_sources", lambda g: calls.append(g.name) or build(g))
    g = SMALL["fig2"]
    with Session(g) as s:
        first = run_bfs(g, 0, "edge-parallel", KNOBS, session=s).complete()
        second = run_bfs(g, 1, "edge-parallel", KNOBS, session=s).complete()
    assert calls == [g.name]
    assert first.levels[0].arcs_inspected == second.levels[0].arcs_inspected == g.num_arcs
