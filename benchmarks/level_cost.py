"""What a BFS-4K multi-block level costs (issue 18's per-level overhead), before and after a change.
GPU only.

    python3 benchmarks/level_cost.py --json after.json                      # this checkout
    python3 benchmarks/level_cost.py --json after.json --before before.json --md OUT.md

Runs BFS-4K with its multi-block kernel on every level (K5=0: one step a level, the host planning
each from the level's read-back) and with its defaults, on graphs whose levels are small, so that
a level's cost is mostly fixed cost: luxembourg_osm (952 levels), p2p-Gnutella31 and Wiki-Vote
(symmetrized), facebook_combined; and on Kronecker scale 20, whose middle levels are large.
Each row: median elapsed ms of --repeats runs after a warm-up on one Session (CUDA events, first
launch to the last level's end, host round trips included; instrumentation off), the sum of the
levels' kernel windows, the launches of one run, and elapsed / levels in µs. Every run is checked
against the CPU reference (bench_direction.timed). To compare two checkouts, run the script in
each on the same GPU in one call, then pass the first's JSON as --before. Where the host's share of
a level goes: `profile_levels.py luxembourg_osm --technique bfs4k --knobs K5=0 --cprofile 35`.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_bfs import environment, source_for  # noqa: E402
from bench_direction import timed  # noqa: E402

from explorer import backend, graphs  # noqa: E402
from explorer.engine import Session  # noqa: E402
from explorer.reference import cpu_bfs  # noqa: E402

GRAPHS = {
    "luxembourg_osm": lambda: graphs.sample_graph("luxembourg_osm"),
    "p2p-Gnutella31": lambda: graphs.sample_graph("p2p-Gnutella31", symmetrize=True),
    "Wiki-Vote": lambda: graphs.sample_graph("Wiki-Vote", symmetrize=True),
    "facebook_combined": lambda: graphs.sample_graph("facebook_combined"),
    "kron20": lambda: graphs.generate("kronecker", scale=20, edge_factor=16, seed=1),
}
CONFIGS = [
    ("multi-block only, claim=atomic, dedup=none", {"K5": 0, "claim": "atomic", "dedup": "none"}),
    ("multi-block only, the paper's claim and hash64", {"K5": 0}),
    ("defaults", {}),
]


def markdown(env, rows, before) -> str:
    old = {(b["graph"], b["config"]): b for b in (before or [])}
    lines = [f"# BFS-4K's cost of a level on {env.get('name')} ({env.get('nvidia_smi')})", "",
             f"date {env['date']}, versions {env.get('versions')}; median of {env['repeats']} runs, each checked", ""]
    if before:
        lines += ["| graph | configuration | levels | launches before → after | elapsed ms before → after | "
                  "µs a level before → after | kernels ms before → after | correct |",
                  "|---|---|---:|---:|---:|---:|---:|---|"]
    else:
        lines += ["| graph | configuration | levels | launches | elapsed ms | µs a level | kernels ms | correct |",
                  "|---|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        b = old.get((r["graph"], r["config"]))
        if b:
            lines.append(f"| {r['graph']} | {r['config']} | {r['levels']} | {b['launches']} → {r['launches']} | "
                         f"{b['elapsed_ms']} → {r['elapsed_ms']} | {b['us_per_level']} → {r['us_per_level']} | "
                         f"{b['kernels_ms']} → {r['kernels_ms']} | {b['correct'] and r['correct']} |")
        else:
            lines.append(f"| {r['graph']} | {r['config']} | {r['levels']} | {r['launches']} | {r['elapsed_ms']} | "
                         f"{r['us_per_level']} | {r['kernels_ms']} | {r['correct']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="*", default=list(GRAPHS), choices=list(GRAPHS))
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--json", type=Path, required=True, help="where this checkout's rows go")
    ap.add_argument("--before", type=Path, help="another checkout's JSON, for a before → after table")
    ap.add_argument("--md", type=Path, help="the markdown table")
    args = ap.parse_args(argv)
    backend.select("gpu")
    env = {**environment(), "repeats": args.repeats}
    rows = []
    for name in args.graphs:
        g = GRAPHS[name]()
        source = source_for(g, name)
        ref = cpu_bfs(g, source)[0]
        with Session(g) as session:
            for label, knobs in CONFIGS:
                m = timed(g, source, "bfs4k", knobs, args.repeats, ref, session)
                m["us_per_level"] = round(1e3 * m["elapsed_ms"] / m["levels"], 2)
                rows.append({"graph": name, "config": label, **m})
                print(f"{name:18s} {label:48s} {m['elapsed_ms']:9.3f} ms {m['levels']:5d} levels "
                      f"{m['launches']:5d} launches {m['us_per_level']:8.2f} us a level ok={m['correct']}", flush=True)
    args.json.write_text(json.dumps({"environment": env, "results": rows}, indent=1, default=str))
    if args.md:
        before = json.loads(args.before.read_text())["results"] if args.before else None
        args.md.write_text(markdown(env, rows, before))
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
