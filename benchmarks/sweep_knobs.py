"""Time a technique over a grid (or a random sample) of knob settings; every result is checked.

    python3 -m benchmarks.sweep_knobs kron22 K1=4,8,32 K4=0,1,2 claim=race,atomic
    python3 -m benchmarks.sweep_knobs grid1000 --base K5=2 K1=1,4 dedup=none,hash64
    python3 -m benchmarks.sweep_knobs grid3d --technique luo-hierarchical block_threads=256,512,1024 \
        grid_blocks_per_sm=1,2
    python3 -m benchmarks.sweep_knobs gen:kronecker:scale=18 K3 K1 --random 12 --json sweep.json
    python3 -m benchmarks.sweep_knobs path/to/graph.mtx --technique virtual-warp block_threads
    python3 -m benchmarks.sweep_knobs bfs4k_fig2 K1=1,32 --simulator --repeats 1
    python3 -m benchmarks.sweep_knobs kron22 K1=4,8,16,32 K4=0,1,2 --gpus 4     # points over 4 GPUs (Dask)

GRAPH is a benchmark graph (benchmarks/harness/graphs.py: kron22, grid1000, ...), a sample graph, a
graph file or a generator spec gen:KIND:param=value,... Each swept knob is KNOB=v1,v2,... or KNOB
alone for values over its declared range (every choice; --points values of a number range). Every
combination runs (--random N: N points drawn within the ranges instead). Prints one line per
setting, fastest first: the median BFS wall time of --repeats runs (instrumentation off, after
--warmup untimed runs), the kernels' share, the levels and the check against the CPU reference;
--json writes the sweep, which the Explorer's Tuning panel (and explorer.sweep.load_sweep) reopens.
The sweep itself is explorer.sweep's, shared with the notebooks. --gpus N spreads the points over a
Dask worker per GPU (--scheduler ADDRESS: a running scheduler's workers), each point with all its
runs on one GPU, so no timing shares its GPU; with --simulator, N CPU worker processes. Exit status
1 if a setting failed or was wrong, 2 for bad input.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks import harness
from explorer import backend
from explorer.graphs import Vertex
from explorer.knobs import KnobError
from explorer.sweep import format_sweep, plan_sweep, run_sweep
from explorer.ui.cli_input import UsageError, load_graph_spec, parse_knob_values
from explorer.ui.cli_many import add_dask_flags, dask_client, parse_gpus


def parse_axes(technique, items: list[str]) -> dict:
    """['K1=4,8', 'dedup'] -> {'K1': [4, 8], 'dedup': None} (None: over the declared range), each
    value typed and range-checked against the technique's knobs."""
    axes = {}
    for item in items:
        name, sep, vals = item.partition("=")
        name = name.strip()
        if not sep:
            axes[name] = None
            parse_knob_values(technique, [])  # the technique exists
            continue
        if not vals.strip():
            raise UsageError(f"{item!r}: no values after '=' (give KNOB=v1,v2 or KNOB alone for its range)")
        axes[name] = [parse_knob_values(technique, [f"{name}={v}"])[name] for v in vals.split(",")]
    return axes


def load_graph(spec: str, undirected: bool):
    """A benchmark graph by name, else what `bfs4k run` accepts (sample, file, gen: spec)."""
    if harness.spec(spec) and not undirected and not Path(spec).exists():
        return harness.load(spec)
    return load_graph_spec(spec, undirected)


def source(g, spec: str, rule: str | None):
    """What run_sweep takes: the user's id, "max-degree" or "random" as given; by default the
    benchmark graph's own source (a grid's centre: its own id), else "max-degree"."""
    if rule is None:
        rule = harness.spec(spec).source if harness.spec(spec) else "max-degree"
    if rule in ("center", "centre"):
        return Vertex(harness.source_of(spec, g, "centre"))
    return rule


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("graph", help="benchmark graph, sample name, graph file or gen:KIND:param=value,...")
    ap.add_argument("grid", nargs="+", help="KNOB=v1,v2,... or KNOB (its declared range)")
    ap.add_argument("--technique", default="bfs4k")
    ap.add_argument("--source", default=None, help="vertex id, max-degree, random or centre (a benchmark grid's); "
                    "default: the benchmark graph's own (a grid's centre), else max-degree")
    ap.add_argument("--base", nargs="*", default=[], help="KNOB=VALUE settings common to all runs")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--warmup", type=int, default=None, help="untimed runs per setting (default: 1 on a GPU)")
    ap.add_argument("--random", type=int, default=None, metavar="N", help="N random points within the ranges")
    ap.add_argument("--seed", type=int, default=0, help="seed of --random and of a random source")
    ap.add_argument("--points", type=int, default=5, help="values of a number range swept without values")
    ap.add_argument("--json", type=Path, default=None, help="write the sweep here (reopened by load_sweep)")
    ap.add_argument("--undirected", action="store_true", help="read a graph file's lines both ways")
    ap.add_argument("--simulator", action="store_true", help="Numba's CUDA simulator (small graphs only)")
    add_dask_flags(ap)
    args = ap.parse_args(argv)

    try:
        backend.select("simulator" if args.simulator else "gpu")
        parse_gpus(args.gpus, args.simulator)  # before the graph loads
        base = parse_knob_values(args.technique, args.base)
        axes = parse_axes(args.technique, args.grid)
        plan = plan_sweep(args.technique, axes, mode="random" if args.random else "grid", samples=args.random,
                          seed=args.seed, base=base, points_per_axis=args.points)
        g = load_graph(args.graph, args.undirected)
        src = source(g, args.graph, args.source)
        if args.json is not None and args.json.is_dir():
            raise UsageError(f"--json {args.json} is a folder: give a file name")
        say = lambda msg: print(f"  ... {msg}", file=sys.stderr, flush=True)  # noqa: E731
        with dask_client(args.gpus, args.scheduler, args.simulator, say) as client:
            sweep = run_sweep(g, src, plan, repeats=args.repeats, warmup=args.warmup, seed=args.seed,
                              graph_spec=args.graph, client=client,
                              on_progress=lambda p: print(f"  {p}", end="\r", file=sys.stderr))
    except (KnobError, UsageError, ValueError, backend.BackendError, OSError) as err:
        print(f"sweep_knobs: error: {err}", file=sys.stderr)
        return 2
    print(file=sys.stderr)
    print(format_sweep(sweep))
    if args.json is not None:
        print(f"sweep written to {sweep.save(args.json)}")
    return 0 if all(p.usable for p in sweep.points) else 1


if __name__ == "__main__":
    sys.exit(main())
