"""What the yardsticks share: the grid they search, its reference distances on the GPU's side,
and their report (a line a kernel as it runs, then the one writer of results)."""
from __future__ import annotations

import argparse
from typing import NamedTuple

import numpy as np

from benchmarks import harness


class GridCase(NamedTuple):
    args: argparse.Namespace  # side, repeats, out
    env: dict
    g: object  # the side x side grid (CSRGraph)
    src: int  # its centre
    ref: np.ndarray  # the CPU reference's distances from it
    offsets: object  # the CSR on the GPU (int64 offsets, int32 indices)
    indices: object


def grid_case(description: str, argv=None) -> GridCase:
    """Options --side, --repeats and --out, the GPU, the side x side grid from its centre, the
    CPU reference distances and the CSR arrays on the GPU."""
    from numba import cuda

    from explorer import backend, graphs

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--side", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results)")
    args = ap.parse_args(argv)
    backend.select("gpu")
    g = harness.load("grid1000") if args.side == 1000 else graphs.generate("grid2d", rows=args.side, cols=args.side)
    src = harness.centre((args.side, args.side))
    ref = harness.reference(g, src)
    return GridCase(args, harness.environment(), g, src, ref, cuda.to_device(g.offsets),
                    cuda.to_device(g.indices.astype(np.int32)))


def levels_check(ref, levels: int, what: str = "") -> harness.Check:
    """For a search that writes no distances: its level count against the reference's."""
    depth = int(ref.max()) + 1
    ok = levels == depth
    return harness.Check(ok, f"{levels} levels{what}" + ("" if ok else f", the reference has {depth}"))


def show(t: harness.Timed) -> harness.Timed:
    verdict = "-" if t.check is None else ("right" if t.check.ok else "WRONG")
    print(f"  {t.label:40s} {harness.spread(t.times_ms)}  {verdict}: "
          f"{t.check.message if t.check is not None else 'not a search'}", flush=True)
    return t


def report(case: GridCase, name: str, title: str, rows: list[harness.Timed]) -> int:
    """Write the rows (results/<GPU>/NAME.{json,md}); 1 if a search was wrong."""
    table = [[t.label, f"{np.median(t.times_ms):.3f}", f"{min(t.times_ms):.3f}–{max(t.times_ms):.3f}",
              "-" if t.check is None else ("right" if t.check.ok else "**WRONG**"),
              "" if t.check is None else t.check.message] for t in rows]
    md = [f"`python3 -m benchmarks.yardsticks.{name}`: the {case.args.side} x {case.args.side} grid from its centre; "
          f"median of {case.args.repeats} runs (CUDA events) after one that compiles; every search's output checked "
          "against the CPU reference.", "",
          *harness.markdown_table(["kernel", "median ms", "min–max ms", "result", "checked"], table, {1})]
    harness.write_results(case.args.out, name.replace("_", "-"), case.env,
                          {"side": case.args.side, "repeats": case.args.repeats, "source": case.src},
                          [t.row() for t in rows], md, f"{title}, {case.env['gpu']}")
    return 1 if any(t.check is not None and not t.check.ok for t in rows) else 0
