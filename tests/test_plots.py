"""Plots stream rows and the report is a self-contained HTML file: no engine, no kernels needed."""
import dataclasses
import math
import re

import numpy as np
import pytest

pytest.importorskip("bokeh", reason="the plots need Bokeh (pip install -e .[notebook])")
from bokeh.models import HoverTool, LogScale  # noqa: E402

from explorer.ui import plots, report, tables
from explorer.stats import LEVEL_FIELDS, Extra, LevelStats, RunResult


def level(i, frontier_in, discovered, edges=10, dups=(0, 0, 0, 0), technique="topdown-queue",
          kernel="multi-block", ms=1.0):
    gen, det, und, conf = dups  # conflicts: BFS-4K's extra (hash64 collisions)
    extras = {"warp_size": 4, "edge_discover": False, "dup_conflicts": conf} if technique == "bfs4k" else {}
    return LevelStats(level=i, frontier_in=frontier_in, edges_examined=edges, discovered=discovered,
                      frontier_out=discovered, dup_generated=gen, dup_detected=det, dup_undetected=und,
                      technique=technique, kernel=kernel, time_ms=ms, extras=extras)


def result(levels, technique="topdown-queue", graph="toy", backend="simulator"):
    n = 10
    return RunResult(graph=graph, source=0, technique=technique, knobs={"K1": 8},
                     distances=np.arange(n, dtype=np.int32), parents=np.zeros(n, np.int32), levels=levels,
                     total_ms=sum(lv.time_ms for lv in levels), traversed_edges=14,
                     device={"backend": backend, "name": "Numba CUDA simulator (CPU)"}, validation="ok",
                     extras=tuple(Extra(name, name) for name in levels[0].extras))


RUN_A = [level(0, 1, 3), level(1, 3, 4, dups=(2, 1, 1, 0)), level(2, 4, 0, edges=0)]
RUN_B = [level(0, 1, 2, technique="bfs4k", kernel="single-block"),
         level(1, 2, 0, technique="bfs4k", kernel="multi-block", edges=None, dups=(None, None, None, None))]
# Instrumentation off as records made before counts became None said it: -1.
RUN_C = [level(0, 1, 2, technique="bfs4k", edges=-1, dups=(-1, -1, -1, -1))]


def test_level_row_has_every_declared_column():
    row = plots.level_row(RUN_A[1], "a")
    assert tuple(row) == plots.SOURCE_COLUMNS
    assert set(LEVEL_FIELDS) | {"run"} <= set(row)
    assert row["run"] == "a" and row["step"] == "topdown-queue · multi-block"
    assert row["extras_text"] == "none" and math.isnan(row["dup_conflicts_plot"])


def test_a_techniques_extras_reach_the_hover():
    row = plots.level_row(RUN_B[0], "b")
    assert set(plots.SOURCE_COLUMNS) <= set(row)
    assert row["step"] == "bfs4k · single-block"
    assert row["extras_text"] == "warp size 4, edge discover no, dup conflicts 0"
    stream = plots.LevelStream()
    stream.push_many(RUN_B, "b")
    assert stream.sources["b"].data["extras_text"][0] == row["extras_text"]


def test_stream_fills_the_run_source_and_the_table_source():
    stream = plots.LevelStream()
    for lv in RUN_A:
        stream.push(lv, "a")
    data = stream.sources["a"].data
    assert set(data) == set(plots.SOURCE_COLUMNS)
    assert data["level"] == [0, 1, 2]
    assert data["frontier_in"] == [1, 3, 4]
    assert data["dup_generated_plot"] == [0, 2, 0]
    assert stream.table_source.data["run"] == ["a", "a", "a"]


def test_sources_start_empty_with_every_column():
    stream = plots.LevelStream(max_runs=3)
    for ov in stream.overlays:
        assert set(ov.source.data) == set(plots.SOURCE_COLUMNS)
        assert all(len(v) == 0 for v in ov.source.data.values())
        assert not any(g.legend_item.visible for g in ov.glyphs.values())


def test_two_runs_overlay_in_two_colours():
    stream = plots.LevelStream()
    stream.push_many(RUN_A, "run A")
    stream.push_many(RUN_B, "run B")
    assert stream.labels == ["run A", "run B"]
    assert stream.color("run A") != stream.color("run B")
    for name, fig in stream.figures.items():
        runs_legend = next(m for m in fig.below if getattr(m, "name", None) == "runs")
        shown = [item.label["value"] for item in runs_legend.items if item.visible]
        assert shown == ["run A", "run B"], name
    # each run's glyphs read its own source, in its own colour
    ov_a = stream.overlays[0]
    assert all(r.data_source is stream.sources["run A"] for rs in ov_a.renderers.values() for r in rs)
    # both steps of run B are categories of the technique plot
    factors = stream.figures["technique"].y_range.factors
    assert {"topdown-queue · multi-block", "bfs4k · single-block", "bfs4k · multi-block"} == set(factors)


def test_log_axes_draw_zero_at_the_floor_and_skip_unmeasured():
    stream = plots.LevelStream()
    stream.push_many(RUN_A + RUN_B[1:], "a")
    data = stream.sources["a"].data
    assert data["discovered"][2] == 0 and data["discovered_log"][2] == plots.LOG_FLOOR
    assert data["edges_examined_log"][2] == plots.LOG_FLOOR
    assert math.isnan(data["edges_examined_log"][3])  # not measured: a gap
    assert math.isnan(data["dup_generated_plot"][3])
    assert data["edges_examined"][3] is None and data["edges_examined_text"][3] == tables.NOT_MEASURED
    for name in ("frontier", "edges"):
        assert isinstance(stream.figures[name].y_scale, LogScale)
    assert 0 < plots.LOG_FLOOR < 1


def test_slots_are_recycled_oldest_first():
    stream = plots.LevelStream(max_runs=2)
    for label in ("r1", "r2", "r3"):
        stream.push_many(RUN_A, label)
    assert stream.labels == ["r2", "r3"]
    assert stream.sources["r3"].data["level"] == [0, 1, 2]  # r1's rows left with it
    assert len(stream.table_source.data["run"]) == 9


def test_figure_builders_take_a_source():
    src = plots.empty_source()
    fig = plots.frontier_figure(src, label="x")
    assert any(getattr(r, "data_source", None) is src for r in fig.renderers)
    src.stream(plots.rows_to_columns([plots.level_row(lv, "x") for lv in RUN_A]))
    assert src.data["level"] == [0, 1, 2]


UNMEASURED = ("edges_examined", "dup_generated", "dup_detected", "dup_undetected", "dup_conflicts")


@pytest.mark.parametrize("levels", [RUN_B[1:], RUN_C], ids=["None", "-1"])
def test_counts_not_measured_show_a_dash_in_every_table(levels):
    # Issue 16 item 13: with instrumentation off the tables showed -1.
    text = report.format_level_table(levels)
    header, row = text.splitlines()
    assert header.split()[:3] == ["level", "frontier_in", "edges_examined"]
    cells = dict(zip(header.split(), row.split()))
    assert [cells[f] for f in UNMEASURED] == [tables.NOT_MEASURED] * 5
    assert "-1" not in row and "None" not in row

    printed = []
    printer = report.LevelTablePrinter(write=printed.append, extras=levels[0].extras)
    printer.row(levels[0])
    assert printed[0].split() == row.split()

    html_table = report.level_table_html(levels)
    assert html_table.count(f">{tables.NOT_MEASURED}<") == 5 and "-1" not in html_table

    # The Explorer's level table and hovers read the same text.
    row = plots.level_row(levels[0], "a")
    assert [row[f"{f}_text"] for f in UNMEASURED] == [tables.NOT_MEASURED] * 5
    assert row["frontier_in_text"] == str(levels[0].frontier_in)


def test_format_count():
    assert tables.format_count(1234567) == "1,234,567"
    assert tables.format_count(0) == "0"
    assert tables.format_count(None) == tables.format_count(-1) == tables.NOT_MEASURED == "–"
    assert tables.format_count(None, missing="") == ""
    assert tables.format_count(np.int64(1234)) == "1,234"


def test_the_explorer_table_and_hovers_show_counts_as_the_text_tables_do():
    stream = plots.LevelStream()
    table = stream.level_table()
    stream.push_many(RUN_B, "b")
    by_title = {c.title: c for c in table.columns}
    for f in tables.COUNT_FIELDS:
        col = by_title[f]
        assert col.field == f"{f}_text" and not col.sortable
    assert stream.table_source.data["dup_generated_text"] == ["0", tables.NOT_MEASURED]
    assert stream.table_source.data["dup_conflicts_text"] == ["0", tables.NOT_MEASURED]
    tips = [t for fig in stream.figures.values() for tool in fig.tools if isinstance(tool, HoverTool)
            for t in tool.tooltips]
    assert ("generated", "@dup_generated_text") in tips and ("edges examined", "@edges_examined_text") in tips
    assert not any("{0,0}" in t[1] for t in tips if t[1].startswith("@dup") or t[1].startswith("@edges"))


def test_level_table_columns_fit_their_titles_and_cells():
    # Issue 16 item 15: titles and cells were cut off (frontier_out had 84 px for 12 bold characters).
    stream = plots.LevelStream(fig_width=450)
    table = stream.level_table()
    for col in table.columns:
        assert col.width >= plots.table_px(col.title), col.title
    long_label = "#12 topdown-queue (soc-LiveJournal1_symmetrized)"
    stream.push_many([level(0, 1, 12_345_678, edges=123_456_789, technique="topdown-queue", kernel="single-block")],
                     long_label)
    widths = {c.field: c.width for c in table.columns}
    assert widths["run"] >= plots.table_px(long_label)
    assert widths["edges_examined_text"] >= plots.table_px("123,456,789")
    assert widths["kernel"] >= plots.table_px("single-block")
    # The table is no wider than the two plots above it: it scrolls sideways instead.
    assert table.width == min(sum(c.width for c in table.columns) + 20, 2 * 450 + 40)
    # A table built after rows arrived fits them too.
    late = plots.LevelStream()
    late.push_many(RUN_A, long_label)
    assert {c.field: c.width for c in late.level_table().columns}["run"] >= plots.table_px(long_label)


def test_report_is_a_self_contained_html_file(tmp_path):
    r1 = result(RUN_A)
    r2 = result([dataclasses.replace(lv, technique="bfs4k") for lv in RUN_A], technique="bfs4k")
    stats = {"vertices": 10, "edges": 14, "approx_diameter": 6, "avg_degree": 2.8}
    path = report.write_report([r1, r2], tmp_path / "sub" / "report.html", graph_stats=stats)
    html = path.read_text(encoding="utf-8")
    assert path.exists() and html.startswith("<!DOCTYPE html>")
    # opens offline: BokehJS inline, no script loaded from anywhere
    assert not re.search(r"<script[^>]+src=", html)
    assert "Bokeh.embed" in html or "embed_items" in html
    for title in ("Frontier size per level", "Edges examined per level", "Duplicates per level",
                  "Time per level", "Technique / kernel per level"):
        assert title in html
    assert "#1 topdown-queue (toy)" in html and "#2 bfs4k (toy)" in html  # summary and legends
    assert "approx_diameter" in html and "2.80" in html  # Table-1 stats
    assert html.count("<table class='levels'>") == 2  # a per-level table per run
    assert "not GPU timings" in html  # simulator runs say so
    assert "K1=8" in html  # knobs that differ from the defaults


def test_report_rejects_no_runs(tmp_path):
    with pytest.raises(ValueError, match="at least one"):
        report.write_report([], tmp_path / "r.html")
