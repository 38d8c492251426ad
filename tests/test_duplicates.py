"""Duplicate provenance (explorer.duplicates, kernels.bfs4k.provenance) and the Duplicates panel."""
import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

from explorer import backend, graphs
from explorer.duplicates import Provenance, run_with_provenance
from explorer.engine import DeviceLimits
from explorer.knobs import KnobError

SIM = backend.current().is_simulator
SMALL = {"K6": 32}  # 32-thread blocks: every CUDA thread is a Python thread under the simulator
#: A pretend device with 64 resident threads: virtual warps of K1 lanes on a small frontier (Fig. 12).
TINY = dataclasses.replace(DeviceLimits.simulator(), sm_count=1, max_threads_per_sm=64)


@pytest.fixture(scope="module")
def grid_prov():
    g = graphs.generate("grid2d", rows=6, cols=6)
    return run_with_provenance(g, 0, {**SMALL, "K1": 4, "K4": 0, "dedup": "hash64"}, limits=TINY)


def test_every_claim_is_logged_and_the_tables_match_the_records(grid_prov):
    p = grid_prov
    assert p.check.ok and p.result.validation == "ok"
    assert p.lost == 0 and p.sample_every == 1
    assert all(lv.kernel == "multi-block" for lv in p.result.levels)
    rows = {r["level"]: r for r in p.levels()}
    assert sum(r["duplicates"] for r in rows.values()) > 0  # the mesh makes duplicates at this warp size
    for lv in p.result.levels:
        r = rows.get(lv.level)
        if r is None:  # nothing claimed: the last level
            assert lv.discovered == 0
            continue
        # The whole sample, nothing lost: the log's counts are the kernel's own.
        assert r["claims"] == lv.discovered + lv.dup_generated
        assert r["duplicates"] == lv.dup_generated
        assert r["caught"] == lv.dup_detected and r["left"] == lv.dup_undetected
        # hash64 dropped copies: its verdicts are the run's
        assert r["hash64_caught"] == lv.dup_detected
        assert r["duplicates"] == r["dup_warp"] + r["dup_block"] + r["dup_grid"]
        if SIM:
            assert r["dup_grid"] == 0  # the simulator runs a launch's blocks one after another
    assert any("K5=1 -> 0" in n for n in p.notes)


def test_per_vertex_rows_name_the_threads_and_the_verdicts(grid_prov):
    level = next(r["level"] for r in grid_prov.levels() if r["duplicated_vertices"])
    rows = grid_prov.duplicates(level, limit=None)
    assert len(rows) == grid_prov.duplicate_count(level)
    for row in rows:
        assert row["copies"] >= 2 and len(row["threads"]) == row["copies"] == len(row["caught"])
        assert set(row["caught"]) <= {"x", "-"} and set(row["hash64"]) <= {"x", "-", "?"}
        assert row["caught"] == row["hash64"].replace("?", "-")  # hash64 was the run's filter
        assert all(t.count(".") == 1 for t in row["threads"])
    assert len(grid_prov.duplicates(level, limit=1)) == 1


def test_a_graph_with_its_own_ids_is_searched_and_reported_in_them():
    # The mesh as a file would name it, ids 100, 103, 106, ...: the source is given in those ids
    # and the per-vertex rows report them; the log itself holds vertices 0..n-1.
    mesh = graphs.generate("grid2d", rows=6, cols=6)
    tails = np.repeat(np.arange(mesh.num_vertices), mesh.degrees())
    g = graphs.from_edges(100 + 3 * tails, 100 + 3 * mesh.indices.astype(np.int64), directed=False, remap=True)
    p = run_with_provenance(g, 103, {**SMALL, "K1": 4, "K4": 0, "dedup": "hash64"}, limits=TINY)
    assert p.check.ok and p.result.source == 1 and p.result.source_id == 103
    level = next(r["level"] for r in p.levels() if r["duplicated_vertices"])
    rows = p.duplicates(level, limit=None)
    claimed = p.claims["vertex"][p.claims["level"] == level]
    vertices, copies = np.unique(claimed, return_counts=True)
    assert [r["vertex"] for r in rows] == (100 + 3 * vertices[copies >= 2]).tolist()
    dist = p.result.distances
    for r in rows:
        assert all(dist[g.to_dense(u)] == level for u in r["parents"])  # ids of frontier vertices


def test_warp_culling_drops_and_hash64_is_judged_on_the_same_claims():
    g = graphs.generate("grid2d", rows=5, cols=5)
    p = run_with_provenance(g, 0, {**SMALL, "K1": 4, "K4": 0, "K5": 0, "dedup": "warp-culling"}, limits=TINY)
    assert p.check.ok and not any("K5" in n for n in p.notes)  # K5=0 given: no note about it
    tot = p.filters()
    assert tot["caught"] == tot["cull_caught"] == sum(lv.dup_detected for lv in p.result.levels)
    assert tot["duplicates"] == sum(lv.dup_generated for lv in p.result.levels)
    assert tot["hash64_caught"] >= 0 and p.filter == "warp-culling"


def test_the_child_grid_logs_its_claims_too():
    hub = 40
    src = np.r_[np.zeros(hub, np.int64), np.arange(1, hub)]
    dst = np.r_[np.arange(1, hub + 1), np.arange(2, hub + 1)]
    g = graphs.from_edges(src, dst, directed=False, name="hub40")
    # K2 = 10 % of |V| may be heavy, K3 = 1: a degree of 32 (K3 x 32 threads) takes the child grid.
    p = run_with_provenance(g, 0, {**SMALL, "K2": 10.0, "K3": 1}, limits=TINY)
    from kernels.bfs4k.layout import P_HEAVY

    assert p.check.ok
    assert p.result.levels[0].heavy_vertices == 1
    heavy = p.claims["kernel"] == P_HEAVY
    assert heavy.sum() == hub and set(p.claims["level"][heavy]) == {0}


@pytest.fixture(scope="module")
def sampled_prov():
    g = graphs.generate("grid2d", rows=6, cols=6)
    return g, run_with_provenance(g, 0, {**SMALL, "K1": 4, "K4": 0}, limits=TINY, sample_every=4)


def test_a_sample_logs_every_copy_of_the_sampled_vertices_only(sampled_prov):
    # What one run determines, on a GPU too (how many copies a vertex gets is the race's).
    from kernels.bfs4k.layout import prov_sampled

    g, p = sampled_prov
    c = p.claims
    assert p.check.ok and p.lost == 0 and p.sample_every == 4
    sampled = [v for v in range(g.num_vertices) if prov_sampled(v, 3)]
    assert 0 < len(sampled) < g.num_vertices - 1
    # Only sampled vertices, and every sampled vertex the search reached, at the level before its distance.
    dist = p.result.distances
    logged = set(zip(c["level"].tolist(), c["vertex"].tolist()))
    assert logged == {(int(dist[v]) - 1, v) for v in sampled if dist[v] > 0}
    # Each row is a real claim: its parent is a neighbour one level nearer the source.
    for v, u in zip(c["vertex"], c["parent"]):
        assert u in g.indices[g.offsets[v]:g.offsets[v + 1]] and dist[u] == dist[v] - 1
    # Every copy writes its parent, so the parent that stayed (the last copy's) is among the logged ones.
    for v in set(c["vertex"].tolist()):
        assert p.result.parents[v] in set(c["parent"][c["vertex"] == v].tolist())
    # The sampled copies are among the level's copies (the record counts every vertex's).
    for lv in p.result.levels:
        at = c["level"] == lv.level
        assert at.sum() - len(set(c["vertex"][at].tolist())) <= lv.dup_generated


@pytest.mark.skipif(not SIM, reason="two runs make the same copies only under the simulator (its blocks run one "
                                    "after another); on a GPU each run races differently")
def test_a_sample_holds_the_full_logs_claims_of_its_vertices(grid_prov, sampled_prov):
    from kernels.bfs4k.layout import prov_sampled

    _, p = sampled_prov
    full = grid_prov.claims
    assert len(p.claims["vertex"]) < len(full["vertex"])
    keep = np.array([prov_sampled(int(v), 3) for v in full["vertex"]])
    assert sorted(zip(p.claims["level"], p.claims["vertex"])) == sorted(zip(full["level"][keep], full["vertex"][keep]))


def test_a_full_log_says_how_much_it_lost():
    g = graphs.generate("grid2d", rows=4, cols=4)
    p = run_with_provenance(g, 0, {**SMALL, "K1": 4, "K4": 0}, limits=TINY, max_records=5)
    assert len(p.claims["vertex"]) == 5 and p.lost == g.num_vertices - 1 + sum(
        lv.dup_generated for lv in p.result.levels) - 5
    assert any("raise max_records" in n for n in p.notes)


@pytest.mark.parametrize("kwargs,error,message", [
    ({"knobs": {"claim": "atomic"}}, KnobError, "needs claim='race'"),
    ({"sample_every": 3}, ValueError, "power of two"),
    ({"knobs": {"K1": 3}}, KnobError, "K1"),
    ({"source": 99}, ValueError, "out of range"),
])
def test_bad_input_is_named(kwargs, error, message):
    g = graphs.sample_graph("bfs4k_fig2")
    with pytest.raises(error, match=message):
        run_with_provenance(g, **{"source": 0, **kwargs})


def test_the_normal_kernels_keep_their_own_enqueue():
    # The provenance kernels call copies of the expansion code; the originals are untouched.
    from kernels import expand, frontier_ops
    from kernels.bfs4k import multi, provenance

    fn = lambda d: getattr(d, "py_func", None) or d.fn  # noqa: E731
    assert fn(frontier_ops.visit).__globals__["enqueue"] is frontier_ops.enqueue
    assert fn(expand.expand_virtual_warp).__globals__["visit"] is frontier_ops.visit
    assert fn(multi.heavy_edges).__globals__["visit"] is frontier_ops.visit
    assert fn(provenance._visit).__globals__["enqueue"] is provenance.enqueue_logged
    assert fn(provenance.expand_virtual_warp).__globals__["visit"] is provenance._visit
    assert fn(provenance.heavy_edges).__globals__["visit"] is provenance._visit


def _fake(claims: list[tuple], dup_generated=None) -> Provenance:
    """A Provenance over hand-made claims (level, vertex, block, warp, kept, hash64, cull)."""
    cols = ("level", "vertex", "block", "warp", "kept", "hash64", "cull")
    data = {c: np.array([row[i] for row in claims], np.int64) for i, c in enumerate(cols)}
    n = len(claims)
    data.update(parent=np.zeros(n, np.int64), lane=np.zeros(n, np.int64), kernel=np.zeros(n, np.int64))
    levels = [SimpleNamespace(dup_generated=dup_generated) for _ in range(int(data["level"].max()) + 1)]
    return Provenance(SimpleNamespace(levels=levels, original_ids=None), None, data, 1, 0, "hash64")


def test_scopes_and_what_per_block_and_per_warp_filters_could_catch():
    # Vertex 5: two copies in warp 0.0 (one warp); vertex 6: warps 0.0 and 0.1 (one block);
    # vertex 7: three copies from blocks 0, 1, 1 (several blocks): a per-block filter can remove
    # at most one of them (block 1's second copy), a per-warp filter one too (same warp 1.0).
    p = _fake([(1, 5, 0, 0, 1, 0, 0), (1, 5, 0, 0, 0, 1, 1),
               (1, 6, 0, 0, 1, 0, 0), (1, 6, 0, 1, 1, 0, 0),
               (1, 7, 0, 0, 1, 0, 0), (1, 7, 1, 0, 1, 0, 0), (1, 7, 1, 0, 0, 1, 0),
               (1, 8, 0, 0, 1, 0, 0)])
    row, = p.levels()
    assert row["claims"] == 8 and row["duplicated_vertices"] == 3 and row["duplicates"] == 4
    assert (row["dup_warp"], row["dup_block"], row["dup_grid"]) == (1, 1, 2)
    assert row["caught"] == 2 and row["left"] == 2  # vertex 6 twice, vertex 7 twice
    assert row["per_block_bound"] == 1 + 1 + 1 and row["per_warp_bound"] == 1 + 0 + 1
    assert row["hash64_caught"] == 2 and row["cull_caught"] == 1
    by_vertex = {r["vertex"]: r for r in p.duplicates(1, limit=None)}
    assert by_vertex[7]["scope"] == "several blocks" and by_vertex[7]["blocks"] == [0, 1]
    assert by_vertex[7]["threads"] == ["0.0", "1.0", "1.0"] and by_vertex[7]["caught"] == "--x"
    assert by_vertex[5]["scope"] == "one warp" and by_vertex[6]["scope"] == "one block, several warps"


# ------------------------------------------------------------------ the Duplicates panel

def test_the_panel_runs_the_explorers_picks_and_fills_its_tables(monkeypatch):
    pytest.importorskip("ipywidgets", reason="the panels need ipywidgets (pip install -e .[notebook])")
    from explorer.ui import duplicates_panel
    from explorer.ui.widgets import Explorer

    ex = Explorer(graph="gen:grid2d:rows=5,cols=5", source=0)
    panel = ex.tools.panel("duplicates")
    calls = []
    real = duplicates_panel.run_with_provenance

    def spy(graph, source, knobs, **kw):
        calls.append((graph.name, source, dict(knobs), kw))
        return real(graph, source, knobs, limits=TINY, **{k: v for k, v in kw.items() if k != "limits"})
    monkeypatch.setattr(duplicates_panel, "run_with_provenance", spy)
    ex.technique.value = "bfs4k"
    ex.set_knobs({"K1": 4, "K4": 0})
    panel.filter.value = "warp-culling"
    panel.run_button.click()
    (name, source, knobs, kw), = calls
    assert (name, source, knobs["dedup"], knobs["K1"], knobs["K4"], kw["sample_every"]) == \
        ("grid2d_5x5", 0, "warp-culling", 4, 0, 1)
    prov = panel.prov
    assert prov is not None and "valid" in panel.status.value, panel.status.value
    levels = prov.levels()
    assert panel.level_source.data["level"] == [r["level"] for r in levels]
    assert panel.level_source.data["duplicates"] == [r["duplicates"] for r in levels]
    with_dups = [r["level"] for r in levels if r["duplicated_vertices"]]
    assert list(panel.level.options) == with_dups and panel.level.value == with_dups[0]
    assert f"Level {with_dups[0]}:" in panel.vertex_table.value
    assert "warp culling (dropped copies)" in panel.filters_table.value
    assert "hash64 (judged only)" in panel.filters_table.value
    if SIM:
        assert "one after another" in panel.notes.value
    panel.level.value = with_dups[-1]
    assert f"Level {with_dups[-1]}:" in panel.vertex_table.value


def test_the_panel_names_what_it_cannot_do():
    pytest.importorskip("ipywidgets", reason="the panels need ipywidgets (pip install -e .[notebook])")
    from explorer.ui.widgets import Explorer

    ex = Explorer(graph="bfs4k_fig2", source=0, technique="bfs4k")
    panel = ex.tools.panel("duplicates")
    ex.set_knobs({"claim": "atomic"})
    panel.run_button.click()
    assert "needs claim=&#x27;race&#x27;" in panel.status.value and panel.prov is None


# ------------------------------------------------------------------ the figures: legends beside the data

def _legend_places(fig):
    from bokeh.models import Legend

    return {place: [m for m in getattr(fig, place) if isinstance(m, Legend)]
            for place in ("center", "left", "right", "above", "below") if any(
                isinstance(m, Legend) for m in getattr(fig, place))}


def test_fig13_keeps_its_legend_beside_the_bars():
    # Its legend sat in the plot's top left corner, over the bars of levels 1-3.
    pytest.importorskip("bokeh")
    from bokeh.models import ColumnDataSource

    from explorer.ui.duplicates_panel import LEVEL_COLUMNS, duplicates_figure

    fig = duplicates_figure(ColumnDataSource({c: [1, 2] for c in LEVEL_COLUMNS}))
    places = _legend_places(fig)
    assert list(places) == ["right"]
    labels = [item.label["value"] for item in places["right"][0].items]
    assert labels == ["one warp", "one block, several warps", "several blocks", "hash64 catches",
                      "warp culling catches"]


def test_fig12_keeps_its_legend_beside_the_curves():
    # Its legend sat at the bottom centre of the plot, over the hash64 and sequential curves.
    pytest.importorskip("bokeh")
    from explorer.ui.duplicates_panel import frontier_sizes_figure

    runs = {"VirtualWarp4": [SimpleNamespace(level=i, frontier_in=f) for i, f in enumerate([1, 5, 9, 4])],
            "VirtualWarp4 + Hash64": [SimpleNamespace(level=i, frontier_in=f) for i, f in enumerate([1, 4, 6, 3])]}
    fig = frontier_sizes_figure([1, 4, 6, 3], runs, "Fig. 12")
    places = _legend_places(fig)
    assert list(places) == ["right"]
    assert [item.label["value"] for item in places["right"][0].items] == ["Sequential", *runs]
    dashes = {item.label["value"]: item.renderers[0].glyph.line_dash for item in places["right"][0].items}
    assert dashes["VirtualWarp4"] != dashes["VirtualWarp4 + Hash64"] == []  # a filter's run solid
