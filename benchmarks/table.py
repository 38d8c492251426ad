"""Every GPU technique on every benchmark graph: BFS-4K's Table 2 redone on this GPU, one row per
graph, one column per registered GPU technique and per load-balancing strategy of load-balance
(the chapter's §5 catalogue, compared in its Figs. 12-15), and with --peers BLEST's and Gunrock's
BFS side by side.

    python3 -m benchmarks.table                                   # everything
    python3 -m benchmarks.table --graphs kron20 grid1000 --techniques bfs4k merrill load-balance
    python3 -m benchmarks.table --techniques direction-optimizing luo-hierarchical --peers --name peers
    python3 -m benchmarks.table --smoke                           # the script on tiny graphs, simulator
    python3 -m benchmarks.table --gpus 4                          # the cells spread over 4 GPUs (Dask)

Each cell: the median elapsed time of --repeats runs after a warm-up (first launch to the last
level's completion, host round trips included; instrumentation off), in one Session per graph, and
its GTEPS; every result checked (benchmarks.harness.measure). A run whose levels pass --limit
seconds of wall time is stopped; stopped twice, the technique is skipped on that graph ("> 2 s":
Harish on the 1000² grid, 1001 levels each scanning 10^6 vertices). Cells left when --budget
seconds have passed are not run, and say so. The peers (benchmarks/harness/peers.py) run from
their binaries in .blest/ and .gunrock/, where built, on the same graph and source, their
distances checked as ours.

Knobs: every technique's defaults (the papers'), except bfs4k, which takes BFS-4K §7's advice for
the graph (recommend_knobs: the paper tuned its knobs per graph too), and virtual-warp and
load-balance[virtual-warps], whose W is swept over 1..32, the best reported as Table 2 does
("(W4)"). Sources: each graph's own (benchmarks/harness/graphs.py). Writes
results/<GPU>/table.{json,md}.

--gpus N: a graph's cells spread over a Dask worker per GPU (explorer.scale_out.GPUCluster; with
--smoke, N simulator processes), a whole cell (its sweep, warm-up and repeats, a peer's runs) on one
worker, which runs one cell at a time: no timing shares its GPU. Cells print as they finish; the
table is the same. The graph goes to the workers once and stays on each one's GPU for its cells.
"""
from __future__ import annotations

import argparse
import sys
import time

from benchmarks import harness

W_SWEEP = [1, 2, 4, 8, 16, 32]
NAME = "table"


def columns(peers: bool) -> list[tuple[str, str, list[dict] | None]]:
    """(label, technique or peer, knob sets: one, or a sweep whose best is reported; None: §7's
    advice for bfs4k)."""
    from explorer.techniques import Technique, implementation, implemented_techniques

    out = []
    for t in implemented_techniques():
        impl = implementation(t)
        if "gpu" not in impl.runtimes:
            continue
        if t is Technique.LOAD_BALANCE:
            for e in impl.Knobs.spec("expand").choices:
                sweep = [{"expand": e, "W": w} for w in W_SWEEP] if e == "virtual-warps" else [{"expand": e}]
                out.append((f"load-balance[{e}]", t.value, sweep))
        elif t is Technique.VIRTUAL_WARP:
            out.append((t.value, t.value, [{"W": w} for w in W_SWEEP]))
        elif t is Technique.BFS4K:
            out.append((t.value, t.value, None))
        else:
            out.append((t.value, t.value, [{}]))
    if peers:
        out += [(p.name, f"peer:{p.name}", [{}]) for p in harness.PEERS.values()]
    return out


def best_of(cells: list[harness.Measurement]) -> harness.Measurement:
    """The fastest right cell of a sweep (the first cell when none is), its sweep kept."""
    ok = [c for c in cells if c.ok]
    best = min(ok, key=lambda c: c.median_ms) if ok else cells[0]
    if len(cells) > 1:
        best.extra["swept"] = [{"knobs": c.knobs, "median_ms": c.median_ms, "correct": c.correct,
                                "skipped": c.skipped} for c in cells]
    return best


def cell_text(c: dict | None, what: str) -> str:
    if c is None:
        return ""
    if c.get("skipped"):
        return c["skipped"] if len(c["skipped"]) < 12 else "skipped"
    if not c.get("correct"):
        return "WRONG" if c.get("wrong") else "failed"
    if what == "ms":
        value = f"{c['median_ms']:.2f}"
    else:
        value = f"{c['gteps']:.3f}" if c.get("gteps") is not None else ""
    if "swept" in c and "W" in c["knobs"]:
        value += f" (W{c['knobs']['W']})"
    return value


def markdown(rows: list[dict], labels: list[str], args) -> list[str]:
    lines = [f"Median elapsed ms of {args.repeats} uninstrumented runs after a warm-up (first launch to last level, "
             "host round trips included), every result checked against the CPU reference (the first run of each "
             f"cell against the Graph500 rules too). '> {args.limit:g} s': a run passed {args.limit:g} s of wall "
             "time twice and the technique was skipped on that graph; 'not run': the time budget ran out; (Wn): "
             "the best W of the sweep; the peers' times are their own clocks (benchmarks/harness/peers.py). "
             "Fastest of each row in bold.", ""]
    for what, title in (("ms", "Elapsed time (ms)"), ("gteps", "GTEPS")):
        table = []
        for row in rows:
            cells = row["cells"]
            ok = {k: c for k, c in cells.items() if c and c.get("correct") and not c.get("skipped")}
            best = (min(ok, key=lambda k: ok[k]["median_ms"]) if what == "ms" else
                    max(ok, key=lambda k: ok[k]["gteps"] or 0)) if ok else None
            texts = [f"**{cell_text(cells.get(k), what)}**" if k == best else cell_text(cells.get(k), what)
                     for k in labels]
            size = [f"{row['vertices']:,}", f"{row['arcs']:,}", f"{row['levels']:,}"] if "vertices" in row else [""] * 3
            tail = []
            if what == "ms":
                lb = [k for k in ok if k.startswith("load-balance[")]
                fastest_lb = min(lb, key=lambda k: ok[k]["median_ms"]) if lb else None
                tail = [best or "", fastest_lb[len("load-balance["):-1] if fastest_lb else ""]
            table.append([row["graph"], row["family"], *size, *texts, *tail])
        headers = ["graph", "family", "V", "arcs", "levels", *labels] + (
            ["fastest", "fastest expand strategy"] if what == "ms" else [])
        lines += [f"## {title}", "", *harness.markdown_table(headers, table, set(range(2, 5 + len(labels)))), ""]
    failures = [(row["graph"], k, c.get("error")) for row in rows for k, c in row["cells"].items()
                if c and c.get("error")]
    skipped = sorted({c["skipped"] for row in rows for c in row["cells"].values() if c and c.get("skipped")
                      and len(c["skipped"]) >= 12})
    if failures:
        lines += ["## Failures", ""] + [f"- {g} / {k}: {msg}" for g, k, msg in failures] + [""]
    if skipped:
        lines += ["## Skipped", ""] + [f"- {s}" for s in skipped] + [""]
    return lines


def run_cell(g, source, expected, label, tech, sweep, session, pg, args) -> harness.Measurement:
    from explorer.techniques import implementation

    if tech.startswith("peer:"):  # its programs may not outlast the table's budget
        m = harness.run_peer(harness.PEERS[tech[len("peer:"):]], pg, source, expected, runs=args.repeats,
                             timeout_s=max(10.0, args.deadline - time.perf_counter()))
        m.label = label
        return m
    if sweep is None:
        from explorer.techniques.bfs4k import recommend_knobs

        sweep = [recommend_knobs(g)[0].as_dict()]
    cells = []
    for knobs in sweep:
        if args.smoke:  # every CUDA thread is a Python thread there
            knobs = {**knobs, **implementation(tech).simulator_knobs}
        cells.append(harness.measure(g, source, tech, knobs, label=label, repeats=args.repeats, session=session,
                                     expected=expected, limit_s=args.limit))
    return best_of(cells)


def print_cell(label: str, cell: dict) -> None:
    print(f"  {label:36s} {cell_text(cell, 'ms'):>16s}  {cell_text(cell, 'gteps'):>14s}  "
          f"{cell.get('error') or (cell['skipped'] if cell.get('skipped') else '')}", flush=True)


def _spread_cell(g, source, expected, label, tech, sweep, settings: dict) -> dict:
    """On a worker: one cell on this worker's GPU (its Session of the graph kept for the next
    cell), or "not run" once the table's budget (a wall-clock time) has passed."""
    import types

    from explorer import scale_out

    if time.time() > settings["deadline_wall"]:
        return {"skipped": "not run"}
    scale_out._on_worker()
    args = types.SimpleNamespace(**settings, deadline=settings["deadline_wall"] - time.time() + time.perf_counter())
    if tech.startswith("peer:"):
        with harness.PeerGraph(g) as pg:
            return run_cell(g, source, expected, label, tech, sweep, None, pg, args).row()
    return run_cell(g, source, expected, label, tech, sweep, scale_out._session(g), None, args).row()


def spread_cells(client, g, source, expected, cols, args) -> dict:
    """The graph's cells over `client`'s workers (see the module's docstring), printed as they
    finish: {label: cell row}."""
    from distributed import as_completed

    from explorer.scale_out import sent

    settings = {"repeats": args.repeats, "limit": args.limit, "smoke": args.smoke,
                "deadline_wall": time.time() + (args.deadline - time.perf_counter())}
    gf, ef = sent(client, g), sent(client, expected)  # released with the row: a worker holds one graph
    futures = {client.submit(_spread_cell, gf, source, ef, label, tech, sweep, settings, pure=False): label
               for label, tech, sweep in cols}
    cells = {}
    for fut in as_completed(list(futures)):
        label = futures[fut]
        cell = cells[label] = fut.result()
        fut.release()
        print_cell(label, cell)
    gf.release()
    ef.release()
    return cells


def table_rows(args, cols, start: float, client=None) -> list[dict]:
    """A row a graph: each cell run here in turn on one Session of the graph, or over `client`'s
    workers (spread_cells)."""
    labels = [c[0] for c in cols]
    rows = []
    for name in args.graphs:
        s = harness.spec(name)
        row = {"graph": name, "family": s.family if s else "", "cells": {}}
        rows.append(row)
        if time.perf_counter() - start > args.budget:
            row["cells"] = {k: {"skipped": "not run"} for k in labels}
            continue
        t0 = time.perf_counter()
        g = harness.load(name, small=args.smoke)
        source = harness.source_of(name, g, small=args.smoke)
        expected = harness.reference(g, source)
        row.update(what=s.what if s else name, vertices=g.num_vertices, arcs=g.num_arcs, source=source,
                   levels=int(expected.max()) + 1, build_s=round(time.perf_counter() - t0, 2))
        print(f"\n{name} ({row['family']}): |V|={g.num_vertices:,} arcs={g.num_arcs:,} source={source} "
              f"levels={row['levels']} (built in {row['build_s']} s); per cell: median ms, GTEPS", flush=True)
        if client is not None:
            row["cells"] = spread_cells(client, g, source, expected, cols, args)
            continue
        from explorer.engine import Session

        with Session(g) as session, harness.PeerGraph(g) as pg:
            for label, tech, sweep in cols:
                if time.perf_counter() - start > args.budget:
                    row["cells"][label] = {"skipped": "not run"}
                    continue
                cell = row["cells"][label] = run_cell(g, source, expected, label, tech, sweep, session, pg, args).row()
                print_cell(label, cell)
        del g, expected
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="*", default=list(harness.GRAPHS), help="rows: benchmark graphs (default: "
                    f"{', '.join(harness.GRAPHS)}), sample graphs, files or gen: specs")
    ap.add_argument("--techniques", nargs="*", default=None,
                    help="columns: technique names (load-balance: all its strategies) or labels such as "
                         "'load-balance[two-phase]'; default: every registered GPU technique")
    ap.add_argument("--peers", action="store_true", help="also BLEST and Gunrock (skipped where not built)")
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per cell after the warm-up")
    ap.add_argument("--limit", type=float, default=None, help="seconds of wall time a run may take (default 2; "
                    "600 with --smoke)")
    ap.add_argument("--budget", type=float, default=450.0, help="seconds for the whole table; later cells are not run")
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results; a GPU kind's "
                    "folder is made in it)")
    ap.add_argument("--name", default=NAME, help=f"the results' file name (default {NAME}: {NAME}.json, {NAME}.md)")
    ap.add_argument("--smoke", action="store_true", help="the script on tiny graphs of each family under the "
                    "simulator (W swept over 1 and 32): a check of the script, not a benchmark")
    ap.add_argument("--gpus", type=int, default=None, metavar="N",
                    help="spread each graph's cells over N GPUs, a Dask worker each (with --smoke: N simulator processes)")
    args = ap.parse_args(argv)
    if args.gpus is not None and args.gpus < 1:
        ap.error(f"--gpus {args.gpus}: give 1 or more GPUs")
    if args.limit is None:
        args.limit = 600.0 if args.smoke else 2.0
    if args.repeats < 1:
        ap.error(f"--repeats {args.repeats}: give at least 1")
    try:
        harness.check_names(args.graphs)
    except harness.UnknownGraph as err:
        ap.error(str(err))
    from explorer import backend

    backend.select("simulator" if args.smoke else "gpu")
    sweep_w = [1, 32] if args.smoke else W_SWEEP
    cols = [(lb, t, None if s is None else [k for k in s if "W" not in k or k["W"] in sweep_w])
            for lb, t, s in columns(args.peers)]
    if args.techniques:
        cols = [c for c in cols if c[0] in args.techniques or c[1] in args.techniques or c[1].startswith("peer:")]
        if not [c for c in cols if not c[1].startswith("peer:")] and not args.peers:
            ap.error(f"no column matches {args.techniques}; columns: {', '.join(c[0] for c in columns(False))}")
    labels = [c[0] for c in cols]
    env = harness.environment()
    print(harness.describe(env), flush=True)
    start = time.perf_counter()
    args.deadline = start + args.budget
    from explorer.ui.cli_many import dask_client

    with dask_client(None if args.gpus is None else str(args.gpus), None, args.smoke) as client:
        rows = table_rows(args, cols, start, client)
    settings = {"repeats": args.repeats, "limit_s": args.limit, "budget_s": args.budget, "columns": labels,
                "seconds": round(time.perf_counter() - start, 1), "smoke": args.smoke}
    harness.write_results(args.out, args.name + ("-smoke" if args.smoke else ""), env, settings, rows,
                          markdown(rows, labels, args), f"Every technique on every graph, {env['gpu']}")
    wrong = [c for row in rows for c in row["cells"].values() if c.get("correct") is False]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
