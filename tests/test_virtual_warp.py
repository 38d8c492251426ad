"""virtual-warp: Hong et al.'s static virtual warps. What makes them static: every level's record
shows the one W the knob set; as Hong et al., the virtual warps scan all vertices (W = 1 is
Harish's kernel), or take a frontier queue's entries with frontier='queue'."""
import numpy as np
import pytest

from explorer.reference import cpu_bfs
from explorer.techniques import KnobError, make_knobs
from explorer.techniques.virtual_warp import VirtualWarp

from _support import checked_run, small_graphs

SMALL = small_graphs()


@pytest.mark.parametrize("W", [1, 2, 8, 32])
@pytest.mark.parametrize("frontier", ["scan", "queue"])
def test_static_warp_size_and_what_is_scanned(W, frontier):
    g = SMALL["star40"] if W == 32 else SMALL["karate"]
    r = checked_run(g, "max-degree", "virtual-warp", {"W": W, "frontier": frontier, "block_threads": 32})
    d, _ = cpu_bfs(g, r.source)
    sizes = np.bincount(d[d >= 0]).tolist()
    deg = g.degrees()
    assert [lv.warp_size for lv in r.levels] == [W] * len(sizes)
    scanned = [g.num_vertices] * len(sizes) if frontier == "scan" else sizes
    assert [lv.vertices_scanned for lv in r.levels] == scanned
    # Lanes stride over the adjacency list: each entry examined once, by one lane.
    assert [lv.edges_examined for lv in r.levels] == [int(deg[d == i].sum()) for i in range(len(sizes))]
    assert all(lv.dup_generated == 0 and lv.launches == 1 for lv in r.levels)


def test_w1_scan_is_harish():
    g = SMALL["grid6x7"]
    vw = checked_run(g, 0, "virtual-warp", {"W": 1, "block_threads": 32})
    h = checked_run(g, 0, "harish", {"block_threads": 32})
    fields = ("frontier_in", "frontier_out", "edges_examined", "vertices_scanned")
    def rows(r):
        return [[getattr(lv, f) for f in fields] for lv in r.levels]

    assert rows(vw) == rows(h)


def test_queue_of_a_hub_across_blocks():
    # 40 leaves x W = 4 lanes: five blocks of 32 threads for the second level's queue.
    r = checked_run(SMALL["star40"], 1, "virtual-warp", {"W": 4, "frontier": "queue", "block_threads": 32})
    assert [lv.frontier_in for lv in r.levels] == [1, 1, 39]


def test_bad_knobs_name_the_knob():
    with pytest.raises(KnobError, match=r"knob W=3 .*one of 1, 2, 4, 8, 16, 32"):
        make_knobs("virtual-warp", {"W": 3})
    with pytest.raises(KnobError, match="knob frontier='list'"):
        make_knobs("virtual-warp", {"frontier": "list"})


def test_refuses_more_threads_than_it_can_index():
    class Huge:
        num_vertices = 2**27

    with pytest.raises(ValueError, match="W=32 exceed"):
        VirtualWarp().check(Huge(), make_knobs("virtual-warp", {"W": 32}), None)
    VirtualWarp().check(Huge(), make_knobs("virtual-warp", {"W": 8}), None)
