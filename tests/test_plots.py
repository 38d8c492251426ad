"""Plots stream rows and the report is a self-contained HTML file: no engine, no kernels needed."""
import dataclasses
import json
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
    # With instrumentation off a count reads as not measured, never as -1.
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


def test_a_wide_level_table_is_cut_into_blocks_of_whole_columns():
    # A notebook shows lines of NOTEBOOK_WIDTH characters whole; a wider one breaks mid-word.
    res = result(RUN_B, technique="bfs4k")
    whole = report.format_level_table(res).splitlines()
    assert len(whole[0]) > report.NOTEBOOK_WIDTH  # BFS-4K's table with its extras is wider
    text = report.format_level_table(res, width=report.NOTEBOOK_WIDTH)
    blocks = [b.splitlines() for b in text.split("\n\n")]
    assert len(blocks) >= 2 and all(len(line) <= report.NOTEBOOK_WIDTH for b in blocks for line in b)
    # Each block: the level column, then whole columns; together every column once, in order.
    assert all(b[0].split()[0] == "level" and [r.split()[0] for r in b[1:]] == ["0", "1"] for b in blocks)
    assert [c for b in blocks for c in b[0].split()[1:]] == whole[0].split()[1:]
    cells = {c: v for b in blocks for row in b[1:2] for c, v in zip(b[0].split(), row.split())}
    assert cells == dict(zip(whole[0].split(), whole[1].split()))
    assert report.format_level_table(res, width=len(whole[0])) == "\n".join(whole)  # one block where it fits


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
    # Every column is as wide as its bold title and its widest cell.
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


def _legend(fig, name="runs"):
    return next(m for m in fig.below if m.name == name)


def test_runs_with_the_same_values_in_a_plot_are_drawn_once_and_named_together():
    # Runs of one graph often share a plot's values (every technique's frontier sizes): drawn on
    # top of one another, all but the last are hidden, and the legend lists each run.
    slower = [dataclasses.replace(lv, time_ms=2.0) for lv in RUN_A]
    stream = plots.LevelStream()
    for label, levels in (("#1 a", RUN_A), ("#2 b", slower), ("#3 c", RUN_B), ("#4 d", RUN_A)):
        stream.push_many(levels, label)
    merged = stream.merge_identical_runs()
    assert merged["frontier"] == [["#1 a", "#2 b", "#4 d"], ["#3 c"]]
    assert merged["time"] == [["#1 a", "#4 d"], ["#2 b"], ["#3 c"]]  # each plot groups by its own values
    frontier = [i for i in _legend(stream.figures["frontier"]).items if i.visible]
    assert [i.label.value for i in frontier] == ["#1, #2, #4: same values", "#3 c"]
    assert [i.label.value for i in _legend(stream.figures["time"]).items if i.visible] == \
        ["#1, #4: same values", "#2 b", "#3 c"]
    hidden = stream._by_label["#2 b"].glyphs
    assert not any(r.visible for r in hidden["frontier"].renderers) and all(r.visible for r in hidden["time"].renderers)


def test_run_names():
    assert plots.run_names(["#1 a", "#3 b", "#4 c", "#5 d", "#7 e"]) == "#1, #3–#5, #7"
    assert plots.run_names(["#2 x"]) == "#2"
    assert plots.run_names(["first", "second"]) == "first, second"


def test_every_category_of_the_technique_plot_has_a_row_its_label_fits():
    stream = plots.LevelStream()
    stream.push_many(RUN_B, "a")
    fig = stream.figures["technique"]
    assert fig.frame_height is None  # a few categories fit the figure as it is
    many = [dataclasses.replace(RUN_A[0], level=i, technique=f"technique-{i}") for i in range(14)]
    stream.push_many(many, "b")
    assert len(fig.y_range.factors) == 16 and fig.frame_height >= 16 * plots.CATEGORY_ROW_PX


def test_a_report_of_many_runs_draws_them_in_sets_on_the_same_axes_and_lets_tables_scroll(tmp_path):
    # Fifteen runs in one set of plots: a tangle of lines, fifteen-entry legends and a technique
    # plot with more rows than room for their labels.
    techniques = ["topdown-queue", "bfs4k", "harish", "merrill", "luo-hierarchical"]
    runs = [(f"#{i + 1} {t} (toy)", result([dataclasses.replace(lv, technique=t, time_ms=1.0 + i) for lv in RUN_A],
                                          technique=t)) for i, t in enumerate(techniques * 3)]
    layout, colors = report._report_plots(runs)
    sets = [child for child in layout.children if not hasattr(child, "text")]
    assert len(sets) == 3  # 6 + 6 + 3 runs
    figs = [f for grid in sets for f, *_ in grid.children]
    by_title = {}
    for f in figs:
        by_title.setdefault(f.title.text, []).append(f)
        assert sum(i.visible for i in _legend(f).items) <= report.REPORT_PLOT_RUNS
    for same in by_title.values():  # every set on the same axes
        assert len({id(f.x_range) for f in same}) == 1 and len({id(f.y_range) for f in same}) == 1
    frontier = [i.label.value for f in by_title["Frontier size per level"] for i in _legend(f).items if i.visible]
    assert frontier == ["#1–#6: same values", "#7–#12: same values", "#13–#15: same values"]
    tech = by_title["Technique / kernel per level"]
    assert len(tech[0].y_range.factors) == 5 and all(f.frame_height in (None,) or
                                                     f.frame_height >= 5 * plots.CATEGORY_ROW_PX for f in tech)
    assert len(set(colors.values())) == 15  # each run its own colour, as in the summary's swatches
    html = report.write_report(runs, tmp_path / "r.html").read_text()
    assert "Runs #7\\u2013#12&lt;/b&gt; of 15" in html and "6 to a set of plots" in html
    assert html.count("<div class='scroll'><table class='levels'>") == 15
    assert "<div class='scroll'><table class='summary'>" in html


def test_report_rejects_no_runs(tmp_path):
    with pytest.raises(ValueError, match="at least one"):
        report.write_report([], tmp_path / "r.html")


# ------------------------------------------------------------------ live: what the browser is sent

def _bundle_text(view) -> str:
    state = view.get_state()  # what a reloaded page receives
    return json.dumps(state["render_bundle"]) if not isinstance(state["render_bundle"], str) else state["render_bundle"]


def test_a_view_drawn_after_the_plots_changed_shows_the_change():
    # jupyter_bokeh's BokehModel draws a new view (a reloaded page, a widget displayed after a run
    # from code) from the document as it was when the model was made; a live one from the document now.
    from explorer.ui.live import LiveBokehModel

    stream = plots.LevelStream()
    view = LiveBokehModel(stream.layout())
    assert "424242" not in _bundle_text(view)
    stream.push(level(0, 424242, 3), "a run from code")
    assert "424242" in _bundle_text(view) and "a run from code" in _bundle_text(view)
    sent = []
    view.observe(lambda change: sent.append(change["new"]), names="render_bundle")
    view.refresh()  # what a container does just before it is displayed: already current, nothing sent
    assert sent == []
    stream.push(level(1, 515151, 0), "a run from code")
    view.refresh()
    assert len(sent) == 1 and "515151" in json.dumps(sent[0])


class _Clock:
    def __init__(self, step):
        self.t, self.step = 0.0, step

    def __call__(self):
        self.t += self.step
        return self.t


@pytest.mark.parametrize("seconds_a_level,batches", [(0.2, 37), (0.001, 2)])
def test_a_feed_sends_levels_as_they_come_at_most_every_interval(seconds_a_level, batches):
    from explorer.ui.live import LevelFeed

    stream = plots.LevelStream()
    flushed, said = [], []
    feed = LevelFeed(stream, "grid", interval=0.1, clock=_Clock(seconds_a_level),
                     flush=lambda: flushed.append(len(stream.sources["grid"].data["level"])),
                     on_batch=lambda lv: said.append(lv.level))
    for i in range(37):
        feed.add(level(i, 2, 2))
    feed.close()
    # Slow levels (the simulator's): each on its own, flushed before the next is computed. Fast
    # ones (a GPU's): a few batches, the last level always sent by close().
    assert feed.batches == len(flushed) == len(said)
    assert flushed[-1] == 37 and said[-1] == 36 and flushed == sorted(set(flushed))
    assert len(flushed) == batches if seconds_a_level > 0.1 else 1 < len(flushed) <= 5


def test_flush_waits_for_the_kernels_sending_thread(monkeypatch):
    import threading

    from explorer.ui import live

    assert live.flush_to_browser() is False  # no kernel here: nothing to wait for

    class IOPub:  # the kernel's IOPub thread: runs what is scheduled, in order, when it gets to it
        def __init__(self, delay):
            self.delay, self.ran = delay, []
            self.thread = threading.Thread(target=lambda: None)
            self.thread.start()
            self.thread.is_alive = lambda: True

        def schedule(self, f):
            if self.delay is not None:
                threading.Timer(self.delay, lambda: (self.ran.append(f), f())).start()

    io = IOPub(0.2)
    monkeypatch.setattr(live, "_iopub_thread", lambda: io)
    assert live.flush_to_browser() is True and io.ran  # returned once the thread had run it
    monkeypatch.setattr(live, "_iopub_thread", lambda: IOPub(None))  # a thread that never gets to it
    assert live.flush_to_browser(timeout=0.2) is False


def test_each_batch_reaches_the_browser_as_one_patch():
    # A level changes its run source, level table, table widths, categories and legends: sent as
    # one message, a browser lays out and paints the figures once for all of them.
    from bokeh.layouts import column

    from explorer.ui.live import LevelFeed, LiveBokehModel

    stream = plots.LevelStream()
    view = LiveBokehModel(column(stream.layout(), stream.level_table()))
    patches = []
    view.send = lambda content, buffers=None: patches.append(content.get("payload")) if "PATCH-DOC" in str(
        content.get("payload")) else None
    feed = LevelFeed(stream, "a run with a long label that widens the table", view, interval=0.1,
                     clock=_Clock(0.2), flush=lambda: None)
    for i in range(10):
        feed.add(level(i, 10 ** i, 3, technique="bfs4k" if i % 2 else "topdown-queue"))
    feed.close()
    assert feed.batches == 10 and len(patches) == 10
    assert stream.sources["a run with a long label that widens the table"].data["level"] == list(range(10))


class _Browser:
    """What the page holds: a copy of the document from the view's bundle, kept up to date with the
    patches the view sends (Bokeh's own receiving code applies them)."""

    def __init__(self, view):
        from bokeh.document import Document

        bundle = json.loads(view.get_state()["render_bundle"])
        self.doc = Document.from_json(next(iter(bundle["docs_json"].values())))
        self.parts = []
        view.send = self.receive

    def receive(self, content, buffers=None):
        from bokeh.protocol import Protocol
        from bokeh.protocol.receiver import Receiver

        self.parts.append(buffers[0] if buffers else content["payload"])
        if len(self.parts) >= 3:
            header = json.loads(self.parts[0])
            if len(self.parts) == 3 + 2 * header.get("num_buffers", 0):
                receiver = Receiver(Protocol())
                import asyncio

                for part in self.parts:
                    msg = asyncio.run(receiver.consume(part))
                msg.apply_to_document(self.doc)
                self.parts = []

    def source(self, label):
        return next(m.data for m in self.doc.models if getattr(m, "name", None) == "levels" and m.data["run"]
                    and m.data["run"][0] == label)


def test_the_browser_holds_what_the_kernel_holds_after_batches_and_reused_slots():
    # Each change is encoded when it happens: encoded at the end of a batch, a slot's data reset
    # would already hold the rows the batch then streams, and the browser would draw them twice.
    from bokeh.layouts import column

    from explorer.ui.live import LevelFeed, LiveBokehModel

    stream = plots.LevelStream(max_runs=1)
    view = LiveBokehModel(column(stream.layout(), stream.level_table()))
    browser = _Browser(view)
    for run in ("first", "second"):  # the second takes the first's slot
        feed = LevelFeed(stream, run, view, interval=0.1, clock=_Clock(0.04), flush=lambda: None)
        for i in range(6):
            feed.add(level(i, i + 1, 2))
        feed.close()
        assert browser.source(run)["level"] == stream.sources[run].data["level"] == list(range(6))
    table = next(m.data for m in browser.doc.models if getattr(m, "name", None) == "levels" and
                 m.data["run"] and m.data["run"][0] == "first")
    assert table["run"] == ["first"] * 6 + ["second"] * 6  # the level table keeps both
