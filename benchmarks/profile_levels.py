"""Where a BFS's time goes, level by level, on a real GPU.

    python3 -m benchmarks.profile_levels kron22 --knobs K1=32 claim=atomic
    python3 -m benchmarks.profile_levels grid1000 --knobs K5=2 claim=atomic
    python3 -m benchmarks.profile_levels luxembourg_osm --technique bfs4k --knobs K5=0 --cprofile 35
    python3 -m benchmarks.profile_levels kron22 --technique direction-optimizing --roots 16

Prints, for every level: frontier size, edges, kernel, virtual warp size, edge-discover, heavy
vertices, the level's CUDA-event window (`gpu ms`) and the host's wall time between two records
(`host ms`: Python launching, reading back, planning). The difference between the run's
elapsed time and the sum of kernel time is what the host costs the user. The run is checked
against the CPU reference.
"""
from __future__ import annotations

import argparse
import sys
import time

from benchmarks import harness
from explorer import backend
from explorer.engine import Session, launcher


class HostClock:
    """Wall time the host spends launching kernels and preparing launches (compile checks,
    marshalling arguments)."""

    def __init__(self):
        self.launch_s, self.launches, self.prepare_s = 0.0, 0, 0.0
        call, prepare = launcher.Launcher.__call__, launcher.Launcher.prepare

        def timed_call(obj, *a):
            t = time.perf_counter()
            call(obj, *a)
            self.launch_s += time.perf_counter() - t
            self.launches += 1

        def timed_prepare(obj, *a, **kw):
            t = time.perf_counter()
            prepare(obj, *a, **kw)
            self.prepare_s += time.perf_counter() - t

        launcher.Launcher.__call__, launcher.Launcher.prepare = timed_call, timed_prepare


def parse_knobs(items):
    knobs = {}
    for item in items:
        key, _, value = item.partition("=")
        try:
            knobs[key] = int(value)
        except ValueError:
            try:
                knobs[key] = float(value)
            except ValueError:
                knobs[key] = value
    return knobs


def profile_roots(g, technique, knobs, count, session) -> int:
    """Each root's elapsed time after a pause of the host (the roots benchmark checks every result
    between runs) and straight after, both results checked; returns the slowest root (None if a
    result was wrong)."""
    import numpy as np

    from benchmarks.bfs import ROOTS_SEED

    rng = np.random.default_rng(ROOTS_SEED)
    roots = [int(r) for r in rng.choice(np.flatnonzero(g.degrees() > 0), size=count, replace=False)]
    harness.start_bfs(g, roots[0], technique, knobs, session=session).complete()  # compiles
    print(f"{'root':>9} {'levels':>6} {'edges':>11} {'paused ms':>9} {'warm ms':>8}  checked  steps")
    slowest, worst = roots[0], -1.0
    for root in roots:
        time.sleep(0.3)  # about what checking a Kronecker 22 result costs the host
        cold = harness.start_bfs(g, root, technique, knobs, session=session).complete()
        warm = harness.start_bfs(g, root, technique, knobs, session=session).complete()
        steps = harness.steps_of(warm)
        right = harness.check(g, warm)
        if right.ok:
            right = harness.check(g, cold, harness.reference(g, root), full=False)
        print(f"{root:9d} {warm.num_levels:6d} {warm.traversed_edges:11d} {cold.elapsed_ms:9.3f} "
              f"{warm.elapsed_ms:8.3f}  {'right' if right.ok else 'WRONG'}  {steps[:60]}")
        if not right.ok:
            print(f"  root {root}: {right.message}")
            return None
        if warm.elapsed_ms > worst:
            slowest, worst = root, warm.elapsed_ms
    return slowest


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graph", help=f"a benchmark graph ({', '.join(harness.GRAPHS)}), sample, file or gen: spec")
    ap.add_argument("--source", default=None, help="vertex (0..n-1), 'max-degree' or 'centre' (a grid's); "
                    "default: the graph's own (benchmarks/harness/graphs.py)")
    ap.add_argument("--knobs", nargs="*", default=[], help="KEY=VALUE knob settings")
    ap.add_argument("--technique", default="bfs4k")
    ap.add_argument("--rows", type=int, default=40, help="levels printed (first and last halves)")
    ap.add_argument("--cprofile", type=int, default=0, metavar="N",
                    help="also profile one more run's host side with cProfile and print its top N functions")
    ap.add_argument("--roots", type=int, default=0, metavar="N",
                    help="instead: N random roots of non-zero degree (bench_direction's seed), each run after "
                         "the host's pause (as the roots benchmark does) and again at once; then the slowest "
                         "root level by level")
    args = ap.parse_args(argv)

    try:
        harness.check_names([args.graph])
    except harness.UnknownGraph as err:
        ap.error(str(err))
    backend.select("gpu")
    g = harness.load(args.graph)
    src = harness.source_of(args.graph, g, args.source)
    knobs = parse_knobs(args.knobs)
    session = Session(g)
    if args.roots:
        src = profile_roots(g, args.technique, knobs, args.roots, session)
        if src is None:
            return 1
    harness.start_bfs(g, src, args.technique, knobs, session=session).complete()  # compile, warm up
    clock = HostClock()
    run = harness.start_bfs(g, src, args.technique, knobs, session=session)
    rows, t = [], time.perf_counter()
    for lv in run:
        now = time.perf_counter()
        rows.append((lv, (now - t) * 1e3))
        t = now
    res = run.result
    checked = harness.check(g, res)
    print(f"{args.graph} source={src} technique={args.technique} knobs={knobs}")
    print(f"checked: {'right' if checked.ok else 'WRONG'} ({checked.message})")
    print(f"levels {res.num_levels}  elapsed {res.elapsed_ms:.3f} ms  kernels {res.total_ms:.3f} ms  "
          f"GTEPS {res.traversed_edges / (res.elapsed_ms * 1e6):.2f}")
    print(f"host: {clock.launches} launches, {clock.launch_s * 1e3:.3f} ms inside them "
          f"({clock.launch_s * 1e6 / max(clock.launches, 1):.1f} us each), "
          f"{clock.prepare_s * 1e3:.3f} ms preparing them")
    print(f"{'level':>5} {'frontier':>9} {'edges':>11} {'kernel':>12} {'dir':>3} {'W':>3} {'ED':>2} {'heavy':>5} "
          f"{'gpu ms':>8} {'host ms':>8}")
    half = args.rows // 2
    for i, (lv, host_ms) in enumerate(rows):
        if len(rows) > args.rows and half <= i < len(rows) - half:
            if i == half:
                print("  ...")
            continue
        print(f"{lv.level:5d} {lv.frontier_in:9d} {lv.edges_examined or 0:11d} {lv.kernel.value:>12} "
              f"{'bu' if lv.direction.value == 'bottom-up' else 'td':>3} {lv.warp_size or 0:3d} "
              f"{int(lv.edge_discover or 0):2d} {lv.heavy_vertices or 0:5d} {lv.time_ms:8.3f} {host_ms:8.3f}")
    if args.cprofile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        harness.start_bfs(g, src, args.technique, knobs, session=session).complete()
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.cprofile)
    return 0 if checked.ok else 1


if __name__ == "__main__":
    sys.exit(main())
