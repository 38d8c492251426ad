"""Random graphs x random roots x random knob settings, every result checked (GPU or simulator).

    python3 -m benchmarks.tools.fuzz --runs 500 [--seed 1] [--technique bfs4k ...] [--multi 0.2] [--json OUT.json]
    python3 -m benchmarks.tools.fuzz --simulator --runs 60
    python3 -m benchmarks.tools.fuzz --graph luxembourg_osm --graph my_graph.mtx --runs 300
    python3 -m benchmarks.tools.fuzz --weighted 0.3 --runs 500

What the conformance suite does on named graphs with declared knob grids, on graphs and knob
settings nobody chose: each run draws a graph family and its size (random arcs with or without
self loops and parallel arcs, directed or not; hubs of very high degree; long paths with
branches; grids; Kronecker), a technique among the implemented ones and "auto" (the default:
the technique and knobs it chooses for the graph), every knob within its declared range (half
of them left at their defaults; drawn again while a cross-knob rule refuses them) and a source among the vertices of degree >= 1, then checks distances and parents against
the CPU reference and the Graph500 rules (benchmarks.harness.check), and that the device check a
sweep's runs trust (explorer.reference.on_device) agrees: it passes the tree and fails it with a
distance off. A setting still refused (more shared memory than the device has, say) is counted as
refused, with its message; anything else that goes wrong is a failure, printed with what
reproduces it. Exit status 1 when any run failed.

--graph NAME (repeatable) draws each run's graph from these instead: a benchmark graph's name, a
sample graph, a graph file or gen:KIND:param=value,... (as `bfs4k run` reads one), each loaded
once; the root is still drawn from its vertices of degree >= 1, the technique and knobs as above.

--multi SHARE makes that share of the runs many searches at once (`run_many`, all-sources
distances from up to 70 random sources by a random method or "auto", T, word size, direction,
batch size and slots), each search checked against the CPU BFS from its source.

--weighted SHARE makes that share of the runs single-source shortest paths (`run_sssp`): the drawn
graph with drawn weights (whole numbers from 1, with zeros, or negative ones on graphs of at most
20,000 arcs; reals over a narrow or a wide range), a shortest-path technique and its knobs drawn
as above, every result checked against scipy (explorer.reference.sssp: distances, and parents on
shortest paths). Where scipy finds a negative cycle reachable from the source, the run must report
one; delta-stepping's refusal of negative weights counts as refused.

Under the simulator, graphs stay small and the knobs the technique sets for it
(`simulator_knobs`, thread counts) stay near those values: a block of 1,024 threads is 1,024
Python threads there.
"""
from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from benchmarks import harness

#: Knob settings drawn for a run before one passes the technique's cross-knob rules.
DRAWS = 20
#: The default technique (and multi-search method): it chooses for the graph, and takes no knobs.
AUTO = "auto"


def random_graph(rng: np.random.Generator, small: bool):
    """(graph, description): one graph of a random family and size."""
    from explorer import graphs

    scale = 1 if small else 8
    family = rng.choice(["arcs", "hubs", "long", "grid", "kronecker"])
    if family == "arcs":
        n = int(rng.integers(1, 300 * scale))
        m = int(rng.integers(0, 4 * n + 1))
        directed = bool(rng.integers(2))
        loops, multi = bool(rng.integers(2)), bool(rng.integers(2))
        src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
        desc = f"arcs n={n} m={m} directed={directed} self_loops={loops} parallel={multi}"
        return graphs.from_edges(src, dst, num_vertices=n, directed=directed, drop_self_loops=not loops,
                                 merge_multi_edges=not multi, name="fuzz-arcs"), desc
    if family == "hubs":  # a few vertices adjacent to most others: heavy vertices, big frontiers
        n = int(rng.integers(8, 600 * scale))
        hubs = int(rng.integers(1, 4))
        src = np.concatenate([np.full(n, h) for h in range(hubs)] + [rng.integers(0, n, n)])
        dst = np.concatenate([rng.permutation(n) for _ in range(hubs)] + [rng.integers(0, n, n)])
        directed = bool(rng.integers(2))
        return (graphs.from_edges(src, dst, num_vertices=n, directed=directed, name="fuzz-hubs"),
                f"hubs n={n} hubs={hubs} directed={directed}")
    if family == "long":  # hundreds of levels: a path with random branches
        n = int(rng.integers(2, 400 * scale))
        extra = int(rng.integers(0, n // 2 + 1))
        src = np.r_[np.arange(n - 1), rng.integers(0, n, extra)]
        dst = np.r_[np.arange(1, n), rng.integers(0, n, extra)]
        return (graphs.from_edges(src, dst, num_vertices=n, directed=False, name="fuzz-long"),
                f"long n={n} branches={extra}")
    if family == "grid":
        rows, cols = int(rng.integers(1, 20 * scale)), int(rng.integers(1, 20 * scale))
        return graphs.generate("grid2d", rows=rows, cols=cols), f"grid2d rows={rows} cols={cols}"
    s, ef, seed = int(rng.integers(3, 8 if small else 14)), int(rng.integers(1, 17)), int(rng.integers(1000))
    return (graphs.generate("kronecker", scale=s, edge_factor=ef, seed=seed),
            f"kronecker scale={s} edge_factor={ef} seed={seed}")


def named_graphs(names: list[str]):
    """A draw_graph over these graphs (benchmarks.harness.load's names), each loaded once, up front:
    an unknown name fails before any run."""
    harness.check_names(names)
    loaded = {name: harness.load(name) for name in dict.fromkeys(names)}

    def draw(rng: np.random.Generator, small: bool):
        name = list(loaded)[int(rng.integers(len(loaded)))]
        return loaded[name], name

    return draw


def random_knobs(impl, rng: np.random.Generator, simulator: bool) -> dict:
    from explorer.sweep import random_value

    knobs = {}
    for spec in impl.Knobs.specs():
        if simulator and spec.name in impl.simulator_knobs:
            near = impl.simulator_knobs[spec.name]
            lowest = spec.choices[0] if spec.choices is not None else spec.low
            choices = [v for v in (near, lowest, 2 * near) if _allowed(spec, v)]
            knobs[spec.name] = choices[int(rng.integers(len(choices)))]
        elif rng.random() < 0.5:
            bounded = spec.choices is not None or math.isfinite(float(spec.high))
            knobs[spec.name] = random_value(spec, rng) if bounded else _unbounded_value(spec, rng)
    return knobs


def _unbounded_value(spec, rng: np.random.Generator):
    """A value of a knob whose range has no upper end (delta-stepping's delta, in weight units):
    its low end (delta 0: the technique's own choice), or log-uniform over 2**-4..2**12 above it."""
    if rng.random() < 0.25:
        return spec.low
    x = max(float(spec.low), float(np.exp2(rng.uniform(-4, 12))))
    return int(round(x)) if spec.kind is int else round(x, 6)


def _draw_knobs(impl, make, rng: np.random.Generator, simulator: bool) -> dict:
    """Knob settings for impl that its cross-knob rules take (make: its make_knobs), drawn again
    while they refuse them (up to DRAWS times), so that most runs run."""
    from explorer.knobs import KnobError

    knobs = {}
    for _ in range(DRAWS):
        knobs = random_knobs(impl, rng, simulator)
        try:
            make(impl.technique, knobs)
            break
        except KnobError:
            continue
    return knobs


def _source(g, rng: np.random.Generator) -> int:
    """A vertex of degree >= 1 (any vertex when there is none)."""
    candidates = np.flatnonzero(g.degrees() >= 1)
    return int(rng.choice(candidates)) if len(candidates) else int(rng.integers(max(g.num_vertices, 1)))


def _allowed(spec, value) -> bool:
    from explorer.knobs import KnobError

    try:
        spec.check(value)
    except KnobError:
        return False
    return True


def one_run(i: int, rng: np.random.Generator, techs: list[str], simulator: bool, draw_graph=random_graph) -> dict:
    from explorer.knobs import KnobError
    from explorer.techniques import implementation, make_knobs

    g, desc = draw_graph(rng, simulator)
    tech = techs[int(rng.integers(len(techs)))]
    knobs = {}  # "auto" sets its own
    if tech != AUTO:
        knobs = _draw_knobs(implementation(tech), make_knobs, rng, simulator)
    source = _source(g, rng)
    instrument = bool(rng.integers(2))
    case = {"run": i, "graph": desc, "vertices": g.num_vertices, "arcs": g.num_arcs, "technique": tech,
            "knobs": knobs, "source": source, "instrument": instrument}
    try:
        run = harness.start_bfs(g, source, tech, knobs, instrument=instrument)
        levels = list(run)
        r = run.result
    except KnobError as err:
        return {**case, "outcome": "refused", "message": str(err)}
    except Exception as err:  # noqa: BLE001  (a fuzzer reports every failure)
        return {**case, "outcome": "error", "message": f"{type(err).__name__}: {err}",
                "traceback": traceback.format_exc()}
    expected = harness.reference(g, source)
    report = harness.check(g, r, expected)
    if not report.ok:
        return {**case, "outcome": "wrong", "message": report.message}
    depth = int(expected.max()) + 1
    if [lv.level for lv in levels] != list(range(depth)):
        return {**case, "outcome": "wrong", "message": f"{len(levels)} level records for {depth} levels"}
    wrong = device_check_disagrees(g, source, expected, r)
    if wrong:
        return {**case, "outcome": "wrong", "message": wrong}
    return {**case, "outcome": "ok", "levels": depth, "ms": r.total_ms}


def device_check_disagrees(g, source: int, expected, r) -> str | None:
    """What the device check (explorer.reference.on_device, which a sweep's runs trust) says against
    the host's on this run's tree, which the host passed, and on the tree with its farthest vertex
    a level too far, which it must fail; None when it agrees on both."""
    from explorer.engine import Session
    from explorer.engine.runtime import for_technique
    from explorer.reference.on_device import DeviceCheck

    rt = for_technique(frozenset({"gpu", "simulator"}))
    d, p = np.asarray(r.distances, np.int32), np.asarray(r.parents, np.int32)
    far = d.copy()
    v = int(np.argmax(far))
    far[v] += 1
    check = DeviceCheck(g, source, expected)
    with Session(g) as s:
        arrays = s.graph_arrays(rt)
        if not check.passes(rt, arrays, rt.to_device(d), rt.to_device(p)):
            return "the device check failed a tree that the host's check passed"
        if check.passes(rt, arrays, rt.to_device(far), rt.to_device(p)):
            return f"the device check passed the tree with vertex {v} a level too far"
    return None


def one_multi_run(i: int, rng: np.random.Generator, simulator: bool, draw_graph=random_graph) -> dict:
    """run_many's "distances" (every source's BFS levels) by a random method and settings, each
    row checked against the CPU BFS from that source."""
    g, desc = draw_graph(rng, simulator)
    methods = [*harness.multisearch_methods(), AUTO]
    method = methods[int(rng.integers(len(methods)))]
    n = g.num_vertices
    k = int(rng.integers(1, min(n, 70) + 1))
    sources = sorted(int(v) for v in rng.choice(n, k, replace=False))
    settings = {"method": method,
                "T": [None, 0, 1, 4, "auto"][int(rng.integers(5))] if method == harness.THRESHOLD_METHOD else None,
                "word_bits": int(rng.choice([32, 64])), "direction": str(rng.choice(["auto", "push", "pull"])),
                "heavy": int(rng.integers(1, 300)), "chunk": int(rng.integers(1, 600)),
                "k": int(rng.integers(1, k + 1)) if rng.random() < 0.5 else None,
                "slots": int(rng.integers(1, 5)) if rng.random() < 0.5 else None}
    case = {"run": i, "graph": desc, "vertices": n, "arcs": g.num_arcs, "technique": f"run_many:{method}",
            "knobs": settings, "source": sources[:8], "instrument": False}
    try:
        run = harness.start_many(g, sources, "distances", **settings)
        list(run)
        r = run.result
        if [int(v) for v in r.sources] != sources:
            return {**case, "outcome": "wrong", "message": f"searched from vertices {list(r.sources)[:8]}, "
                                                         f"asked for {sources[:8]} (by their own ids)"}
    except Exception as err:  # noqa: BLE001
        return {**case, "outcome": "error", "message": f"{type(err).__name__}: {err}",
                "traceback": traceback.format_exc()}
    got = np.asarray(r.values["distances"])
    for row, src in enumerate(r.sources):
        expected = harness.reference(g, int(src))
        if not np.array_equal(got[row], expected):
            bad = np.flatnonzero(got[row] != expected)
            return {**case, "outcome": "wrong", "message": f"search from {int(src)}: {len(bad)} vertices at the wrong "
                    f"level, e.g. vertex {int(bad[0])}: {int(got[row][bad[0]])} instead of {int(expected[bad[0]])}"}
    return {**case, "outcome": "ok", "levels": int(got.max()) + 1 if got.size else 0, "ms": None}


#: --weighted runs' weights (explorer.graphs.weights.with_weights: kind, low, high): unit, whole
#: numbers, whole numbers with zeros (zero-weight cycles), negative ones (negative cycles), reals
#: over a narrow and over a wide range.
WEIGHTS = (("integer", 1, 1), ("integer", 1, 100), ("integer", 0, 3), ("integer", -2, 30), ("uniform", 0.5, 10.0),
           ("uniform", 0.001, 1e6))
#: Negative weights only on graphs of at most this many arcs: a negative cycle is proved after n - 1
#: relax steps, and scipy's Bellman-Ford takes n x m (minutes at 60,000 vertices and 300,000 arcs).
NEGATIVE_ARCS = 20_000


def one_sssp_run(i: int, rng: np.random.Generator, simulator: bool, draw_graph=random_graph) -> dict:
    """Single-source shortest paths of the drawn graph with drawn weights (WEIGHTS) by a random
    shortest-path technique and knobs, checked against scipy; a negative cycle scipy finds from the
    source must be reported."""
    from scipy.sparse.csgraph import NegativeCycleError as ScipyNegativeCycle

    from explorer.graphs.weights import with_weights
    from explorer.knobs import KnobError
    from explorer.reference.sssp import check_sssp_result, reference_sssp
    from explorer.sssp import NegativeCycleError, NegativeWeightError, implementation, make_knobs, sssp_techniques

    g, desc = draw_graph(rng, simulator)
    kinds = [w for w in WEIGHTS if w[1] >= 0 or g.num_arcs <= NEGATIVE_ARCS]
    kind, low, high = kinds[int(rng.integers(len(kinds)))]
    wseed = int(rng.integers(1000))
    g = with_weights(g, kind, low, high, wseed)
    techs = [t.value for t in sssp_techniques()]
    tech = techs[int(rng.integers(len(techs)))]
    knobs = _draw_knobs(implementation(tech), make_knobs, rng, simulator)
    source = _source(g, rng)
    case = {"run": i, "graph": f"{desc}, {kind} weights {low}..{high} seed {wseed}", "vertices": g.num_vertices,
            "arcs": g.num_arcs, "technique": f"sssp:{tech}", "knobs": knobs, "source": source, "instrument": False}
    try:
        expected, _ = reference_sssp(g, source)
    except ScipyNegativeCycle:
        expected = None  # a negative cycle reachable from the source
    try:
        run = harness.start_sssp(g, source, tech, knobs)
        list(run)
        r = run.result
    except KnobError as err:
        return {**case, "outcome": "refused", "message": str(err)}
    except NegativeWeightError as err:
        if low < 0:
            return {**case, "outcome": "refused", "message": str(err)}
        return {**case, "outcome": "wrong", "message": f"refused weights >= {low} as negative: {err}"}
    except NegativeCycleError as err:
        if expected is None:
            return {**case, "outcome": "ok", "levels": None, "ms": None, "message": "negative cycle found, as scipy"}
        return {**case, "outcome": "wrong", "message": f"reported a negative cycle that scipy does not find: {err}"}
    except Exception as err:  # noqa: BLE001
        return {**case, "outcome": "error", "message": f"{type(err).__name__}: {err}",
                "traceback": traceback.format_exc()}
    if expected is None:
        return {**case, "outcome": "wrong", "message": "no negative cycle reported; scipy finds one reachable from "
                                                       f"vertex {source}"}
    report = check_sssp_result(g, r, expected=expected)
    if not report.ok:
        return {**case, "outcome": "wrong", "message": report.message}
    return {**case, "outcome": "ok", "levels": len(r.iterations), "ms": r.total_ms}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--technique", action="append",
                    help="only these (repeatable); default: every implemented one, and auto")
    ap.add_argument("--simulator", action="store_true", help="run on the CUDA simulator (small graphs)")
    ap.add_argument("--multi", type=float, default=0.0, metavar="SHARE",
                    help="this share of the runs (0..1) are run_many searches (all-sources distances by a "
                    "random method), checked against the CPU BFS from each source")
    ap.add_argument("--weighted", type=float, default=0.0, metavar="SHARE",
                    help="this share of the runs (0..1) are single-source shortest paths (random weights, a "
                    "random shortest-path technique and knobs), checked against scipy")
    ap.add_argument("--graph", action="append", metavar="NAME",
                    help="draw each run's graph from these (repeatable): a benchmark graph's name, a sample "
                    "graph, a graph file or gen:KIND:param=value,...; default: a random family and size a run")
    ap.add_argument("--json", type=Path, help="write every run's case and outcome here")
    ap.add_argument("--seconds", type=float, default=None, metavar="S",
                    help="start no run after S seconds: the summary (and --json) covers the runs done")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error(f"--runs {args.runs}: give at least 1")
    if args.seconds is not None and not args.seconds > 0:
        ap.error(f"--seconds {args.seconds}: a time limit above 0")
    if not 0 <= args.multi <= 1:
        ap.error(f"--multi {args.multi}: a share from 0 to 1")
    if not 0 <= args.weighted <= 1:
        ap.error(f"--weighted {args.weighted}: a share from 0 to 1")
    if args.multi + args.weighted > 1:
        ap.error(f"--multi {args.multi} and --weighted {args.weighted}: shares of the runs that sum to at most 1")

    from explorer import backend
    from explorer.techniques import Technique, implemented_techniques

    info = backend.select("simulator" if args.simulator else "gpu")
    techs = ([AUTO if t.strip().lower() == AUTO else Technique.parse(t).value for t in args.technique]
             if args.technique else [*(t.value for t in implemented_techniques()), AUTO])
    try:
        args.draw_graph = named_graphs(args.graph) if args.graph else random_graph
    except harness.UnknownGraph as err:
        ap.error(f"--graph: {err}")
    rng = np.random.default_rng(args.seed)
    print(f"fuzz: {args.runs} runs, seed {args.seed}, on {info.describe()}", flush=True)
    results, t0 = [], time.perf_counter()
    # A time limit from outside (timeout's SIGTERM) still gets the summary of the runs done.
    before = signal.signal(signal.SIGTERM, _stopped)
    stop = None
    try:
        for i in range(args.runs):
            if args.seconds is not None and time.perf_counter() - t0 > args.seconds:
                stop = f"--seconds {args.seconds:g} passed"
                break
            _fuzz_one(i, rng, techs, args, results)
    except _Stopped:
        stop = "stopped by SIGTERM"
    finally:
        signal.signal(signal.SIGTERM, before)
    return _summary(results, stop, args, info, t0)


class _Stopped(BaseException):
    """SIGTERM during a run: not an Exception, so no run's own handler records it as its error."""


def _stopped(signum, frame):
    raise _Stopped


def _fuzz_one(i: int, rng, techs: list, args, results: list) -> None:
    """Run i (one search, or many at once by --multi's share), its outcome appended to results."""
    multi = args.multi > 0 and rng.random() < args.multi
    # Of the runs that are not multi-searches, the share that makes --weighted the share of all runs.
    weighted = not multi and args.weighted > 0 and rng.random() < args.weighted / (1 - args.multi)
    res = (one_multi_run(i, rng, args.simulator, args.draw_graph) if multi
           else one_sssp_run(i, rng, args.simulator, args.draw_graph) if weighted
           else one_run(i, rng, techs, args.simulator, args.draw_graph))
    results.append(res)
    if res["outcome"] in ("wrong", "error"):
        shares = "".join(f" --{name} {getattr(args, name):g}" for name in ("multi", "weighted") if getattr(args, name))
        print(f"FAIL run {i}: {res['technique']} on {res['graph']} from {res['source']}, knobs {res['knobs']}, "
              f"instrument={res['instrument']}: {res['message']} (the same graph again: --seed {args.seed} "
              f"--runs {i + 1}{shares}{''.join(f' --technique {t}' for t in args.technique or ())}"
              f"{''.join(f' --graph {g}' for g in args.graph or ())})", flush=True)
        if "traceback" in res:
            print(res["traceback"], flush=True)


def _summary(results: list, stop: str | None, args, info, t0: float) -> int:
    """Counts by outcome and technique, printed (and written to --json) for the runs done."""
    counts = {k: sum(r["outcome"] == k for r in results) for k in ("ok", "refused", "wrong", "error")}
    per_tech: dict = {}
    for r in results:
        per_tech.setdefault(r["technique"], {}).setdefault(r["outcome"], 0)
        per_tech[r["technique"]][r["outcome"]] += 1
    for tech, c in sorted(per_tech.items()):
        print(f"  {tech:24s} " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    done = f"{len(results)} of {args.runs} runs ({stop})" if stop else f"{len(results)} runs"
    print(f"fuzz: {done}: {counts['ok']} ok, {counts['refused']} refused by a knob rule or the device, "
          f"{counts['wrong']} wrong, {counts['error']} errors in {time.perf_counter() - t0:.0f} s", flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"device": info.describe(), "seed": args.seed, "counts": counts,
                                         "asked": args.runs, "stopped": stop, "runs": results},
                                        indent=1, default=str))
    return 1 if counts["wrong"] or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
