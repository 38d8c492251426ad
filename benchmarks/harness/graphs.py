"""The benchmark graphs by name: one registry, each entry a generator spec or a sample graph of
sample_graphs/ (the only graphs that travel with the repository: the large ones are generated).

    g = load("kron22")                  # Kronecker scale 22, edge factor 16
    s = source_of("kron22", g)          # the papers' source: the first vertex of highest degree
    g = load("grid1000", small=True)    # a 5 x 5 grid, to try a script under the simulator

Vertices are positions 0..n-1 everywhere in the benchmarks; a source rule names one. A name that
is not in GRAPHS is read as `bfs4k run` reads a graph: a sample graph, a file or gen:KIND:p=v,...
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class GraphSpec(NamedTuple):
    """A benchmark graph: what it is, how to build it (full size and a small stand-in of the same
    family for the simulator) and which vertex a search starts from."""

    family: str  # the BFS-4K chapter's families (Figs. 12-15) and the samples' (sample_graphs/README.md)
    what: str  # one line: generator and parameters, or the sample and how it is read
    kind: str  # a generator of explorer.graphs.GENERATORS, or "sample"
    params: dict  # the generator's parameters, or the sample's name and loader options
    small: dict  # params of the simulator's stand-in (a sample stands in for itself)
    source: str = "max-degree"  # "max-degree" (the papers') or "centre" (a grid's middle vertex: Luo et al.'s)


def _kron(scale: int, small_scale: int = 6) -> GraphSpec:
    return GraphSpec("Kronecker", f"Kronecker scale {scale}, edge factor 16 (Graph500 A, B, C = 0.57, 0.19, "
                     "0.19), seed 1", "kronecker", {"scale": scale, "edge_factor": 16, "seed": 1},
                     {"scale": small_scale, "edge_factor": 4, "seed": 1})


def _sample(name: str, family: str, symmetrize: bool = False) -> GraphSpec:
    how = ", symmetrized (each arc both ways)" if symmetrize else ""
    return GraphSpec(family, f"sample_graphs/ {name}{how}", "sample",
                     {"name": name, **({"symmetrize": True} if symmetrize else {})}, {})


#: name -> spec. The directed samples are symmetrized: the peers (BLEST, Gunrock) read symmetric
#: graphs only, and the published comparisons search them so.
GRAPHS: dict[str, GraphSpec] = {
    "kron18": _kron(18),
    "kron20": _kron(20),
    "kron22": _kron(22),
    "uniform": GraphSpec("uniform random", "uniform random: 2^21 vertices, 2^26 edges (134 M arcs), seed 1",
                         "uniform_random", {"n": 1 << 21, "m": 1 << 26, "seed": 1}, {"n": 64, "m": 256, "seed": 1}),
    "smallworld": GraphSpec("small world", "Watts-Strogatz small world: 2^21 vertices, k = 10, p = 0.3, seed 1",
                            "watts_strogatz", {"n": 1 << 21, "k": 10, "p": 0.3, "seed": 1},
                            {"n": 64, "k": 4, "p": 0.3, "seed": 1}),
    "grid1000": GraphSpec("road-like (2-D grid)", "2-D grid 1000 x 1000, from its centre (1001 levels)", "grid2d",
                          {"rows": 1000, "cols": 1000}, {"rows": 5, "cols": 5}, "centre"),
    "grid3d": GraphSpec("mesh (3-D grid)", "3-D grid 128 x 128 x 128, from its centre (193 levels)", "grid3d",
                        {"nx": 128, "ny": 128, "nz": 128}, {"nx": 3, "ny": 3, "nz": 3}, "centre"),
    "facebook_combined": _sample("facebook_combined", "social (SNAP ego-Facebook)"),
    "Wiki-Vote": _sample("Wiki-Vote", "social voting (SNAP)", symmetrize=True),
    "p2p-Gnutella31": _sample("p2p-Gnutella31", "peer-to-peer (SNAP)", symmetrize=True),
    "3elt": _sample("3elt", "2-D finite-element mesh (Walshaw)"),
    "delaunay_n16": _sample("delaunay_n16", "triangulation mesh (DIMACS10)"),
    "luxembourg_osm": _sample("luxembourg_osm", "road network (DIMACS10, OpenStreetMap)"),
}


class UnknownGraph(ValueError):
    """A graph name that is neither registered nor a sample, file or generator spec."""


def spec(name: str) -> GraphSpec | None:
    """The registered spec of `name`, or None for a graph read as `bfs4k run` reads one."""
    return GRAPHS.get(name)


def check_names(names) -> list[str]:
    """The names, or UnknownGraph listing the registry when one is neither registered nor a
    sample, an existing file or a gen: spec (checked before anything is built)."""
    from pathlib import Path

    from explorer import graphs

    samples = {k.lower() for k in graphs.SAMPLE_GRAPHS} | {v.file.lower() for v in graphs.SAMPLE_GRAPHS.values()}
    bad = [n for n in names if n not in GRAPHS and not n.startswith("gen:") and n.lower() not in samples
           and not Path(n).exists()]
    if bad:
        raise UnknownGraph(f"unknown graph{'s' if len(bad) > 1 else ''} {', '.join(map(repr, bad))}: give one of "
                           f"{', '.join(GRAPHS)}, a sample graph, a graph file or gen:KIND:param=value,...")
    return list(names)


def load(name: str, *, small: bool = False):
    """The CSRGraph of a registered name (its small stand-in when `small`), else what `bfs4k run`
    reads for `name` (a sample, a file, gen:KIND:param=value,...)."""
    from explorer import graphs

    s = GRAPHS.get(name)
    if s is None:
        from explorer.ui.cli_input import load_graph_spec

        check_names([name])
        return load_graph_spec(name)
    if s.kind == "sample":
        opts = dict(s.params)
        return graphs.sample_graph(opts.pop("name"), **opts)
    return graphs.generate(s.kind, **(s.small if small else s.params))


def centre(sides) -> int:
    """The middle vertex of a grid of these sides (the last coordinate varies fastest, as the
    generators number them)."""
    index, stride = 0, 1
    for side in reversed(sides):
        index += (side // 2) * stride
        stride *= side
    return index


def source_of(name: str, g, rule: str | int | None = None, *, small: bool = False) -> int:
    """The vertex (0..n-1) a benchmark of `name` starts from: `rule` ("max-degree", "centre" or a
    position), by default the graph's own rule (the papers' maximum-degree vertex; a grid's centre)."""
    s = GRAPHS.get(name)
    rule = rule if rule is not None else (s.source if s else "max-degree")
    if rule in ("centre", "center"):
        if s is None or s.kind not in ("grid2d", "grid3d"):
            raise ValueError(f"source 'centre' needs a registered grid, not {name!r}: give max-degree or a vertex")
        p = s.small if small else s.params
        return centre((p["rows"], p["cols"]) if s.kind == "grid2d" else (p["nx"], p["ny"], p["nz"]))
    if rule == "max-degree":
        return int(np.argmax(g.degrees()))
    v = int(rule)
    if not 0 <= v < g.num_vertices:
        raise ValueError(f"source {v} is not a vertex of {name!r} (0..{g.num_vertices - 1})")
    return v
