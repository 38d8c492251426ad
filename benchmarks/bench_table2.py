"""BFS-4K's Table 2 redone on this GPU (GPU only): one row per graph, one column per registered GPU
technique and per load-balancing strategy (load-balance's expand values, the chapter's §5
catalogue, whose Figs. 12-15 compare them on road-like, web/social, mesh and Kronecker graphs).

    python3 benchmarks/bench_table2.py                                   # everything, ~8 minutes on an H100
    python3 benchmarks/bench_table2.py --graphs kron20 grid1000 --techniques bfs4k merrill load-balance
    python3 benchmarks/bench_table2.py --techniques "load-balance[two-phase]" --repeats 5

Each cell is the median elapsed time (first launch to the last level's completion, host round trips
included; instrumentation off) of --repeats runs after one warm-up run, in one explorer.engine.Session
per graph, with its GTEPS (Graph500 traversed edges / elapsed). Every cell's result is checked
(explorer.reference.check_result: the Graph500 rules and the CPU reference's distances); a cell
that fails says so. A run is stopped at the first level that ends more than --limit seconds (wall
time) after it started: after a second try (the first may have compiled kernels), the technique is
skipped on that graph and the cell says "> LIMIT s" (e.g. Harish on the 1000² grid: 1001 levels,
each scanning all 10^6 vertices). Cells left when --budget seconds have passed are not run, and say so.

Knobs: every technique's defaults (the papers'), except bfs4k, which gets BFS-4K §7's rules of thumb
for the graph (recommend_knobs; the paper tuned its knobs per graph too), and virtual-warp and
load-balance[virtual-warps], whose W is swept over 1..32 with the best reported, as in Table 2
("(W4)"). Sources: the maximum-degree vertex (the papers'), the grids' centre vertex (Luo et al.).
Writes benchmarks/results/DATE-GPU-table2.json and .md, stamped with the GPU's name, driver,
versions and date.
"""
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer import backend, graphs  # noqa: E402
from explorer.api import run_bfs  # noqa: E402
from explorer.engine import Session  # noqa: E402
from explorer.reference import check_result, cpu_bfs  # noqa: E402
from explorer.techniques import Technique, implementation, implemented_techniques  # noqa: E402
from explorer.techniques.bfs4k import recommend_knobs  # noqa: E402
from kernels.load_balance.layout import EXPAND_NAMES  # noqa: E402

#: name -> (the chapter's family, builder, source: "max-degree" or the grid's sides for its centre)
GRAPHS = {
    "kron20": ("Kronecker", lambda: graphs.generate("kronecker", scale=20, edge_factor=16, seed=1), "max-degree"),
    "kron22": ("Kronecker", lambda: graphs.generate("kronecker", scale=22, edge_factor=16, seed=1), "max-degree"),
    "uniform": ("uniform random", lambda: graphs.generate("uniform_random", n=1 << 21, m=1 << 24, seed=1),
                "max-degree"),
    "grid1000": ("road-like (2-D grid)", lambda: graphs.generate("grid2d", rows=1000, cols=1000), (1000, 1000)),
    "grid3d": ("mesh (3-D grid)", lambda: graphs.generate("grid3d", nx=128, ny=128, nz=128), (128, 128, 128)),
    "smallworld": ("small world", lambda: graphs.generate("watts_strogatz", n=1 << 21, k=10, p=0.3, seed=1),
                   "max-degree"),
    **{name: (info.family, (lambda name=name: graphs.sample_graph(name)), "max-degree")
       for name, info in graphs.SAMPLE_GRAPHS.items() if name != "bfs4k_fig2"},  # the teaching graph is no data
}
W_SWEEP = [1, 2, 4, 8, 16, 32]
#: --smoke: tiny versions of the generated rows, to try this script under the simulator (no timings).
SMOKE = {
    "kron20": ("Kronecker", lambda: graphs.generate("kronecker", scale=6, edge_factor=4, seed=1), "max-degree"),
    "grid1000": ("road-like (2-D grid)", lambda: graphs.generate("grid2d", rows=5, cols=5), (5, 5)),
    "grid3d": ("mesh (3-D grid)", lambda: graphs.generate("grid3d", nx=3, ny=3, nz=3), (3, 3, 3)),
}


def centre(sides) -> int:
    """The middle vertex of a grid (its last coordinate varies fastest)."""
    index, stride = 0, 1
    for side in reversed(sides):
        index += (side // 2) * stride
        stride *= side
    return index


def columns() -> list[tuple[str, str, list[dict] | None]]:
    """(label, technique, knob sets: one, or a sweep whose best is reported; None: §7's for bfs4k)."""
    out = []
    for t in implemented_techniques():
        if "gpu" not in implementation(t).runtimes:
            continue
        if t is Technique.LOAD_BALANCE:
            for e in EXPAND_NAMES:
                sweep = [{"expand": e, "W": w} for w in W_SWEEP] if e == "virtual-warps" else [{"expand": e}]
                out.append((f"load-balance[{e}]", t.value, sweep))
        elif t is Technique.VIRTUAL_WARP:
            out.append((t.value, t.value, [{"W": w} for w in W_SWEEP]))
        elif t is Technique.BFS4K:
            out.append((t.value, t.value, None))
        else:
            out.append((t.value, t.value, [{}]))
    return out


def timed(g, source, tech, knobs, session, limit_s):
    """One uninstrumented run, stopped at the first level that ends past limit_s of wall time.
    (RunResult, None), or (None, the level it was stopped at)."""
    run = run_bfs(g, g.to_original(source), tech, knobs, instrument=False, session=session)
    levels = iter(run)
    t0 = time.perf_counter()
    for lv in levels:
        if time.perf_counter() - t0 > limit_s:
            levels.close()  # ends the run: its buffers go back to the session
            return None, lv.level
    return run.result, None


def measure(g, source, tech, knobs, session, args, ref) -> dict:
    first, cut = timed(g, source, tech, knobs, session, args.limit)
    if first is None:  # the first try may have compiled kernels inside the window
        first, cut = timed(g, source, tech, knobs, session, args.limit)
    if first is None:
        return {"knobs": knobs, "skipped": f"> {args.limit:g} s", "cut_at_level": cut}
    runs = []
    for _ in range(args.repeats):
        r, cut = timed(g, source, tech, knobs, session, args.limit)
        if r is None:
            return {"knobs": knobs, "skipped": f"> {args.limit:g} s", "cut_at_level": cut}
        runs.append(r)
    report = check_result(g, source, runs[0].distances, runs[0].parents, expected=ref)
    el = statistics.median(r.elapsed_ms for r in runs)
    return {"knobs": knobs, "elapsed_ms": round(el, 4), "elapsed_ms_all": [round(r.elapsed_ms, 4) for r in runs],
            "kernels_ms": round(statistics.median(r.total_ms for r in runs), 4),
            "gteps": round(runs[0].traversed_edges / (el * 1e6), 4) if el > 0 else None,
            "levels": runs[0].num_levels, "correct": report.ok, **({} if report.ok else {"error": report.message})}


def best_of(cells: list[dict]) -> dict:
    timed_cells = [c for c in cells if "elapsed_ms" in c and c.get("correct")]
    if not timed_cells:
        return dict(cells[0], swept=cells) if len(cells) > 1 else cells[0]
    best = min(timed_cells, key=lambda c: c["elapsed_ms"])
    return dict(best, swept=cells) if len(cells) > 1 else best


def environment() -> dict:
    import platform
    import subprocess

    env = backend.current().as_dict()
    try:
        env["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        env["nvidia_smi"] = "unavailable"
    env["host"] = platform.node()
    return env


def _cell_text(c: dict, what: str) -> str:
    if c is None:
        return ""
    if "skipped" in c:
        return c["skipped"]
    if "failed" in c:
        return "failed"
    if not c.get("correct", False):
        return "WRONG"
    value = f"{c['elapsed_ms']:.2f}" if what == "ms" else f"{c['gteps']:.3f}"
    if "swept" in c and "W" in c["knobs"]:
        value += f" (W{c['knobs']['W']})"
    return value


def markdown(env: dict, rows: list[dict], labels: list[str], args) -> str:
    lines = [f"# BFS-4K Table 2 redone on {env.get('name')} ({env.get('nvidia_smi')})", "",
             f"date {env['date']}, driver {env.get('driver')}, versions {env.get('versions')}, "
             f"compute capability {env.get('compute_capability')}", "",
             f"Median elapsed ms of {args.repeats} uninstrumented runs after a warm-up (first launch to last level, "
             "host round trips included), every result checked against the CPU reference and the Graph500 rules. "
             f"'> {args.limit:g} s': a run passed {args.limit:g} s of wall time twice and the technique was "
             "skipped on that graph; 'not run': the time budget ran out; (Wn): the best W of the sweep. "
             "Best of each row in bold.", ""]
    for what, title in (("ms", "Elapsed time (ms)"), ("gteps", "GTEPS")):
        lines += [f"## {title}", "", "| graph | family | V | arcs | levels | " + " | ".join(labels) + " |"
                  + (" fastest | fastest expand strategy |" if what == "ms" else ""),
                  "|---|---|---:|---:|---:|" + "---:|" * len(labels) + ("---|---|" if what == "ms" else "")]
        for row in rows:
            cells = row["cells"]
            ok = {k: c for k, c in cells.items() if c and c.get("correct")}
            if what == "ms":
                best = min(ok, key=lambda k: ok[k]["elapsed_ms"]) if ok else None
            else:
                best = max(ok, key=lambda k: ok[k]["gteps"] or 0) if ok else None
            texts = []
            for k in labels:
                t = _cell_text(cells.get(k), what)
                texts.append(f"**{t}**" if k == best else t)
            size = f"{row['vertices']:,} | {row['arcs']:,} | {row['levels']:,}" if "vertices" in row else " | | "
            tail = ""
            if what == "ms":
                lb = [k for k in ok if k.startswith("load-balance[")]
                fastest_lb = min(lb, key=lambda k: ok[k]["elapsed_ms"]) if lb else None
                tail = f" {best or ''} | {fastest_lb[len('load-balance['):-1] if fastest_lb else ''} |"
            lines.append(f"| {row['graph']} | {row['family']} | {size} | " + " | ".join(texts) + " |" + tail)
        lines.append("")
    failures = [(row["graph"], k, c.get("failed") or c.get("error")) for row in rows
                for k, c in row["cells"].items() if c and (c.get("failed") or c.get("error"))]
    if failures:
        lines += ["## Failures", ""] + [f"- {g} / {k}: {msg}" for g, k, msg in failures] + [""]
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="*", default=list(GRAPHS), help=f"rows, of {', '.join(GRAPHS)}")
    ap.add_argument("--techniques", nargs="*", default=None,
                    help="columns: technique names (load-balance: all its strategies) or labels such as "
                         "'load-balance[two-phase]'; default: every registered GPU technique")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per cell after the warm-up")
    ap.add_argument("--limit", type=float, default=None, help="seconds of wall time a run may take (default 2; "
                    "600 with --smoke)")
    ap.add_argument("--budget", type=float, default=450.0, help="seconds for the whole table; later cells are not run")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    ap.add_argument("--smoke", action="store_true", help="try this script under the simulator on tiny graphs "
                    "(kron20, grid1000, grid3d shrunk; W swept over 1 and 32): a check of the script, not a benchmark")
    args = ap.parse_args(argv)
    if args.limit is None:
        args.limit = 600.0 if args.smoke else 2.0
    if args.smoke:
        GRAPHS.clear()
        GRAPHS.update(SMOKE)
        W_SWEEP[:] = [1, 32]
        args.graphs = [g for g in args.graphs if g in SMOKE]
    unknown = [g for g in args.graphs if g not in GRAPHS]
    if unknown:
        ap.error(f"unknown graphs {unknown}; known: {', '.join(GRAPHS)}")
    cols = columns()
    if args.techniques:
        cols = [c for c in cols if c[0] in args.techniques or c[1] in args.techniques]
        if not cols:
            ap.error(f"no column matches {args.techniques}; columns: {', '.join(c[0] for c in columns())}")
    labels = [c[0] for c in cols]

    backend.select("simulator" if args.smoke else "gpu")
    env = environment()
    print(json.dumps(env, indent=1), flush=True)
    start = time.perf_counter()
    rows = []
    for name in args.graphs:
        family, build, where = GRAPHS[name]
        row = {"graph": name, "family": family, "cells": {}}
        rows.append(row)
        if time.perf_counter() - start > args.budget:
            row["cells"] = {k: {"skipped": "not run"} for k in labels}
            continue
        t0 = time.perf_counter()
        g = build()
        source = int(np.argmax(g.degrees())) if where == "max-degree" else centre(where)
        ref = cpu_bfs(g, source)[0]
        row.update(vertices=g.num_vertices, arcs=g.num_arcs, source=source, levels=int(ref.max()) + 1,
                   build_s=round(time.perf_counter() - t0, 2))
        print(f"\n{name} ({family}): |V|={g.num_vertices:,} arcs={g.num_arcs:,} source={source} "
              f"levels={row['levels']} (built in {row['build_s']} s); per cell: elapsed ms, GTEPS", flush=True)
        with Session(g) as session:
            for label, tech, sweep in cols:
                if time.perf_counter() - start > args.budget:
                    row["cells"][label] = {"skipped": "not run"}
                    continue
                if sweep is None:
                    rec, _ = recommend_knobs(g)
                    sweep = [{k: getattr(rec, k) for k in ("K1", "K2", "K3", "K4", "K5", "K6", "K7")}]
                cells = []
                for knobs in sweep:
                    if args.smoke:  # every CUDA thread is a Python thread there
                        knobs = {**knobs, **implementation(tech).simulator_knobs}
                    try:
                        cells.append(measure(g, source, tech, knobs, session, args, ref))
                    except Exception as exc:  # one failing cell must not hide the others
                        cells.append({"knobs": knobs, "failed": f"{type(exc).__name__}: {exc}",
                                      "trace": traceback.format_exc(limit=3)})
                cell = row["cells"][label] = best_of(cells)
                print(f"  {label:34s} {_cell_text(cell, 'ms'):>16s}  {_cell_text(cell, 'gteps'):>14s}  "
                      f"{cell.get('failed') or cell.get('error') or ''}", flush=True)
        del g, ref

    env["elapsed_s"] = round(time.perf_counter() - start, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    gpu = str(env.get("name", "gpu")).replace(" ", "_")
    stamp = datetime.date.today().isoformat()
    settings = {"repeats": args.repeats, "limit_s": args.limit, "budget_s": args.budget, "columns": labels}
    (args.out / f"{stamp}-{gpu}-table2.json").write_text(
        json.dumps({"environment": env, "settings": settings, "rows": rows}, indent=1, default=str))
    (args.out / f"{stamp}-{gpu}-table2.md").write_text(markdown(env, rows, labels, args))
    print(f"\nwrote {args.out}/{stamp}-{gpu}-table2.json and .md ({env['elapsed_s']} s)")
    wrong = [c for row in rows for c in row["cells"].values() if c and ("correct" in c and not c["correct"])]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
