"""Results as tables and as a self-contained HTML report.

Text tables (`format_level_table`, `format_summary`) serve the CLI and notebooks and need nothing
beyond the standard library, so this module imports Bokeh only inside `write_report`: the GPU
machine, which has no Bokeh, can still print tables.

    write_report([result_a, result_b], "report.html", graph_stats=graphs.graph_stats(g))
"""
from __future__ import annotations

import datetime
import html
from pathlib import Path
from typing import Iterable, Mapping

from ..stats import LevelStats, RunResult, write_text_atomic
from ..techniques import knobs_of
from .tables import NOT_MEASURED, TEXT_COLUMNS, cell, default_label, table_fields

SIMULATOR_NOTE = ("Ran on Numba's CUDA simulator (CPU): times are host-clock times of the simulation, "
                  "not GPU timings, and GTEPS is not meaningful.")


# ------------------------------------------------------------------ text

#: The widest line a notebook shows whole: JupyterLab breaks a wider printed line anywhere, even
#: inside a word or a number (its output area holds about 120 characters in a 1400-pixel window).
NOTEBOOK_WIDTH = 100


def format_level_table(levels: Iterable[LevelStats] | RunResult, width: int | None = None) -> str:
    """The per-level table as aligned text, with the technique's extras; NOT_MEASURED marks counts
    not measured. With `width` (NOTEBOOK_WIDTH in a notebook) a table wider than that is cut into
    blocks of whole columns, each no wider and each led by the level column, one under another:
    no line breaks inside a cell."""
    fields = _fields_of(levels)
    levels = levels.levels if isinstance(levels, RunResult) else list(levels)
    rows = [[cell(f, getattr(lv, f, None)) for f in fields] for lv in levels]
    header = list(fields)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def block(columns):
        def line(cells):
            return "  ".join(cells[i].ljust(widths[i]) if fields[i] in TEXT_COLUMNS else cells[i].rjust(widths[i])
                             for i in columns).rstrip()
        return "\n".join([line(header), *(line(r) for r in rows)])

    blocks, columns = [], [0]
    for i in range(1, len(fields)):
        if width is not None and len(columns) > 1 and sum(widths[c] + 2 for c in columns) + widths[i] > width:
            blocks.append(columns)
            columns = [0]  # each block repeats the level column, so every row says which level it is
        columns.append(i)
    blocks.append(columns)
    return "\n\n".join(block(b) for b in blocks)


def _fields_of(levels) -> tuple[str, ...]:
    """A run's table columns: its technique's declared extras, or those the records carry."""
    if isinstance(levels, RunResult):
        return table_fields(levels.extras)
    levels = list(levels)
    return table_fields(levels[0].extras if levels else ())


class LevelTablePrinter:
    """Prints the level table one row at a time, as levels complete (fixed column widths)."""

    # Widths fit counts up to 99,999,999 and the longest technique/kernel names.
    WIDTHS = {"level": 5, "technique": 16, "kernel": 12, "time_ms": 9}

    def __init__(self, write=print, extras=()):
        """`extras`: the technique's declared extras (BFSTechnique.extras), shown as columns."""
        self.write = write
        self.fields = table_fields(extras)
        self.widths = [max(self.WIDTHS.get(f, 9), len(f)) for f in self.fields]

    def _line(self, cells) -> str:
        return "  ".join(c.ljust(w) if f in TEXT_COLUMNS else c.rjust(w)
                         for c, w, f in zip(cells, self.widths, self.fields)).rstrip()

    def header(self) -> None:
        self.write(self._line(list(self.fields)))

    def row(self, lv: LevelStats) -> None:
        self.write(self._line([cell(f, getattr(lv, f, None)) for f in self.fields]))


def changed_knobs(technique: str, knobs: Mapping) -> dict:
    """The technique's knobs that differ from their defaults (the rest go without saying)."""
    defaults = knobs_of(technique).defaults()
    return {k: v for k, v in dict(knobs).items() if defaults.get(k, object()) != v}


#: What the sum of a run's level times is, by where it ran: the kernels' windows on a GPU (CUDA
#: events), the host clock around the simulated kernels, the host clock around the CPU's levels.
TIME_LABELS = {"gpu": "GPU time (ms)", "simulator": "simulator time (ms)", "cpu": "CPU time (ms)"}


def time_label(result: RunResult) -> str:
    """The summary's label of the run's level time (result.total_ms): it names where it was measured."""
    return TIME_LABELS.get((result.device or {}).get("backend"), "level time (ms)")


def summary_fields(result: RunResult) -> dict:
    """The summary as display strings, in display order."""
    s = result.summary()
    dev = s.get("device") or {}
    sim = dev.get("backend") == "simulator"
    knobs = changed_knobs(result.technique, s.get("knobs") or {})
    dups = s.get("duplicates_generated")
    return {
        "graph": str(s["graph"]),
        "source": str(s["source"]),
        "technique": str(s["technique"]),
        "levels": str(s["levels"]),
        "reached": f"{s['reached']:,}",
        "traversed edges": f"{s['traversed_edges']:,}",
        # Which time is which: the levels' own times (where they ran names them), the BFS's wall
        # time (host round trips, not the caller's work) and, where the caller measured it, the
        # wall time with plotting.
        time_label(result): f"{s['total_ms']:.3f}",
        "BFS wall (ms)": f"{s['elapsed_ms']:.3f}",
        **({"with plotting (ms)": f"{result.caller_wall_ms:.3f}"} if result.caller_wall_ms is not None else {}),
        "GTEPS": "n/a (simulator)" if sim else f"{result.gteps:.4g}",  # significant digits: a CPU run on a small graph is not 0
        "duplicates": "not measured" if dups is None else f"{dups:,}",
        "validation": s.get("validation") or "not validated",
        "device": str(dev.get("name", "?")),
        "knobs": ", ".join(f"{k}={v}" for k, v in knobs.items()) or "defaults",
    }


def format_summary(result: RunResult) -> str:
    fields = summary_fields(result)
    width = max(len(k) for k in fields)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in fields.items())


def format_graph_stats(stats: Mapping) -> str:
    width = max((len(str(k)) for k in stats), default=0)
    return "\n".join(f"{str(k).ljust(width)}  {_fmt_stat(v)}" for k, v in stats.items())


def _fmt_stat(v) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        return f"{v:,.2f}"
    try:  # numpy scalars
        return _fmt_stat(v.item())
    except AttributeError:
        return str(v)


# ------------------------------------------------------------------ HTML pieces

def _esc(x) -> str:
    return html.escape(str(x))


def summary_table_html(labelled: list[tuple[str, RunResult]], colors: Mapping[str, str] | None = None,
                       omit: Iterable[str] = ()) -> str:
    """One row per run: the run's colour swatch, label and summary fields (less those in `omit`)."""
    if not labelled:
        return "<p><i>No runs yet.</i></p>"
    fields = [summary_fields(res) for _, res in labelled]
    # Runs differ in which fields they have (only a caller that plotted has "with plotting"; the
    # level time is named by where it ran): each field goes where its runs put it.
    keys = [k for k in _merged_order(fields) if k not in set(omit)]
    head = "".join(f"<th>{_esc(k)}</th>" for k in ["run", *keys])
    body = []
    for (label, res), f in zip(labelled, fields):
        sw = (colors or {}).get(label)
        swatch = f'<span class="swatch" style="background:{_esc(sw)}"></span>' if sw else ""
        val = f["validation"]
        cls = "ok" if val == "ok" else ("bad" if val != "not validated" else "")
        cells = [f"<td class='label'>{swatch}{_esc(label)}</td>"]
        cells += [f"<td class='{cls if k == 'validation' else ''}'>{_esc(f.get(k, ''))}</td>" for k in keys]
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table class='summary'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _merged_order(dicts: list[dict]) -> list:
    """The keys of all the dicts, each after the key that precedes it in the first dict having it."""
    keys: list = []
    for d in dicts:
        prev = None
        for k in d:
            if k not in keys:
                keys.insert(keys.index(prev) + 1 if prev is not None else 0, k)
            prev = k
    return keys


def level_table_html(result: RunResult | Iterable[LevelStats]) -> str:
    levels = result.levels if isinstance(result, RunResult) else list(result)
    fields = _fields_of(result if isinstance(result, RunResult) else levels)
    head = "".join(f"<th>{_esc(f)}</th>" for f in fields)
    rows = "".join(
        "<tr>" + "".join(f"<td class='{'txt' if f in TEXT_COLUMNS else 'num'}'>{_esc(cell(f, getattr(lv, f, None)))}</td>"
                         for f in fields) + "</tr>" for lv in levels)
    return f"<table class='levels'><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def graph_stats_html(stats: Mapping | None) -> str:
    """BFS-4K Table 1 statistics as a two-column table; several graphs as several columns."""
    if not stats:
        return "<p><i>No graph statistics.</i></p>"
    per_graph = stats if all(isinstance(v, Mapping) for v in stats.values()) else {"": stats}
    names = list(per_graph)
    keys = list(dict.fromkeys(k for s in per_graph.values() for k in s))
    head = "<tr><th></th>" + "".join(f"<th>{_esc(n)}</th>" for n in names) + "</tr>" if names != [""] else ""
    rows = "".join(
        f"<tr><th>{_esc(k)}</th>" + "".join(f"<td class='num'>{_esc(_fmt_stat(per_graph[n].get(k, '')))}</td>"
                                            for n in names) + "</tr>" for k in keys)
    return f"<table class='gstats'>{head}{rows}</table>"


CSS = """
body { font-family: -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; margin: 24px 32px;
       color: #222; max-width: 1200px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; }
h3 { font-size: 14px; margin: 18px 0 6px; }
.meta { color: #666; font-size: 13px; } .note { background: #fff6d6; border-left: 4px solid #e0b000;
       padding: 6px 10px; font-size: 13px; }
table { border-collapse: collapse; font-size: 12.5px; margin: 6px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; } th { background: #f4f4f4; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } td.txt { text-align: left; }
tbody tr:nth-child(even) { background: #fafafa; }
td.ok { color: #11772b; font-weight: 600; } td.bad { color: #b00020; font-weight: 600; }
.swatch { display: inline-block; width: 11px; height: 11px; margin-right: 6px; vertical-align: -1px;
          border-radius: 2px; }
td.label { white-space: nowrap; }
.scroll { overflow-x: auto; max-width: 100%; }
table.summary td, table.levels td, table.levels th { white-space: nowrap; }
"""


#: A report page, either problem's: `step` is what a record is (level, iteration); a shortest-path
#: report has its distances too.
_PAGE = """{% extends base %}
{% block inner_head %}{{ super() }}<style>{{ css }}</style>{% endblock %}
{% block contents %}
<h1>{{ heading }}</h1>
<p class="meta">{{ meta }}</p>
{{ note }}
<h2>Runs</h2>
{{ summary }}
{% if distances %}<h2>Distances</h2>
{{ distances }}
{% endif %}<h2>Graph (BFS-4K Table 1 statistics)</h2>
{{ graph }}
<h2>Per-{{ step }} plots</h2>
<p class="meta">{{ plots_meta }}</p>
{{ embed(roots.plots) }}
<h2>Per-{{ step }} records</h2>
{{ tables }}
{% endblock %}
"""
#: What the plots' heading says of them, both problems.
PLOTS_META = "Hover a marker for exact values; click a legend entry to hide it. Log axes draw 0 at 0.5."


def write_page(plots, path, title: str, runs: list, meta: str, **sections) -> Path:
    """Write a report page that opens offline (file_html inlines only the BokehJS bundles the
    models need): `plots` (a layout named 'plots'), the heading `title`, "N run(s), written <when>."
    and `meta`, the simulator's note when a run was simulated, and the page's `sections` (_PAGE)."""
    from bokeh.embed import file_html
    from bokeh.resources import INLINE
    from jinja2 import Template

    sim = any((r.device or {}).get("backend") == "simulator" for _, r in runs)
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    page = file_html(plots, INLINE, title=title, template=Template(_PAGE), template_variables={
        "css": CSS, "heading": _esc(title), "meta": f"{len(runs)} run(s), written {when}. {meta}",
        "note": f"<p class='note'>{_esc(SIMULATOR_NOTE)}</p>" if sim else "", **sections})
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, page)


def _labelled(results) -> list[tuple[str, RunResult]]:
    if isinstance(results, RunResult):
        results = [results]
    if isinstance(results, Mapping):
        return [(str(k), v) for k, v in results.items()]
    out = []
    for i, item in enumerate(results, 1):
        if isinstance(item, tuple):
            out.append((str(item[0]), item[1]))
        else:
            out.append((default_label(i, item), item))
    return out


#: Runs a report draws in one set of plots (as the Explorer keeps): more make a tangle of lines
#: and long legends, so a report of more runs draws them in several sets, on the same axes.
REPORT_PLOT_RUNS = 6
PLOTS_NOTE = (f"The runs are drawn {REPORT_PLOT_RUNS} to a set of plots, every set on the same axes "
              "and in the runs' own colours.")


def _report_plots(labelled: list[tuple[str, RunResult]]):
    """The report's plots (a Bokeh layout named 'plots') and each run's colour: a set of plots per
    REPORT_PLOT_RUNS runs, sharing their axes and the technique plot's rows; in each plot, runs
    with the same values drawn once (LevelStream.merge_identical_runs)."""
    from bokeh.layouts import column
    from bokeh.models import DataRange1d, Div, FactorRange

    from .plots import LevelStream, fit_category_rows, run_names

    sets = []
    for start in range(0, len(labelled), REPORT_PLOT_RUNS):
        runs = labelled[start:start + REPORT_PLOT_RUNS]
        stream = LevelStream(max_runs=len(runs), first_color=start)
        for label, res in runs:
            stream.add_result(res, label)
        stream.merge_identical_runs()
        sets.append((runs, stream))
    colors = {label: stream.color(label) for runs, stream in sets for label, _ in runs}
    if len(sets) == 1:
        plots = sets[0][1].layout()
    else:
        x = DataRange1d(range_padding=0.05)
        ys = {name: DataRange1d() for name in ("frontier", "edges", "dedup", "time")}
        steps = FactorRange(factors=list(dict.fromkeys(
            f for _, stream in sets for f in stream.figures["technique"].y_range.factors)))
        for _, stream in sets:
            for name, fig in stream.figures.items():
                fig.x_range = x
                fig.y_range = ys.get(name, steps)
            fit_category_rows(stream.figures["technique"])
        plots = column([part for runs, stream in sets for part in (
            Div(text=f"<b>Runs {_esc(run_names([label for label, _ in runs]))}</b> of {len(labelled)}"),
            stream.layout())])
    plots.name = "plots"
    return plots, colors


def write_report(results, path, graph_stats: Mapping | None = None, title: str = "BFS-4K Explorer report") -> Path:
    """Write a self-contained HTML report (plots, summary, per-level tables) that opens offline.

    results: a RunResult, a list of them, a {label: RunResult} dict or (label, RunResult) pairs.
    graph_stats: `graphs.graph_stats(graph)` of the graph, or {graph name: stats} for several.
    """
    from .plots import RUN_PALETTE

    labelled = _labelled(results)
    if not labelled:
        raise ValueError("write_report needs at least one RunResult")
    if len(labelled) > len(RUN_PALETTE):
        raise ValueError(f"write_report plots at most {len(RUN_PALETTE)} runs (one colour each); got {len(labelled)}")
    plots, colors = _report_plots(labelled)
    return write_page(
        plots, path, title, labelled, f"'{NOT_MEASURED}' marks counts not measured (instrumentation off).",
        summary=f"<div class='scroll'>{summary_table_html(labelled, colors)}</div>",
        graph=graph_stats_html(graph_stats), step="level",
        plots_meta=PLOTS_META + " Runs with the same values in a plot are drawn once there, its legend entry "
                   "naming them all." + (f" {PLOTS_NOTE}" if len(labelled) > REPORT_PLOT_RUNS else ""),
        tables="".join(f"<h3>{_esc(label)}</h3><div class='scroll'>{level_table_html(res)}</div>"
                       for label, res in labelled))
