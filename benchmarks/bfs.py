"""Named sets of BFS configurations on named graphs, each timed and checked on one harness.

    python3 -m benchmarks.bfs targets                 # the headline configurations
    python3 -m benchmarks.bfs direction roots         # several sets, one result file each
    python3 -m benchmarks.bfs levels --graphs luxembourg_osm --before OLD/levels.json
    python3 -m benchmarks.bfs targets --smoke         # the script on tiny graphs, simulator

Sets:
  targets    the fastest known settings (benchmarks/README.md) against each technique's defaults,
             with the per-level instrumentation's cost: Kronecker 22, the 1000² grid, luxembourg_osm
  ladder     BFS-4K's features switched on one at a time (the paper's Fig. 14)
  direction  direction-optimizing against BFS-4K tuned, bottom-up and hybrid on Kronecker 22; its
             settings on the small social graphs; on the long graphs with the top-down knobs of
             BFS-4K's best settings, against those
  roots      Graph500's method on Kronecker 22: 64 random roots of non-zero degree, each search
             timed once, the harmonic mean of their TEPS
  luo        Luo et al.'s hierarchical kernels, each layer arrangement, on the 3-D and 2-D grids,
             with the time of each layer's levels
  levels     the cost of a level (elapsed / levels) where levels are small: a launch and a
             read-back a level against many levels a launch
  cpu        the multicore CPU techniques against scipy's breadth_first_order and networkx's
             bfs_layers (graphs of at most 500,000 arcs) on this host's CPU

Each configuration: the median of --repeats uninstrumented runs after a warm-up, on one Session a
graph, with the spread; every result checked (benchmarks.harness.measure). Writes
results/<GPU>/<set>.{json,md}; --before OLD.json adds another checkout's medians beside these
(run both on the same GPU kind, in one call where possible).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from benchmarks import harness


class Config(NamedTuple):
    label: str
    technique: str
    knobs: dict | Callable = {}  # or knobs(graph): advice for that graph
    min_cc: float | None = None  # the compute capability it needs (thread-block clusters: 9.0)


DO = "direction-optimizing"

# The fastest settings sweep_knobs found for the two target graphs (H100). warp_size_rule and
# visited are this project's extensions of the paper (see explorer.techniques.bfs4k).
TUNED = {
    "kron22": {"warp_size_rule": "frontier-degree", "claim": "atomic", "dedup": "none"},
    "grid1000": {"K1": 1, "K4": 0, "K5": 2, "claim": "atomic", "dedup": "none", "K7": 0, "visited": "shared"},
}
# The single-block kernel's cluster form (knob cluster, compute capability 9.0+), tuned the same way.
TUNED_CLUSTER = {"K1": 2, "K4": 0, "K5": 1, "claim": "atomic", "dedup": "none", "K7": 0, "visited": "shared",
                 "cluster": 16, "single_block_threads": 256}
# luxembourg_osm: the grid's settings with one block of 512 threads (its frontiers hold about a hundred).
TUNED_ROAD = {**TUNED["grid1000"], "single_block_threads": 512, "K5": 4}


def recommended(g) -> dict:
    """BFS-4K §7's rules of thumb for this graph."""
    from explorer.techniques.bfs4k import recommend_knobs

    return recommend_knobs(g)[0].as_dict()


BASELINES = [Config("topdown-queue", "topdown-queue"), Config("bfs4k defaults", "bfs4k"),
             Config("bfs4k recommended (§7)", "bfs4k", recommended),
             Config("bfs4k defaults, claim=atomic", "bfs4k", {"claim": "atomic"})]

# BFS-4K's features switched on one at a time (the paper's Fig. 14): each row adds one.
LADDER = [
    Config("virtual warps (dynamic, K1=4), multi-block only", "bfs4k", {"K4": 0, "K2": 0, "K5": 0, "K7": 0,
                                                                        "dedup": "none"}),
    Config("+ edge-discover (K4=2)", "bfs4k", {"K4": 2, "K2": 0, "K5": 0, "K7": 0, "dedup": "none"}),
    Config("+ heavy vertices (K2=0.15 %)", "bfs4k", {"K4": 2, "K5": 0, "K7": 0, "dedup": "none"}),
    Config("+ single-block kernel (K5=1)", "bfs4k", {"K4": 2, "K7": 0, "dedup": "none"}),
    Config("+ coalesced writes (K7=10)", "bfs4k", {"K4": 2, "dedup": "none"}),
    Config("+ hash64 duplicate detection", "bfs4k", {"K4": 2}),
]

# Direction-optimizing's knobs that set its top-down half (the single block and its cluster form).
DO_KEYS = ("K1", "K4", "K5", "K7", "single_block_threads", "cluster", "visited")


def top_down_as(label: str, knobs: dict, min_cc=None) -> list[Config]:
    """BFS-4K with `knobs`, and direction-optimizing with the same top-down settings."""
    return [Config(label, "bfs4k", knobs, min_cc),
            Config(f"{DO}, top-down as '{label}'", DO, {k: v for k, v in knobs.items() if k in DO_KEYS}, min_cc)]


# Kernels are compiled per static knob set: these share BFS-4K's (claim=atomic, dedup=none) single
# block of 1024 threads and its cluster form of 16 x 256 with the long graphs' settings.
SMALL = [Config(DO + " defaults", DO), Config(DO + ", K5=4", DO, {"K5": 4}),
         Config(DO + ", one block up to 8,192 vertices (K5=8)", DO, {"K5": 8}),
         Config(DO + ", cluster 16 x 256", DO, {"K5": 1, "cluster": 16, "single_block_threads": 256,
                                                "visited": "shared", "K1": 2}, 9.0),
         Config("bfs4k one block up to 8,192 vertices (K5=8)", "bfs4k", {"claim": "atomic", "dedup": "none", "K5": 8}),
         Config("bfs4k cluster 16 x 256", "bfs4k", {"claim": "atomic", "dedup": "none", "K5": 1, "K1": 2,
                                                    "cluster": 16, "single_block_threads": 256,
                                                    "visited": "shared"}, 9.0)]

LUO = [Config("luo-hierarchical defaults (block <= 512, grid <= its threads)", "luo-hierarchical"),
       Config("luo-hierarchical, grid layer only (block_threshold=0)", "luo-hierarchical", {"block_threshold": 0}),
       Config("luo-hierarchical, a launch a level (block_threshold=0, grid_threshold=1)", "luo-hierarchical",
              {"block_threshold": 0, "grid_threshold": 1}),
       Config("luo-hierarchical, one block while |F| <= 4096 (block_threads=1024)", "luo-hierarchical",
              {"block_threads": 1024, "block_threshold": 4096})]

LEVEL_COST = [Config("bfs4k multi-block only, claim=atomic, dedup=none", "bfs4k", {"K5": 0, "claim": "atomic",
                                                                                   "dedup": "none"}),
              Config("bfs4k multi-block only, the paper's claim and hash64", "bfs4k", {"K5": 0}),
              Config("bfs4k defaults (single block)", "bfs4k")]
PER_LEVEL = [Config("topdown-queue (a launch and a read-back a level)", "topdown-queue"),
             Config("hybrid (a launch and a read-back a level)", "hybrid"),
             *LEVEL_COST,
             Config(DO + " grid only (K5=0, 256 levels a launch)", DO, {"K5": 0}),
             Config(DO + " defaults (single block)", DO)]

CPU = [Config(t, t) for t in ("cpu-topdown", "cpu-bottom-up", "cpu-hybrid")]
NX_MAX_ARCS = 500_000  # networkx.bfs_layers only on graphs this small (seconds a million arcs)
ROOTS, ROOTS_SEED = 64, 18

#: set -> [(graph, configurations)]
SETS: dict[str, list[tuple[str, list[Config]]]] = {
    "targets": [
        ("kron22", [Config(DO + " defaults", DO), Config("bfs4k tuned", "bfs4k", TUNED["kron22"]), *BASELINES]),
        ("grid1000", [Config("bfs4k tuned, cluster form (16 x 256)", "bfs4k", TUNED_CLUSTER, 9.0),
                      Config("bfs4k tuned, one block", "bfs4k", TUNED["grid1000"]),
                      *LUO[:2], *BASELINES]),
        ("luxembourg_osm", [LUO[0], Config("bfs4k tuned, one block of 512", "bfs4k", TUNED_ROAD),
                            Config("bfs4k, one block (K5=1)", "bfs4k", {"K5": 1}), Config(DO + " defaults", DO),
                            *BASELINES]),
    ],
    "ladder": [(g, LADDER) for g in ("kron22", "grid1000", "delaunay_n16", "luxembourg_osm")],
    "direction": [
        ("kron22", [Config(DO + " defaults", DO), Config("bfs4k tuned", "bfs4k", TUNED["kron22"]),
                    Config("bottom-up", "bottom-up"), Config("hybrid", "hybrid")]),
        *[(g, SMALL) for g in ("facebook_combined", "Wiki-Vote", "p2p-Gnutella31")],
        ("luxembourg_osm", [*top_down_as("bfs4k tuned, one block of 512", TUNED_ROAD),
                            *top_down_as("bfs4k tuned", TUNED["grid1000"])]),
        ("grid1000", [*top_down_as("bfs4k tuned, cluster form", TUNED_CLUSTER, 9.0),
                      *top_down_as("bfs4k tuned", TUNED["grid1000"])]),
    ],
    "roots": [("kron22", [Config(DO + " defaults", DO), Config("bfs4k tuned", "bfs4k", TUNED["kron22"])])],
    "luo": [("grid3d", LUO), ("grid1000", LUO)],
    "levels": [("luxembourg_osm", PER_LEVEL),
               *[(g, LEVEL_COST) for g in ("p2p-Gnutella31", "Wiki-Vote", "facebook_combined", "kron20")]],
    "cpu": [(g, CPU) for g in ("kron22", "facebook_combined", "luxembourg_osm")],
}


def layer_times(results) -> dict:
    """Luo's kernels: the levels each layer ran and the median time of its levels."""
    from collections import Counter

    layers = Counter(lv.layer for lv in results[0].levels)
    return {"layer_levels": dict(layers),
            "layer_ms": {k: round(statistics.median(sum(lv.time_ms for lv in r.levels if lv.layer == k)
                                                    for r in results), 4) for k in layers}}


def per_level(m: harness.Measurement) -> None:
    if m.median_ms is not None and m.levels:
        m.extra["us_per_level"] = round(1e3 * m.median_ms / m.levels, 2)


def baselines(g, source, expected, repeats) -> list[harness.Timed]:
    """scipy's breadth_first_order (one thread, its input checks included) and networkx's
    bfs_layers on small graphs, each checked against the CPU reference."""
    out = [harness.scipy_bfs(g, source, expected, repeats)]
    if g.num_arcs <= NX_MAX_ARCS:
        import networkx as nx

        G = g.to_networkx()
        times, layers = harness.time_call(lambda: list(nx.bfs_layers(G, [source])), min(repeats, 3))
        d = np.full(g.num_vertices, -1, np.int32)
        for level, layer in enumerate(layers):
            d[list(layer)] = level
        out.append(harness.Timed(f"networkx {nx.__version__} bfs_layers", times, harness.check_distances(expected, d)))
    return out


def run_set(name: str, args, env) -> tuple[list[dict], list[str]]:
    from explorer.engine import Session

    cc = float(env["compute_capability"]) if env.get("compute_capability") else None
    rows = []
    for graph, configs in SETS[name]:
        if args.graphs and graph not in args.graphs:
            continue
        t0 = time.perf_counter()
        g = harness.load(graph, small=args.smoke)
        source = harness.source_of(graph, g, small=args.smoke)
        expected = harness.reference(g, source)
        print(f"\n{graph}: |V|={g.num_vertices:,} arcs={g.num_arcs:,} source={source} levels={int(expected.max()) + 1} "
              f"(built in {time.perf_counter() - t0:.1f} s)", flush=True)
        ms = []
        with Session(g) as session:
            if name == "roots":
                candidates = np.flatnonzero(g.degrees() > 0)
                rng = np.random.default_rng(ROOTS_SEED)
                roots = [int(r) for r in rng.choice(candidates, size=min(args.roots, candidates.size), replace=False)]
            plan = []
            for c in configs:
                knobs = c.knobs(g) if callable(c.knobs) else dict(c.knobs)
                if args.smoke:
                    from explorer.techniques import implementation

                    knobs = {**knobs, **implementation(c.technique).simulator_knobs}
                plan.append((c, knobs))
            if name == "roots":
                found = harness.measure_roots(g, roots, [(c.label, c.technique, k) for c, k in plan], session=session)
            for i, (c, knobs) in enumerate(plan):
                if c.min_cc and cc is not None and cc < c.min_cc:
                    m = harness.Measurement(c.label, c.technique, knobs, skipped=f"needs compute capability {c.min_cc}")
                elif name == "roots":
                    m = found[i]
                else:
                    m = harness.measure(g, source, c.technique, knobs, label=c.label, repeats=args.repeats,
                                        session=session if not c.technique.startswith("cpu") else None,
                                        expected=expected, instrumented=(name == "targets"),
                                        summarize=layer_times if name == "luo" else None)
                if name == "levels":
                    per_level(m)
                ms.append(m)
                print(f"  {c.label:66s} {line(m)}", flush=True)
        rows += [{"graph": graph, "vertices": g.num_vertices, "arcs": g.num_arcs, "source": source, **m.row()}
                 for m in ms]
        if name == "cpu":
            for t in baselines(g, source, expected, min(args.repeats, 5)):
                rows.append({"graph": graph, "vertices": g.num_vertices, "arcs": g.num_arcs, "source": source,
                             **t.row()})
                print(f"  {t.label:66s} {harness.spread(t.times_ms)}  ok={t.check.ok}", flush=True)
    return rows, markdown(name, rows, args)


def line(m: harness.Measurement) -> str:
    if m.skipped:
        return f"skipped: {m.skipped}"
    if m.error:
        return f"{'WRONG' if m.wrong else 'FAILED'}: {m.error}"
    extra = "".join(f"  {k} {m.extra[k]}" for k in ("us_per_level", "harmonic_gteps", "layer_ms") if k in m.extra)
    inst = f"  instrumented {m.instrumented_ms:.3f} ms" if m.instrumented_ms is not None else ""
    return (f"{harness.spread(m)}  {m.gteps or 0:8.3f} GTEPS  levels {m.levels}  launches {m.launches}{inst}{extra}"
            f"  {m.steps[:24]}")


COLUMNS = {  # set -> its own columns: (header, row key)
    "targets": [("instrumented ms", "instrumented_ms")],
    "roots": [("harmonic mean GTEPS", "harmonic_gteps"), ("roots", "roots")],
    "luo": [("levels per layer", "layer_levels"), ("ms per layer", "layer_ms")],
    "levels": [("µs a level", "us_per_level")],
}


def _num(x, digits: int = 3):
    return f"{x:.{digits}f}" if isinstance(x, float) else x


def markdown(name: str, rows: list[dict], args) -> list[str]:
    before = {}
    if args.before:
        before = {(r["graph"], r["config"]): r for r in json.loads(Path(args.before).read_text())["results"]}
    own = COLUMNS.get(name, [])
    headers = ["graph", "configuration", "median ms", "min–max ms", *(["before ms"] if before else []), "kernels ms",
               "GTEPS", "levels", "launches", *[h for h, _ in own], "correct"]
    table = []
    for r in rows:
        status = r.get("skipped") or ("yes" if r.get("correct") else f"**{'WRONG' if r.get('wrong') else 'failed'}**: "
                                                                      f"{r.get('error')}")
        spread_ = f"{r['min_ms']:.3f}–{r['max_ms']:.3f}" if r.get("min_ms") is not None else ""
        old = before.get((r["graph"], r["config"]), {}).get("median_ms")
        table.append([r["graph"], r["config"], _num(r.get("median_ms")), spread_, *([_num(old)] if before else []),
                      _num(r.get("kernels_ms")), _num(r.get("gteps")), r.get("levels"), r.get("launches"),
                      *[_num(r.get(k), 2) for _, k in own], status])
    text = {"graph", "configuration", "min–max ms", "correct", "levels per layer", "ms per layer"}
    return [f"`python3 -m benchmarks.bfs {name}`: median of {args.repeats} uninstrumented runs after a warm-up "
            "(first launch to the last level's completion, host round trips included; CUDA events), every result "
            "checked against the CPU reference (each configuration's first run against the Graph500 rules too)"
            + (". Roots: each search timed once." if name == "roots" else ".")
            + (f" Before: {args.before}." if before else ""), "",
            *harness.markdown_table(headers, table, {i for i, h in enumerate(headers) if h not in text})]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sets", nargs="+", choices=list(SETS))
    ap.add_argument("--graphs", nargs="*", help="only these of each set's graphs")
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--roots", type=int, default=ROOTS, help="random roots of the roots set (Graph500: 64)")
    ap.add_argument("--before", help="another checkout's results of the same set (JSON), shown beside these")
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results)")
    ap.add_argument("--smoke", action="store_true", help="tiny graphs under the simulator: a check of the script")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error(f"--repeats {args.repeats}: give at least 1")
    if args.before and not Path(args.before).is_file():
        ap.error(f"--before {args.before}: no such file")
    in_sets = {g for name in args.sets for g, _ in SETS[name]}
    if args.graphs and not set(args.graphs) <= in_sets:
        ap.error(f"--graphs {' '.join(sorted(set(args.graphs) - in_sets))}: not in the sets {', '.join(args.sets)}, "
                 f"whose graphs are {', '.join(sorted(in_sets))}")
    if args.smoke:
        known = {g for s in args.sets for g, _ in SETS[s] if harness.spec(g).kind != "sample"}
        args.graphs = [g for g in (args.graphs or known) if g in known]  # the samples are not tiny
    from explorer import backend

    backend.select("simulator" if args.smoke else "gpu")
    env = harness.environment()
    print(harness.describe(env), flush=True)
    bad = 0
    for name in args.sets:
        t0 = time.perf_counter()
        rows, md = run_set(name, args, env)
        settings = {"set": name, "repeats": args.repeats, "graphs": args.graphs, "before": args.before,
                    "seconds": round(time.perf_counter() - t0, 1), "smoke": args.smoke}
        if name == "roots":
            settings.update(roots=args.roots, seed=ROOTS_SEED)
        harness.write_results(args.out, name + ("-smoke" if args.smoke else ""), env, settings, rows, md,
                              f"BFS configurations: {name}, {env['gpu']}")
        bad += sum(r.get("correct") is False for r in rows)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
