"""Luo, Wong & Hwu's hierarchical BFS (luo-hierarchical) on a real GPU: the 3-D grid 128³ (Luo et
al.'s degree-6 family; 193 levels from the centre, frontiers up to 24,572) and the 1000 x 1000 grid
(from the centre vertex), each layer arrangement timed with one Session per graph.

    python benchmarks/bench_luo.py                          # both graphs, median of 11 runs
    python benchmarks/bench_luo.py --graphs grid3d --sweep  # and a few block sizes / grid sizes

Per configuration: the median elapsed time of --repeats uninstrumented runs (first launch to last
level, host round trips included), the median sum of the level times, and the median time of the
grid-synchronised layer's levels (their share of each grid launch by the SM's cycle counter), with
the levels each layer ran. Every run's distances are compared with explorer.reference.cpu_bfs
(compare_distances) and one run's tree is validated. The issue's target: the grid layer on the 3-D
grid within 5 ms on an H100.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer import backend, graphs  # noqa: E402
from explorer.api import run_bfs  # noqa: E402
from explorer.engine import Session  # noqa: E402
from explorer.reference import compare_distances, cpu_bfs, validate  # noqa: E402

GRAPHS = {
    "grid3d": lambda: graphs.generate("grid3d", nx=128, ny=128, nz=128),
    "grid1000": lambda: graphs.generate("grid2d", rows=1000, cols=1000),
}
SIDES = {"grid3d": (128, 128, 128), "grid1000": (1000, 1000)}

CONFIGS = [
    ("defaults (block <= 512, grid <= its threads)", {}),
    ("grid layer only (block_threshold=0)", {"block_threshold": 0}),
    ("one launch a level (block_threshold=0, grid_threshold=1)", {"block_threshold": 0, "grid_threshold": 1}),
    ("one block while |F| <= 4096 (block_threads=1024)", {"block_threads": 1024, "block_threshold": 4096}),
]
SWEEP = [
    (f"block_threads={t}, grid_blocks_per_sm={b}", {"block_threads": t, "grid_blocks_per_sm": b})
    for t in (256, 512, 1024) for b in (1, 2) if (t, b) != (512, 1)
]


def centre(name: str) -> int:
    """The middle vertex (Luo et al. start at the centre of their grids)."""
    sides = SIDES[name]
    index, stride = 0, 1
    for side in reversed(sides):  # the last coordinate varies fastest
        index += (side // 2) * stride
        stride *= side
    return index


def measure(g, source, knobs, repeats, ref):
    own = g.to_original(source)  # run_bfs takes the graph's own ids; `source` is a position 0..n-1
    with Session(g) as s:
        run_bfs(g, own, "luo-hierarchical", knobs, instrument=False, session=s).complete()  # compile, warm up
        runs = [run_bfs(g, own, "luo-hierarchical", knobs, instrument=False, session=s).complete()
                for _ in range(repeats)]
    wrong = [m for m in (compare_distances(ref, r.distances) for r in runs) if m is not None]
    report = validate(g, source, runs[0].distances, runs[0].parents, reference_distances=ref)
    layers = Counter(lv.layer for lv in runs[0].levels)
    layer_ms = {name: statistics.median(sum(lv.time_ms for lv in r.levels if lv.layer == name) for r in runs)
                for name in layers}
    el = statistics.median(r.elapsed_ms for r in runs)
    return {
        "knobs": knobs,
        "elapsed_ms": round(el, 4),
        "elapsed_ms_all": [round(r.elapsed_ms, 4) for r in runs],
        "levels_ms": round(statistics.median(r.total_ms for r in runs), 4),
        "layer_ms": {k: round(v, 4) for k, v in layer_ms.items()},
        "layer_levels": dict(layers),
        "grid_blocks": max((lv.blocks for lv in runs[0].levels if lv.layer == "grid"), default=0),
        "launches": sum(lv.launches for lv in runs[0].levels),
        "levels": runs[0].num_levels,
        "gteps": round(runs[0].traversed_edges / (el * 1e6), 3),
        "correct": not wrong and report.ok,
        "error": wrong[0] if wrong else (None if report.ok else report.message),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="*", default=list(GRAPHS), choices=list(GRAPHS))
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--sweep", action="store_true", help="also other block sizes and blocks per SM")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args(argv)

    info = backend.select("gpu")
    print(info.describe(), flush=True)
    results = []
    for name in args.graphs:
        t0 = time.perf_counter()
        g = GRAPHS[name]()
        source = centre(name)
        ref = cpu_bfs(g, source)[0]
        print(f"\n{name}: |V|={g.num_vertices:,} arcs={g.num_arcs:,} source={source} levels={ref.max() + 1} "
              f"(built in {time.perf_counter() - t0:.1f} s)", flush=True)
        for label, knobs in CONFIGS + (SWEEP if args.sweep else []):
            try:
                m = measure(g, source, knobs, args.repeats, ref)
            except Exception as exc:  # one failing configuration must not hide the others
                print(f"  {label:58s} FAILED: {type(exc).__name__}: {exc}", flush=True)
                results.append({"graph": name, "config": label, "correct": False,
                                "error": f"{type(exc).__name__}: {exc}"})
                continue
            m.update(graph=name, config=label, source=source)
            results.append(m)
            per_layer = "  ".join(f"{k} {m['layer_levels'][k]} lv {v:.3f} ms" for k, v in m["layer_ms"].items())
            print(f"  {label:58s} elapsed {m['elapsed_ms']:8.3f} ms (runs {min(m['elapsed_ms_all']):.3f}-"
                  f"{max(m['elapsed_ms_all']):.3f})  levels {m['levels_ms']:8.3f} ms  {per_layer}  "
                  f"grid blocks {m['grid_blocks']}  launches {m['launches']}  ok={m['correct']}"
                  + (f"  {m['error']}" if m["error"] else ""), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"device": info.as_dict(), "results": results}, indent=1, default=str))
    return 0 if all(m["correct"] for m in results) else 1


if __name__ == "__main__":
    sys.exit(main())
