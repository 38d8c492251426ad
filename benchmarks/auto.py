"""`auto` against the oracle: on each benchmark graph, auto's run beside every configuration it
chooses among, every registered technique with its defaults and BFS-4K with §7's advice (the
oracle is the fastest of them, measured in the same call), scipy's breadth_first_order on the host
(3 runs above 10 M arcs, where it takes seconds), and BLEST and Gunrock where built; then Kronecker
s22 from 64 random roots.

    python3 -m benchmarks.auto                                   # every graph, then kron22's roots
    python3 -m benchmarks.auto --graphs facebook_combined 3elt --no-roots --tag small
    python3 -m benchmarks.auto --smoke                           # small stand-ins, simulator

Each configuration: a warm-up, then --repeats uninstrumented runs, every result checked
(benchmarks.harness.measure); one whose first timed run is over --stop times the fastest so far on
that graph keeps that one run (it cannot be the oracle). auto is timed as users run it: through
run_bfs's "auto", its choice made for each run from the graph's statistics (computed once, their
cost shown apart); the choice alone is timed too: the first (on a GPU, with the trials of auto's
close contenders, kept for the graph), then over many calls. "within noise": auto's runs and
the oracle's overlap. Writes results/<GPU>/auto[-TAG].{json,md}.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numpy as np

from benchmarks import harness

ROOTS, ROOTS_SEED = 64, 18
SCIPY_ARCS = 10_000_000  # above this scipy's search takes seconds: 3 runs
#: The table of "One launch for the whole search": its graphs, in its order.
GRAPHS = ("kron22", "kron20", "uniform", "smallworld", "grid3d", "grid1000", "luxembourg_osm", "delaunay_n16",
          "facebook_combined", "Wiki-Vote", "p2p-Gnutella31", "3elt")


def configs(g, simulator: bool = False, only=None) -> list[tuple[str, str, dict | None]]:
    """(label, technique, knobs): auto's candidates, then each registered technique's defaults that is
    not one already, then BFS-4K with §7's advice for g; under the simulator with its knobs, as auto
    runs there (candidates.knob_values). `only`: these labels."""
    from explorer.auto.candidates import CANDIDATES, Candidate, knob_values
    from explorer.techniques import implementation, implemented_techniques
    from explorer.techniques.bfs4k import recommend_knobs

    cands = list(CANDIDATES)
    named = {(c.technique, tuple(sorted(c.knobs.items()))) for c in cands}
    cands += [Candidate(f"{t.value} defaults", t.value, {}) for t in implemented_techniques() if (t.value, ()) not in named]
    cands.append(Candidate("bfs4k §7 advice", "bfs4k", recommend_knobs(g)[0].as_dict()))
    out = []
    for c in cands:
        impl = implementation(c.technique)
        cpu = impl.runtimes == frozenset({"cpu"})
        if only is None or c.name in only:
            out.append((c.name, c.technique, knob_values(c, impl, simulator and not cpu)))
    return out


def choosing(g, source: int, n: int = 200) -> tuple[float, float, object]:
    """auto's choice on g from `source` (its statistics already computed): the seconds of the first
    (on a GPU, with the trials of its contenders), the median µs of the next `n`, and the choice."""
    from explorer import api

    t = time.perf_counter()
    choice = api._choose(g, None, source, None)
    first = time.perf_counter() - t
    times = []
    for _ in range(n):
        t = time.perf_counter()
        choice = api._choose(g, None, source, None)
        times.append(time.perf_counter() - t)
    return first, statistics.median(times) * 1e6 if times else math.nan, choice


def run_graph(name, args, env) -> list[dict]:
    from explorer.engine import Session
    from explorer.graphs import search_features

    t0 = time.perf_counter()
    g = harness.load(name, small=args.smoke)
    source = harness.source_of(name, g, small=args.smoke)
    expected = harness.reference(g, source)
    t = time.perf_counter()
    f = search_features(g)
    stats_s = time.perf_counter() - t
    first_s, us, choice = choosing(g, source)
    print(f"{name}: {g.num_vertices:,} vertices, {g.num_arcs:,} arcs, source {source}; statistics {stats_s:.3f} s "
          f"(once), first choice {first_s:.3f} s{' (with its trials)' if choice.measured else ''}, then {us:.0f} µs\n"
          f"  {choice.reason()}", flush=True)
    common = {"graph": name, "vertices": g.num_vertices, "arcs": g.num_arcs, "source": source,
              "features": f.as_dict(), "statistics_s": round(stats_s, 4), "first_choice_s": round(first_s, 4),
              "choose_us": round(us, 1),
              "chosen": choice.candidate, "reason": choice.reason()}
    rows, best = [], float("inf")
    with Session(g) as session:
        for label, tech, knobs in [("auto", "auto", None), *configs(g, args.smoke, args.configs)]:
            m = harness.measure(g, source, tech, knobs, label=label, repeats=args.repeats, session=session,
                                expected=expected, limit_s=args.limit, stop_above_ms=best * args.stop)
            if m.ok:
                best = min(best, m.median_ms)
            rows.append({**common, **m.row(), "predicted_ms": choice.predicted.get(label)})
            print(f"  {label:60s} {_line(m)}", flush=True)
    sp = harness.scipy_bfs(g, source, expected, args.repeats if g.num_arcs <= SCIPY_ARCS else min(args.repeats, 3))
    rows.append({**common, "config": sp.label, "technique": "scipy", "median_ms": round(statistics.median(sp.times_ms), 4),
                 "min_ms": round(min(sp.times_ms), 4), "max_ms": round(max(sp.times_ms), 4), "correct": sp.check.ok,
                 "error": None if sp.check.ok else sp.check.message})
    print(f"  {sp.label:60s} {harness.spread(sp.times_ms)}", flush=True)
    if args.peers and not args.smoke:
        os.environ.setdefault("BLEST_JACCARD", "0")
        with harness.PeerGraph(g) as pg:
            for peer in harness.PEERS.values():
                m = harness.run_peer(peer, pg, source, expected, runs=args.repeats)
                rows.append({**common, **m.row()})
                print(f"  {peer.name:60s} {_line(m)}", flush=True)
    print(f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
    return rows


#: Rows of the yardsticks, beside this project's configurations.
PEER_ROWS = ("scipy", "blest", "gunrock")


def _ours(rows: list[dict]) -> list[dict]:
    """This project's rows (auto's and the configurations') whose runs were right and timed."""
    return [r for r in rows if r.get("correct") and r.get("median_ms") is not None and r["technique"] not in PEER_ROWS]


def run_roots(args, measured: list[dict]) -> list[dict]:
    """kron22 from ROOTS random roots: auto, the three configurations fastest from its max-degree
    vertex (`measured`: this call's rows; where kron22 is not among them, the three auto predicts
    fastest) and direction-optimizing."""
    name = "kron22"
    g = harness.load(name, small=args.smoke)
    rng = np.random.default_rng(ROOTS_SEED)
    deg = g.degrees()
    roots = rng.choice(np.flatnonzero(deg > 0), size=min(args.roots, int((deg > 0).sum())), replace=False)
    ours = sorted((r for r in _ours(measured) if r["graph"] == name and r["config"] != "auto"),
                  key=lambda r: r["median_ms"])
    if ours:
        top = [r["config"] for r in ours[:3]]
    else:
        _, _, choice = choosing(g, int(roots[0]), 0)
        top = list(choice.predicted)[:3]
    by = {label: (tech, knobs) for label, tech, knobs in configs(g, args.smoke)}
    cfgs = [("auto", "auto", None), *((label, *by[label]) for label in top),
            *((label, *by[label]) for label in ("direction-optimizing",) if label not in top)]
    ms = harness.measure_roots(g, [int(r) for r in roots], cfgs)
    rows = []
    for m in ms:
        rows.append({"graph": name, "roots": len(roots), "seed": ROOTS_SEED, **{k: v for k, v in m.row().items()
                                                                                if k != "per_root"}})
        print(f"  roots {m.label:56s} {harness.spread(m)} harmonic GTEPS {m.extra.get('harmonic_gteps')}", flush=True)
    return rows


def _line(m: harness.Measurement) -> str:
    if m.skipped:
        return f"skipped: {m.skipped}"
    if m.error:
        return f"{'WRONG' if m.wrong else 'FAILED'}: {m.error}"
    return f"{harness.spread(m)} levels {m.levels}" + (f" (one run: {m.extra['one_run']})" if "one_run" in m.extra else "")


def markdown(rows: list[dict], args) -> list[str]:
    by: dict = {}
    for r in rows:
        if "roots" not in r:
            by.setdefault(r["graph"], []).append(r)
    out = [f"Median of {args.repeats} runs (ms), every result checked; auto runs as users run it (its choice made "
           "each run; on a GPU its close contenders are timed at the graph's first choice, before the timed runs: "
           "\"first choice s\", with the calibration's first reading). Oracle: the fastest of auto's candidates, "
           "every registered technique's defaults and BFS-4K's "
           "§7 advice, in the same call. \"within noise\": auto's runs and the oracle's overlap.", ""]
    head = ["graph", "auto's choice", "auto", "oracle (configuration)", "oracle", "auto / oracle", "within noise",
            "scipy", "BLEST", "Gunrock", "choice µs", "first choice s", "statistics s (once)"]
    table, ratios = [], []
    for name, rs in by.items():
        ours = _ours(rs)
        auto = next((r for r in ours if r["config"] == "auto"), None)
        oracle = min((r for r in ours if r["config"] != "auto"), key=lambda r: r["median_ms"], default=None)
        peer = {r["technique"]: r.get("median_ms") for r in rs if r["technique"] in PEER_ROWS}
        if auto is None or oracle is None:
            table.append([name, rs[0]["chosen"], "-", "-", "-", "-", "-", "", "", "", "", "", ""])
            continue
        ratio = auto["median_ms"] / oracle["median_ms"]
        ratios.append(ratio)
        noise = "yes" if harness.runs_overlap(auto, oracle) else "no"
        fmt = lambda x: "" if x is None else f"{x:.4g}"  # noqa: E731
        table.append([name, rs[0]["chosen"], fmt(auto["median_ms"]), oracle["config"], fmt(oracle["median_ms"]),
                      f"{ratio:.2f}", noise, fmt(peer.get("scipy")), fmt(peer.get("blest")), fmt(peer.get("gunrock")),
                      f"{rs[0]['choose_us']:.0f}", f"{rs[0]['first_choice_s']:.3g}", f"{rs[0]['statistics_s']:.3g}"])
    out += harness.markdown_table(head, table)
    if ratios:
        out += ["", f"Geometric mean of auto / oracle over {len(ratios)} graphs: "
                    f"**{float(np.exp(np.mean(np.log(ratios)))):.3f}**; worst {max(ratios):.2f}."]
    roots = [r for r in rows if "roots" in r]
    if roots:
        out += ["", f"Kronecker s22 from {roots[0]['roots']} random roots (seed {ROOTS_SEED}): each root timed once after "
                    "one warm-up search, every result checked; beside auto, the three configurations fastest from the "
                    "max-degree vertex in this call (or, where kron22 was not measured, the three auto predicts "
                    "fastest) and direction-optimizing.", ""]
        out += harness.markdown_table(["configuration", "median ms", "Graph500 harmonic mean GTEPS", "right"],
                                      [[r["config"], f"{r['median_ms']:.4g}" if r.get("median_ms") else "-",
                                        r.get("harmonic_gteps"), "yes" if r.get("correct") else r.get("error")]
                                       for r in roots])
        auto = next((r for r in roots if r["config"] == "auto" and r.get("correct")), None)
        others = [r for r in roots if r["config"] != "auto" and r.get("correct") and r.get("median_ms")]
        if auto and others:
            fastest = min(others, key=lambda r: r["median_ms"])
            out += ["", f"auto's median over the roots / the fastest configuration's ({fastest['config']}): "
                        f"**{auto['median_ms'] / fastest['median_ms']:.3f}**."]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m benchmarks.auto", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="+", metavar="NAME", help=f"default: {' '.join(GRAPHS)}")
    ap.add_argument("--configs", nargs="+", metavar="LABEL", help="only these configurations beside auto")
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--stop", type=float, default=3.0, help="one run for a configuration this many times the fastest")
    ap.add_argument("--limit", type=float, default=2.0, help="seconds a run may take before it is stopped")
    ap.add_argument("--roots", type=int, default=ROOTS)
    ap.add_argument("--no-roots", dest="do_roots", action="store_false")
    ap.add_argument("--no-peers", dest="peers", action="store_false")
    ap.add_argument("--smoke", action="store_true", help="the graphs' small stand-ins, on the simulator")
    ap.add_argument("--tag", default="", help="results/<GPU>/auto-TAG.*")
    ap.add_argument("--out", help="results folder (default benchmarks/results)")
    args = ap.parse_args(argv)
    from explorer import backend

    if args.smoke:
        os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
        backend.select("simulator")
        args.repeats, args.roots = min(args.repeats, 2), min(args.roots, 3)
    env = harness.environment()
    names = harness.check_names(args.graphs or GRAPHS)
    name = "auto" + (f"-{args.tag}" if args.tag else "") + ("-smoke" if args.smoke else "")
    settings = {"repeats": args.repeats, "stop": args.stop, "graphs": names, "roots": args.roots if args.do_roots else 0}
    rows = []
    for graph in names:  # written after each graph: a call cut short keeps the graphs it finished
        rows += run_graph(graph, args, env)
        harness.write_results(args.out, name, env, settings, rows, markdown(rows, args),
                              f"auto against the oracle, {env['gpu']}")
    if args.do_roots:
        rows += run_roots(args, rows)
        harness.write_results(args.out, name, env, settings, rows, markdown(rows, args),
                              f"auto against the oracle, {env['gpu']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
