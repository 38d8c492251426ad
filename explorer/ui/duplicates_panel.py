"""The Duplicates panel: a BFS-4K run with the provenance log (explorer.duplicates) on the
Explorer's graph and source, read per level: how many duplicates, made inside one warp, one
block or several blocks, caught or left by the run's filter, judged by hash64 and by warp
culling on the same claims (BFS-4K Fig. 13), and for a chosen level which vertices were
duplicated, by which warps, and whether the filter caught each copy.

    panel = ex.tools.panel("duplicates")
    prov = panel.run(filter="warp-culling")     # as the button; the tables and plot follow

`duplicates_figure` (Fig. 13(a) per level) and `frontier_sizes_figure` (Fig. 12) are the
notebooks' figures too; their legends sit beside the plot, never over a curve or a bar.
"""
from __future__ import annotations

import ipywidgets as W
from bokeh.models import AdaptiveTicker, ColumnDataSource, HoverTool, Legend, LegendItem
from bokeh.palettes import Category10_10
from bokeh.plotting import figure

from .live import LiveBokehModel
from ..duplicates import SCOPE_WORDS, SCOPES, Provenance, run_with_provenance
from ..techniques import Technique
from .layout import fit_description, labelled, select_px
from .tools import TABLE_CSS, StatusLine, esc, html_table, picked_source
from .widgets import PLOT_WIDTH

#: Per-level columns of the panel's source (explorer.duplicates.Provenance.levels()).
LEVEL_COLUMNS = ("level", "claims", "duplicated_vertices", "duplicates", "dup_warp", "dup_block", "dup_grid",
                 "caught", "left", "hash64_caught", "cull_caught", "hash64_conflicts", "cull_conflicts",
                 "per_block_bound", "per_warp_bound")
TITLES = {"duplicated_vertices": "dup. vertices", "dup_warp": "one warp", "dup_block": "one block",
          "dup_grid": "several blocks", "caught": "caught (run)", "left": "left (run)",
          "hash64_caught": "hash64", "cull_caught": "warp culling", "hash64_conflicts": "hash64 conflicts",
          "cull_conflicts": "culling conflicts", "per_block_bound": "best per block",
          "per_warp_bound": "best per warp"}
SCOPE_COLORS = ("#1f77b4", "#ff7f0e", "#d62728")  # one warp, one block, several blocks


#: Legends beside the data: small text, no frame.
_LEGEND = dict(label_text_font_size="8pt", spacing=2, padding=4, margin=4, border_line_alpha=0, glyph_width=22)


def legend_beside(fig, items: list[tuple[str, list]], place: str = "right") -> Legend:
    """A legend of (label, renderers) beside the plot (`place` 'right' or 'below'), where it cannot
    hide data as one inside the plot does (a curve at its corner, a bar under it)."""
    legend = Legend(items=[LegendItem(label=label, renderers=r) for label, r in items], **_LEGEND)
    if place == "below":
        legend.orientation = "horizontal"
    fig.add_layout(legend, place)
    return legend


def duplicates_figure(source: ColumnDataSource, width: int = PLOT_WIDTH + 200, height: int = 320):
    """Duplicates per level stacked by where their copies came from, with what hash64 and warp
    culling each judged duplicates on the same claims (BFS-4K Fig. 13(a) per level)."""
    fig = figure(title="Duplicates per level, by where they were made", width=width, height=height,
                 tools="pan,wheel_zoom,box_zoom,reset,save")
    bars = fig.vbar_stack([f"dup_{s}" for s in SCOPES], x="level", width=0.7, source=source, color=SCOPE_COLORS)
    hash64 = fig.line("level", "hash64_caught", source=source, color="black", line_width=2)
    cull = fig.line("level", "cull_caught", source=source, color="#2ca02c", line_width=2, line_dash="dashed")
    legend_beside(fig, [*((SCOPE_WORDS[s], [b]) for s, b in zip(SCOPES, bars)), ("hash64 catches", [hash64]),
                        ("warp culling catches", [cull])])
    fig.add_tools(HoverTool(renderers=bars, tooltips=[(TITLES.get(c, c), f"@{c}") for c in LEVEL_COLUMNS]))
    fig.xaxis.axis_label = "BFS level"
    fig.yaxis.axis_label = "duplicate frontier entries"
    fig.xaxis.ticker = AdaptiveTicker(min_interval=1)  # levels and counts are whole numbers
    fig.yaxis.ticker = AdaptiveTicker(min_interval=1)
    fig.y_range.start = 0
    return fig


def frontier_sizes_figure(sequential, runs: dict, title: str, width: int = 760, height: int = 360):
    """Frontier entries per level, log y (BFS-4K Fig. 12): the sequential BFS's level sizes (a
    thick black line) against each run of `runs` ({name: its LevelStats}); a run whose name says
    Hash64 is solid, the others dashed. The legend is right of the plot."""
    fig = figure(title=title, width=width, height=height, y_axis_type="log", tools="pan,wheel_zoom,reset,save")
    seq = fig.line(list(range(len(sequential))), [int(v) for v in sequential], color="black", line_width=3)
    items = [("Sequential", [seq])]
    for (name, levels), color in zip(runs.items(), Category10_10):
        dash = "solid" if "hash64" in name.lower() else "dashed"
        r = fig.line([lv.level for lv in levels], [lv.frontier_in for lv in levels], color=color, line_width=2,
                     line_dash=dash)
        items.append((name, [r]))
    legend_beside(fig, items)
    fig.xaxis.axis_label, fig.yaxis.axis_label = "BFS level", "frontier entries (log)"
    fig.xaxis.ticker = AdaptiveTicker(min_interval=1)
    return fig


class DuplicatesPanel(StatusLine, W.VBox):
    def __init__(self, explorer, picks=None):  # picks: tools.Picks; BFS's controls are the Explorer's own
        self.ex = explorer
        self.prov: Provenance | None = None
        self.level_source = ColumnDataSource({c: [] for c in LEVEL_COLUMNS}, name="duplicate_levels")
        filters = ("hash64", "warp-culling", "none")
        self.filter = W.Dropdown(options=filters, description="filter",
                                 layout=W.Layout(width=f"{select_px(filters)}px"),
                                 tooltip="the filter that drops copies in this run; both filters judge every claim")
        samples = [2 ** k for k in range(11)]
        self.sample_every = W.Dropdown(options=samples, value=1, description="log 1 vertex in",
                                       layout=W.Layout(width=f"{select_px(samples)}px"),
                                       tooltip="log one vertex in this many, every copy of it (large graphs)")
        self.run_button = W.Button(description="Run with provenance", icon="search", button_style="primary",
                                   layout=W.Layout(width="190px"),
                                   tooltip="BFS-4K (claim='race', the Explorer's BFS-4K knobs, multi-block kernel) "
                                           "with every claim logged: which thread made each duplicate")
        self.level = W.Dropdown(options=[], description="level", layout=W.Layout(width="90px"),
                                tooltip="the level whose duplicated vertices the table below lists")
        self.rows = fit_description(W.BoundedIntText(
            value=25, min=1, max=10_000, description="rows", layout=W.Layout(width="140px"),
            tooltip="at most this many vertices (a seeded sample when there are more)"))
        self.status = W.HTML()
        self.notes = W.HTML()
        self.plot_box = W.Box([LiveBokehModel(duplicates_figure(self.level_source))])
        self.filters_table = W.HTML()
        self.level_table = W.HTML()
        self.vertex_table = W.HTML()
        self.run_button.on_click(lambda _: self._clicked(self.run))
        self.level.observe(lambda _: self._show_vertices(), names="value")
        self.rows.observe(lambda _: self._show_vertices(), names="value")
        super().__init__([
            W.HTML(TABLE_CSS + "<small>Duplicates come from BFS-4K's benign race (claim='race'): threads that read "
                   "a vertex unvisited before any writes all enqueue it. This run logs every claim with the "
                   "thread that made it; hash64 (a table per block) and warp culling (a table per warp) judge the "
                   "same claims, the chosen one drops copies. Copies from several blocks are beyond any per-block "
                   "filter.</small>"),
            W.HBox([labelled(self.filter), labelled(self.sample_every), self.run_button]),
            self.status, self.notes, self.plot_box, self.filters_table, self.level_table,
            W.HBox([labelled(self.level), self.rows]), self.vertex_table])

    def run(self, filter: str | None = None, sample_every: int | None = None, **kw) -> Provenance:
        """Set the given controls and run as the button does: the Explorer's graph, source and
        BFS-4K knobs (dedup from this panel); `kw` goes to run_with_provenance."""
        if filter is not None:
            self.filter.value = filter
        if sample_every is not None:
            self.sample_every.value = sample_every
        g = self.ex.current_graph()
        knobs = {name: w.value for name, w in self.ex.knob_widgets_of[Technique.BFS4K.value].items()}
        knobs["dedup"] = self.filter.value
        self._set_status(f"running BFS-4K with the provenance log on {g.name} ...", "busy")
        prov = run_with_provenance(g, picked_source(self.ex), knobs, sample_every=self.sample_every.value,
                                   seed=self.ex.seed.value, **kw)
        self.show(prov)
        return prov

    def show(self, prov: Provenance) -> None:
        """Fill the plot and tables from a provenance run."""
        self.prov = prov
        levels = prov.levels()
        self.level_source.data = {c: [r[c] for r in levels] for c in LEVEL_COLUMNS}
        tot = prov.filters()
        sample = f", one vertex in {prov.sample_every} logged" if prov.sample_every > 1 else ""
        self.notes.value = "".join(f"<p style='color:#a15c00;font-size:12px'>{esc(n)}</p>" for n in prov.notes)
        fil = [{"filter": name + (" (dropped copies)" if drops else " (judged only)"), "caught": caught,
                "not caught": tot["duplicates"] - caught, "conflicts": conf, "best of its scope": bound}
               for name, drops, caught, conf, bound in (
                   ("hash64", prov.filter == "hash64", tot["hash64_caught"], tot["hash64_conflicts"],
                    tot["per_block_bound"]),
                   ("warp culling", prov.filter == "warp-culling", tot["cull_caught"], tot["cull_conflicts"],
                    tot["per_warp_bound"]))]
        scopes = ", ".join(f"{tot[f'dup_{s}']:,} from {SCOPE_WORDS[s]}" for s in SCOPES)
        self.filters_table.value = (
            f"<h4>{tot['duplicates']:,} duplicates ({scopes}){esc(sample)}</h4>"
            + html_table(fil, ["filter", "caught", "not caught", "conflicts", "best of its scope"],
                         numeric={"caught", "not caught", "conflicts", "best of its scope"})
            + "<small>'best of its scope': copies beyond one per block (hash64) or per warp (warp culling), "
              "the most a filter of that scope could remove.</small>")
        self.level_table.value = "<h4>Per level</h4>" + html_table(levels, list(LEVEL_COLUMNS), TITLES,
                                                                    numeric=set(LEVEL_COLUMNS))
        with_dups = [r["level"] for r in levels if r["duplicated_vertices"]]
        self.level.options = with_dups
        self.level.value = with_dups[0] if with_dups else None
        self._show_vertices()
        kind = "ok" if prov.check.ok else "error"
        self._set_status(f"{prov.result.num_levels} levels, {tot['duplicates']:,} duplicates; result "
                         + ("valid (checked against the CPU reference)" if prov.check.ok else
                            f"INVALID: {prov.check.message}"), kind)

    def _show_vertices(self) -> None:
        if self.prov is None or self.level.value is None:
            self.vertex_table.value = "<small>No duplicated vertex in this run.</small>" if self.prov else ""
            return
        lev = self.level.value
        rows = self.prov.duplicates(lev, limit=self.rows.value)
        total = self.prov.duplicate_count(lev)
        for r in rows:
            r["blocks"] = ", ".join(map(str, r["blocks"]))
            r["threads (block.warp)"] = " ".join(r["threads"])
        head = (f"<h4>Level {lev}: {total:,} duplicated vertices" + (f", a sample of {len(rows)}" if len(rows) < total
                                                                      else "") + "</h4>")
        self.vertex_table.value = head + html_table(
            rows, ["vertex", "copies", "scope", "blocks", "threads (block.warp)", "caught", "hash64", "cull"],
            numeric={"vertex", "copies"}) + ("<small>Per copy, in the order the log took them: x caught, - kept, "
                                             "? a conflict (kept).</small>")
