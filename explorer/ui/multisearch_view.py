"""What a multi-search computed, as a person reads it: the application's values ranked in a table
and drawn as the colours of the graph's vertices (the multi-search notebook's Run shows both).

    view = ValuesView(graph)                 # an ipywidget: the table and the drawing
    view.show(run_many(graph, 8, "betweenness").complete())

It reads a MultiSearchResult only (values, sources, per_vertex / per_search): which value ranks,
and what colours a vertex, follows from the application's own declaration:
- a value per vertex (betweenness): every vertex ranked and coloured by it;
- a value per search (closeness, eccentricity): the sources ranked, each source coloured, the
  other vertices grey;
- a row per search (distances, reachability's bits, the hop-count histogram): a line per source
  (vertices reached, farthest hop), the vertices coloured by the distance from the first source,
  by how many sources reach them, or the sources by how many vertices they reach.
"""
from __future__ import annotations

import html
from typing import NamedTuple

import ipywidgets as W
import numpy as np
from bokeh.models import ColorBar, ColumnDataSource, LinearColorMapper
from bokeh.palettes import Viridis256
from bokeh.plotting import figure

from .live import LiveBokehModel, load_bokehjs, refresh_views

#: Rows of the ranked table.
TOP = 10
#: The drawing's largest graph: beyond it the drawing is a hairball (the table still shows).
DRAW_MAX_VERTICES = 500
NOT_COLOURED = "#d9d9d9"


class Colouring(NamedTuple):
    """A value for each vertex (NaN: not coloured) and what it is."""

    values: np.ndarray
    what: str


class Ranking(NamedTuple):
    title: str  # what the table ranks
    columns: tuple  # its column titles
    rows: list  # tuples of cells


def _first_1d(result, keys) -> str | None:
    return next((k for k in keys if np.asarray(result.values.get(k)).ndim == 1), None)


def ranking(result, top: int = TOP) -> Ranking:
    """The application's values as a table: its first value per vertex (else per search) from
    the highest down; for a row per search, one line per source. Vertices by the graph's own ids."""
    key = _first_1d(result, result.per_vertex) or _first_1d(result, result.per_search)
    if key is not None:
        per_vertex = key in result.per_vertex
        ranked = result.ranked(key, top=top)  # in the graph's own ids
        fmt = "{:.5f}" if np.asarray(result.values[key]).dtype.kind == "f" else "{:,.0f}"
        return Ranking(f"{key}, highest first ({'every vertex' if per_vertex else 'the sources'})",
                       ("rank", "vertex" if per_vertex else "source", key),
                       [(i + 1, v, fmt.format(x)) for i, (v, x) in enumerate(ranked)])
    key = next(iter(result.per_search))
    table = np.asarray(result.values[key])
    sources = result.source_ids[:top]
    if key == "histogram":
        hops = min(table.shape[1] - 1, 6)
        return Ranking("vertices at each hop from the first sources", ("source", *(f"{h} hop{'s' * (h > 1)}"
                                                                                  for h in range(1, hops + 1))),
                       [(int(s), *(f"{int(c):,}" for c in row[1:hops + 1])) for s, row in zip(sources, table)])
    if table.dtype == bool:  # reachability: which vertices each source reaches
        return Ranking("vertices each of the first sources reaches", ("source", "reaches"),
                       [(int(s), f"{int(row.sum()) - 1:,}") for s, row in zip(sources, table)])
    return Ranking("each of the first sources", ("source", "reached", "farthest (hops)"),
                   [(int(s), f"{int((row >= 0).sum()) - 1:,}", int(row.max(initial=0))) for s, row in zip(sources, table)])


def colouring(result, graph) -> Colouring:
    """What colours each vertex (NaN: grey), following the application's values."""
    n = graph.num_vertices
    key = _first_1d(result, result.per_vertex)
    if key is not None:
        return Colouring(np.asarray(result.values[key], dtype=float), key)
    key = _first_1d(result, result.per_search)
    if key is not None:
        out = np.full(n, np.nan)
        out[result.sources] = np.asarray(result.values[key], dtype=float)
        return Colouring(out, f"{key} of each source (grey: not a source)")
    key = next(iter(result.per_search))
    table = np.asarray(result.values[key])
    if table.dtype == bool:
        return Colouring(table.sum(axis=0).astype(float), "how many sources reach the vertex")
    if key == "histogram":
        out = np.full(n, np.nan)
        out[result.sources] = table[:, 1:].sum(axis=1)
        return Colouring(out, "vertices each source reaches (grey: not a source)")
    first = table[0].astype(float)
    first[first < 0] = np.nan
    return Colouring(first, f"hops from source {graph.to_original(int(result.sources[0]))} (grey: not reached)")


def table_html(r: Ranking) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in r.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in r.rows)
    return ("<div class='bfs4k-values'><style>.bfs4k-values table{border-collapse:collapse;font-size:13px}"
            ".bfs4k-values th,.bfs4k-values td{border:1px solid #ddd;padding:2px 8px;text-align:right;"
            "white-space:nowrap}.bfs4k-values th{background:#f4f4f4}</style>"
            f"<b>{html.escape(r.title)}</b><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")


class ValuesView(W.HBox):
    """The ranked table beside the graph drawn with its vertices coloured by the values; `show`
    puts a result in both. A graph over DRAW_MAX_VERTICES vertices is not drawn (said so)."""

    def __init__(self, graph, width: int = 460, height: int = 400, seed: int = 1):
        self.table = W.HTML("<i>Press Run: the values appear here.</i>", layout=W.Layout(min_width="280px"))
        self.graph = None
        self.view = None
        self._size = (width, height)
        self._seed = seed
        super().__init__([self.table, W.Box()])
        self.draw(graph)

    def _repr_mimebundle_(self, **kwargs):
        load_bokehjs()
        refresh_views(self)
        return super()._repr_mimebundle_(**kwargs)

    def draw(self, graph) -> None:
        """The graph, grey until `show`."""
        import networkx as nx

        self.graph = graph
        n = graph.num_vertices
        if n > DRAW_MAX_VERTICES:
            self.source = None
            self.children = [self.table, W.HTML(f"<i>{graph.name} has {n:,} vertices: too many to draw "
                                                f"(at most {DRAW_MAX_VERTICES}); the table ranks them.</i>")]
            return
        nxg = graph.to_networkx()
        pos = nx.spring_layout(nxg, seed=self._seed)
        xs, ys = [float(pos[v][0]) for v in range(n)], [float(pos[v][1]) for v in range(n)]
        fig = figure(width=self._size[0], height=self._size[1], title=f"{graph.name}: press Run",
                     tools="hover,pan,wheel_zoom,reset,save", tooltips=[("vertex", "@vertex"), ("value", "@text")])
        fig.axis.visible = fig.grid.visible = False
        edges = list(nxg.edges())
        fig.segment([xs[u] for u, _ in edges], [ys[u] for u, _ in edges], [xs[v] for _, v in edges],
                    [ys[v] for _, v in edges], color="#bbbbbb")
        self.mapper = LinearColorMapper(palette=Viridis256, low=0, high=1, nan_color=NOT_COLOURED)
        self.source = ColumnDataSource({"x": xs, "y": ys, "vertex": graph.to_original_many(np.arange(n)).tolist(),
                                        "value": [float("nan")] * n, "text": ["–"] * n}, name="multisearch-values")
        fig.scatter("x", "y", source=self.source, size=12, line_color="#555555",
                    fill_color={"field": "value", "transform": self.mapper})
        fig.add_layout(ColorBar(color_mapper=self.mapper, width=10, title=""), "right")
        self.figure = fig
        old = self.view
        self.view = LiveBokehModel(fig)
        self.children = [self.table, self.view]
        if old is not None:
            old.close()

    def show(self, result) -> None:
        """The result's values in the table and on the drawing."""
        if self.graph is None or result.graph != self.graph.name:
            raise ValueError(f"this view draws {self.graph.name if self.graph else 'no graph'}, not {result.graph}: "
                             "call draw(graph) first")
        self.table.value = table_html(ranking(result))
        if self.source is None:
            return
        c = colouring(result, self.graph)
        finite = c.values[np.isfinite(c.values)]
        low, high = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        self.mapper.update(low=low, high=high if high > low else low + 1)
        self.source.data.update({"value": [float(x) for x in c.values],
                                 "text": ["–" if np.isnan(x) else f"{x:.4g}" for x in c.values]})
        self.figure.title.text = f"{self.graph.name}: colour = {c.what} ({result.application}, {result.method})"
