"""explorer.graphs: loaders against scipy/networkx, the CSR builder against a set-based
construction, generators, bad input, the on-disk cache and BFS-4K Table-1 statistics."""
from __future__ import annotations

import gzip
import os
import tempfile
import warnings
from collections import Counter
from pathlib import Path

import networkx as nx
import numba
import numpy as np
import pytest

from explorer.graphs.weights import WEIGHT_PARAMS
import scipy.io
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import graphs as G
from explorer.graphs import CSRGraph, GraphError, generators
from explorer.graphs import cache as gcache
from explorer.reference import cpu_bfs

SAMPLES = Path(__file__).resolve().parent.parent / "sample_graphs"

# BFS depth from the maximum-degree vertex, from /work/shared/graphs/README.md. Gnutella's 8 is
# the depth in the undirected view; following out-arcs only it is 24.
DEPTH_FROM_MAX_DEGREE = {"facebook_combined": 5, "Wiki-Vote": 4, "p2p-Gnutella31": 8,
                         "delaunay_n16": 101, "luxembourg_osm": 951, "3elt": 51}


@pytest.fixture(scope="module", autouse=True)
def cache_dir(tmp_path_factory):
    # Module-scoped (not monkeypatch) so hypothesis tests may run under it too.
    d = tmp_path_factory.mktemp("bfs4k-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BFS4K_CACHE_DIR", str(d))
        yield d


def check_csr(g: CSRGraph, merged: bool = True) -> None:
    """Invariants every builder output must keep."""
    n = g.num_vertices
    assert g.offsets.dtype == np.int64 and g.indices.dtype == np.int32
    assert g.offsets[0] == 0 and g.offsets[-1] == g.num_arcs
    assert np.all(np.diff(g.offsets) >= 0)
    if g.num_arcs:
        assert 0 <= g.indices.min() and g.indices.max() < n
    for v in range(min(n, 2000)):
        row = g.neighbors(v)
        assert np.all(np.diff(row) > 0) if merged else np.all(np.diff(row) >= 0)
    if not g.directed:
        a = g.to_scipy()
        assert (a != a.T).nnz == 0


def arc_set(g: CSRGraph) -> set:
    lab = g.original_ids if g.original_ids is not None else np.arange(g.num_vertices)
    src = np.repeat(np.arange(g.num_vertices), g.degrees())
    return set(zip(lab[src].tolist(), lab[g.indices].tolist()))


def rows(g: CSRGraph) -> list[list[int]]:
    return [g.neighbors(v).tolist() for v in range(g.num_vertices)]


# ---------------------------------------------------------------------------------------------
# Sample graphs against independent readings of the same files


def _open_text(path: Path):
    return gzip.open(path, "rt") if path.name.endswith(".gz") else open(path)


def nx_from_snap(path: Path, directed: bool) -> nx.Graph:
    g = nx.DiGraph() if directed else nx.Graph()
    with _open_text(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            a, b = line.split()[:2]
            g.add_edge(int(a), int(b))
    g.remove_edges_from(list(nx.selfloop_edges(g)))
    return g


def nx_from_mtx(path: Path) -> nx.Graph:
    g = nx.Graph()
    with _open_text(path) as f:
        lines = (ln for ln in f if not ln.startswith("%"))
        n = int(next(lines).split()[0])
        g.add_nodes_from(range(n))
        for line in lines:
            i, j = line.split()[:2]
            if i != j:
                g.add_edge(int(i) - 1, int(j) - 1)
    return g


@pytest.mark.parametrize("name", list(G.SAMPLE_GRAPHS))
def test_sample_graph_matches_networkx(name):
    info = G.SAMPLE_GRAPHS[name]
    path = SAMPLES / info.file
    g = G.sample_graph(name, cache=False)
    check_csr(g)
    assert g.name == name
    assert g.directed == info.directed
    ref = nx_from_mtx(path) if ".mtx" in info.file else nx_from_snap(path, info.directed)
    assert g.num_vertices == ref.number_of_nodes()
    assert g.num_edges == ref.number_of_edges()
    expected = set(ref.edges()) if info.directed else (
        set(ref.edges()) | {(v, u) for u, v in ref.edges()})
    assert arc_set(g) == expected


@pytest.mark.parametrize("name", ["3elt", "delaunay_n16", "luxembourg_osm"])
def test_matrix_market_matches_scipy(name):
    path = SAMPLES / G.SAMPLE_GRAPHS[name].file
    with gzip.open(path) as f:
        a = sp.csr_array(scipy.io.mmread(f))
    a.data[:] = 1
    a.setdiag(0)
    a.eliminate_zeros()
    b = G.load_graph(path, cache=False).to_scipy()
    assert a.shape == b.shape and (a != b).nnz == 0


def test_sample_graph_counts_from_readme():
    # |V| and edges-in-file of /work/shared/graphs/README.md
    expect = {"facebook_combined": (4039, 88234), "Wiki-Vote": (7115, 103689),
              "p2p-Gnutella31": (62586, 147892), "delaunay_n16": (65536, 196575),
              "luxembourg_osm": (114599, 119666), "3elt": (4720, 13722)}
    for name, (nv, ne) in expect.items():
        g = G.sample_graph(name)
        assert (g.num_vertices, g.num_edges) == (nv, ne), name
    wiki = G.sample_graph("Wiki-Vote")
    assert wiki.original_ids is not None and wiki.original_ids.max() <= 8297
    assert np.all(np.diff(wiki.original_ids) > 0)
    assert wiki.notes["ids_remapped"] is True


@pytest.mark.parametrize("name", list(DEPTH_FROM_MAX_DEGREE))
def test_depth_from_max_degree_vertex_as_in_readme(name):
    g = G.sample_graph(name, symmetrize=True) if name == "p2p-Gnutella31" else G.sample_graph(name)
    dist, _ = cpu_bfs(g, int(np.argmax(g.degrees())))
    assert dist.max() == DEPTH_FROM_MAX_DEGREE[name]


def test_sample_graph_names_and_errors():
    assert G.sample_graph_path("3elt.mtx.gz") == SAMPLES / "3elt.mtx.gz"
    assert set(G.SAMPLE_GRAPHS) == {"bfs4k_fig2", "facebook_combined", "Wiki-Vote",
                                    "p2p-Gnutella31", "3elt", "delaunay_n16", "luxembourg_osm"}
    for info in G.SAMPLE_GRAPHS.values():
        assert (SAMPLES / info.file).exists()
    with pytest.raises(GraphError, match="unknown sample graph"):
        G.sample_graph("no-such-graph")


# ---------------------------------------------------------------------------------------------
# The builder against a set-based construction


@st.composite
def edge_lists(draw):
    n = draw(st.integers(0, 12))
    if n == 0:
        edges = []
    else:
        v = st.integers(0, n - 1)
        edges = draw(st.lists(st.tuples(v, v), max_size=40))
    opts = dict(directed=draw(st.booleans()), symmetrize=draw(st.booleans()),
                drop_self_loops=draw(st.booleans()), merge_multi_edges=draw(st.booleans()))
    return n, edges, opts


@settings(max_examples=150, deadline=None)
@given(edge_lists())
def test_from_edges_matches_set_construction(case):
    n, edges, o = case
    src = np.array([e[0] for e in edges], dtype=np.int64)
    dst = np.array([e[1] for e in edges], dtype=np.int64)
    g = G.from_edges(src, dst, num_vertices=n, **o)
    check_csr(g, merged=o["merge_multi_edges"])

    both = not o["directed"] or o["symmetrize"]
    kept = [(u, v) for u, v in edges if not (u == v and o["drop_self_loops"])]
    arcs = []
    for u, v in kept:
        arcs.append((u, v))
        if both and u != v:
            arcs.append((v, u))
    if o["merge_multi_edges"]:
        arcs = sorted(set(arcs))
    expected = [[] for _ in range(n)]
    for u, v in sorted(arcs):
        expected[u].append(v)
    assert rows(g) == expected
    assert g.directed == (o["directed"] and not o["symmetrize"])

    notes = g.notes
    assert notes["input_edges"] == len(edges)
    assert notes["self_loops_dropped"] == (len(edges) - len(kept))
    if o["merge_multi_edges"]:
        if not both:
            assert notes["multi_edges_merged"] == len(kept) - len(set(kept))
        elif not o["directed"]:
            pairs = [(min(u, v), max(u, v)) for u, v in kept]
            assert notes["multi_edges_merged"] == len(pairs) - len(set(pairs))
            assert g.num_edges == len(set(pairs))
        else:
            assert notes["multi_edges_merged"] == len(kept) - len(set(kept))
            assert notes["reverse_arcs_added"] == len(arcs) - len(set(kept))
    summary = g.summary()
    assert summary["vertices"] == n and summary["arcs"] == len(arcs)
    assert summary["self_loops_dropped"] == notes["self_loops_dropped"]


@st.composite
def sparse_id_edges(draw):
    labels = draw(st.lists(st.integers(0, 10**12), min_size=1, max_size=10, unique=True))
    lab = st.sampled_from(labels)
    return draw(st.lists(st.tuples(lab, lab), min_size=1, max_size=30))


@settings(max_examples=60, deadline=None)
@given(sparse_id_edges(), st.booleans())
def test_non_contiguous_ids_are_remapped(edges, directed):
    src = np.array([e[0] for e in edges], dtype=np.int64)
    dst = np.array([e[1] for e in edges], dtype=np.int64)
    g = G.from_edges(src, dst, directed=directed, remap=True)
    used = sorted(set(src.tolist()) | set(dst.tolist()))
    assert g.num_vertices == len(used)
    if used == list(range(len(used))):
        assert g.original_ids is None
    else:
        assert g.original_ids.tolist() == used
    arcs = {(u, v) for u, v in edges if u != v}
    if not directed:
        arcs |= {(v, u) for u, v in arcs}
    assert arc_set(g) == arcs

    # The SNAP loader makes the same choice.
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "g.txt"
        p.write_text("# ids far apart\n" + "".join(f"{u}\t{v}\n" for u, v in edges))
        h = G.load_snap(p, directed=directed, cache=False)
    assert np.array_equal(h.offsets, g.offsets) and np.array_equal(h.indices, g.indices)
    assert (h.original_ids is None and g.original_ids is None) or np.array_equal(
        h.original_ids, g.original_ids)


def test_edge_cases_empty_single_vertex_loops_disconnected():
    g = G.from_edges([], [])
    assert g.num_vertices == 0 and g.num_arcs == 0 and g.offsets.tolist() == [0]
    g = G.from_edges(np.array([], np.int32), np.array([], np.int32), num_vertices=1)
    assert g.num_vertices == 1 and g.num_arcs == 0
    g = G.from_edges([0], [0])
    assert g.num_vertices == 1 and g.num_arcs == 0 and g.notes["self_loops_dropped"] == 1
    g = G.from_edges([0, 0], [0, 0], drop_self_loops=False, directed=False)
    assert rows(g) == [[0]] and g.num_edges == 1 and g.notes["multi_edges_merged"] == 1
    # two components and an isolated vertex (id gap without remap)
    g = G.from_edges([0, 1, 4], [1, 2, 5], directed=False)
    assert rows(g) == [[1], [0, 2], [1], [], [5], [4]]
    dist, _ = cpu_bfs(g, 0)
    assert dist.tolist() == [0, 1, 2, -1, -1, -1]


def test_summary_reports_what_building_did():
    g = G.from_edges([0, 0, 1, 2, 2], [1, 1, 1, 0, 3], symmetrize=True, name="tiny")
    s = g.summary()
    assert s["name"] == "tiny" and s["directed"] is False and s["symmetrized"] is True
    assert s["self_loops_dropped"] == 1 and s["multi_edges_merged"] == 1
    # arcs 0->1, 2->0, 2->3 gain 1->0, 0->2, 3->2
    assert s["reverse_arcs_added"] == 3 and s["edges"] == 3 and s["arcs"] == 6


def test_from_networkx_and_scipy():
    k = nx.karate_club_graph()
    g = G.from_networkx(k)
    check_csr(g)
    assert not g.directed and g.num_edges == k.number_of_edges() and g.original_ids is None
    assert arc_set(g) == set(k.edges()) | {(v, u) for u, v in k.edges()}

    d = nx.DiGraph([(10, 30), (30, 20), (20, 10), (10, 30)])
    g = G.from_networkx(d)
    assert g.directed and g.original_ids.tolist() == [10, 20, 30] and arc_set(g) == set(d.edges())

    m = nx.MultiGraph([("a", "b"), ("a", "b"), ("b", "c")])
    g = G.from_networkx(m)
    assert g.num_edges == 2 and g.notes["labels"] == ["a", "b", "c"]
    assert g.notes["multi_edges_merged"] == 1

    a = sp.random_array((30, 30), density=0.1, random_state=np.random.default_rng(5), format="csr")
    g = G.from_scipy(a)
    assert g.directed
    b = g.to_scipy()
    a.setdiag(0)
    a.eliminate_zeros()
    assert (abs(a).astype(bool) != b.astype(bool)).nnz == 0
    s = a + a.T
    g = G.from_scipy(s)
    assert not g.directed and g.notes["multi_edges_merged"] == 0
    with pytest.raises(GraphError, match="square"):
        G.from_scipy(sp.csr_array(np.ones((2, 3))))


METIS_TEXT = """% the 4-cycle 1-2-3-4 plus the chord 1-3
4 5
2 3 4
1 3
1 2 4
1 3
"""


def test_metis_formats():
    with tempfile.TemporaryDirectory() as d:
        plain = Path(d) / "c4.graph"
        plain.write_text(METIS_TEXT)
        g = G.load_graph(plain, cache=False)
        assert not g.directed and rows(g) == [[1, 2, 3], [0, 2], [0, 1, 3], [0, 2]]
        assert g.notes["reverse_arcs_added"] == 0 and g.num_edges == 5
        # fmt 1 (edge weights), 10 (vertex weight), 11 (both), 110 (size + 2 vertex weights)
        variants = {
            "1": "4 5 1\n2 7 3 7 4 7\n1 7 3 7\n1 7 2 7 4 7\n1 7 3 7\n",
            "10": "4 5 10\n9 2 3 4\n9 1 3\n9 1 2 4\n9 1 3\n",
            "11": "4 5 11\n9 2 7 3 7 4 7\n9 1 7 3 7\n9 1 7 2 7 4 7\n9 1 7 3 7\n",
            "110": "4 5 110 2\n1 8 9 2 3 4\n1 8 9 1 3\n1 8 9 1 2 4\n1 8 9 1 3\n",
        }
        for fmt, text in variants.items():
            p = Path(d) / f"c4_{fmt}.graph"
            p.write_text(text)
            h = G.load_metis(p, cache=False)
            assert rows(h) == rows(g), fmt
        # a vertex without neighbours is an empty line
        p = Path(d) / "iso.graph"
        p.write_text("3 1\n2\n1\n\n")
        assert rows(G.load_metis(p, cache=False)) == [[1], [0], []]


# ---------------------------------------------------------------------------------------------
# Generators


def same(a: CSRGraph, b: CSRGraph) -> bool:
    return np.array_equal(a.offsets, b.offsets) and np.array_equal(a.indices, b.indices)


def test_kronecker_size_determinism_and_skew():
    g = G.kronecker(scale=10, edge_factor=8, seed=3, cache=False)
    check_csr(g)
    assert g.num_vertices == 1024 and not g.directed
    assert g.notes["input_edges"] == 8 * 1024
    assert g.num_edges == 8 * 1024 - g.notes["self_loops_dropped"] - g.notes["multi_edges_merged"]
    assert _count_loops(g) == 0
    deg = g.degrees()
    assert deg.max() > 10 * deg.mean()  # scale-free: a few hubs
    assert same(g, G.kronecker(scale=10, edge_factor=8, seed=3, cache=False))
    assert not same(g, G.kronecker(scale=10, edge_factor=8, seed=4, cache=False))
    # per-block random streams: the same graph whatever the thread count
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = G.kronecker(scale=10, edge_factor=8, seed=3, cache=False)
    finally:
        numba.set_num_threads(threads)
    assert same(g, one)


def test_kronecker_relabel_is_a_bijection():
    # Relabelling must not merge vertices: every k-bit id maps to a distinct k-bit id.
    key = np.array([0x4519840211493211, 0x3050852102C843A5, 12345, 999], np.uint64) | np.uint64(1)
    for k in range(1, 15):
        mask = np.uint64((1 << k) - 1)
        img = [int(generators._scramble(x, k, mask, key)) for x in range(1 << k)]
        assert sorted(img) == list(range(1 << k)), k


def _count_loops(g):
    src = np.repeat(np.arange(g.num_vertices), g.degrees())
    return int(np.sum(src == g.indices))


def test_uniform_random():
    g = G.uniform_random(n=1000, m=5000, seed=1, cache=False)
    check_csr(g)
    assert g.num_vertices == 1000 and 4900 <= g.num_edges <= 5000 and not g.directed
    assert same(g, G.uniform_random(n=1000, m=5000, seed=1, cache=False))
    assert not same(g, G.uniform_random(n=1000, m=5000, seed=2, cache=False))
    d = G.uniform_random(n=1000, m=5000, directed=True, seed=1, cache=False)
    assert d.directed and 4900 <= d.num_arcs <= 5000


def test_grid2d_degrees_and_depth():
    g = G.grid2d(rows=7, cols=9, cache=False)
    check_csr(g)
    assert g.num_vertices == 63 and g.num_edges == 7 * 8 + 9 * 6
    assert Counter(g.degrees().tolist()) == {2: 4, 3: 2 * 5 + 2 * 7, 4: 5 * 7}
    dist, _ = cpu_bfs(g, 0)
    assert dist.max() == 7 + 9 - 2  # road-like: BFS depth grows with the side


def test_grid3d_degree_six_inside():
    g = G.grid3d(nx=4, ny=5, nz=6, cache=False)
    check_csr(g)
    assert g.num_vertices == 120 and g.num_edges == 3 * 5 * 6 + 4 * 4 * 6 + 4 * 5 * 5
    deg = g.degrees().reshape(4, 5, 6)
    assert np.all(deg[1:-1, 1:-1, 1:-1] == 6) and deg.max() == 6 and deg[0, 0, 0] == 3
    t = G.grid3d(nx=3, ny=4, nz=5, periodic=True, cache=False)
    assert np.all(t.degrees() == 6) and t.num_edges == 3 * 60


def test_luo_scale_free_degree_profile():
    g = G.luo_scale_free(n=20_000, seed=2, cache=False)
    check_csr(g)
    deg = g.degrees()
    hubs = deg >= 1000
    assert hubs.sum() == 20 and np.all(deg[hubs] == 1000)  # 0.1% of vertices, degree 1000
    rest = deg[~hubs]
    assert rest.max() <= 7 and 5.9 <= rest.mean() <= 6.05
    assert same(g, G.luo_scale_free(n=20_000, seed=2, cache=False))
    assert not same(g, G.luo_scale_free(n=20_000, seed=3, cache=False))


def test_watts_strogatz():
    ring = G.watts_strogatz(n=1000, k=10, p=0.0, cache=False)
    assert np.all(ring.degrees() == 10) and ring.num_edges == 5000
    g = G.watts_strogatz(n=1000, k=10, p=0.3, seed=1, cache=False)
    check_csr(g)
    assert 4950 <= g.num_edges <= 5000 and _count_loops(g) == 0
    assert same(g, G.watts_strogatz(n=1000, k=10, p=0.3, seed=1, cache=False))
    assert not same(g, G.watts_strogatz(n=1000, k=10, p=0.3, seed=2, cache=False))


SMALL = {"kronecker": dict(scale=6), "uniform_random": dict(n=50, m=100),
         "grid2d": dict(rows=4, cols=5), "grid3d": dict(nx=3, ny=3, nz=3),
         "luo_scale_free": dict(n=3000), "watts_strogatz": dict(n=50, k=4)}


def test_generators_table_drives_generate():
    assert set(G.GENERATORS) == set(SMALL)
    for kind, (fn, params, description) in G.GENERATORS.items():
        assert callable(fn) and description and "\n" not in description
        assert "cache" not in params and "progress" not in params
        assert all(v is not None for v in params.values())
        g = G.generate(kind, **SMALL[kind], cache=False)
        check_csr(g)
        # an unweighted graph's record leaves the weight parameters out; a weighted one keeps them
        plain = {k: v for k, v in params.items() if k not in WEIGHT_PARAMS}
        assert g.notes["generator"] == kind and g.notes["params"] == {**plain, **SMALL[kind]}
        w = G.generate(kind, **SMALL[kind], weights="integer", cache=False)
        assert w.notes["params"] == {**params, **SMALL[kind], "weights": "integer"}
    with pytest.raises(GraphError, match="unknown generator"):
        G.generate("nope")
    with pytest.raises(GraphError, match="grid2d"):
        G.generate("grid2d", rows=3, colz=4)
    with pytest.raises(GraphError, match="scale"):
        G.kronecker(scale=0)


# ---------------------------------------------------------------------------------------------
# Bad input


def _write(d: str, name: str, text: str | bytes) -> Path:
    p = Path(d) / name
    if name.endswith(".gz"):
        p.write_bytes(gzip.compress(text.encode() if isinstance(text, str) else text))
    elif isinstance(text, bytes):
        p.write_bytes(text)
    else:
        p.write_text(text)
    return p


@pytest.mark.parametrize("fname", ["bad_edges.txt", "bad_edges.txt.gz"])
@pytest.mark.parametrize("bad, lineno", [("7 x", 4), ("7", 4), ("1.5 2", 4), ("3 -2", 4),
                                         ("8\t9 0.25 extra", None)])
def test_snap_malformed_line_names_file_and_line(fname, bad, lineno):
    text = f"# header\n0 1\n\n{bad}\n2 3\n"
    with tempfile.TemporaryDirectory() as d:
        p = _write(d, fname, text)
        if lineno is None:  # extra columns are ignored
            g = G.load_graph(p, cache=False)
            assert g.num_arcs == 3
            return
        with pytest.raises(GraphError) as e:
            G.load_graph(p, cache=False)
    msg = str(e.value)
    assert fname in msg and f"line {lineno}" in msg and repr(bad) in msg


def test_bad_files_raise_clear_errors():
    with tempfile.TemporaryDirectory() as d:
        with pytest.raises(GraphError, match="no such file"):
            G.load_graph(Path(d) / "missing.txt")
        for name in ("empty.txt", "empty.mtx", "empty.graph", "empty.txt.gz"):
            with pytest.raises(GraphError, match=f"{name}: empty file"):
                G.load_graph(_write(d, name, ""), cache=False)
        with pytest.raises(GraphError, match="only.txt: no edges"):
            G.load_graph(_write(d, "only.txt", "# nothing but comments\n"), cache=False)
        with pytest.raises(GraphError, match="unknown graph file extension"):
            G.load_graph(_write(d, "g.csv", "0,1\n"))
        broken = Path(d) / "broken.txt.gz"
        broken.write_bytes(b"not gzip at all\n")
        with pytest.raises(GraphError, match="broken.txt.gz: cannot read"):
            G.load_graph(broken, cache=False)
        mtx = "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n5 1\n"
        with pytest.raises(GraphError, match=r"oob\.mtx: .*Line 4"):
            G.load_graph(_write(d, "oob.mtx", mtx), cache=False)
        with pytest.raises(GraphError, match=r"rect\.mtx: .*square"):
            G.load_graph(_write(d, "rect.mtx", mtx.replace("3 3 2", "3 4 1").rsplit("5", 1)[0]),
                         cache=False)
        metis = "% comment\n3 2\n2 3\n1\n1 4\n"
        with pytest.raises(GraphError, match=r"oob\.graph: line 5: neighbour id 4 .*1\.\.3"):
            G.load_graph(_write(d, "oob.graph", metis), cache=False)
        with pytest.raises(GraphError, match=r"short\.graph: header says 4 vertices"):
            G.load_graph(_write(d, "short.graph", "4 2\n2\n1\n"), cache=False)
        with pytest.raises(GraphError, match=r"m\.graph: header says 3 edges"):
            G.load_graph(_write(d, "m.graph", "2 3\n2\n1\n"), cache=False)


def test_from_edges_id_out_of_range_names_id_and_position():
    with pytest.raises(GraphError, match=r"dst\[2\] = 5 is out of range.*num_vertices=3"):
        G.from_edges([0, 1, 2], [1, 2, 5], num_vertices=3)
    with pytest.raises(GraphError, match=r"src\[1\] = -4.*>= 0"):
        G.from_edges([0, -4], [1, 2])
    with pytest.raises(GraphError, match="same length"):
        G.from_edges([0, 1], [1])
    with pytest.raises(GraphError, match="integer"):
        G.from_edges([0.5], [1.0])


# ---------------------------------------------------------------------------------------------
# On-disk cache


def test_cache_round_trip_skips_generation(cache_dir, monkeypatch):
    g = G.grid2d(rows=30, cols=40, cache=True)
    assert any(cache_dir.glob("gen-grid2d-*.npz"))

    def boom(*a, **k):
        raise AssertionError("generated again instead of read from the cache")

    monkeypatch.setattr(generators, "build", boom)
    h = G.grid2d(rows=30, cols=40)
    assert same(g, h) and h.notes == g.notes and h.name == g.name


def test_interrupted_cache_write_leaves_nothing(cache_dir, monkeypatch):
    before = set(cache_dir.iterdir())

    def interrupted(f, **arrays):
        f.write(b"PK\x03\x04 half a zip")
        raise KeyboardInterrupt

    monkeypatch.setattr(gcache, "_savez", interrupted)
    with pytest.raises(KeyboardInterrupt):
        G.grid2d(rows=11, cols=13, cache=True)
    assert set(cache_dir.iterdir()) == before  # no temp file, no half-written entry


def test_corrupt_cache_entry_is_rebuilt(cache_dir):
    g = G.grid3d(nx=5, ny=6, nz=7, cache=True)
    (entry,) = cache_dir.glob("gen-grid3d-*.npz")
    entry.write_bytes(entry.read_bytes()[:100])  # truncated, as by a crash without os.replace
    with pytest.warns(RuntimeWarning, match="damaged"):
        h = G.grid3d(nx=5, ny=6, nz=7, cache=True)
    assert same(g, h)
    with np.load(entry) as z:  # rewritten whole
        assert np.array_equal(z["indices"], g.indices)
    assert not [p for p in cache_dir.iterdir() if p.name.endswith(".tmp")]


def test_file_cache_follows_file_changes(cache_dir):
    with tempfile.TemporaryDirectory() as d:
        p = _write(d, "g.txt", "0 1\n1 2\n")
        a = G.load_snap(p, cache=True)
        assert list(cache_dir.glob("file-g_txt-*.npz"))
        b = G.load_snap(p, cache=True, name="again")
        assert same(a, b) and b.name == "again"
        p.write_text("0 1\n1 2\n2 3\n")
        os.utime(p, ns=(1, 1))
        with pytest.warns(RuntimeWarning, match="other contents"):
            assert G.load_snap(p, cache=True).num_arcs == 3
        n_entries = len(list(cache_dir.iterdir()))
        G.load_snap(p, cache=False)
        assert len(list(cache_dir.iterdir())) == n_entries


def test_entries_of_older_code_are_dropped(cache_dir):
    G.uniform_random(n=17, m=23, cache=True)
    (entry,) = cache_dir.glob("gen-uniform_random-*.npz")
    stale = entry.with_name(entry.name.replace(gcache.CODE_VERSION, "0" * len(gcache.CODE_VERSION)))
    entry.rename(stale)  # as if written by an older graphs.py
    assert G.uniform_random(n=17, m=23, cache=True).num_vertices == 17  # not read: rebuilt
    assert [p.name for p in cache_dir.glob("gen-uniform_random-*.npz")] == [entry.name]


# ---------------------------------------------------------------------------------------------
# BFS-4K Table 1 statistics


def test_stats_of_fig2_by_hand():
    g = G.sample_graph("bfs4k_fig2")
    dist, _ = cpu_bfs(g, 0)
    assert dist.max() == 3  # BFS from 0 concludes in three steps
    assert {8} <= set(g.neighbors(2)) & set(g.neighbors(3))  # a shared neighbour: a duplicate
    s = G.graph_stats(g)
    # degrees 3 3 3 4 3 3 2 2 3 2: mean 2.8, variance (6*0.04 + 1.44 + 3*0.64)/10 = 0.36
    assert s["vertices"] == 10 and s["edges"] == 14 and s["arcs"] == 28
    assert s["approx_diameter"] == 6  # 7-4-1-0-3-6-9
    assert s["avg_degree"] == pytest.approx(2.8) and s["std_degree"] == pytest.approx(0.6)
    assert s["max_degree"] == 4 and s["mode_degree"] == 3
    deg, cnt = G.degree_histogram(g)
    assert deg.tolist() == [2, 3, 4] and cnt.tolist() == [3, 6, 1]


@pytest.mark.parametrize("name", ["3elt", "delaunay_n16"])
def test_approx_diameter_within_exact_range(name):
    g = G.sample_graph(name)
    s = G.graph_stats(g)
    depth = DEPTH_FROM_MAX_DEGREE[name]  # eccentricity of one vertex: diameter in [depth, 2*depth]
    assert depth <= s["approx_diameter"] <= 2 * depth


def test_stats_directed_and_empty():
    g = G.sample_graph("Wiki-Vote")
    s = G.graph_stats(g)
    assert s["directed"] and s["edges"] == s["arcs"] == 103689
    assert s["avg_degree"] == pytest.approx(103689 / 7115)
    e = G.graph_stats(G.from_edges([], []))
    assert e["vertices"] == 0 and e["approx_diameter"] == 0


# ---------------------------------------------------------------------------------------------
# The package: one public API, its code version and where the samples are


def test_package_exports_the_public_api():
    for name in ("sample_graph", "generate", "generator_size", "from_edges", "from_networkx",
                 "from_scipy", "load_graph", "load_snap", "load_matrix_market", "load_metis",
                 "CSRGraph", "GraphError", "GENERATORS", "SAMPLE_GRAPHS", "graph_stats",
                 "degree_histogram", "cache_dir", "sample_graph_path", "SAMPLES_DIR"):
        assert name in G.__all__ and hasattr(G, name), name
    assert G.SAMPLES_DIR == SAMPLES  # the top-level sample_graphs/, not one inside the package


def test_code_version_hashes_every_module_of_the_package(tmp_path):
    pkg = Path(gcache.__file__).parent
    for f in pkg.glob("*.py"):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    assert gcache.code_version(tmp_path) == gcache.CODE_VERSION
    for name in ("io.py", "generators.py", "csr.py"):  # not only the cache's own module
        f = tmp_path / name
        f.write_bytes(f.read_bytes() + b"\n# edited\n")
        assert gcache.code_version(tmp_path) != gcache.CODE_VERSION, name
        f.write_bytes((pkg / name).read_bytes())


def test_reference_does_not_import_graphs():
    # graphs.stats uses the reference BFS; the reference reads any CSR-shaped object. One way only.
    import ast

    ref = Path(G.__file__).parent.parent / "reference"
    for f in ref.glob("*.py"):
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert "graphs" not in (node.module or ""), f.name
            elif isinstance(node, ast.Import):
                assert not any("graphs" in a.name for a in node.names), f.name


# ---------------------------------------------------------------------------------------------
# Weights


@st.composite
def weighted_edge_lists(draw):
    n = draw(st.integers(1, 8))
    v = st.integers(0, n - 1)
    edges = draw(st.lists(st.tuples(v, v, st.integers(-3, 9)), max_size=30))
    opts = dict(directed=draw(st.booleans()), symmetrize=draw(st.booleans()),
                drop_self_loops=draw(st.booleans()), merge_multi_edges=True)
    return n, edges, opts


@settings(max_examples=100, deadline=None)
@given(weighted_edge_lists())
def test_weights_follow_their_arcs_and_merges_keep_the_smallest(case):
    n, edges, o = case
    g = G.from_edges([e[0] for e in edges], [e[1] for e in edges], num_vertices=n,
                     weights=[e[2] / 2 for e in edges], **o)
    both = not o["directed"] or o["symmetrize"]
    best: dict = {}
    for u, v, w in edges:
        if u == v and o["drop_self_loops"]:
            continue
        for arc in ([(u, v), (v, u)] if both and u != v else [(u, v)]):
            best[arc] = min(best.get(arc, np.inf), w / 2)
    src = np.repeat(np.arange(n), g.degrees())
    got = dict(zip(zip(src.tolist(), g.indices.tolist()), g.weights.tolist()))
    assert got == best and g.weights.dtype == np.float64


@pytest.mark.parametrize("weighted,directed,symmetrize", [(False, False, False), (True, True, False),
                                                           (True, True, True)])
def test_the_serial_and_parallel_forms_build_the_same_graph(weighted, directed, symmetrize):
    """Small inputs take the builder's serial forms, large ones its parallel forms: the same graph,
    arrays, notes and checksum, for buckets sorted by insertion (small) and by radix (large)."""
    from explorer._twoform import parallel_forms

    rng = np.random.default_rng(7)
    for n, m in ((50, 400), (3000, 60_000), (40, 20_000)):  # buckets under 256 keys (insertion sort), then over
        src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
        src[:m // 10] = dst[:m // 10]  # self loops
        src[m // 10:m // 5], dst[m // 10:m // 5] = src[m // 5:3 * m // 10], dst[m // 5:3 * m // 10]  # repeats
        w = rng.integers(-5, 50, m) / 4 if weighted else None
        kw = dict(num_vertices=n, directed=directed, symmetrize=symmetrize, weights=w)
        serial = G.from_edges(src, dst, **kw)
        with parallel_forms():
            parallel = G.from_edges(src, dst, **kw)
        np.testing.assert_array_equal(serial.offsets, parallel.offsets)
        np.testing.assert_array_equal(serial.indices, parallel.indices)
        if weighted:
            np.testing.assert_array_equal(serial.weights, parallel.weights)
        assert serial.notes == parallel.notes
        assert gcache.checksum({"i": serial.indices}, {}) == gcache.checksum({"i": parallel.indices}, {})


def test_a_large_bucket_is_sorted_by_radix_and_agrees_with_a_set_construction():
    """Buckets of 256 keys and more take the radix sort; smaller ones insertion: both sorted, merged."""
    rng = np.random.default_rng(3)
    n, m = 40, 20_000  # one bucket of every source: thousands of keys each
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(0, 100, m).astype(np.float64)
    g = G.from_edges(src, dst, num_vertices=n, weights=w, drop_self_loops=False)
    best: dict = {}
    for u, v, x in zip(src.tolist(), dst.tolist(), w.tolist()):
        best[u, v] = min(best.get((u, v), np.inf), x)
    rows = np.repeat(np.arange(n), g.degrees())
    assert dict(zip(zip(rows.tolist(), g.indices.tolist()), g.weights.tolist())) == best
    assert all(np.all(np.diff(g.indices[g.offsets[u]:g.offsets[u + 1]]) > 0) for u in range(n))


def test_weights_from_every_source_and_through_the_cache(cache_dir):
    g = G.from_edges([0, 1], [1, 2], weights=[2.5, 4], directed=False)
    assert g.weights.tolist() == [2.5, 2.5, 4.0, 4.0] and g.summary()["weighted"]
    assert G.from_edges([0, 1], [1, 2]).weights is None
    with pytest.raises(GraphError, match=r"weights\[1\] is NaN"):
        G.from_edges([0, 1], [1, 2], weights=[1, np.nan])
    with pytest.raises(GraphError, match="one per arc"):
        G.from_edges([0, 1], [1, 2], weights=[1])

    d = nx.DiGraph()
    d.add_edge(10, 20, weight=0.5)
    d.add_edge(20, 30)  # no attribute: weighs 1, as in networkx
    g = G.from_networkx(d)
    assert g.weights.tolist() == [0.5, 1.0]
    assert G.from_networkx(d, weight=None).weights is None
    assert G.from_networkx(nx.path_graph(3)).weights is None
    d.add_edge(30, 10, weight="heavy")
    with pytest.raises(GraphError, match="'heavy', not a number"):
        G.from_networkx(d)
    back = G.from_networkx(G.from_edges([0], [1], weights=[7.0]).to_networkx())
    assert back.weights.tolist() == [7.0]

    a = sp.csr_array(np.array([[0, 3.0, 0], [0, 0, 1.5], [0, 0, 0]]))
    g = G.from_scipy(a)
    assert g.directed and g.weights.tolist() == [3.0, 1.5]
    assert (g.to_scipy() != a).nnz == 0
    assert G.from_scipy(a, weighted=False).weights is None
    # same pattern both ways, different values: a directed graph; read undirected, the smaller
    s = sp.csr_array(np.array([[0, 2.0], [5.0, 0]]))
    assert G.from_scipy(s).directed
    assert G.from_scipy(s, directed=False).weights.tolist() == [2.0, 2.0]

    with tempfile.TemporaryDirectory() as d:
        mtx = _write(d, "w.mtx", "%%MatrixMarket matrix coordinate real symmetric\n"
                                 "3 3 2\n2 1 0.25\n3 2 -4e1\n")
        g = G.load_graph(mtx, cache=True)
        assert rows(g) == [[1], [0, 2], [1]] and g.weights.tolist() == [0.25, 0.25, -40, -40]
        assert G.load_graph(mtx, cache=True).weights.tolist() == g.weights.tolist()  # cached
        assert G.load_graph(mtx, weighted=False, cache=False).weights is None
        snap = _write(d, "w.txt", "# from to weight\n0 1 0.1\n1 2 1.0000000000000000001e0\n"
                                  "2 0 7 extra\n0 1 0.05\n")
        g = G.load_snap(snap, cache=True)
        assert g.weights.tolist() == [0.05, 1.0, 7.0]  # exact, and the repeat 0->1 kept its min
        h = G.load_snap(snap, cache=True)
        assert np.array_equal(h.weights, g.weights)
        mixed = _write(d, "m.txt", "0 1 2.5\n1 2\n")
        g = G.load_snap(mixed, cache=False)
        assert g.weights is None and "line 2" in g.notes["weights"]
        metis = _write(d, "w.graph", "3 2 1\n2 5\n1 5 3 6\n2 6\n")
        assert G.load_metis(metis, cache=False).weights.tolist() == [5, 5, 6, 6]


def test_snap_reals_match_python_float():
    # the tokenizer's fast path is exact where it applies; the rest go through float()
    texts = ["0.1", "2.5e-3", "-7", "1e22", "1e23", "123456789012345678", "4.9e-324",
             "0.30000000000000004", "+.5", "5.", "1E+2"]
    with tempfile.TemporaryDirectory() as d:
        p = _write(d, "r.txt", "".join(f"{i} {i + 1} {t}\n" for i, t in enumerate(texts)))
        g = G.load_snap(p, cache=False)
    assert g.weights.tolist() == [float(t) for t in texts]


# ---------------------------------------------------------------------------------------------
# The file's own vertex ids, line ends, cache checks, sizes, METIS, temporaries


def test_snap_ids_are_kept_and_translated(cache_dir):
    with tempfile.TemporaryDirectory() as d:
        one = _write(d, "one.txt", "1 2\n2 3\n3 4\n")
        g = G.load_snap(one, cache=False)
        assert g.original_ids.tolist() == [1, 2, 3, 4]
        assert g.to_dense(1) == 0 and g.to_dense(np.int64(4)) == 3 and g.to_original(0) == 1
        with pytest.raises(GraphError, match=r"vertex id 5 is not in SNAP edge list one\.txt"):
            g.to_dense(5)
        hundred = _write(d, "hundred.txt", "".join(f"{v} {v + 1}\n" for v in range(101, 112)))
        g = G.load_snap(hundred, cache=True)
        assert g.to_dense(101) == 0 and g.to_original(11) == 112
        with pytest.raises(GraphError, match=r"vertex id 0 is not in .*hundred\.txt.*101 to 112"):
            g.to_dense(0)
        cached = G.load_snap(hundred, cache=True)
        assert cached.original_ids.tolist() == list(range(101, 113))
        with pytest.raises(GraphError, match="out of range"):
            g.to_original(12)
        with pytest.raises(GraphError, match="not an integer"):
            g.to_dense("101")
        # remap=False, Matrix Market, METIS: the ids need no map
        assert G.load_snap(one, remap=False, cache=False).original_ids is None
        mtx = _write(d, "p.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 3\n")
        g = G.load_graph(mtx, cache=False)
        assert g.original_ids is None and g.to_dense(0) == 0 and rows(g) == [[2], [], []]
        with pytest.raises(GraphError, match=r"vertex id 3 is not in Matrix Market p\.mtx.*0\.\.2"):
            g.to_dense(3)


@pytest.mark.parametrize("fname", ["g.txt", "g.mtx", "g.graph"])
@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_every_line_end_and_a_byte_order_mark(fname, end, bom):
    text = {"g.txt": "# c\n0 1\n1 2\n2 3\n",
            "g.mtx": "%%MatrixMarket matrix coordinate pattern general\n% c\n3 3 2\n1 2\n2 3\n",
            "g.graph": "% c\n4 1\n2\n1\n\n\n"}[fname]
    expect = {"g.txt": [[1], [2], [3], []], "g.mtx": [[1], [2], []],
              "g.graph": [[1], [0], [], []]}[fname]
    with tempfile.TemporaryDirectory() as d:
        p = _write(d, fname, bom + text.replace("\n", end).encode())
        assert rows(G.load_graph(p, cache=False)) == expect


def _entry(cache_dir: Path, kind: str, **params) -> Path:
    p = gcache.cache_path(f"gen-{kind}", {"kind": kind, "params": params})
    assert p.parent == cache_dir and p.exists()
    return p


def _rewrite_entry(entry: Path, **changes):
    """Change arrays of a cache entry in place, keeping its metadata (and stored checksum)."""
    arrays = gcache.read_npz(entry)
    for name, fn in changes.items():
        arrays[name] = fn(arrays[name].copy())
    with open(entry, "wb") as f:
        np.savez(f, **arrays)


@pytest.mark.parametrize("damage", ["one id", "offset", "offset past the end"])
def test_damaged_cache_entry_is_detected_and_rebuilt(cache_dir, damage):
    g = G.grid2d(rows=9, cols=8, cache=True)
    entry = _entry(cache_dir, "grid2d", rows=9, cols=8)

    def one_id(a):
        a[3] = (a[3] + 1) % 72
        return a

    def offset(a):
        a[5] = 10**6
        return a

    def past_end(a):
        a[-1] += 1
        return a

    _rewrite_entry(entry, **({"one id": {"indices": one_id}, "offset": {"offsets": offset},
                              "offset past the end": {"offsets": past_end}}[damage]))
    with pytest.warns(RuntimeWarning, match="damaged.*checksum"):
        h = G.grid2d(rows=9, cols=8, cache=True)
    assert same(g, h)
    assert G.graph_stats(G.grid2d(rows=9, cols=8, cache=True))["approx_diameter"] == 15


def test_broken_csr_never_reaches_numba():
    ok = G.grid2d(rows=3, cols=3, cache=False)
    off = ok.offsets.copy()
    off[5] = 10**6
    with pytest.raises(GraphError, match=r"offsets\[5\] = 1000000 > offsets\[6\]"):
        CSRGraph(off, ok.indices, False)
    # even with a matching checksum, a broken entry's CSR is refused when it is read
    bad = ok.indices.copy()
    bad[0] = 9
    with pytest.raises(GraphError, match=r"indices\[0\] = 9 \(an arc of vertex 0\) is out of"):
        CSRGraph(ok.offsets, bad, False)
    with pytest.raises(GraphError, match="must start at 0 and end at len"):
        CSRGraph(ok.offsets[:-1], ok.indices, False)
    with pytest.raises(GraphError, match="holds? integers"):
        CSRGraph(ok.offsets.astype(float), ok.indices, False)
    with pytest.raises(GraphError, match="original_ids must be strictly increasing"):
        CSRGraph(ok.offsets, ok.indices, False, original_ids=[5, 4, 6, 7, 8, 9, 10, 11, 12])
    g = CSRGraph(ok.offsets.astype(np.int32), ok.indices.astype(np.int64), False)
    assert g.offsets.dtype == np.int64 and g.indices.dtype == np.int32


def test_entry_with_a_valid_checksum_but_a_broken_csr_is_rebuilt(cache_dir, monkeypatch):
    # as if the checksum missed the damage: the CSR check still refuses the entry
    monkeypatch.setattr(gcache, "checksum", lambda arrays, meta: "always the same")
    g = G.grid2d(rows=4, cols=4, cache=True)
    entry = _entry(cache_dir, "grid2d", rows=4, cols=4)
    _rewrite_entry(entry, offsets=lambda a: np.where(np.arange(a.size) == 5, 10**6, a))
    with pytest.warns(RuntimeWarning, match="damaged.*never decrease"):
        h = G.grid2d(rows=4, cols=4, cache=True)
    assert same(g, h)


@pytest.mark.parametrize("size", ["1099511627776 1099511627776", "2147483649 2147483649"])
def test_matrix_market_huge_size_line_is_a_clear_error(size):
    with tempfile.TemporaryDirectory() as d:
        p = _write(d, "huge.mtx", f"%%MatrixMarket matrix coordinate pattern general\n{size} 1\n"
                                  "1 2\n")
        with pytest.raises(GraphError, match=r"huge\.mtx: size line says .* do not fit int32"):
            G.load_graph(p, cache=False)


def test_memory_is_checked_before_allocating(monkeypatch):
    from explorer.graphs import memory

    monkeypatch.setattr(memory, "available_bytes", lambda: 8 << 30)
    with pytest.raises(GraphError, match=r"generator 'kronecker' \(scale=27.*needs about "
                                         r"\d+\.\d GB of memory, but only 8\.0 GB"):
        G.generate("kronecker", scale=27, cache=False)
    monkeypatch.setattr(memory, "available_bytes", lambda: 100 << 20)
    with tempfile.TemporaryDirectory() as d:
        p = _write(d, "big.mtx", "%%MatrixMarket matrix coordinate pattern general\n"
                                 "2000000000 2000000000 1\n1 2\n")
        with pytest.raises(GraphError, match=r"big\.mtx: reading 2,000,000,000 vertices .* needs"):
            G.load_graph(p, cache=False)
        big = _write(d, "big.txt", b"0 1\n" * 5_000_000)  # large text: checked before parsing
        with pytest.raises(GraphError, match=r"big\.txt: reading 20,000,000 bytes of text needs"):
            G.load_graph(big, cache=False)
    assert G.generate("grid2d", rows=3, cols=3, cache=False).num_vertices == 9  # small: fine


def test_container_memory_limit_counts(tmp_path):
    from explorer.graphs import memory

    assert memory._cgroup_available(str(tmp_path)) is None  # no cgroup files: no limit known
    (tmp_path / "memory.max").write_text("max\n")
    assert memory._cgroup_available(str(tmp_path)) is None
    (tmp_path / "memory.max").write_text(f"{16 << 30}\n")
    (tmp_path / "memory.current").write_text(f"{15 << 30}\n")
    (tmp_path / "memory.stat").write_text(f"anon 1\ninactive_file {4 << 30}\nfile 9\n")
    assert memory._cgroup_available(str(tmp_path)) == 5 << 30  # reclaimable page cache counts
    v1 = tmp_path / "v1"
    (v1 / "memory").mkdir(parents=True)
    (v1 / "memory" / "memory.limit_in_bytes").write_text(f"{8 << 30}")
    (v1 / "memory" / "memory.usage_in_bytes").write_text(f"{2 << 30}")
    assert memory._cgroup_available(str(v1)) == 6 << 30


def test_metis_accepts_the_undirected_flag_and_refuses_directed():
    with tempfile.TemporaryDirectory() as d:
        p = _write(d, "c4.graph", METIS_TEXT)
        want = rows(G.load_metis(p, cache=False))
        # what the CLI's --undirected passes
        assert rows(G.load_graph(p, directed=False, cache=False)) == want
        assert rows(G.load_metis(p, directed=False, symmetrize=True, cache=False)) == want
        with pytest.raises(GraphError, match="undirected by format"):
            G.load_graph(p, directed=True, cache=False)


@pytest.mark.parametrize("kind", list(SMALL))
def test_generator_size_bounds_the_graph(kind):
    n, arcs = G.generator_size(kind, **SMALL[kind])
    g = G.generate(kind, **SMALL[kind], cache=False)
    assert n == g.num_vertices and arcs >= g.num_arcs
    if kind.startswith("grid"):
        assert arcs == g.num_arcs
    assert G.generator_size("grid3d", nx=3, ny=4, nz=5, periodic=True) == (60, 360)


def test_generator_refuses_over_max_arcs_before_building(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("built before refusing")

    assert G.generator_size("kronecker", scale=22) == (2**22, 2**27)
    monkeypatch.setattr(generators, "build", boom)
    with pytest.raises(GraphError, match=r"'kronecker' \(scale=22.* up to 134,217,728 arcs, over "
                                         r"the limit of 200,000"):
        G.generate("kronecker", scale=22, max_arcs=200_000)
    with pytest.raises(GraphError, match="scale must be in 1..30"):
        G.generator_size("kronecker", scale=40)
    with pytest.raises(GraphError, match="unknown generator"):
        G.generator_size("nope")
    with pytest.raises(GraphError, match="grid2d"):
        G.generator_size("grid2d", colz=3)


def test_stale_cache_temporaries_are_removed(cache_dir):
    import subprocess
    import sys
    import time

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    dead_pid = int(dead.stdout)
    killed = cache_dir / f".gen-x-1-2.npz.{dead_pid}.k1ll3d.tmp"
    live = cache_dir / f".gen-x-1-2.npz.{os.getpid()}.wr1t1ng.tmp"
    forgotten = cache_dir / f".gen-x-1-2.npz.{os.getpid()}.0ld.tmp"
    for p in (killed, live, forgotten):
        p.write_bytes(b"half an entry")
    an_hour_ago = time.time() - 3600
    os.utime(forgotten, (an_hour_ago, an_hour_ago))
    os.utime(killed, (time.time() - 60,) * 2)
    G.grid2d(rows=5, cols=7, cache=True)  # a store cleans up
    left = {p.name for p in cache_dir.iterdir() if p.name.endswith(".tmp")}
    assert left == {live.name}
    live.unlink()


def test_many_ids_translate_both_ways_and_name_the_first_unknown():
    g = G.from_edges(np.array([10, 20, 30]), np.array([20, 30, 50]), directed=False, name="ids", remap=True)
    assert g.to_dense_many([50, 10]).tolist() == [3, 0]
    assert g.to_original_many([0, 3]).tolist() == [10, 50]
    with pytest.raises(GraphError, match="vertex id 11 is not in graph 'ids'"):
        g.to_dense_many([10, 11, 12])
    with pytest.raises(GraphError, match="vertex 4 is out of range"):
        g.to_original_many([4])
    plain = G.from_edges(np.array([0]), np.array([1]), directed=False)
    assert plain.to_dense_many([1, 0]).tolist() == [1, 0] and plain.to_original_many([1]).tolist() == [1]
    with pytest.raises(GraphError, match="vertex id 2 is not in"):
        plain.to_dense_many([2])


# ---------------------------------------------------------------------------------------------
# What the cache serves is what the input builds


def test_an_entry_copied_over_another_graphs_is_not_served(cache_dir, tmp_path):
    a_txt, b_txt = _write(tmp_path, "a.txt", "0 1\n1 2\n"), _write(tmp_path, "b.txt", "5 6\n6 7\n7 8\n")
    a, b = G.load_snap(a_txt, cache=True), G.load_snap(b_txt, cache=True)
    (a_entry,) = cache_dir.glob("file-a_txt-*.npz")
    (b_entry,) = cache_dir.glob("file-b_txt-*.npz")
    a_entry.write_bytes(b_entry.read_bytes())
    with pytest.warns(RuntimeWarning, match="stored for another graph.*b.txt"):
        again = G.load_snap(a_txt, cache=True)
    assert same(again, a) and again.name == "a" and again.num_arcs == 2
    # generated graphs alike: a 3x4 grid's entry copied over a 4x3 grid's
    G.grid2d(rows=3, cols=4, cache=True)
    wide = G.grid2d(rows=4, cols=3, cache=True)
    _entry(cache_dir, "grid2d", rows=4, cols=3).write_bytes(_entry(cache_dir, "grid2d", rows=3, cols=4).read_bytes())
    with pytest.warns(RuntimeWarning, match="stored for another graph"):
        assert same(G.grid2d(rows=4, cols=3, cache=True), wide)


@pytest.mark.parametrize("name", ["g.txt", "g.txt.gz"])
def test_a_file_whose_bytes_change_under_the_same_size_and_mtime_is_read_again(cache_dir, tmp_path, name):
    # as `cp -p`, `rsync -t` or `touch -r` leave it
    p = _write(tmp_path, name, "0 1\n1 2\n")
    st = p.stat()
    assert G.load_snap(p, cache=True).num_vertices == 3
    _write(tmp_path, name, "0 1\n1 9\n" if name.endswith(".gz") else "0 1\n2 3\n")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert p.stat().st_size == st.st_size and p.stat().st_mtime_ns == st.st_mtime_ns
    with pytest.warns(RuntimeWarning, match="other contents of .*changed since"):
        g = G.load_snap(p, cache=True)
    assert g.num_vertices == (3 if name.endswith(".gz") else 4) and g.num_arcs == 2
    assert g.to_original_many(g.neighbors(g.to_dense(1))).tolist() == ([9] if name.endswith(".gz") else [])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert same(G.load_snap(p, cache=True), g)  # the rebuilt entry replaced the stale one


def test_a_stale_entry_of_a_graph_too_small_to_keep_is_removed(cache_dir, tmp_path):
    p = _write(tmp_path, "small.txt", "0 1\n")
    G.load_snap(p, cache=True)
    p.write_text("1 0\n")
    with pytest.warns(RuntimeWarning, match="other contents"):
        G.load_snap(p)  # cache=None: too small to store again
    assert not list(cache_dir.glob("file-small_txt-*.npz"))


def test_an_entry_removed_by_another_process_is_a_plain_miss(cache_dir, monkeypatch):
    g = G.grid2d(rows=5, cols=9, cache=True)
    entry = _entry(cache_dir, "grid2d", rows=5, cols=9)
    real = gcache.read_npz

    def removed_first(path):  # the entry existed when checked and is gone when opened
        entry.unlink()
        return real(path)

    monkeypatch.setattr(gcache, "read_npz", removed_first)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert same(G.grid2d(rows=5, cols=9, cache=True), g)


def _unsearchable(monkeypatch, folder: Path) -> None:
    """Make `folder` one its user may not search: by its mode, and, where that does not bind (as
    root), by the calls that would enter it failing as the system would fail them."""
    folder.chmod(0)
    if os.geteuid() != 0:
        return
    import builtins
    import io

    inside = str(folder) + os.sep

    def refuse(fn):
        def call(path, *a, **k):
            p = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
            if p and os.path.abspath(p).startswith(inside):
                raise PermissionError(13, "Permission denied", p)
            return fn(path, *a, **k)
        return call

    for mod, name in ((os, "stat"), (os, "lstat"), (os, "open"), (os, "mkdir"), (os, "scandir"),
                      (os, "listdir"), (io, "open"), (builtins, "open")):
        monkeypatch.setattr(mod, name, refuse(getattr(mod, name)))


def test_a_cache_folder_that_cannot_be_searched_is_left_aside(tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    monkeypatch.setenv("BFS4K_CACHE_DIR", str(locked / "cache"))
    p = _write(tmp_path, "g.txt", "0 1\n1 2\n")
    try:
        _unsearchable(monkeypatch, locked)
        with pytest.warns(RuntimeWarning, match="cache folder .*locked.* cannot be used"):
            g = G.load_snap(p)  # never cached: not even the check may fail the load
        assert g.num_arcs == 2
        assert G.load_snap(p, cache=True).num_arcs == 2
        assert G.grid2d(rows=3, cols=3, cache=True).num_vertices == 9
    finally:
        monkeypatch.undo()
        locked.chmod(0o755)


def test_a_graph_file_in_a_folder_that_cannot_be_searched_is_a_graph_error(tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    p = _write(locked, "g.txt", "0 1\n")
    try:
        _unsearchable(monkeypatch, locked)
        for load in (G.load_snap, G.load_graph, G.load_metis, G.load_matrix_market):
            with pytest.raises(GraphError, match=r"g.txt: cannot read: Permission denied"):
                load(p)
    finally:
        monkeypatch.undo()
        locked.chmod(0o755)


def test_an_uppercase_gz_is_decompressed(tmp_path):
    p = tmp_path / "edges.TXT.GZ"
    p.write_bytes(gzip.compress(b"0 1\n1 2\n"))
    g = G.load_graph(p, cache=False)
    assert g.num_arcs == 2 and g.name == "edges"


def test_a_matrix_market_integer_field_holds_whole_numbers_only(tmp_path):
    mtx = _write(tmp_path, "g.mtx", "%%MatrixMarket matrix coordinate integer general\n% c\n3 3 3\n1 2 4\n2 3 0.5\n3 1 2\n")
    with pytest.raises(GraphError, match=r"g.mtx: line 5: entry \(2, 3\) holds 0.5, but the header says the values "
                                         "are integers"):
        G.load_matrix_market(mtx, cache=False)
    sym = _write(tmp_path, "s.mtx", "%%MatrixMarket matrix coordinate integer symmetric\n3 3 2\n2 1 7\n3 2 -1.25\n")
    with pytest.raises(GraphError, match=r"line 4: entry \((3, 2|2, 3)\) holds -1.25"):
        G.load_matrix_market(sym, cache=False)
    whole = _write(tmp_path, "w.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 1e3\n")
    assert G.load_matrix_market(whole, cache=False).weights.tolist() == [1000.0]


def test_a_weight_beyond_float64_is_refused_by_line(tmp_path):
    snap = _write(tmp_path, "huge.txt", "0 1 2.5\n1 2 1e400\n")
    with pytest.raises(GraphError, match=r"huge.txt: line 2: .*the number 1e400 is beyond the largest float64"):
        G.load_snap(snap, cache=False)


def test_a_matrix_market_value_beyond_float64_is_refused_by_line(tmp_path):
    for field in ("real", "integer"):
        mtx = _write(tmp_path, "huge.mtx", f"%%MatrixMarket matrix coordinate {field} general\n3 3 2\n1 2 2.5\n2 3 1e400\n")
        with pytest.raises(GraphError, match=r"huge.mtx: line 4: entry \(2, 3\) holds inf, which no float64 holds"):
            G.load_matrix_market(mtx, cache=False)


def test_an_id_over_the_limit_names_the_limit(tmp_path):
    for big in (2**58 + 1, 2**59, 2**63 - 1):
        ids = _write(tmp_path, "ids.txt", f"0 1\n1 {big}\n")
        with pytest.raises(GraphError, match=r"ids.txt: line 2: .*integer too large: numbers here must be at most "
                                             r"2\*\*58 = 288,230,376,151,711,744"):
            G.load_snap(ids, cache=False)
    assert G.load_snap(_write(tmp_path, "edge.txt", f"0 {2**58}\n"), cache=False).original_ids.tolist() == [0, 2**58]


def test_metis_edges_whose_ends_disagree_on_the_weight_are_refused(tmp_path):
    # edge 1-2 weighs 3 at vertex 1 and 5 at vertex 2
    p = _write(tmp_path, "w.graph", "% weights\n3 2 1\n2 3\n1 5 3 4\n2 4\n")
    with pytest.raises(GraphError, match=r"w.graph: line 4: edge 1-2 weighs 5 here but 3 at line 3 \(vertex 1\); "
                                         "an edge has one weight"):
        G.load_metis(p, cache=False)
    assert G.load_metis(p, cache=False, weighted=False).num_edges == 2
    ok = _write(tmp_path, "ok.graph", "3 2 1\n2 3\n1 3 3 4\n2 4\n")
    assert sorted(G.load_metis(ok, cache=False).weights.tolist()) == [3.0, 3.0, 4.0, 4.0]


def test_a_graph_unpickled_from_unaligned_buffers_gets_aligned_arrays():
    # Dask's workers unpickle out of network frames: an int64 array may start at any byte
    import pickle

    g = G.generate("grid2d", rows=4, cols=5)
    raw = np.zeros(g.offsets.nbytes + 1, np.uint8)
    odd = raw[1:].view(np.int64)
    odd[:] = g.offsets
    assert not odd.flags.aligned
    h = CSRGraph.__new__(CSRGraph)
    h.__setstate__({**vars(g), "offsets": odd})
    assert h.offsets.flags.aligned and np.array_equal(h.offsets, g.offsets) and h.indices is g.indices
    k = pickle.loads(pickle.dumps(g, protocol=5))
    assert np.array_equal(k.offsets, g.offsets) and k.name == g.name and k.notes == g.notes
