"""Time BFS-4K over a grid of knob settings on a real GPU; every result is checked.

    python benchmarks/sweep_knobs.py kron22 K1=4,8,32 K4=0,1,2 claim=race,atomic
    python benchmarks/sweep_knobs.py grid1000 --source center --base K5=2 K1=1,4 dedup=none,hash64

Prints one line per setting, fastest first: the median elapsed time of --repeats runs
(instrumentation off, after a warm-up run), the kernels' share and the kernel kind per level.
A setting whose distances differ from the CPU reference is reported as wrong.
"""
from __future__ import annotations

import argparse
import itertools
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_bfs import GRAPHS, source_for  # noqa: E402
from benchmarks.profile_levels import parse_knobs  # noqa: E402
from explorer import backend  # noqa: E402
from explorer.api import run_bfs  # noqa: E402
from explorer.engine import Session  # noqa: E402
from explorer.reference import compare_distances, cpu_bfs  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graph", choices=list(GRAPHS))
    ap.add_argument("grid", nargs="+", help="KNOB=v1,v2,... (every combination is run)")
    ap.add_argument("--source", default="max-degree")
    ap.add_argument("--base", nargs="*", default=[], help="KEY=VALUE settings common to all runs")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    backend.select("gpu")
    g = GRAPHS[args.graph]()
    src = source_for(g, args.graph, args.source)
    ref = cpu_bfs(g, src)[0]
    base = parse_knobs(args.base)
    names, values = [], []
    for item in args.grid:
        key, _, vals = item.partition("=")
        names.append(key)
        values.append([parse_knobs([f"{key}={v}"])[key] for v in vals.split(",")])
    rows = []
    for combo in itertools.product(*values):
        knobs = {**base, **dict(zip(names, combo))}
        try:
            with Session(g) as s:
                run_bfs(g, src, "bfs4k", knobs, instrument=False, session=s).complete()
                rs = [run_bfs(g, src, "bfs4k", knobs, instrument=False, session=s).complete()
                      for _ in range(args.repeats)]
        except Exception as exc:  # one bad setting must not hide the others
            rows.append((float("inf"), knobs, f"FAILED {type(exc).__name__}: {exc}"))
            continue
        ok = all(compare_distances(ref, r.distances) is None for r in rs)
        el = statistics.median(r.elapsed_ms for r in rs)
        kern = statistics.median(r.total_ms for r in rs)
        kinds = "".join("M" if lv.kernel == "multi-block" else "S" for lv in rs[0].levels)
        rows.append((el, knobs, f"kernels {kern:8.3f} ms  levels {rs[0].num_levels:5d}  "
                                f"{'ok' if ok else 'WRONG'}  {kinds[:24]}"))
    print(f"{args.graph} source={src} base={base}")
    for el, knobs, what in sorted(rows, key=lambda r: r[0]):
        shown = {k: knobs[k] for k in names}
        print(f"  {el:9.3f} ms  {shown}  {what}", flush=True)
    return 0 if all("WRONG" not in r[2] and "FAILED" not in r[2] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
