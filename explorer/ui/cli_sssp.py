"""Command line for weighted shortest paths: `python -m explorer sssp ...` and `... apsp ...`.

    bfs4k sssp gen:grid2d:rows=20,cols=30,weights=integer --technique h-bf --simulator --json out.json
    bfs4k sssp luxembourg_osm --unit-weights --technique delta-stepping --knob delta=4
    bfs4k apsp gen:kronecker:scale=6,weights=uniform --method floyd-warshall --simulator
    bfs4k sssp --list                 # the techniques and their knobs (apsp --list: the methods')

Like `run`: a row per step as it completes, the summary, a check against scipy.sparse.csgraph on
the same graph, --json/--csv files; bad input ends with status 2 and one line on stderr.
"""
from __future__ import annotations

import argparse
import sys
import textwrap

from .cli_input import PROG, add_source_flags, write_result_files

EXIT_OK, EXIT_INVALID_RESULT = 0, 1

#: Columns of the step table, their widths.
COLUMNS = {"iteration": 9, "phase": 7, "bucket": 6, "frontier_in": 11, "relaxations": 11, "improvements": 12,
           "frontier_out": 12, "duplicates": 10, "time_ms": 9}


def _cell(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.4f}" if abs(v) < 1e6 else f"{v:.4g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)


class StepPrinter:
    """The step table, one row at a time (fixed widths, the technique's extras after the core)."""

    def __init__(self, extras=(), write=print):
        self.fields = list(COLUMNS) + [e.name for e in extras]
        self.widths = [max(COLUMNS.get(f, 9), len(f)) for f in self.fields]
        self.write = write

    def _line(self, cells) -> str:
        return "  ".join(c.ljust(w) if f == "phase" else c.rjust(w)
                         for c, w, f in zip(cells, self.widths, self.fields)).rstrip()

    def header(self) -> None:
        self.write(self._line(self.fields))

    def row(self, rec) -> None:
        self.write(self._line([_cell(getattr(rec, f, None)) for f in self.fields]))


def _list_sssp() -> int:
    from ..sssp.techniques import implementation, sssp_techniques
    from .cli_input import _wrap

    for t in sssp_techniques():
        impl = implementation(t)
        print(f"{t.value}{'' if impl.negative_weights else '  (non-negative weights only)'}")
        print(_wrap(t.doc))
        for s in impl.Knobs.specs():
            where = f"; {s.section}" if s.section else ""
            print(f"    --knob {s.name}=...  default {s.default!r}; {s.describe_range()}{where}")
            print(_wrap(s.meaning, "        "))
        print()
    return EXIT_OK


def _list_apsp() -> int:
    from ..sssp.apsp import KNOBS, APSPMethod
    from .cli_input import _wrap

    for m in APSPMethod:
        print(m.value)
        for s in KNOBS[m].specs():
            print(f"    --knob {s.name}=...  default {s.default!r}; {s.describe_range()}; {s.section}")
            print(_wrap(s.meaning, "        "))
        print()
    return EXIT_OK


def _prepare(args, knob_specs, simulator_knobs: dict, say):
    """(graph, knob values) after the checks every weighted command makes before it loads."""
    from .cli_input import _arc_limit, check_output_flags, load_graph_spec, parse_knob_values, select_backend

    check_output_flags(args, "the distances")
    values = parse_knob_values(None, args.knob, knob_specs)
    graph = load_graph_spec(args.graph, args.undirected, _arc_limit(args.simulator))
    from ..sssp.weights import weighting

    weighting(graph, args.unit_weights)  # a graph without weights is refused before the backend is chosen
    info = select_backend(args.simulator)
    if info.is_simulator:
        extra = {k: v for k, v in simulator_knobs.items() if k not in values}
        if extra:
            print("simulator: " + ", ".join(f"{k}={v}" for k, v in extra.items()) + " (keeps a run to seconds there); "
                  "--knob overrides")
            values = {**extra, **values}
    return graph, values


def cmd_sssp(args) -> int:
    from ..graphs import Vertex, resolve_source
    from ..reference import check_sssp_result
    from ..sssp import implementation, run_sssp
    from .cli_input import UsageError, _vertex_text, check_source

    if args.list:
        return _list_sssp()
    if not args.graph:
        raise UsageError("give a GRAPH (a sample name, a file or gen:KIND:...), or --list")
    check_source(args.source)
    impl = implementation(args.technique)
    say = lambda msg: print(f"  ... {msg}", file=sys.stderr, flush=True)  # noqa: E731
    graph, values = _prepare(args, impl.Knobs, impl.simulator_knobs, say)
    source = resolve_source(graph, args.source, args.seed)
    run = run_sssp(graph, Vertex(source), impl.technique, values, unit_weights=args.unit_weights, on_status=say)
    w = run.weighting
    kind = "directed" if graph.directed else "undirected"
    print(f"graph: {graph.name}: {graph.num_vertices:,} vertices, {graph.num_arcs:,} arcs ({kind}); "
          f"{'unit weights' if w.unit else 'weights ' + w.kind} (distances {w.kind}); source "
          f"{_vertex_text(graph, source)}; technique {impl.name}")
    printer = StepPrinter(impl.extras)
    printer.header()
    for rec in run:
        printer.row(rec)
    result = run.result
    status = EXIT_OK
    if args.validate:
        import numpy as np

        rep = check_sssp_result(graph, result, weights=np.ones(graph.num_arcs) if w.unit else None)
        result.validation = "ok" if rep.ok else rep.rule
        if not rep.ok:
            print(f"{PROG}: validation FAILED: [{rep.rule}] {rep.message}", file=sys.stderr)
            status = EXIT_INVALID_RESULT
    print()
    s = result.summary()
    label = "simulator time" if s["device"].get("backend") == "simulator" else "GPU time"
    print(f"reached {s['reached']:,} of {graph.num_vertices:,} vertices in {s['iterations']} steps; "
          f"{s['relaxations']:,} relaxations, {s['improvements']:,} improvements, {s['duplicates']:,} duplicates; "
          f"largest distance {s['max_distance']}")
    print(f"{label}: {s['total_ms']:.3f} ms ({s['relax_ms']:.3f} ms relaxing, the rest making the tree); "
          f"wall {s['elapsed_ms']:.3f} ms; validation {result.validation or 'skipped'} (scipy.sparse.csgraph)")
    write_result_files(args, result)
    return status


def cmd_apsp(args) -> int:
    import numpy as np

    from ..reference import reference_apsp
    from ..sssp.apsp import KNOBS, SIMULATOR_KNOBS, APSPMethod, run_apsp
    from .cli_input import UsageError

    if args.list:
        return _list_apsp()
    if not args.graph:
        raise UsageError("give a GRAPH (a sample name, a file or gen:KIND:...), or --list")
    method = APSPMethod.parse(args.method)
    say = lambda msg: print(f"  ... {msg}", file=sys.stderr, flush=True)  # noqa: E731
    graph, values = _prepare(args, KNOBS[method], SIMULATOR_KNOBS[method], say)
    run = run_apsp(graph, method, values, unit_weights=args.unit_weights, on_status=say)
    print(f"graph: {graph.name}: {graph.num_vertices:,} vertices, {graph.num_arcs:,} arcs; method {method.value}")
    for rec in run:
        if rec.stage != "round" or rec.done in (1, rec.total) or rec.done % max(1, rec.total // 8) == 0:
            rel = "" if rec.relaxations is None else f", {rec.relaxations:,} relaxations"
            print(f"  step {rec.step}: {rec.stage} {rec.done}/{rec.total}{rel}, {rec.time_ms:.3f} ms")
    result = run.result
    status = EXIT_OK
    if args.validate:
        ref = reference_apsp(graph, np.ones(graph.num_arcs) if args.unit_weights and graph.weights is None else None)
        same = np.allclose(result.distances, ref, rtol=1e-9, atol=1e-9)
        result.validation = "ok" if same else "distances"
        if not same:
            bad = np.argwhere(~np.isclose(result.distances, ref, rtol=1e-9, atol=1e-9))[0]
            print(f"{PROG}: validation FAILED: [distances] distance {tuple(int(x) for x in bad)} is "
                  f"{result.distances[tuple(bad)]!r}, scipy's {ref[tuple(bad)]!r}", file=sys.stderr)
            status = EXIT_INVALID_RESULT
    s = result.summary()
    label = "simulator time" if s["device"].get("backend") == "simulator" else "GPU time"
    print(f"\n{s['pairs_connected']:,} connected pairs of {graph.num_vertices:,}^2; {label}: {s['total_ms']:.3f} ms in "
          f"{s['steps']} steps; validation {result.validation or 'skipped'} (scipy.sparse.csgraph)")
    write_result_files(args, result)
    return status


def _common(p) -> None:
    p.add_argument("graph", metavar="GRAPH", nargs="?", help="sample name, graph file or gen:KIND:param=value,...")
    p.add_argument("--knob", action="append", metavar="NAME=VALUE", help="a knob of the technique, repeatable")
    p.add_argument("--simulator", action="store_true", help="run on Numba's CUDA simulator instead of a GPU")
    p.add_argument("--undirected", action="store_true", help="read the graph file as undirected")
    p.add_argument("--unit-weights", action="store_true",
                   help="a graph without weights: every arc weighs 1 (else it is refused)")
    p.add_argument("--no-validate", dest="validate", action="store_false",
                   help="skip checking the result against scipy.sparse.csgraph")
    p.add_argument("--json", metavar="PATH", help="write the summary and the steps as JSON")
    p.add_argument("--arrays", action="store_true", help="with --json: include the distances (and parents)")
    p.add_argument("--csv", metavar="PATH", help="write the step table as CSV")


def add_parsers(sub, fmt=argparse.RawDescriptionHelpFormatter) -> None:
    """The `sssp` and `apsp` commands, on the CLI's subparsers."""
    from ..sssp.techniques import SSSPTechnique

    s = sub.add_parser(
        "sssp", formatter_class=fmt, help="run single-source shortest paths (weights) and print a row per step",
        description="Single-source shortest paths on a weighted graph: a row per step as it completes, the summary\n"
                    "and a check against scipy.sparse.csgraph. Distances are int64 for whole-number weights and\n"
                    "float64 otherwise; negative weights: bellman-ford and h-bf (a negative cycle is an error).",
        epilog=textwrap.dedent(f"""\
            examples:
              {PROG} sssp gen:grid2d:rows=20,cols=30,weights=integer --technique h-bf --simulator
              {PROG} sssp my.mtx --technique delta-stepping --knob delta=8 --json out.json --arrays
              {PROG} sssp facebook_combined --unit-weights --simulator
              {PROG} sssp --list             # techniques and knobs"""))
    _common(s)
    add_source_flags(s)
    s.add_argument("--technique", default=SSSPTechnique.HBF.value,
                   help=f"{', '.join(t.value for t in SSSPTechnique)} (default %(default)s)")
    s.add_argument("--list", action="store_true", help="list the techniques and their knobs")
    s.set_defaults(func=cmd_sssp)

    a = sub.add_parser(
        "apsp", formatter_class=fmt, help="run all-pairs shortest paths (Floyd-Warshall or Johnson's)",
        description="All-pairs shortest paths: the blocked Floyd-Warshall or Johnson's way, a line per step,\n"
                    "checked against scipy.sparse.csgraph. The answer is an n x n float64 matrix: its memory is\n"
                    "checked before anything is allocated.",
        epilog=textwrap.dedent(f"""\
            examples:
              {PROG} apsp gen:kronecker:scale=6,weights=uniform --simulator
              {PROG} apsp my.mtx --method johnson --json out.json
              {PROG} apsp --list             # methods and knobs"""))
    _common(a)
    a.add_argument("--method", default="floyd-warshall", help="floyd-warshall (default) or johnson")
    a.add_argument("--list", action="store_true", help="list the methods and their knobs")
    a.set_defaults(func=cmd_apsp)
