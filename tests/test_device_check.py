"""The check of a BFS result where it ran (explorer.reference.on_device, kernels/check.py): it
passes what check_result passes and fails every broken rule check_result names, and a run given it
keeps its arrays on the device only when it passed."""
import numpy as np
import pytest

from explorer import graphs
from explorer.api import Vertex, run_bfs
from explorer.engine import Session
from explorer.engine.runtime import for_technique
from explorer.reference import bfs_distances, check_result, cpu_bfs
from explorer.reference.on_device import DeviceCheck

UNDIRECTED = graphs.generate("kronecker", scale=6, edge_factor=4, seed=3)
# Levels 0 | 1 2 | 3 7 | 4 8 | 5 9, and 6 unreached.
DIRECTED = graphs.from_edges([0, 0, 1, 2, 3, 4, 5, 6, 2, 4, 3], [1, 2, 3, 3, 4, 5, 0, 0, 7, 9, 8], directed=True)


def _verdict(g, source, dist, parent) -> bool:
    """DeviceCheck's verdict on host arrays (copied to where the selected backend runs)."""
    rt = for_technique(frozenset({"gpu", "simulator"}))
    check = DeviceCheck(g, source, bfs_distances(g, source))
    with Session(g) as s:
        return check.passes(rt, s.graph_arrays(rt), rt.to_device(np.asarray(dist, np.int32)),
                            rt.to_device(np.asarray(parent, np.int32)))


def _faults(g, source):
    """(what, distances, parents): the CPU BFS's tree with one rule broken each."""
    d, p = (a.astype(np.int32) for a in cpu_bfs(g, source))
    reached = [v for v in range(g.num_vertices) if d[v] > 0]
    far = max(reached, key=lambda v: d[v])
    out = []

    def fault(what, v, dv=None, pv=None):
        d2, p2 = d.copy(), p.copy()
        if dv is not None:
            d2[v] = dv
        if pv is not None:
            p2[v] = pv
        out.append((what, d2, p2))

    fault("a distance one too many", far, dv=d[far] + 1)
    fault("the source's parent another vertex", source, pv=int(p[far]))
    fault("a parent out of range", far, pv=g.num_vertices)
    fault("a parent below -1", far, pv=-2)
    fault("a reached vertex without a parent", far, pv=-1)
    same = [u for u in reached if d[u] == d[far] and u != far]
    if same:
        fault("a parent on the child's own level", far, pv=same[0])
    wrong = [u for u in range(g.num_vertices)
             if d[u] == d[far] - 1 and far not in g.indices[g.offsets[u]:g.offsets[u + 1]]]
    if wrong:
        fault("a parent one level nearer without an arc", far, pv=wrong[0])
    unreached = [v for v in range(g.num_vertices) if d[v] < 0]
    if unreached:
        fault("an unreached vertex with a parent", unreached[0], pv=source)
    return out


@pytest.mark.parametrize("g", [UNDIRECTED, DIRECTED], ids=["undirected", "directed"])
def test_a_right_tree_passes_and_each_broken_rule_fails_as_on_the_host(g):
    source = int(np.argmax(g.degrees()))
    d, p = cpu_bfs(g, source)
    assert _verdict(g, source, d, p)
    faults = _faults(g, source)
    assert len(faults) >= 7  # the directed graph has all eight
    for what, d2, p2 in faults:
        assert not _verdict(g, source, d2, p2), what


def test_a_parent_must_have_the_arc_to_its_child_not_from_it():
    # 0 -> 1 -> 2 and 2 -> 0: vertex 2's parent 1 is right; 0 as its parent has only the arc 2 -> 0.
    g = graphs.from_edges([0, 1, 2, 0], [1, 2, 0, 3], directed=True)
    d = np.array([0, 1, 2, 1], np.int32)
    assert _verdict(g, 0, d, [0, 0, 1, 0])
    assert not _verdict(g, 0, d, [0, 0, 3, 0])  # 3 is on level 1 but has no arc to 2


def test_unsorted_rows_are_checked_as_sorted_ones():
    g = graphs.CSRGraph(np.array([0, 3, 4, 5, 6]), np.array([3, 1, 2, 0, 0, 0], np.int32), directed=False,
                        name="unsorted")
    d, p = cpu_bfs(g, 0)
    assert DeviceCheck(g, 0, d).marked and not DeviceCheck(UNDIRECTED, 0, bfs_distances(UNDIRECTED, 0)).marked
    assert _verdict(g, 0, d, p)
    assert not _verdict(g, 0, d, [0, 0, 1, 0])  # 1 and 2 share no arc
    # Directed, 0 -> 2, 1 (out of order), 1 -> 3, 2 -> 4: 3's parent must be 1, not 2.
    g = graphs.CSRGraph(np.array([0, 2, 3, 4, 4, 4]), np.array([2, 1, 3, 4], np.int32), directed=True, name="unsorted")
    d = np.array([0, 1, 1, 2, 2], np.int32)
    assert _verdict(g, 0, d, [0, 0, 0, 1, 2])
    assert not _verdict(g, 0, d, [0, 0, 0, 2, 2])


@pytest.mark.parametrize("technique,knobs", [
    ("topdown-queue", {}), ("direction-optimizing", {}), ("bitmap-direction", {"order": "none"}),
    ("bitmap-direction", {"order": "degree"}), ("bitmap-direction", {"order": "rcm"})])  # renumbered: mapped there
def test_a_run_checked_on_the_device_keeps_its_arrays_there_and_its_counts(technique, knobs):
    g, source = UNDIRECTED, int(np.argmax(UNDIRECTED.degrees()))
    check = DeviceCheck(g, source, bfs_distances(g, source))
    with Session(g) as s:
        plain = run_bfs(g, Vertex(source), technique, knobs, instrument=False, session=s).complete()
        checked = run_bfs(g, Vertex(source), technique, knobs, instrument=False, session=s, check=check).complete()
    assert check_result(g, plain).ok
    assert checked.distances is None and checked.parents is None and checked.validation == "ok"
    assert checked.traversed_edges == plain.traversed_edges and checked.num_levels == plain.num_levels


def test_a_run_that_fails_the_device_check_comes_back_for_the_hosts_report():
    g, source = UNDIRECTED, int(np.argmax(UNDIRECTED.degrees()))
    wrong = bfs_distances(g, source).copy()
    wrong[wrong.argmax()] += 1
    check = DeviceCheck(g, source, wrong)
    r = run_bfs(g, Vertex(source), "topdown-queue", instrument=False, check=check).complete()
    assert r.distances is not None and r.validation is None
    rep = check_result(g, r, expected=wrong)
    assert not rep.ok and rep.rule == "distances"


def test_a_check_of_another_source_or_graph_is_refused():
    g = UNDIRECTED
    check = DeviceCheck(g, 0, bfs_distances(g, 0))
    with pytest.raises(ValueError, match="from vertex 0, not of this run"):
        run_bfs(g, Vertex(1), "topdown-queue", check=check)
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        DeviceCheck(g, 0, np.zeros(3, np.int32))


def test_one_check_judges_each_result_alone():
    # Its failure count runs on between checks: a right tree after a wrong one still passes.
    g, source = UNDIRECTED, int(np.argmax(UNDIRECTED.degrees()))
    rt = for_technique(frozenset({"gpu", "simulator"}))
    check = DeviceCheck(g, source, bfs_distances(g, source))
    (_, d_bad, p_bad), = _faults(g, source)[:1]
    d, p = cpu_bfs(g, source)
    with Session(g) as s:
        verdicts = [check.passes(rt, s.graph_arrays(rt), rt.to_device(np.asarray(a, np.int32)),
                                 rt.to_device(np.asarray(b, np.int32)))
                    for a, b in ((d_bad, p_bad), (d, p), (d_bad, p_bad), (d, p))]
    assert verdicts == [False, True, False, True]


def test_arrays_of_another_length_or_type_are_left_to_the_host():
    g, source = UNDIRECTED, int(np.argmax(UNDIRECTED.degrees()))
    d, p = cpu_bfs(g, source)
    assert not _verdict(g, source, np.append(d, 0), np.append(p, 0))
    rt = for_technique(frozenset({"gpu", "simulator"}))
    check = DeviceCheck(g, source, bfs_distances(g, source))
    with Session(g) as s:
        assert not check.passes(rt, s.graph_arrays(rt), rt.to_device(d.astype(np.int64)), rt.to_device(p.astype(np.int64)))
