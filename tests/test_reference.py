"""Tests for explorer.reference: cpu_bfs, traversed_edges, the Graph500 validator."""
from __future__ import annotations

import types
from collections import deque

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import graphs
from explorer.graphs import CSRGraph
from explorer.reference import (
    RULES,
    CheckReport,
    ValidationError,
    ValidationReport,
    assert_valid_bfs,
    bfs_distances,
    bfs_layers,
    check_result,
    compare_distances,
    cpu_bfs,
    traversed_edges,
    validate,
)
from explorer.stats import RunResult


# ---------------------------------------------------------------------------------------------
# Helpers


def _csr(G: nx.Graph, name: str = "test") -> CSRGraph:
    """CSRGraph from a networkx graph whose nodes are 0..n-1 (private until graphs.from_networkx
    lands). Undirected self loops become a single arc, as in graphs.py."""
    n = G.number_of_nodes()
    assert set(G.nodes) == set(range(n))
    A = nx.to_scipy_sparse_array(G, nodelist=range(n), format="csr")
    return CSRGraph(
        A.indptr.astype(np.int64), A.indices.astype(np.int32), directed=G.is_directed(), name=name
    )


def _arcs(n: int, arcs, directed: bool) -> CSRGraph:
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(range(n))
    G.add_edges_from(arcs)
    return _csr(G)


def _py_bfs(g: CSRGraph, s: int):
    """Plain-Python queue BFS over the same CSR arc order: the expected deterministic parents."""
    n = g.num_vertices
    dist = [-1] * n
    par = [-1] * n
    dist[s], par[s] = 0, s
    q = deque([s])
    while q:
        u = q.popleft()
        for v in g.indices[g.offsets[u] : g.offsets[u + 1]]:
            v = int(v)
            if dist[v] < 0:
                dist[v], par[v] = dist[u] + 1, u
                q.append(v)
    return np.array(dist), np.array(par)


def _check_against_networkx(G: nx.Graph, g: CSRGraph, s: int) -> None:
    d, p = cpu_bfs(g, s)
    assert d.dtype == np.int32 and p.dtype == np.int32
    assert d.shape == p.shape == (g.num_vertices,)
    # Level by level against networkx.
    layers = list(nx.bfs_layers(G, s))
    for level, layer in enumerate(layers):
        assert sorted(np.flatnonzero(d == level)) == sorted(layer), f"level {level}"
    reached = {v for layer in layers for v in layer}
    assert set(np.flatnonzero(d >= 0)) == reached
    assert np.all(p[d < 0] == -1)
    assert p[s] == s
    # Deterministic parents: the first discoverer in queue order.
    ed, ep = _py_bfs(g, s)
    np.testing.assert_array_equal(d, ed)
    np.testing.assert_array_equal(p, ep)
    report = validate(g, s, d, p)
    assert report.ok and report.rule is None, report.message


def _named_graphs():
    disconnected = nx.disjoint_union(nx.path_graph(4), nx.cycle_graph(5))
    disconnected.add_node(9)  # isolated vertex
    directed = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (5, 3), (4, 6), (6, 4)])
    directed.add_node(7)
    return {
        "karate": nx.karate_club_graph(),
        "path": nx.path_graph(10),
        "star": nx.star_graph(8),
        "grid": nx.convert_node_labels_to_integers(nx.grid_2d_graph(5, 6)),
        "directed": directed,
        "random-directed": nx.gnp_random_graph(40, 0.06, seed=3, directed=True),
        "disconnected": disconnected,
        "single": nx.empty_graph(1),
        "self-loops": nx.Graph([(0, 0), (0, 1), (1, 2), (2, 2)]),
    }


NAMED = _named_graphs()


# ---------------------------------------------------------------------------------------------
# cpu_bfs


@pytest.mark.parametrize("name", sorted(NAMED))
def test_cpu_bfs_matches_networkx_on_named_graphs(name):
    G = NAMED[name]
    g = _csr(G, name)
    for s in range(g.num_vertices):
        _check_against_networkx(G, g, s)


def test_cpu_bfs_path_values():
    g = _csr(nx.path_graph(5))
    d, p = cpu_bfs(g, 2)
    assert d.tolist() == [2, 1, 0, 1, 2]
    assert p.tolist() == [1, 2, 2, 2, 3]


def test_cpu_bfs_directed_follows_out_arcs_only():
    g = _arcs(4, [(0, 1), (1, 2), (3, 0)], directed=True)
    d, p = cpu_bfs(g, 1)
    assert d.tolist() == [-1, 0, 1, -1]
    assert p.tolist() == [-1, 1, 1, -1]


def test_cpu_bfs_first_discoverer_wins():
    # 3 is adjacent to both 1 and 2; 1 is dequeued first, so it is the parent.
    g = _arcs(4, [(0, 1), (0, 2), (1, 3), (2, 3)], directed=False)
    _, p = cpu_bfs(g, 0)
    assert p[3] == 1


@st.composite
def graphs_and_sources(draw):
    n = draw(st.integers(1, 25))
    directed = draw(st.booleans())
    arcs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=3 * n))
    G = nx.DiGraph() if directed else nx.Graph()
    G.add_nodes_from(range(n))  # keeps isolated vertices
    G.add_edges_from(arcs)
    return G, draw(st.integers(0, n - 1))


@settings(max_examples=150, deadline=None)
@given(graphs_and_sources())
def test_cpu_bfs_matches_networkx_on_random_graphs(gs):
    G, s = gs
    _check_against_networkx(G, _csr(G), s)


@settings(max_examples=150, deadline=None)
@given(graphs_and_sources())
def test_bfs_distances_are_cpu_bfs_distances_in_both_forms(gs):
    # Small, dense graphs take the bottom-up levels as often as the top-down ones.
    from explorer._twoform import parallel_forms

    G, s = gs
    g = _csr(G)
    expected = cpu_bfs(g, s)[0]
    assert np.array_equal(bfs_distances(g, s), expected)
    with parallel_forms():
        assert np.array_equal(bfs_distances(g, s), expected)


@pytest.mark.parametrize("kind,params", [("kronecker", {"scale": 11}), ("grid2d", {"rows": 40, "cols": 60}),
                                         ("watts_strogatz", {"n": 3000})])
def test_bfs_distances_switch_direction_and_back_on_generated_graphs(kind, params):
    # The Kronecker and small-world graphs' wide middle levels go bottom-up, the narrow ones after
    # them top-down again (the frontier listed anew from the distances); the grid's stay top-down.
    from explorer._twoform import parallel_forms

    g = graphs.generate(kind, cache=False, **params)
    for s in (int(np.argmax(g.degrees())), 0, g.num_vertices - 1):
        expected = cpu_bfs(g, s)[0]
        with parallel_forms():
            assert np.array_equal(bfs_distances(g, s), expected)
        assert np.array_equal(bfs_distances(g, s), expected)


# ---------------------------------------------------------------------------------------------
# Bad source


BAD_SOURCES = [-1, -7, 5, 6, 100, 1.0, 2.5, "1", None, True, np.float64(1.0)]


@pytest.mark.parametrize("bad", BAD_SOURCES, ids=repr)
def test_bad_source_raises_value_error(bad):
    g = _csr(nx.path_graph(5))
    with pytest.raises(ValueError) as exc:
        cpu_bfs(g, bad)
    msg = str(exc.value)
    assert repr(bad) in msg or str(bad) in msg  # names the id
    assert "[0, 5)" in msg  # and the valid range
    d, p = cpu_bfs(g, 0)
    with pytest.raises(ValueError, match=r"\[0, 5\)"):
        validate(g, bad, d, p)


def test_numpy_integer_source_accepted():
    g = _csr(nx.path_graph(5))
    for s in (np.int32(3), np.int64(3), np.uint8(3)):
        d, _ = cpu_bfs(g, s)
        assert d[3] == 0


# ---------------------------------------------------------------------------------------------
# traversed_edges


def test_traversed_edges_undirected_by_hand():
    # path 0-1-2, triangle 3-4-5, isolated 6
    g = _arcs(7, [(0, 1), (1, 2), (3, 4), (4, 5), (5, 3)], directed=False)
    assert traversed_edges(g, cpu_bfs(g, 0)[0]) == 2
    assert traversed_edges(g, cpu_bfs(g, 4)[0]) == 3
    assert traversed_edges(g, cpu_bfs(g, 6)[0]) == 0


def test_traversed_edges_self_loop_counted_once():
    # edges {0,1}, {1,1}, {1,2}, {2,2}: degrees 1, 3, 2 in CSR (each loop one arc) -> 4 edges
    g = _arcs(3, [(0, 1), (1, 1), (1, 2), (2, 2)], directed=False)
    assert g.degrees().tolist() == [1, 3, 2]
    assert traversed_edges(g, cpu_bfs(g, 0)[0]) == 4


def test_traversed_edges_directed_by_hand():
    # 0->1->2->0 cycle, 3->0, 2->2 loop
    g = _arcs(4, [(0, 1), (1, 2), (2, 0), (3, 0), (2, 2)], directed=True)
    assert traversed_edges(g, cpu_bfs(g, 0)[0]) == 4  # arcs leaving {0,1,2}, loop included
    assert traversed_edges(g, cpu_bfs(g, 3)[0]) == 5  # every arc
    g = _arcs(2, [(0, 1)], directed=True)
    assert traversed_edges(g, cpu_bfs(g, 1)[0]) == 0


def test_traversed_edges_karate():
    g = _csr(nx.karate_club_graph())
    assert traversed_edges(g, cpu_bfs(g, 0)[0]) == 78


def test_traversed_edges_bad_shape():
    g = _csr(nx.path_graph(3))
    with pytest.raises(ValueError, match="shape"):
        traversed_edges(g, np.zeros(4, np.int32))


# ---------------------------------------------------------------------------------------------
# Validator: accepts correct results


def test_validate_accepts_any_int_dtype_and_lists():
    g = _csr(nx.karate_club_graph())
    d, p = cpu_bfs(g, 5)
    for conv in (lambda a: a.astype(np.int64), lambda a: a.tolist()):
        assert validate(g, 5, conv(d), conv(p)).ok


def test_validate_accepts_other_valid_parents():
    # Square 0-1-2-3-0: 2 may hang from 1 or 3; both are valid BFS trees.
    g = _arcs(4, [(0, 1), (1, 2), (2, 3), (3, 0)], directed=False)
    d = np.array([0, 1, 2, 1], np.int32)
    assert validate(g, 0, d, np.array([0, 0, 1, 0], np.int32)).ok
    assert validate(g, 0, d, np.array([0, 0, 3, 0], np.int32)).ok


def test_validate_directed_backward_arc_may_span_levels():
    g = _arcs(4, [(0, 1), (1, 2), (2, 3), (3, 0)], directed=True)
    d, p = cpu_bfs(g, 0)
    assert d.tolist() == [0, 1, 2, 3]
    report = validate(g, 0, d, p)
    assert report.ok, report.message


def test_report_and_error_types():
    ok = ValidationReport(True, None, "fine")
    assert ok.raise_if_failed() is ok
    bad = ValidationReport(False, "source", "source vertex 0 has distance 3, expected 0")
    with pytest.raises(ValidationError) as exc:
        bad.raise_if_failed()
    assert isinstance(exc.value, AssertionError)
    assert exc.value.rule == "source" and exc.value.report is bad
    assert "source vertex 0" in str(exc.value)
    with pytest.raises(Exception):
        ok.ok = False  # frozen


# ---------------------------------------------------------------------------------------------
# Validator: one test per rule


def _expect(report: ValidationReport, rule: str, *words: str) -> None:
    assert rule in RULES
    assert not report.ok
    assert report.rule == rule, report
    for w in words:
        assert w in report.message, report.message
    with pytest.raises(ValidationError, match=rule):
        report.raise_if_failed()


@pytest.fixture
def path5():
    g = _csr(nx.path_graph(5))  # 0-1-2-3-4
    d, p = cpu_bfs(g, 0)
    return g, d.copy(), p.copy()


def test_rule_shape(path5):
    g, d, p = path5
    _expect(validate(g, 0, d[:-1], p), "shape", "distances", "(4,)", "(5,)")
    _expect(validate(g, 0, d, np.append(p, 0)), "shape", "parents", "(6,)")
    _expect(validate(g, 0, d.reshape(5, 1), p), "shape", "distances")
    _expect(validate(g, 0, d.astype(np.float64), p), "shape", "float64")


def test_rule_range(path5):
    g, d, p = path5
    d2 = d.copy()
    d2[3] = -5
    _expect(validate(g, 0, d2, p), "range", "vertex 3", "-5")
    p2 = p.copy()
    p2[2] = 5
    _expect(validate(g, 0, d, p2), "range", "vertex 2", "parent 5")


def test_rule_source(path5):
    g, d, p = path5
    # Asking about the wrong source: vertex 2 has distance 2, not 0.
    _expect(validate(g, 2, d, p), "source", "source vertex 2", "distance 2")
    p2 = p.copy()
    p2[0] = 1
    _expect(validate(g, 0, d, p2), "source", "source vertex 0", "parent 1")


def test_rule_no_cycles_two_vertices():
    # Triangle 0-1-2 plus 1-3, 2-3. BFS from 0: d = [0, 1, 1, 2].
    g = _arcs(4, [(0, 1), (1, 2), (2, 0), (1, 3), (2, 3)], directed=False)
    d, p = cpu_bfs(g, 0)
    p = p.copy()
    p[1], p[2] = 2, 1  # 1 and 2 point at each other: neither reaches the source
    _expect(validate(g, 0, d, p), "no-cycles", "1 -> 2 -> 1")
    # Detected even when distances are made consistent-looking around the cycle.
    _expect(validate(g, 0, np.array([0, 1, 2, 2], np.int32), p), "no-cycles")


def test_rule_no_cycles_self_parent():
    g = _csr(nx.path_graph(3))
    d, p = cpu_bfs(g, 0)
    p = p.copy()
    p[2] = 2
    _expect(validate(g, 0, d, p), "no-cycles", "2 -> 2")


def test_rule_tree_edge_levels():
    # Path 0-1-2-3 plus 0-2. BFS from 0: d = [0, 1, 1, 2].
    g = _arcs(4, [(0, 1), (1, 2), (2, 3), (0, 2)], directed=False)
    d, p = cpu_bfs(g, 0)
    assert p[3] == 2
    d2 = d.copy()
    d2[3] = 3  # tree edge 2 -> 3 now skips a level (1 -> 3)
    _expect(validate(g, 0, d2, p), "tree-edge-levels", "2 -> 3", "level 1", "level 3")
    # Same level: 2 hangs from 1, both at level 1.
    p2 = p.copy()
    p2[2] = 1
    _expect(validate(g, 0, d, p2), "tree-edge-levels", "1 -> 2")


def test_rule_tree_edge_levels_parent_unreached():
    # 1 claims level 0 with an unreached parent 2: d[1] == d[2] + 1 must not fool the rule.
    g = _arcs(3, [(0, 1), (2, 1)], directed=True)
    d = np.array([0, 0, -1], np.int32)
    p = np.array([0, 2, -1], np.int32)
    _expect(validate(g, 0, d, p), "tree-edge-levels", "vertex 1", "parent 2", "unreached")


def test_rule_graph_edge_levels_undirected():
    # Cycle 0-1-2-3-0, but the result walks it as a path: edge {3, 0} spans levels 3 and 0.
    g = _arcs(4, [(0, 1), (1, 2), (2, 3), (3, 0)], directed=False)
    d = np.array([0, 1, 2, 3], np.int32)
    p = np.array([0, 0, 1, 2], np.int32)
    _expect(validate(g, 0, d, p), "graph-edge-levels", "{0, 3}", "level 0", "level 3")


def test_rule_graph_edge_levels_directed():
    # 0->1->2->3 and the shortcut 0->3: 3 is really at level 1.
    g = _arcs(4, [(0, 1), (1, 2), (2, 3), (0, 3)], directed=True)
    d = np.array([0, 1, 2, 3], np.int32)
    p = np.array([0, 0, 1, 2], np.int32)
    _expect(validate(g, 0, d, p), "graph-edge-levels", "arc 0 -> 3", "level 3")


def test_rule_spanning_reachable_but_unreached(path5):
    g, d, p = path5
    d[4], p[4] = -1, -1  # 4 is reachable from 0 but left out
    _expect(validate(g, 0, d, p), "spanning", "vertex 4", "reachable", "unreached")


def test_rule_spanning_parent_on_unreached_vertex(path5):
    g, d, p = path5
    d[4] = -1  # keeps parent 3
    _expect(validate(g, 0, d, p), "spanning", "vertex 4", "parent 3")


def test_rule_spanning_distance_without_parent(path5):
    g, d, p = path5
    p[4] = -1
    _expect(validate(g, 0, d, p), "spanning", "vertex 4", "no parent")


def test_rule_spanning_unreachable_but_reached():
    # 2 is isolated but the result claims it at level 1 with parent 0.
    g = _arcs(3, [(0, 1)], directed=False)
    d = np.array([0, 1, 1], np.int32)
    p = np.array([0, 0, 0], np.int32)
    _expect(validate(g, 0, d, p), "spanning", "vertex 2", "not reachable")


def test_rule_parent_is_edge_undirected():
    # Star centred on 0: leaves 1 and 2 are both at level 1, 3 at level 2 via 1 (edge 1-3).
    g = _arcs(4, [(0, 1), (0, 2), (1, 3)], directed=False)
    d, p = cpu_bfs(g, 0)
    p = p.copy()
    p[3] = 2  # right level, but {2, 3} is not an edge
    _expect(validate(g, 0, d, p), "parent-is-edge", "vertex 3", "parent 2", "{2, 3}")


def test_rule_parent_is_edge_directed_needs_forward_arc():
    # 3 is reached via 1 -> 3; 3 -> 2 exists but 2 -> 3 does not.
    g = _arcs(4, [(0, 1), (0, 2), (1, 3), (3, 2)], directed=True)
    d, p = cpu_bfs(g, 0)
    assert d.tolist() == [0, 1, 1, 2]
    p = p.copy()
    p[3] = 2
    _expect(validate(g, 0, d, p), "parent-is-edge", "arc 2 -> 3")
    # The same tree on the undirected version is valid: {2, 3} is an edge.
    gu = _arcs(4, [(0, 1), (0, 2), (1, 3), (3, 2)], directed=False)
    assert validate(gu, 0, d, p).ok


# ---------------------------------------------------------------------------------------------
# Validator: mutation properties (a perturbed result is accepted iff it is still a BFS tree)


@settings(max_examples=150, deadline=None)
@given(graphs_and_sources(), st.data())
def test_validate_reparenting_property(gs, data):
    G, s = gs
    g = _csr(G)
    d, p = cpu_bfs(g, s)
    candidates = np.flatnonzero((d > 0))
    if len(candidates) == 0:
        return
    v = int(data.draw(st.sampled_from(candidates.tolist())))
    w = data.draw(st.integers(0, g.num_vertices - 1))
    p = p.copy()
    p[v] = w
    in_neighbours = set(G.predecessors(v)) if G.is_directed() else set(G.neighbors(v))
    should_be_ok = w in in_neighbours and d[w] == d[v] - 1
    report = validate(g, s, d, p)
    assert report.ok == should_be_ok, report


@settings(max_examples=150, deadline=None)
@given(graphs_and_sources(), st.data())
def test_validate_rejects_any_wrong_distance(gs, data):
    G, s = gs
    g = _csr(G)
    d, p = cpu_bfs(g, s)
    v = data.draw(st.integers(0, g.num_vertices - 1))
    new = data.draw(st.integers(-1, g.num_vertices - 1).filter(lambda x: x != d[v]))
    d = d.copy()
    d[v] = new
    report = validate(g, s, d, p)
    assert not report.ok and report.rule in RULES
    assert compare_distances(cpu_bfs(g, s)[0], d) is not None


# ---------------------------------------------------------------------------------------------
# compare_distances and assert_valid_bfs


def test_compare_distances():
    e = np.array([0, 1, 2, -1], np.int32)
    assert compare_distances(e, e.copy()) is None
    assert compare_distances(e, e.astype(np.int64)) is None
    msg = compare_distances(e, np.array([0, 1, 3, 2]))
    assert "vertex 2" in msg and "3" in msg and "expected 2" in msg and "2 of 4" in msg
    assert "shape" in compare_distances(e, e[:3])


def test_assert_valid_bfs():
    g = _csr(nx.karate_club_graph())
    d, p = cpu_bfs(g, 0)
    assert_valid_bfs(g, 0, d, p)
    p2 = p.copy()
    p2[0] = 1
    with pytest.raises(ValidationError) as exc:
        assert_valid_bfs(g, 0, d, p2)
    assert exc.value.rule == "source"


def test_validate_runs_its_parallel_forms_on_a_large_graph():
    # ~2M arcs, past SERIAL_BELOW: validate's arc scans take their parallel forms end to end, and
    # still find a broken tree (how fast they are is benchmarks' business, not a test's).
    from explorer._twoform import SERIAL_BELOW

    rng = np.random.default_rng(0)
    n, m = 200_000, 1_000_000
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    import scipy.sparse as sp

    A = sp.coo_array((np.ones(m), (src, dst)), shape=(n, n)).tocsr()
    A = (A + A.T).tocsr()
    g = CSRGraph(A.indptr.astype(np.int64), A.indices.astype(np.int32), directed=False)
    assert g.indices.shape[0] >= SERIAL_BELOW
    d, p = cpu_bfs(g, 0)
    assert validate(g, 0, d, p).ok
    v = int(np.flatnonzero(d == 3)[0])
    u = next(int(x) for x in np.flatnonzero(d == 2) if x not in set(g.neighbors(v).tolist()))
    bad = p.copy()
    bad[v] = u  # one level nearer, but no edge {u, v}
    report = validate(g, 0, d, bad)
    assert not report.ok and report.rule == "parent-is-edge" and f"vertex {v} has parent {u}" in report.message


def test_validate_reference_distances_skips_rerun():
    g = _csr(nx.path_graph(5))
    d, p = cpu_bfs(g, 0)
    assert validate(g, 0, d, p, reference_distances=d).ok
    # A reference that disagrees about reachability shows it is the one used.
    ref = d.copy()
    ref[4] = -1
    _expect(validate(g, 0, d, p, reference_distances=ref), "spanning", "vertex 4")
    with pytest.raises(ValueError, match="reference_distances"):
        validate(g, 0, d, p, reference_distances=d[:3])


def test_validate_unsigned_unreached_is_out_of_range():
    g = _arcs(3, [(0, 1)], directed=False)
    d, p = cpu_bfs(g, 0)
    # -1 wrapped to 2**32 - 1 by an unsigned GPU buffer is not a vertex level.
    _expect(validate(g, 0, d.astype(np.uint32), p), "range", "vertex 2", "4294967295")


# ---------------------------------------------------------------------------------------------
# bfs_layers: the levels as a frontier generator


def _queue_order(g: CSRGraph, sources) -> list[int]:
    """Vertices in the order a FIFO queue BFS from `sources` (in order) first reaches them."""
    seen = set(sources)
    order = list(dict.fromkeys(sources))
    q = deque(order)
    while q:
        u = q.popleft()
        for v in g.indices[g.offsets[u]: g.offsets[u + 1]].tolist():
            if v not in seen:
                seen.add(v)
                order.append(v)
                q.append(v)
    return order


@pytest.mark.parametrize("name", sorted(NAMED))
def test_bfs_layers_match_networkx(name):
    G = NAMED[name]
    g = _csr(G, name)
    n = g.num_vertices
    for sources in ([0], [n - 1], [0, n // 2], list(range(0, n, 3))):
        layers = list(bfs_layers(g, sources if len(sources) > 1 else sources[0]))
        expected = list(nx.bfs_layers(G, sources))
        assert [sorted(x.tolist()) for x in layers] == [sorted(x) for x in expected]
        assert all(x.dtype == np.int32 for x in layers)
        # each level in the order cpu_bfs's queue discovers it
        assert np.concatenate(layers).tolist() == _queue_order(g, sources)
        if len(sources) == 1:
            d, _ = cpu_bfs(g, sources[0])
            for level, x in enumerate(layers):
                assert np.all(d[x] == level)


def test_bfs_layers_sources_and_early_stop():
    g = _csr(nx.path_graph(6))
    assert [x.tolist() for x in bfs_layers(g, [2, 2, 4])] == [[2, 4], [1, 3, 5], [0]]
    assert [x.tolist() for x in bfs_layers(g, np.array([5]))] == [[5], [4], [3], [2], [1], [0]]
    assert list(bfs_layers(g, [])) == []
    layers = bfs_layers(g, 0)
    assert next(layers).tolist() == [0] and next(layers).tolist() == [1]  # lazy: stop any time
    with pytest.raises(ValueError, match="out of range"):
        list(bfs_layers(g, [0, 6]))
    with pytest.raises(ValueError, match="not an integer"):
        list(bfs_layers(g, 1.5))


# ---------------------------------------------------------------------------------------------
# check_result: the one check of a BFS result


def test_check_result_passes_a_correct_result_and_runs_the_reference_bfs_once(monkeypatch):
    import importlib

    # the module: the package's attribute `validate` is the function
    vmod = importlib.import_module("explorer.reference.validate")

    g = _csr(nx.karate_club_graph())
    d, p = cpu_bfs(g, 0)
    calls = []
    real = vmod.bfs_distances
    monkeypatch.setattr(vmod, "bfs_distances", lambda *a: calls.append(a) or real(*a))
    r = check_result(g, _result(g, 0, d, p))
    assert isinstance(r, CheckReport) and r.ok and r.rule is None and len(calls) == 1
    assert "distances equal the CPU reference" in r.message
    np.testing.assert_array_equal(r.expected, d)
    assert r.raise_if_failed() is r
    r = check_result(g, _result(g, 0, d, p), expected=d)
    assert r.ok and len(calls) == 1  # given the expected distances, no CPU BFS at all
    with pytest.raises(Exception):
        r.ok = False  # frozen


def test_check_result_names_the_first_broken_rule():
    g = _csr(nx.path_graph(5))
    d, p = cpu_bfs(g, 0)
    p2 = p.copy()
    p2[3] = 1
    r = check_result(g, _result(g, 0, d, p2))
    assert not r.ok and r.rule == "tree-edge-levels" and "1 -> 3" in r.message
    np.testing.assert_array_equal(r.expected, d)
    with pytest.raises(ValidationError, match="tree-edge-levels"):
        r.raise_if_failed()
    # a valid tree whose distances differ from the reference the caller holds
    wrong = d.copy()
    wrong[4] = 3
    r = check_result(g, _result(g, 0, d, p), expected=wrong)
    assert not r.ok and r.rule == "distances" and "vertex 4" in r.message
    with pytest.raises(ValidationError) as exc:
        assert_valid_bfs(g, 0, d, p2)
    assert exc.value.rule == "tree-edge-levels"
    with pytest.raises(ValueError, match="out of range"):
        check_result(g, _result(g, 9, d, p))


def _result(g, source, d, p) -> RunResult:
    return RunResult(g.name, source, "test", {}, d, p, [], 0.0, 0)


def test_check_result_takes_the_result_and_its_source_a_vertex_not_an_id():
    # Ids 100, 200, 300: the result's source is vertex 1 (id 200); the reference reads vertices.
    g = graphs.from_edges([100, 200], [200, 300], directed=True, remap=True)
    d, p = cpu_bfs(g, 1)
    r = _result(g, 1, d, p)
    r.original_ids = g.original_ids
    assert r.source_id == 200 and check_result(g, r).ok
    assert not check_result(g, _result(g, 0, d, p)).ok  # the same arrays from another source
    with pytest.raises(TypeError, match="positional"):
        check_result(g, 1, d, p)  # arrays with a source beside them: the source could be an id
    with pytest.raises(TypeError, match="takes a RunResult, not tuple.*assert_valid_bfs"):
        check_result(g, (d, p))


@settings(max_examples=80, deadline=None)
@given(graphs_and_sources(), st.data())
def test_the_quick_check_passes_exactly_the_results_validate_and_the_reference_pass(gs, data):
    # check_result first checks the levels against the reference's distances and the parents' arcs,
    # and falls back to the Graph500 rules for a report: that quick check must accept a result
    # exactly when the rules and the comparison both do, in either form, whatever was broken.
    from explorer._twoform import parallel_forms
    from explorer.reference.validate import _agrees_with_reference, _levels_agree

    G, s = gs
    g = _csr(G)
    expected = bfs_distances(g, s)
    d, p = cpu_bfs(g, s)
    d, p = d.astype(np.int32), p.astype(np.int32)
    for _ in range(data.draw(st.integers(0, 3))):
        v = data.draw(st.integers(0, g.num_vertices - 1))
        if data.draw(st.booleans()):
            p[v] = data.draw(st.integers(-2, g.num_vertices))
        else:
            d[v] = data.draw(st.integers(-1, g.num_vertices - 1))
    e = expected.astype(np.int32)
    assert _levels_agree.serial(d, p, e, s) == _levels_agree.parallel(d, p, e, s)
    quick = _agrees_with_reference(g, s, d, p, e)
    with parallel_forms():
        assert _agrees_with_reference(g, s, d, p, e) == quick
    full = validate(g, s, d, p, reference_distances=expected)
    assert quick == (full.ok and compare_distances(expected, d) is None)
    report = check_result(g, types.SimpleNamespace(source=s, distances=d, parents=p), expected=expected)
    assert report.ok == quick and (quick or report.rule in (full.rule, "distances"))


@settings(max_examples=60, deadline=None)
@given(graphs_and_sources(), st.data())
def test_validate_reports_the_same_in_its_serial_and_parallel_forms(gs, data):
    # A large graph's check scans its arcs over threads (explorer._twoform): the first broken
    # parent or edge it reports must be the one the serial scan reports, whatever was broken.
    from explorer._twoform import parallel_forms
    from explorer.reference.validate import _first_bad_arc, _first_parent_without_arc

    G, s = gs
    g = _csr(G)
    d, p = cpu_bfs(g, s)
    d, p = d.copy(), p.copy()
    for _ in range(data.draw(st.integers(0, 3))):
        v = data.draw(st.integers(0, g.num_vertices - 1))
        if data.draw(st.booleans()):
            p[v] = data.draw(st.integers(-1, g.num_vertices - 1))
        else:
            d[v] = data.draw(st.integers(-1, g.num_vertices - 1))
    for scan, args in ((_first_parent_without_arc, (g.offsets, g.indices, p.astype(np.int32), s, g.directed)),
                       (_first_bad_arc, (g.offsets, g.indices, d.astype(np.int32), g.directed))):
        assert scan.serial(*args) == scan.parallel(*args)
    serial = validate(g, s, d, p)
    with parallel_forms():
        parallel = validate(g, s, d, p)
    assert (parallel.ok, parallel.rule, parallel.message) == (serial.ok, serial.rule, serial.message)
