"""Where a search kernel's warps wait: Nsight Compute's warp-state samples, by reason and by instruction.

    python3 -m benchmarks.tools.warp_samples --graph grid1000 --source centre \\
        --technique bitmap-direction --knobs cluster=16 cluster_arcs=1099511627776 \\
        --kernel bitmap_cluster --name warp-samples-grid1000-bitmap-cluster [--out DIR]
    python3 -m benchmarks.tools.warp_samples --summarize PAGE.csv    (no GPU needed)

Runs the search three times in a child process under `ncu --clock-control none` (the clocks are
left alone, as every benchmark here leaves them) and profiles the third launch of the kernel whose
name contains --kernel (the first two compile and warm up). It exports ncu's source page (SASS,
with the WarpStateStats and SourceCounters sections) and writes NAME.json and NAME.md: each stall
reason's share of the samples, then the instructions with the most samples and their three main
reasons. Samples count warps, not time on one path: a warp waiting at a barrier for the others is a
sample too. Needs ncu on the PATH and a machine whose runtime lets it read the counters.
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

STALL = "stall_"
NOT_ISSUED = "(Not Issued)"
RUNS = 3  # the third launch is profiled


class PageError(ValueError):
    """The file is not ncu's source page (`ncu -i REP --page source --csv --print-source sass`)."""


def read_source_page(path) -> list[dict]:
    """The SASS rows of every function in an exported source page: each function's block starts
    with a "Kernel Name" line and a header line ("Address", "Source", ..., stall_* columns)."""
    rows, header = [], None
    with open(path, newline="") as f:
        for line, row in enumerate(csv.reader(f), 1):
            if row and row[0] == "Address":
                header = row
            elif header and len(row) == len(header):
                rows.append(dict(zip(header, row)))
            elif header and row and row[0] != "Kernel Name":
                raise PageError(f"{path}, line {line}: {len(row)} fields where the header has {len(header)}")
    if not rows or "# Samples" not in rows[0] or not any(k.startswith(STALL) for k in rows[0]):
        raise PageError(f"{path}: no SASS rows with warp samples (export ncu's source page with "
                        "--page source --csv --print-source sass, from a report with SourceCounters)")
    return rows


def _count(value: str) -> int:
    value = value.replace(",", "").strip()
    return int(value) if value and value != "-" else 0


def stall_reasons(rows) -> list[tuple[str, int]]:
    """(reason, samples) for every stall reason with samples, most first (all samples, issued or not)."""
    total = Counter()
    for row in rows:
        for key, value in row.items():
            if key.startswith(STALL) and NOT_ISSUED not in key:
                total[key[len(STALL):]] += _count(value)
    return [(r, n) for r, n in total.most_common() if n]


def top_instructions(rows, k: int = 25) -> list[dict]:
    """The k instructions with the most samples: address, SASS, executions, samples and their three
    main reasons."""
    ranked = sorted(rows, key=lambda r: -_count(r["# Samples"]))[:k]
    out = []
    for row in ranked:
        reasons = sorted(((_count(v), key[len(STALL):]) for key, v in row.items()
                          if key.startswith(STALL) and NOT_ISSUED not in key), reverse=True)
        out.append({"address": row["Address"], "sass": row["Source"].strip(),
                    "executed": _count(row.get("Instructions Executed", "")), "samples": _count(row["# Samples"]),
                    "reasons": [(r, n) for n, r in reasons[:3] if n]})
    return out


def summary(rows, k: int = 25) -> tuple[list[dict], list[str]]:
    """The result rows (one a stall reason, one a top instruction) and their Markdown."""
    from benchmarks.harness.record import markdown_table

    reasons = stall_reasons(rows)
    total = sum(n for _, n in reasons)
    result = [{"kind": "reason", "reason": r, "samples": n, "share": n / total} for r, n in reasons]
    md = [f"{total:,} warp samples over {len(rows):,} instructions.", "",
          *markdown_table(["stall reason", "samples", "share"],
                          [[r, f"{n:,}", f"{100 * n / total:.1f} %"] for r, n in reasons], right={1, 2})]
    top = top_instructions(rows, k)
    result += [{"kind": "instruction", **t} for t in top]
    md += ["", f"The {len(top)} instructions with the most samples:", "",
           *markdown_table(["address", "SASS", "executed", "samples", "main reasons"],
                           [[t["address"][-6:], f"`{t['sass']}`", f"{t['executed']:,}", f"{t['samples']:,}",
                             ", ".join(f"{r} {n:,}" for r, n in t["reasons"])] for t in top], right={2, 3})]
    return result, md


def _search(args) -> int:
    """The child under ncu: RUNS searches, every one checked."""
    from benchmarks import harness
    from explorer import backend
    from explorer.engine import Session

    backend.select("gpu")
    g = harness.load(args.graph)
    source = harness.source_of(args.graph, g, args.source)
    expected = harness.reference(g, source)
    with Session(g) as s:
        for i in range(RUNS):
            r = harness.start_bfs(g, source, args.technique, args.knobs, session=s).complete()
            check = harness.check(g, r, expected, full=i == 0)
            if not check.ok:
                sys.exit(f"warp_samples: run {i + 1} of {args.technique} on {args.graph} is wrong: {check.message}")
    return 0


def _profile(args) -> int:
    from benchmarks.harness.record import environment, write_results

    ncu = shutil.which("ncu")
    if ncu is None:
        sys.exit("warp_samples: ncu (Nsight Compute) is not on the PATH")
    child = [sys.executable, "-m", "benchmarks.tools.warp_samples", "--search", "--graph", args.graph,
             "--technique", args.technique, "--knobs", *(f"{k}={v}" for k, v in args.knobs.items())]
    if args.source is not None:
        child += ["--source", str(args.source)]
    with tempfile.TemporaryDirectory() as tmp:
        rep, page = Path(tmp) / "profile", Path(tmp) / "page.csv"
        run = subprocess.run([ncu, "--clock-control", "none", "-k", f"regex:{args.kernel}", "--launch-skip",
                              str(RUNS - 1), "--launch-count", "1", "--section", "WarpStateStats", "--section",
                              "SourceCounters", "-f", "-o", str(rep), *child], capture_output=True, text=True)
        if run.returncode != 0 or not rep.with_suffix(".ncu-rep").exists():
            tail = "\n".join((run.stdout + run.stderr).strip().splitlines()[-15:])
            sys.exit(f"warp_samples: ncu did not profile a kernel matching {args.kernel!r}:\n{tail}")
        with open(page, "w") as f:
            subprocess.run([ncu, "-i", str(rep.with_suffix(".ncu-rep")), "--page", "source", "--csv",
                            "--print-source", "sass"], stdout=f, check=True)
        rows = read_source_page(page)
    result, md = summary(rows, args.top)
    env = environment()
    settings = {"graph": args.graph, "source": args.source, "technique": args.technique, "knobs": args.knobs,
                "kernel": args.kernel, "profiled": f"launch {RUNS} of the kernel", "ncu": "--clock-control none"}
    title = f"Warp samples: {args.technique} on {args.graph} (kernel {args.kernel})"
    md = [f"`{args.technique}` with knobs `{json.dumps(args.knobs)}` on {args.graph} from "
          f"{args.source if args.source is not None else 'its benchmark source'}; ncu's warp-state samples of "
          f"the kernel's launch {RUNS} (the first two warm up), clocks as they were.", "", *md]
    write_results(args.out, args.name, env, settings, result, md, title)
    return 0


def main(argv=None) -> int:
    from explorer.ui.cli_input import parse_knob_values

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graph", help="a benchmark graph (benchmarks.harness)")
    ap.add_argument("--source", help="the source: a vertex, or a rule of benchmarks.harness.source_of "
                    "('centre' for the grids); the graph's benchmark source when left out")
    ap.add_argument("--technique", default="bitmap-direction")
    ap.add_argument("--knobs", nargs="*", default=[], metavar="KNOB=VALUE", help="the technique's knobs")
    ap.add_argument("--kernel", help="the profiled kernel: a part of its name (e.g. bitmap_cluster)")
    ap.add_argument("--name", default="warp-samples", help="the results' file name (NAME.json, NAME.md)")
    ap.add_argument("--out", type=Path, help="results folder (default benchmarks/results)")
    ap.add_argument("--top", type=int, default=25, help="instructions listed")
    ap.add_argument("--summarize", type=Path, metavar="CSV", help="summarize an exported source page and stop")
    ap.add_argument("--search", action="store_true", help=argparse.SUPPRESS)  # the child ncu profiles
    args = ap.parse_args(argv)
    if args.summarize:
        try:
            _, md = summary(read_source_page(args.summarize), args.top)
        except (OSError, PageError) as e:
            sys.exit(f"warp_samples: {e}")
        print("\n".join(md))
        return 0
    if not args.graph:
        ap.error("--graph is needed (or --summarize)")
    try:  # an unknown technique or knob, a bad value: named here, not from inside ncu
        args.knobs = parse_knob_values(args.technique, args.knobs)  # typed and range-checked, as the CLI's
    except ValueError as e:
        ap.error(str(e))
    if args.source is not None and args.source.lstrip("-").isdigit():
        args.source = int(args.source)
    if args.search:
        return _search(args)
    if not args.kernel:
        ap.error("--kernel is needed: a part of the profiled kernel's name")
    return _profile(args)


if __name__ == "__main__":
    raise SystemExit(main())
