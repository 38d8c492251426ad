"""Multi-search on a real GPU (issue 20): k = 1024 searches by every method, against 1024
single-source runs of the best single-source technique, with time and energy; and the exact
betweenness centrality of facebook_combined. Writes benchmarks/results/DATE-GPU-multisearch.{json,md}.

    python benchmarks/bench_multisearch.py                           # everything (tens of minutes)
    python benchmarks/bench_multisearch.py --graphs kron20 --budget 60
    python benchmarks/bench_multisearch.py --graphs --bc               # only facebook's betweenness

Every method computes the closeness centrality of the same k sources (distinct vertices with an
arc, seeded), and is checked against a CPU BFS from the first sources. Times are the sum of the
run's step times (CUDA events: the GPU's work, not set-up or host copies) and the host's wall time
of run_many(...).complete(); each is the median of --repeats runs after a warm-up that compiles the
kernels. Energy is NVML's (explorer.multisearch.energy): the runs are repeated until they add up to
a second or more, so that the counter's resolution does not decide the number.

A method whose run would take longer than --budget seconds is stopped after the progress step that
crosses it (run in --pilot-steps steps) and its time extrapolated linearly from the searches done:
marked "extrapolated" (an upper bound when those searches did not fill the GPU).

Targets (H100): the best multi-search method at least 10x faster than 1024 single-source runs on
Kronecker scale 20 (edge factor 16); exact betweenness of facebook_combined under 1 s.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer import backend, graphs  # noqa: E402
from explorer.api import run_bfs  # noqa: E402
from explorer.engine import Session  # noqa: E402
from explorer.multisearch import choose_threshold, run_many  # noqa: E402
from explorer.multisearch.energy import EnergyMeter, pci_bus_id  # noqa: E402
from explorer.reference import cpu_bfs  # noqa: E402

GRAPHS = {
    "kron20": lambda: graphs.generate("kronecker", scale=20, edge_factor=16, seed=1),
    "grid1000": lambda: graphs.generate("grid2d", rows=1000, cols=1000),
    **{name: (lambda name=name: graphs.sample_graph(name)) for name in graphs.SAMPLE_GRAPHS if name != "bfs4k_fig2"},
}


def methods(choice) -> list[tuple[str, str, dict]]:
    """(label, method, run_many arguments) of every configuration the issue asks for."""
    return [
        ("edge-parallel", "edge-parallel", {}),
        ("work-efficient", "work-efficient", {}),
        ("warp-based", "warp-based", {}),
        ("hybrid T=16", "hybrid", {"T": 16}),
        (f"hybrid T={choice.label} (chosen)", "hybrid", {"T": choice.T}),
        ("bit-parallel 64", "bit-parallel", {"word_bits": 64}),
        ("bit-parallel 32", "bit-parallel", {"word_bits": 32}),
    ]


def pick_sources(g, k: int, seed: int = 1) -> np.ndarray:
    candidates = np.flatnonzero(g.degrees() > 0)
    rng = np.random.default_rng(seed)
    return np.sort(rng.choice(candidates, min(k, candidates.size), replace=False)).astype(np.int32)


def check(g, sources, values, count: int = 4) -> bool:
    """Closeness inputs (sum of distances, vertices reached) of the first sources against a CPU BFS."""
    for i, s in enumerate(sources[:count]):
        d = cpu_bfs(g, int(s))[0]
        reached = d[d > 0]
        if values["total_distance"][i] != reached.sum() or values["reached"][i] != reached.size:
            return False
    return True


def run_once(g, sources, method, kw, session, budget, pilot_steps):
    """One run: (result or None, step ms, wall s, searches done). Stopped past the budget."""
    t0 = time.perf_counter()
    run = run_many(g, g.to_original_many(sources), "closeness", method=method, session=session,
                   steps=pilot_steps if budget else None, **kw)  # run_many takes the graph's own ids
    it = iter(run)
    done, ms = 0, 0.0
    for p in it:
        done, ms = p.searches_done, p.elapsed_ms
        if budget and time.perf_counter() - t0 > budget and done < len(sources):
            it.close()
            return None, ms, time.perf_counter() - t0, done
    return run.result, run.result.time_ms, time.perf_counter() - t0, len(sources)


def measure(g, sources, label, method, kw, session, args) -> dict:
    run_many(g, g.to_original_many(sources[:2]), "closeness", method=method, session=session,
             **kw).complete()  # compile
    k = len(sources)
    repeats = args.repeats
    if method != "bit-parallel":  # MS-BFS finishes its searches together: nothing to extrapolate from
        pilot, ms, wall, done = run_once(g, sources, method, kw, session, args.budget, args.pilot_steps)
        if pilot is None:
            scale = k / max(done, 1)
            return {"config": label, "method": method, "extrapolated": True, "searches_run": done,
                    "time_ms": round(ms * scale, 3), "wall_s": round(wall * scale, 3), "energy_j": None,
                    "watts": None, "correct": None}
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
    return {"config": label, "method": method, "extrapolated": False, "searches_run": k,
            "time_ms": round(statistics.median(times), 3), "wall_s": round(statistics.median(walls), 4),
            "energy_j": round(statistics.mean(joules), 4) if joules else None,
            "watts": round(sum(joules) / energy_s, 1) if joules and energy_s else None,
            "energy_note": r.energy_note, "runs": runs, "plan": r.plan.describe(),
            "correct": check(g, sources, r.values), "T": r.T}


def single_source(g, sources, session, args) -> dict:
    """The best single-source configuration (fastest of a few on 16 sources), then k runs of it."""
    from explorer.techniques.bfs4k import recommend_knobs

    rec, _ = recommend_knobs(graphs.graph_stats(g))
    configs = [("bfs4k recommended (§7)", "bfs4k", {k: getattr(rec, k) for k in ("K1", "K2", "K4", "K5")}),
               ("bfs4k defaults, claim=atomic", "bfs4k", {"claim": "atomic"}),
               ("bfs4k frontier-degree", "bfs4k", {"warp_size_rule": "frontier-degree", "claim": "atomic",
                                                   "dedup": "none"}),
               ("topdown-queue", "topdown-queue", {})]
    trial = []
    for label, tech, knobs in configs:
        try:
            run_bfs(g, g.to_original(int(sources[0])), tech, knobs, instrument=False, session=session).complete()
            t0 = time.perf_counter()
            for s in sources[:16]:
                run_bfs(g, g.to_original(int(s)), tech, knobs, instrument=False, session=session).complete()
            trial.append((time.perf_counter() - t0, label, tech, knobs))
        except Exception as exc:  # a configuration this graph or GPU refuses
            print(f"    single-source {label}: {type(exc).__name__}: {exc}", flush=True)
    _, label, tech, knobs = min(trial)
    meter = EnergyMeter("gpu", pci_bus_id())
    gpu_ms, done = 0.0, 0
    t0 = time.perf_counter()
    meter.begin()
    for s in sources:
        r = run_bfs(g, g.to_original(int(s)), tech, knobs, instrument=False, session=session).complete()
        gpu_ms += r.elapsed_ms
        done += 1
        if args.budget and time.perf_counter() - t0 > args.budget and done < len(sources):
            break
    meter.end()
    wall = time.perf_counter() - t0
    reading = meter.take()
    scale = len(sources) / done
    return {"config": f"{len(sources)} single-source runs: {label}", "method": tech, "knobs": knobs,
            "extrapolated": done < len(sources), "searches_run": done, "time_ms": round(gpu_ms * scale, 3),
            "wall_s": round(wall * scale, 4), "energy_j": None if reading is None else round(reading.joules * scale, 4),
            "watts": None if reading is None else round(reading.watts, 1), "energy_note": meter.note,
            "correct": True, "trial_s_per_16": {lbl: round(t, 4) for t, lbl, _, _ in trial}}


def facebook_bc(args) -> dict:
    """Exact betweenness of facebook_combined (every vertex a source), timed; checked against
    networkx's sampled estimate with the same 64 sources (networkx's exact one takes minutes)."""
    import random

    import networkx as nx

    g = graphs.sample_graph("facebook_combined")
    with Session(g) as s:
        run_many(g, [0, 1], "betweenness", session=s, T="auto").complete()  # compile
        times, walls = [], []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            r = run_many(g, "all", "betweenness", session=s, T="auto").complete()
            walls.append(time.perf_counter() - t0)
            times.append(r.time_ms)
        G = g.to_networkx()
        sample = random.Random(3).sample(list(G.nodes()), 64)
        ref = nx.betweenness_centrality(G, k=64, seed=random.Random(3))
        est = run_many(g, sample, "betweenness", session=s).complete().values["betweenness"]
    ok = bool(np.allclose(est, [ref[v] for v in range(g.num_vertices)]))
    return {"graph": "facebook_combined", "sources": g.num_vertices, "time_ms": round(statistics.median(times), 3),
            "wall_s": round(statistics.median(walls), 4), "energy_j": r.energy_j, "energy_note": r.energy_note,
            "T": r.T, "threshold": r.threshold.reason if r.threshold else None, "plan": r.plan.describe(),
            "sampled_matches_networkx": ok, "top5": r.ranked(top=5), "target_ms": 1000.0,
            "meets_target": statistics.median(times) < 1000.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="*", default=list(GRAPHS), help=f"subset of {', '.join(GRAPHS)}")
    ap.add_argument("--k", type=int, default=1024, help="sources per graph")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=60.0, help="seconds a method may run before it is extrapolated")
    ap.add_argument("--pilot-steps", type=int, default=8, help="progress steps of a first run (where it may stop)")
    ap.add_argument("--bc", action="store_true", help="also time facebook_combined's exact betweenness")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = ap.parse_args(argv)
    if not args.graphs and not args.bc:
        args.bc = True
    backend.select("gpu")
    env = backend.current().as_dict()
    print(json.dumps(env, indent=1), flush=True)
    rows, summary = [], {}
    for name in args.graphs:
        t0 = time.perf_counter()
        g = GRAPHS[name]()
        sources = pick_sources(g, args.k)
        choice = choose_threshold(g)
        print(f"\n{name}: |V|={g.num_vertices:,} arcs={g.num_arcs:,} k={len(sources)} "
              f"(built in {time.perf_counter() - t0:.1f} s)\n  {choice.reason}", flush=True)
        with Session(g) as s:
            results = []
            for label, method, kw in methods(choice):
                try:
                    m = measure(g, sources, label, method, kw, s, args)
                except Exception as exc:  # one failing method must not hide the others
                    m = {"config": label, "method": method, "error": f"{type(exc).__name__}: {exc}"}
                results.append(m)
                print("  " + _line(m), flush=True)
            base = single_source(g, sources, s, args)
            print("  " + _line(base), flush=True)
        ok = [m for m in results if "error" not in m and not m["extrapolated"]]
        best = min(ok, key=lambda m: m["time_ms"]) if ok else None
        for m in results + [base]:
            m.update(graph=name, vertices=g.num_vertices, arcs=g.num_arcs, k=len(sources))
        rows += results + [base]
        if best:
            summary[name] = {"best": best["config"], "best_ms": best["time_ms"], "single_ms": base["time_ms"],
                             "speedup_gpu_time": round(base["time_ms"] / best["time_ms"], 2),
                             "speedup_wall": round(base["wall_s"] / best["wall_s"], 2),
                             "threshold": choice.reason}
            print(f"  best: {best['config']}: {summary[name]['speedup_gpu_time']}x the single-source runs' GPU "
                  f"time, {summary[name]['speedup_wall']}x their wall time", flush=True)
    bc = facebook_bc(args) if args.bc else None
    if bc:
        print(f"\nfacebook_combined exact betweenness: {bc['time_ms']:.1f} ms (wall {bc['wall_s']:.3f} s), "
              f"target < 1 s: {bc['meets_target']}; sampled matches networkx: {bc['sampled_matches_networkx']}")
    args.out.mkdir(parents=True, exist_ok=True)
    gpu = env.get("name", "gpu").replace(" ", "_")
    stem = args.out / f"{datetime.date.today().isoformat()}-{gpu}-multisearch"
    stem.with_suffix(".json").write_text(json.dumps({"environment": env, "results": rows, "summary": summary,
                                                     "facebook_betweenness": bc}, indent=1, default=str))
    stem.with_suffix(".md").write_text(_markdown(env, rows, summary, bc))
    print(f"\nwrote {stem}.json and .md")
    return 0 if all(m.get("correct") is not False and "error" not in m for m in rows) else 1


def _line(m: dict) -> str:
    if "error" in m:
        return f"{m['config']:34s} FAILED: {m['error']}"
    e = f"{m['energy_j']:9.2f} J {m['watts'] or 0:6.0f} W" if m.get("energy_j") is not None else "energy n/a"
    ex = f"  (extrapolated from {m['searches_run']})" if m["extrapolated"] else ""
    return f"{m['config']:34s} {m['time_ms']:11.2f} ms  wall {m['wall_s']:8.3f} s  {e}  ok={m['correct']}{ex}"


def _markdown(env, rows, summary, bc) -> str:
    out = [f"# Multi-search benchmark on {env.get('name')}", "", f"date {datetime.date.today()}, "
           f"versions {env.get('versions')}", "",
           "Closeness of k sources by every method; GPU time (sum of step times, CUDA events), wall time, "
           "energy (NVML, whole board). 'extrapolated': stopped at the time budget.", "",
           "| graph | configuration | GPU ms | wall s | J | W | correct |", "|---|---|---:|---:|---:|---:|---|"]
    for m in rows:
        if "error" in m:
            out.append(f"| {m['graph']} | {m['config']} | failed: {m['error']} | | | | |")
            continue
        ex = " (extrapolated)" if m["extrapolated"] else ""
        j = "" if m.get("energy_j") is None else f"{m['energy_j']:.2f}"
        w = "" if m.get("watts") is None else f"{m['watts']:.0f}"
        out.append(f"| {m['graph']} | {m['config']}{ex} | {m['time_ms']:.2f} | {m['wall_s']:.3f} | {j} | {w} | "
                   f"{m['correct']} |")
    out += ["", "| graph | best multi-search | speed-up (GPU time) | speed-up (wall) |", "|---|---|---:|---:|"]
    out += [f"| {g} | {s['best']} | {s['speedup_gpu_time']}x | {s['speedup_wall']}x |" for g, s in summary.items()]
    if bc:
        out += ["", f"facebook_combined exact betweenness ({bc['sources']:,} sources): {bc['time_ms']:.1f} ms GPU, "
                f"{bc['wall_s']:.3f} s wall; under 1 s: {bc['meets_target']}; sampled estimate matches networkx: "
                f"{bc['sampled_matches_networkx']}"]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
