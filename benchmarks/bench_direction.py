"""Direction-optimizing BFS on a real GPU (issue 18): the speed targets, the per-level cost, and
outside yardsticks. GPU only; about 5 minutes on an H100 from a fresh process (kernels compiled).

    python benchmarks/bench_direction.py --out benchmarks/results            # everything
    python benchmarks/bench_direction.py --sections kron roots --repeats 5   # a part

Sections (each prints its rows as it goes; all are written to OUT/DATE-GPU-direction.{json,md}):
  kron      Kronecker scale 22, edge factor 16, from the max-degree vertex: direction-optimizing,
            bfs4k tuned (bench_bfs.TUNED), bottom-up, hybrid. Target: direction-optimizing <= 1.0 ms.
  roots     the same graph, 64 random roots of non-zero degree (Graph500's method: each search
            timed once, harmonic mean of TEPS), direction-optimizing and bfs4k tuned; every search
            validated outside its timed run. Target: >= 40 GTEPS.
  small     facebook_combined, Wiki-Vote and p2p-Gnutella31 (symmetrized) from the max-degree
            vertex, several configurations. Targets with the best: 0.35, 0.2 and 1.0 ms.
  long      luxembourg_osm and the 1000 x 1000 grid (from its centre): direction-optimizing with
            the top-down knobs of the best BFS-4K settings, against those. Target: within 5 %.
  perlevel  the cost of a level on luxembourg_osm (952 levels): elapsed / levels for a launch and a
            read-back a level (topdown-queue, hybrid: direction-optimizing's structure before this
            change, bfs4k multi-block only) against direction-optimizing's grid alone and with the
            single block.
  cpu       cpu-topdown, cpu-bottom-up, cpu-hybrid against scipy.sparse.csgraph.breadth_first_order
            on this machine's CPU (core count recorded).
  networkx  networkx.bfs_layers on the graphs of at most NX_MAX_ARCS arcs.

Times are CUDA-event times, `elapsed` from the first launch to the last level's completion (host
round trips between steps included), median of --repeats runs after a warm-up run on the same
Session; every result is compared with the CPU reference and the Graph500 validator
(explorer.reference.check_result), outside the timed runs.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bfs import TUNED, TUNED_CLUSTER, environment, source_for  # noqa: E402

from explorer import backend, graphs  # noqa: E402
from explorer.api import run_bfs  # noqa: E402
from explorer.engine import Session  # noqa: E402
from explorer.reference import check_result, cpu_bfs  # noqa: E402

SECTIONS = ("kron", "roots", "small", "long", "perlevel", "cpu", "networkx")
NX_MAX_ARCS = 500_000  # networkx.bfs_layers only on graphs this small (it takes seconds a million arcs)
ROOTS = 64
SEED = 18  # the random roots (issue 18)

DO = "direction-optimizing"
# Direction-optimizing's top-down half with the best BFS-4K single-block settings of each long graph
# (bench_bfs.TUNED / TUNED_CLUSTER; luxembourg_osm: one block of 512 threads, the fourth session's best).
LONG = {
    "grid1000": [("bfs4k tuned, cluster form", "bfs4k", TUNED_CLUSTER["grid1000"]),
                 ("bfs4k tuned", "bfs4k", TUNED["grid1000"])],
    "luxembourg_osm": [("bfs4k tuned, one block of 512", "bfs4k", {**TUNED["grid1000"], "single_block_threads": 512,
                                                                  "K5": 4}),
                       ("bfs4k tuned", "bfs4k", TUNED["grid1000"])],
}
DO_KEYS = ("K1", "K4", "K5", "K7", "single_block_threads", "cluster", "visited")
SMALL = {
    "facebook_combined": {},
    "Wiki-Vote": {"symmetrize": True},
    "p2p-Gnutella31": {"symmetrize": True},
}
# Kernels are compiled per static knob set: these share BFS-4K's (claim=atomic, dedup=none) single
# block of 1024 threads and its cluster form of 16 x 256 with the long graphs' settings.
SMALL_CONFIGS = [
    (DO + " defaults", DO, {}),
    (DO + ", K5=4", DO, {"K5": 4}),
    (DO + ", one block up to 8,192 vertices (K5=8)", DO, {"K5": 8}),
    (DO + ", cluster 16 x 256", DO, {"K5": 1, "cluster": 16, "single_block_threads": 256, "visited": "shared",
                                     "K1": 2}),
    ("bfs4k one block up to 8,192 vertices (K5=8)", "bfs4k", {"claim": "atomic", "dedup": "none", "K5": 8}),
    ("bfs4k cluster 16 x 256", "bfs4k", {"claim": "atomic", "dedup": "none", "K5": 1, "K1": 2, "cluster": 16,
                                         "single_block_threads": 256, "visited": "shared"}),
]


def load(name: str):
    if name == "kron22":
        return graphs.generate("kronecker", scale=22, edge_factor=16, seed=1)
    if name == "grid1000":
        return graphs.generate("grid2d", rows=1000, cols=1000)
    return graphs.sample_graph(name, **SMALL.get(name, {}))


def timed(g, source, technique, knobs, repeats, ref, session=None):
    """Median of `repeats` uninstrumented runs after a warm-up on one Session; every run checked."""
    own = session is None
    s = Session(g) if own else session
    own_id = g.to_original(source)  # run_bfs takes the graph's own ids; `source` is a position 0..n-1
    try:
        run_bfs(g, own_id, technique, knobs, instrument=False, session=s).complete()
        runs = [run_bfs(g, own_id, technique, knobs, instrument=False, session=s).complete()
                for _ in range(repeats)]
    finally:
        if own:
            s.close()
    bad = [check_result(g, source, r.distances, r.parents, expected=ref) for r in runs]
    bad = [b.message for b in bad if not b.ok]
    el = statistics.median(r.elapsed_ms for r in runs)
    r0 = runs[0]
    return {
        "technique": technique, "knobs": knobs, "elapsed_ms": round(el, 4),
        "elapsed_ms_all": [round(r.elapsed_ms, 4) for r in runs],
        "kernels_ms": round(statistics.median(r.total_ms for r in runs), 4),
        "gteps": round(r0.traversed_edges / (el * 1e6), 3), "levels": r0.num_levels,
        "launches": sum(lv.launches for lv in r0.levels),
        "steps": "".join({"multi-block": "M", "single-block": "S", "cluster": "C", "cpu": "P"}[lv.kernel.value] + (
            "b" if lv.direction.value == "bottom-up" else "") for lv in r0.levels)[:80],
        "correct": not bad, "errors": bad[:1],
    }


def row(section, graph, label, m, **extra) -> dict:
    out = {"section": section, "graph": graph, "config": label, **m, **extra}
    print(f"  {label:52s} {m.get('elapsed_ms', float('nan')):9.3f} ms  {m.get('gteps', 0):8.3f} GTEPS  "
          f"levels {m.get('levels', 0):5}  launches {m.get('launches', 0):5}  ok={m.get('correct')}  "
          f"{m.get('steps', '')[:30]}", flush=True)
    return out


def section_kron(g, name, source, ref, repeats):
    rows = []
    with Session(g) as s:
        for label, tech, knobs in [(DO + " defaults", DO, {}),
                                   ("bfs4k tuned (bench_bfs.TUNED)", "bfs4k", TUNED["kron22"]),
                                   ("bottom-up", "bottom-up", {}), ("hybrid", "hybrid", {})]:
            rows.append(row("kron", name, label, timed(g, source, tech, knobs, repeats, ref, s), source=source))
    return rows


def section_roots(g, name, count):
    rng = np.random.default_rng(SEED)
    candidates = np.flatnonzero(g.degrees() > 0)
    roots = [int(r) for r in rng.choice(candidates, size=count, replace=False)]
    rows = []
    with Session(g) as s:
        per = {DO: [], "bfs4k": []}
        for tech, knobs in ((DO, {}), ("bfs4k", TUNED["kron22"])):
            run_bfs(g, g.to_original(roots[0]), tech, knobs, instrument=False, session=s).complete()  # compile, warm up
        for i, root in enumerate(roots):
            ref = cpu_bfs(g, root)[0]
            for tech, knobs in ((DO, {}), ("bfs4k", TUNED["kron22"])):
                r = run_bfs(g, g.to_original(root), tech, knobs, instrument=False, session=s).complete()
                rep = check_result(g, root, r.distances, r.parents, expected=ref)
                per[tech].append({"root": root, "elapsed_ms": round(r.elapsed_ms, 4), "edges": r.traversed_edges,
                                  "teps": r.traversed_edges / (r.elapsed_ms * 1e-3), "levels": r.num_levels,
                                  "correct": rep.ok, "error": None if rep.ok else rep.message})
            if i % 16 == 15:
                print(f"    {i + 1} roots", flush=True)
    for tech, label in ((DO, DO + " defaults"), ("bfs4k", "bfs4k tuned")):
        runs = per[tech]
        teps = np.array([x["teps"] for x in runs])
        m = {"technique": tech, "roots": len(runs), "seed": SEED,
             "gteps": round(float(len(teps) / np.sum(1.0 / teps)) / 1e9, 3),  # Graph500: harmonic mean
             "elapsed_ms": round(statistics.median(x["elapsed_ms"] for x in runs), 4),
             "elapsed_ms_max": max(x["elapsed_ms"] for x in runs), "levels": max(x["levels"] for x in runs),
             "correct": all(x["correct"] for x in runs), "errors": [x["error"] for x in runs if x["error"]][:1],
             "per_root": runs}
        rows.append(row("roots", name, label + f" ({len(runs)} roots, harmonic mean GTEPS, median ms)", m))
    return rows


def section_configs(section, g, name, source, ref, configs, repeats):
    rows = []
    with Session(g) as s:
        for label, tech, knobs in configs:
            try:
                m = timed(g, source, tech, knobs, repeats, ref, s)
            except Exception as exc:  # one failing configuration must not hide the others
                print(f"  {label:52s} FAILED: {type(exc).__name__}: {exc}", flush=True)
                rows.append({"section": section, "graph": name, "config": label,
                             "error": f"{type(exc).__name__}: {exc}"})
                continue
            rows.append(row(section, name, label, m, source=source))
    return rows


def long_configs(name):
    configs = []
    cc = float(backend.current().as_dict().get("compute_capability", 0))
    for label, tech, knobs in LONG[name]:
        if knobs.get("cluster", 1) > 1 and cc < 9.0:
            continue
        configs.append((label, tech, knobs))
        configs.append((f"{DO}, top-down as '{label}'", DO, {k: v for k, v in knobs.items() if k in DO_KEYS}))
    return configs


def section_perlevel(g, name, source, ref, repeats):
    configs = [("topdown-queue (a launch and a read-back a level)", "topdown-queue", {}),
               ("hybrid (a launch and a read-back a level)", "hybrid", {}),
               ("bfs4k multi-block only (K5=0, claim=atomic)", "bfs4k", {"K5": 0, "claim": "atomic", "dedup": "none"}),
               (DO + " grid only (K5=0, one launch per 256 levels)", DO, {"K5": 0}),
               (DO + " defaults (single block)", DO, {})]
    rows = section_configs("perlevel", g, name, source, ref, configs, repeats)
    for r in rows:
        if "elapsed_ms" in r:
            r["us_per_level"] = round(1e3 * r["elapsed_ms"] / r["levels"], 2)
            print(f"    {r['config']:52s} {r['us_per_level']:8.2f} us a level", flush=True)
    return rows


def section_cpu(g, name, source, ref, repeats):
    from scipy.sparse.csgraph import breadth_first_order

    from explorer.techniques.cpu_multicore import CORES

    rows = []
    for tech in ("cpu-topdown", "cpu-bottom-up", "cpu-hybrid"):
        m = timed(g, source, tech, {}, repeats, ref)
        rows.append(row("cpu", name, f"{tech} ({CORES} threads)", m, cores=CORES))
    a = g.to_scipy()
    times = []
    for i in range(repeats + 1):
        t = time.perf_counter()
        order, pred = breadth_first_order(a, source, directed=bool(g.directed), return_predecessors=True)
        if i:
            times.append((time.perf_counter() - t) * 1e3)
    ok = len(order) == int((ref >= 0).sum())
    el = statistics.median(times)
    rows.append(row("cpu", name, "scipy.sparse.csgraph.breadth_first_order (1 thread)",
                    {"technique": "scipy", "elapsed_ms": round(el, 3), "elapsed_ms_all": [round(t, 3) for t in times],
                     "levels": int(ref.max()) + 1, "correct": ok, "cores": os.cpu_count()}))
    return rows


def section_networkx(g, name, source, ref, repeats):
    import networkx as nx

    if g.num_arcs > NX_MAX_ARCS:
        return []
    G = g.to_networkx()
    times = []
    for i in range(min(repeats, 3) + 1):
        t = time.perf_counter()
        layers = list(nx.bfs_layers(G, [source]))
        if i:
            times.append((time.perf_counter() - t) * 1e3)
    ok = [len(x) for x in layers] == np.bincount(ref[ref >= 0]).tolist()
    return [row("networkx", name, f"networkx {nx.__version__} bfs_layers", {
        "technique": "networkx", "elapsed_ms": round(statistics.median(times), 3), "levels": len(layers),
        "correct": ok})]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sections", nargs="*", default=list(SECTIONS), choices=SECTIONS)
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--roots", type=int, default=ROOTS, help="random roots of the roots section (Graph500: 64)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = ap.parse_args(argv)

    backend.select("gpu")
    env = environment()
    env["cpu_cores"] = os.cpu_count()
    print(json.dumps(env, indent=1), flush=True)
    t_start = time.perf_counter()
    rows = []
    wanted = set(args.sections)
    plan = []  # (graph, sections on it)
    if wanted & {"kron", "roots", "cpu"}:
        plan.append(("kron22", [s for s in ("kron", "roots", "cpu") if s in wanted]))
    if wanted & {"small", "cpu", "networkx"}:
        for name in SMALL:  # the CPU section on facebook_combined only
            secs = [s for s in ("small", "cpu", "networkx") if s in wanted]
            plan.append((name, [s for s in secs if s != "cpu" or name == "facebook_combined"]))
    if wanted & {"long", "perlevel", "cpu", "networkx"}:
        plan.append(("luxembourg_osm", [s for s in ("long", "perlevel", "cpu", "networkx") if s in wanted]))
        if "long" in wanted:
            plan.append(("grid1000", ["long"]))
    for name, sections in plan:
        if not sections:
            continue
        t0 = time.perf_counter()
        g = load(name)
        source = source_for(g, name)
        ref = cpu_bfs(g, source)[0]
        print(f"\n{name}: |V|={g.num_vertices:,} arcs={g.num_arcs:,} source={source} levels={int(ref.max()) + 1} "
              f"(loaded in {time.perf_counter() - t0:.1f} s; {time.perf_counter() - t_start:.0f} s so far)", flush=True)
        for sec in sections:
            print(f" [{sec}]", flush=True)
            if sec == "kron":
                rows += section_kron(g, name, source, ref, args.repeats)
            elif sec == "roots":
                rows += section_roots(g, name, args.roots)
            elif sec == "small":
                rows += section_configs("small", g, name, source, ref, SMALL_CONFIGS, args.repeats)
            elif sec == "long":
                rows += section_configs("long", g, name, source, ref, long_configs(name), args.repeats)
            elif sec == "perlevel":
                rows += section_perlevel(g, name, source, ref, args.repeats)
            elif sec == "cpu":
                rows += section_cpu(g, name, source, ref, min(args.repeats, 5))
            elif sec == "networkx":
                rows += section_networkx(g, name, source, ref, args.repeats)
    env["bench_seconds"] = round(time.perf_counter() - t_start, 1)

    args.out.mkdir(parents=True, exist_ok=True)
    gpu = env.get("name", "gpu").replace(" ", "_")
    stamp = datetime.date.today().isoformat()
    base = args.out / f"{stamp}-{gpu}-direction"
    base.with_suffix(".json").write_text(json.dumps({"environment": env, "results": rows}, indent=1, default=str))
    lines = [f"# Direction-optimizing benchmark on {env.get('name')} ({env.get('nvidia_smi')})", "",
             f"date {env['date']}, versions {env.get('versions')}, CPU cores {env['cpu_cores']}, "
             f"{env['bench_seconds']} s", "",
             "| section | graph | configuration | elapsed ms | GTEPS | levels | launches | µs a level | correct |",
             "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for m in rows:
        if "error" in m:
            lines.append(f"| {m['section']} | {m['graph']} | {m['config']} | failed: {m['error']} | | | | | |")
            continue
        lines.append(f"| {m['section']} | {m['graph']} | {m['config']} | {m.get('elapsed_ms', '')} | "
                     f"{m.get('gteps', '')} | {m.get('levels', '')} | {m.get('launches', '')} | "
                     f"{m.get('us_per_level', '')} | {m.get('correct')} |")
    base.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"\nwrote {base}.json and .md in {env['bench_seconds']} s")
    return 0 if all(m.get("correct") for m in rows if "error" not in m) and not any("error" in m for m in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
