"""Many searches at once on a real GPU: k = 1024 searches by every multi-search method and by
method "auto" (its first run times the methods on a sample of the sources; its time is the chosen
method's, its choice and ratio to the best method in the summary), against
1024 single-source runs of the best single-source configuration, with time and energy; and the
exact betweenness centrality of facebook_combined.

    python3 -m benchmarks.multisearch --graphs kron20 grid1000 facebook_combined --bc
    python3 -m benchmarks.multisearch --graphs kron20 --budget 60
    python3 -m benchmarks.multisearch --graphs --bc                                      # facebook's betweenness only

Every method computes the closeness centrality of the same k sources (distinct vertices with an
arc, seeded): each method's first run is checked against the CPU reference BFS from the first
four sources, its other runs, the other methods and the single-source runs against it for every
source. Times are the sum of
the run's step times (CUDA events: the GPU's work, not set-up or host copies) and the host's wall
time of the whole run; each the median of --repeats runs after a warm-up that compiles the
kernels. Energy is NVML's (explorer.multisearch.energy): the runs are repeated until they add up
to a second or more, so that the counter's resolution does not decide the number.

A method whose run would take longer than --budget seconds is stopped after the progress step
that crosses it (run in --pilot-steps steps) and its time extrapolated linearly from the searches
done: marked "extrapolated" (an upper bound when those searches did not fill the GPU).
Writes results/<GPU>/multisearch.{json,md}.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from benchmarks import harness

DEFAULT_GRAPHS = ["kron20", "grid1000", *[n for n, s in harness.GRAPHS.items() if s.kind == "sample"]]
BC_TARGET_MS = 1000.0  # exact betweenness of facebook_combined: under a second


def methods(choice) -> list[tuple[str, str, dict]]:
    """(label, method, run_many settings): every method; the threshold method with the paper's
    T = 16 and with the T chosen for the graph; bit-parallel with 64- and 32-bit words."""
    out = []
    for method in harness.multisearch_methods():
        if method == harness.THRESHOLD_METHOD:
            out += [(f"{method} T=16", method, {"T": 16}),
                    (f"{method} T={choice.label} (chosen)", method, {"T": choice.T})]
        elif method == "bit-parallel":
            out += [(f"{method} {w}", method, {"word_bits": w}) for w in (64, 32)]
        else:
            out.append((method, method, {}))
    return out + [("auto", "auto", {})]  # the methods timed on a sample of the sources, the fastest run


def pick_sources(g, k: int, seed: int = 1) -> np.ndarray:
    candidates = np.flatnonzero(g.degrees() > 0)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(candidates, min(k, candidates.size), replace=False)).astype(np.int64)


CLOSENESS = ("total_distance", "reached")  # what closeness adds up per source


def check(g, sources, values, count: int = 4) -> bool:
    """Closeness inputs (sum of distances, vertices reached) of the first sources against the CPU reference."""
    for i, s in enumerate(sources[:count]):
        d = harness.reference(g, int(s))
        reached = d[d > 0]
        if values["total_distance"][i] != reached.sum() or values["reached"][i] != reached.size:
            return False
    return True


def same(a, b) -> bool:
    """Two runs' closeness inputs equal for every source."""
    return all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in CLOSENESS)


def run_once(g, sources, method, kw, session, budget, pilot_steps):
    """One run: (result or None, step ms, wall s, searches done). Stopped past the budget."""
    t0 = time.perf_counter()
    run = harness.start_many(g, sources, "closeness", method=method, session=session,
                             steps=pilot_steps if budget else None, **kw)
    it = iter(run)
    done, ms = 0, 0.0
    for p in it:
        done, ms = p.searches_done, p.elapsed_ms
        if budget and time.perf_counter() - t0 > budget and done < len(sources):
            it.close()
            return None, ms, time.perf_counter() - t0, done
    return run.result, run.result.time_ms, time.perf_counter() - t0, len(sources)


def measure(g, sources, label, method, kw, session, args) -> tuple[dict, dict | None]:
    """The method's row, and its closeness inputs (None when it was extrapolated). Its first run is
    checked against the CPU reference on the first sources, every other run equal to the first."""
    harness.start_many(g, sources[:2], "closeness", method=method, session=session, **kw).complete()  # compile
    k = len(sources)
    repeats = args.repeats
    if method != "bit-parallel":  # MS-BFS finishes its searches together: nothing to extrapolate from
        pilot, ms, wall, done = run_once(g, sources, method, kw, session, args.budget, args.pilot_steps)
        if pilot is None:
            scale = k / max(done, 1)
            return {"config": label, "method": method, "extrapolated": True, "searches_run": done,
                    "time_ms": round(ms * scale, 3), "wall_s": round(wall * scale, 3), "energy_j": None,
                    "watts": None, "correct": None}, None
        if wall > args.budget / 4:
            repeats = 1  # long enough to be measured once
    # The pilot ran in --pilot-steps steps (fewer searches at a time): time the default steps.
    first, ms, wall, _ = run_once(g, sources, method, kw, session, 0, None)
    times, walls, runs, joules, energy_s = [ms], [wall], 1, [], 0.0
    results = [first]
    while runs < repeats or (first.energy_j is not None and energy_s < 1.0 and runs < 200):
        r, ms, wall, _ = run_once(g, sources, method, kw, session, 0, None)
        times.append(ms)
        walls.append(wall)
        results.append(r)
        runs += 1
        if r.energy_j is not None:
            joules.append(r.energy_j)
            energy_s += sum(b.energy_s for b in r.batches)
    r = results[-1]
    correct = check(g, sources, first.values) and all(same(x.values, first.values) for x in results[1:])
    return {"config": label, "method": method, "extrapolated": False, "searches_run": k,
            "time_ms": round(statistics.median(times), 3), "min_ms": round(min(times), 3),
            "max_ms": round(max(times), 3), "wall_s": round(statistics.median(walls), 4),
            "energy_j": round(statistics.mean(joules), 4) if joules else None,
            "watts": round(sum(joules) / energy_s, 1) if joules and energy_s else None,
            "energy_note": r.energy_note, "runs": runs, "plan": r.plan.describe(),
            "correct": correct, "T": r.T,
            **({"chosen": r.method_choice.method, "reason": r.method_choice.reason()} if r.method_choice else {})
            }, {k_: np.asarray(first.values[k_]) for k_ in CLOSENESS}


def single_source(g, sources, session, args, agreed) -> dict:
    """The best single-source configuration (fastest of a few on 16 sources), then k runs of it,
    the first checked against the CPU reference, each one's closeness inputs against `agreed` (the
    multi-search methods')."""
    from benchmarks.bfs import recommended
    from explorer.multisearch.energy import EnergyMeter, pci_bus_id

    configs = [("bfs4k recommended (§7)", "bfs4k", recommended(g)),
               ("bfs4k defaults, claim=atomic", "bfs4k", {"claim": "atomic"}),
               ("bfs4k frontier-degree", "bfs4k", {"warp_size_rule": "frontier-degree", "claim": "atomic",
                                                   "dedup": "none"}),
               ("topdown-queue", "topdown-queue", {})]
    trial = []
    for label, tech, knobs in configs:
        try:
            harness.start_bfs(g, int(sources[0]), tech, knobs, session=session).complete()
            t0 = time.perf_counter()
            for s in sources[:16]:
                harness.start_bfs(g, int(s), tech, knobs, session=session).complete()
            trial.append((time.perf_counter() - t0, label, tech, knobs))
        except Exception as exc:  # noqa: BLE001  (a configuration this graph or GPU refuses)
            print(f"    single-source {label}: {type(exc).__name__}: {exc}", flush=True)
    _, label, tech, knobs = min(trial, key=lambda t: t[0])
    from explorer import backend

    meter = EnergyMeter(backend.current().kind, pci_bus_id())
    gpu_ms, done, totals = 0.0, 0, []
    t0 = time.perf_counter()
    meter.begin()
    for s in sources:
        r = harness.start_bfs(g, int(s), tech, knobs, session=session).complete()
        gpu_ms += r.elapsed_ms
        done += 1
        if done == 1:
            first = harness.check_distances(harness.reference(g, int(s)), r.distances).ok
        d = r.distances
        totals.append((int(d[d > 0].sum()), int((d > 0).sum())))
        if args.budget and time.perf_counter() - t0 > args.budget and done < len(sources):
            break
    meter.end()
    wall = time.perf_counter() - t0
    reading = meter.take()
    meter.close()
    correct = first and (agreed is None or all(
        (t, n) == (agreed["total_distance"][i], agreed["reached"][i]) for i, (t, n) in enumerate(totals)))
    scale = len(sources) / done
    return {"config": f"{len(sources)} single-source runs: {label}", "method": tech, "knobs": knobs,
            "extrapolated": done < len(sources), "searches_run": done, "time_ms": round(gpu_ms * scale, 3),
            "wall_s": round(wall * scale, 4), "energy_j": None if reading is None else round(reading.joules * scale, 4),
            "watts": None if reading is None else round(reading.watts, 1), "energy_note": meter.note,
            "correct": correct, "trial_s_per_16": {lbl: round(t, 4) for t, lbl, _, _ in trial}}


def facebook_bc(args) -> dict:
    """Exact betweenness of facebook_combined (every vertex a source), timed; checked against
    networkx's sampled estimate with the same 64 sources (networkx's exact one takes minutes)."""
    import random

    import networkx as nx

    from explorer.engine import Session

    g = harness.load("facebook_combined")
    with Session(g) as s:
        harness.start_many(g, [0, 1], "betweenness", session=s, T="auto").complete()  # compile
        times, walls = [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            r = harness.start_many(g, "all", "betweenness", session=s, T="auto").complete()
            walls.append(time.perf_counter() - t0)
            times.append(r.time_ms)
        G = g.to_networkx()  # nodes are the vertices 0..n-1
        sample = random.Random(3).sample(list(G.nodes()), 64)
        ref = nx.betweenness_centrality(G, k=64, seed=random.Random(3))
        est = harness.start_many(g, sample, "betweenness", session=s).complete().values["betweenness"]
    ok = bool(np.allclose(est, [ref[v] for v in range(g.num_vertices)]))
    med = statistics.median(times)
    return {"graph": "facebook_combined", "sources": g.num_vertices, "time_ms": round(med, 3),
            "min_ms": round(min(times), 3), "max_ms": round(max(times), 3),
            "wall_s": round(statistics.median(walls), 4), "energy_j": r.energy_j, "energy_note": r.energy_note,
            "T": r.T, "threshold": r.threshold.reason if r.threshold else None, "plan": r.plan.describe(),
            "sampled_matches_networkx": ok, "top5": r.ranked(top=5), "target_ms": BC_TARGET_MS,
            "under_target": med < BC_TARGET_MS}


def _line(m: dict) -> str:
    if "error" in m:
        return f"{m['config']:34s} FAILED: {m['error']}"
    e = f"{m['energy_j']:9.2f} J {m['watts'] or 0:6.0f} W" if m.get("energy_j") is not None else "energy n/a"
    ex = f"  (extrapolated from {m['searches_run']})" if m["extrapolated"] else ""
    return f"{m['config']:34s} {m['time_ms']:11.2f} ms  wall {m['wall_s']:8.3f} s  {e}  ok={m['correct']}{ex}"


def markdown(rows, summary, bc) -> list[str]:
    out = ["Closeness of k sources by every method; GPU time (sum of step times, CUDA events), wall time, "
           "energy (NVML, whole board). 'extrapolated': stopped at the time budget.", ""]
    table = []
    for m in rows:
        if "error" in m:
            table.append([m["graph"], m["config"], f"failed: {m['error']}", "", "", "", "no"])
            continue
        j = "" if m.get("energy_j") is None else f"{m['energy_j']:.2f}"
        w = "" if m.get("watts") is None else f"{m['watts']:.0f}"
        table.append([m["graph"], m["config"] + (" (extrapolated)" if m["extrapolated"] else ""), f"{m['time_ms']:.2f}",
                      f"{m['wall_s']:.3f}", j, w, {True: "yes", False: "**WRONG**", None: ""}[m["correct"]]])
    out += harness.markdown_table(["graph", "configuration", "GPU ms", "wall s", "J", "W", "correct"], table,
                                  {2, 3, 4, 5})
    out += ["", *harness.markdown_table(
        ["graph", "best multi-search", "speed-up (GPU time)", "speed-up (wall)", "auto chose", "auto / best"],
        [[g, s["best"], f"{s['speedup_gpu_time']}x", f"{s['speedup_wall']}x", s.get("auto", ""),
          f"{s['auto_over_best']:.2f}" if "auto_over_best" in s else ""] for g, s in summary.items()], {2, 3, 5})]
    if bc:
        out += ["", f"facebook_combined exact betweenness ({bc['sources']:,} sources): {bc['time_ms']:.1f} ms GPU "
                f"(min {bc['min_ms']:.1f}, max {bc['max_ms']:.1f}), {bc['wall_s']:.3f} s wall; under "
                f"{BC_TARGET_MS / 1e3:g} s: {bc['under_target']}; sampled estimate matches networkx: "
                f"{bc['sampled_matches_networkx']}"]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="*", default=DEFAULT_GRAPHS, help=f"default: {', '.join(DEFAULT_GRAPHS)}")
    ap.add_argument("--k", type=int, default=1024, help="sources per graph")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds a method may run before it is extrapolated")
    ap.add_argument("--pilot-steps", type=int, default=8, help="progress steps of a first run (where it may stop)")
    ap.add_argument("--bc", action="store_true", help="also time facebook_combined's exact betweenness")
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results)")
    ap.add_argument("--smoke", action="store_true", help="tiny graphs, 8 sources, under the simulator: a check of "
                    "the script, not a benchmark")
    args = ap.parse_args(argv)
    if not args.graphs and not args.bc:
        args.bc = True
    if args.smoke:
        args.graphs = [g for g in args.graphs if harness.spec(g) and harness.spec(g).kind != "sample"]
        args.k, args.bc = min(args.k, 8), False
    try:
        harness.check_names(args.graphs)
    except harness.UnknownGraph as err:
        ap.error(str(err))
    from explorer import backend
    from explorer.engine import Session
    from explorer.multisearch import choose_threshold

    backend.select("simulator" if args.smoke else "gpu")
    env = harness.environment()
    print(harness.describe(env), flush=True)
    rows, summary = [], {}
    for name in args.graphs:
        t0 = time.perf_counter()
        g = harness.load(name, small=args.smoke)
        sources = pick_sources(g, args.k)
        choice = choose_threshold(g)
        print(f"\n{name}: |V|={g.num_vertices:,} arcs={g.num_arcs:,} k={len(sources)} "
              f"(built in {time.perf_counter() - t0:.1f} s)\n  {choice.reason}", flush=True)
        with Session(g) as s:
            results, agreed = [], None
            for label, method, kw in methods(choice):
                try:
                    m, values = measure(g, sources, label, method, kw, s, args)
                except Exception as exc:  # noqa: BLE001  (one failing method must not hide the others)
                    m, values = {"config": label, "method": method, "error": f"{type(exc).__name__}: {exc}",
                                 "correct": False}, None
                if values is not None and m["correct"]:  # every source: the same as the methods before it
                    m["correct"] = agreed is None or same(values, agreed)
                    agreed = values if agreed is None else agreed
                results.append(m)
                print("  " + _line(m), flush=True)
            base = single_source(g, sources, s, args, agreed)
            print("  " + _line(base), flush=True)
        ok = [m for m in results if "error" not in m and not m["extrapolated"] and m["correct"]]
        best = min((m for m in ok if m["method"] != "auto"), key=lambda m: m["time_ms"], default=None)
        auto = next((m for m in ok if m["method"] == "auto"), None)
        if auto:
            print(f"  {auto['reason']}", flush=True)
        for m in results + [base]:
            m.update(graph=name, vertices=g.num_vertices, arcs=g.num_arcs, k=len(sources))
        rows += results + [base]
        if best:
            summary[name] = {"best": best["config"], "best_ms": best["time_ms"], "single_ms": base["time_ms"],
                             "speedup_gpu_time": round(base["time_ms"] / best["time_ms"], 2),
                             "speedup_wall": round(base["wall_s"] / best["wall_s"], 2), "threshold": choice.reason,
                             **({"auto": auto["chosen"], "auto_over_best": round(auto["time_ms"] / best["time_ms"], 3)}
                                if auto else {})}
            print(f"  best: {best['config']}: {summary[name]['speedup_gpu_time']}x the single-source runs' GPU "
                  f"time, {summary[name]['speedup_wall']}x their wall time", flush=True)
    bc = facebook_bc(args) if args.bc else None
    if bc:
        print(f"\nfacebook_combined exact betweenness: {bc['time_ms']:.1f} ms (wall {bc['wall_s']:.3f} s), "
              f"under {BC_TARGET_MS / 1e3:g} s: {bc['under_target']}; sampled matches networkx: "
              f"{bc['sampled_matches_networkx']}")
    settings = {"k": args.k, "repeats": args.repeats, "budget_s": args.budget, "pilot_steps": args.pilot_steps,
                "summary": summary, "facebook_betweenness": bc}
    harness.write_results(args.out, "multisearch" + ("-smoke" if args.smoke else ""), env, settings, rows,
                          markdown(rows, summary, bc),
                          f"Many searches at once, {env['gpu']}")
    bad = [m for m in rows if m.get("correct") is False] + ([bc] if bc and not bc["sampled_matches_networkx"] else [])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
