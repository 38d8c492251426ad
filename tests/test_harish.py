"""harish: Harish & Narayanan's queue-free BFS. What makes it Harish: every level scans all |V|
vertices whatever the frontier (work O(V·D + E)), one launch a level, and it is the CS406 report's
layer-based top-down (no separate technique for that)."""
import numpy as np
import pytest

from explorer import graphs
from explorer.reference import cpu_bfs
from explorer.techniques import Technique, implemented_techniques

from _support import checked_run, small_graphs

SMALL = small_graphs()
KNOBS = {"block_threads": 32}


@pytest.mark.parametrize("name", ["path25", "star40", "two-parts", "directed"])
def test_every_level_scans_all_vertices(name):
    g = SMALL[name]
    r = checked_run(g, "max-degree", "harish", KNOBS)
    d, _ = cpu_bfs(g, r.source)
    assert [lv.vertices_scanned for lv in r.levels] == [g.num_vertices] * (d.max() + 1)
    # ... while the frontier is the level's vertices, and only their adjacency is expanded.
    deg = g.degrees()
    assert [lv.frontier_in for lv in r.levels] == np.bincount(d[d >= 0]).tolist()
    assert [lv.edges_examined for lv in r.levels] == [int(deg[d == i].sum()) for i in range(d.max() + 1)]
    assert sum(lv.vertices_scanned for lv in r.levels) == g.num_vertices * len(r.levels)  # V·D


def test_one_launch_a_level_and_no_duplicates():
    r = checked_run(SMALL["grid6x7"], 0, "harish", KNOBS)
    assert all(lv.launches == 1 and lv.dup_generated == 0 and lv.kernel.value == "multi-block" for lv in r.levels)
    assert r.levels[-1].frontier_out == 0 and all(lv.frontier_out == lv.discovered for lv in r.levels)


def test_uninstrumented_counts_are_none_and_answer_unchanged():
    g = SMALL["kron6"]
    full = checked_run(g, "max-degree", "harish", KNOBS)
    bare = checked_run(g, "max-degree", "harish", KNOBS, instrument=False)
    assert np.array_equal(full.distances, bare.distances)
    assert all(lv.vertices_scanned is None and lv.edges_examined is None for lv in bare.levels)
    assert [lv.frontier_in for lv in bare.levels] == [lv.frontier_in for lv in full.levels]


def test_several_blocks_and_a_partial_last_block():
    # 40 vertices over blocks of 32: two blocks, the second a quarter full; every vertex read once.
    g = graphs.from_edges(np.arange(39), np.arange(1, 40), directed=False, name="path40")
    r = checked_run(g, 0, "harish", KNOBS)
    assert len(r.levels) == 40 and {lv.vertices_scanned for lv in r.levels} == {40}


def test_layer_based_top_down_is_harish_not_a_technique_of_its_own():
    assert not any("layer" in t.value for t in Technique)
    assert "layer-based" in Technique.HARISH.doc and "§5.1" in Technique.HARISH.doc
    assert "frontier-based" in Technique.TOPDOWN_QUEUE.doc
    assert Technique.HARISH in implemented_techniques()
