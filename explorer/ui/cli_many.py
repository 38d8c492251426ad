"""Command line for many searches at once: `python -m explorer many ...`.

    bfs4k many bfs4k_fig2 --application closeness --simulator
    bfs4k many gen:kronecker:scale=18 --application betweenness --gpus all     # every GPU of this machine
    bfs4k many my.mtx --sources 4096 --method bit-parallel --scheduler tcp://head:8786 --json out.json

A progress bar of the searches on stderr (with --gpus or --scheduler, one step a finished chunk of
sources, from whichever worker ran it), then the application's values ranked and the summary; the
values are those of one process (explorer.scale_out merges the workers' parts as one GPU's batches).
Bad input ends with exit status 2 and one line on stderr.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import textwrap

import numpy as np

from ..stats import write_text_atomic
from .cli_input import PROG, UsageError

EXIT_OK = 0


def parse_gpus(text: str | None, simulator: bool) -> int | None:
    """--gpus as a worker count (None: 'all': every visible GPU, or every CPU core under the
    simulator), or a UsageError naming the flag."""
    if text is None:
        return None
    if text.strip().lower() == "all":
        return (os.cpu_count() or 1) if simulator else None
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise UsageError(f"--gpus {text!r} is invalid: a number of GPUs >= 1, or 'all'")
    return n


@contextlib.contextmanager
def dask_client(gpus: str | None, scheduler: str | None, simulator: bool, say=lambda msg: None):
    """The Dask client that --gpus or --scheduler asks for (None when neither is given): a GPUCluster
    of this machine's GPUs (under the simulator, that many CPU worker processes), closed at the end,
    or a Client of the user's running scheduler, of which only the client is closed."""
    if gpus is None and scheduler is None:
        yield None
        return
    flag = "--gpus" if gpus is not None else "--scheduler"
    count = parse_gpus(gpus, simulator)
    try:
        from .. import scale_out

        scale_out._distributed()
    except ImportError:
        raise UsageError(f"{flag} spreads the searches over Dask workers, which needs dask.distributed: "
                         f"{scale_out.EXTRA}") from None
    if gpus is not None:
        try:
            cluster = (scale_out.GPUCluster(workers=count, simulator=True) if simulator
                       else scale_out.GPUCluster(gpus=count))
        except ValueError as err:
            raise UsageError(f"--gpus {gpus}: {err}") from None
        with cluster:
            say(f"spread over {cluster.size} Dask worker(s): "
                + ("simulator processes" if simulator else f"GPU(s) {', '.join(cluster.gpus)}"))
            yield cluster.client
        return
    from distributed import Client

    try:
        client = Client(scheduler, timeout="10s")
    except (OSError, TimeoutError, ValueError, TypeError) as err:
        raise UsageError(f"--scheduler {scheduler}: no Dask scheduler answers there ({err})") from None
    try:
        workers = scale_out.worker_count(client)
        if workers == 0:
            raise UsageError(f"--scheduler {scheduler}: the scheduler has no workers: start dask-cuda-worker "
                             "(or dask worker --nthreads 1, one per GPU) against it")
        say(f"spread over the {workers} Dask worker(s) of the scheduler at {scheduler}")
        yield client
    finally:
        client.close()


def add_dask_flags(p) -> None:
    """--gpus N|all and --scheduler ADDRESS, one or the other."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--gpus", metavar="N|all",
                   help="spread the work over a Dask worker per GPU of this machine, N of them or all "
                        "(with --simulator: N CPU worker processes); needs bfs4k-explorer[dask]")
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="spread the work over the workers of a running Dask scheduler (tcp://host:8786), "
                        "each seeing one GPU and running one task at a time")


def parse_sources(text: str):
    """--sources: 'all', a count to sample, or comma-separated vertex ids (the graph's own)."""
    t = text.strip().lower()
    if t == "all":
        return "all"
    parts = [p.strip() for p in t.split(",") if p.strip()]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        values = []
    if not values:
        raise UsageError(f"--sources {text!r} is invalid: 'all', a number of sources to sample, or vertex ids "
                         "separated by commas")
    return values[0] if len(parts) == 1 and "," not in text else values


def ranked_lines(result, top: int) -> list[str]:
    """The application's first one-number-a-vertex (else a-source) value, highest first; for a row
    per search, how many vertices each of the first sources reaches and its farthest hop."""
    key = next((k for k in (*result.per_vertex, *result.per_search) if np.asarray(result.values[k]).ndim == 1), None)
    if key is not None:
        who = "vertex" if key in result.per_vertex else "source"
        v = np.asarray(result.values[key])
        fmt = "{:.6g}" if v.dtype.kind == "f" else "{:,}"
        return [f"{key}, highest first:", f"  {'rank':>4}  {who:>10}  {key}"] + [
            f"  {i + 1:>4}  {vid:>10}  {fmt.format(x if v.dtype.kind == 'f' else int(x))}"
            for i, (vid, x) in enumerate(result.ranked(key, top=top))]
    key = next(iter(result.per_search))
    table = np.asarray(result.values[key])
    lines = [f"{key}: a row per source (the first {min(top, len(table))})"]
    for s, row in zip(result.source_ids[:top], table[:top]):
        if table.dtype == bool:
            lines.append(f"  source {s}: reaches {int(row.sum()) - 1:,} vertices")
        elif key == "histogram":
            lines.append(f"  source {s}: vertices at 1, 2, ... hops: {', '.join(f'{int(c):,}' for c in row[1:7])}")
        else:
            lines.append(f"  source {s}: reaches {int((row >= 0).sum()) - 1:,} vertices, the farthest "
                         f"{int(row.max(initial=0))} hops away")
    return lines


def cmd_many(args) -> int:
    from tqdm import tqdm

    from ..multisearch import APPLICATIONS, run_many
    from .cli_input import _arc_limit, check_output_path, load_graph_spec, select_backend

    if args.json:
        check_output_path(args.json, "--json")
    if args.top < 0:
        raise UsageError(f"--top {args.top} is invalid: how many values to print, >= 0")
    sources = parse_sources(args.sources)
    parse_gpus(args.gpus, args.simulator)  # before the graph loads
    graph = load_graph_spec(args.graph, args.undirected, _arc_limit(args.simulator))
    info = select_backend(args.simulator)
    say = lambda msg: print(f"  ... {msg}", file=sys.stderr, flush=True)  # noqa: E731
    if args.application not in APPLICATIONS:
        raise UsageError(f"--application {args.application!r} is unknown: one of {', '.join(APPLICATIONS)}")
    with dask_client(args.gpus, args.scheduler, info.is_simulator, say) as client:
        run = run_many(graph, sources, args.application, method=args.method, seed=args.seed, client=client,
                       on_status=None if client is not None else say)
        kind = "directed" if graph.directed else "undirected"
        print(f"graph: {graph.name}: {graph.num_vertices:,} vertices, {graph.num_arcs:,} arcs ({kind}); "
              f"{len(run.sources):,} sources; {args.application} by {args.method}", flush=True)
        if getattr(run, "method_choice", None) is not None:
            print(run.method_choice.reason(), flush=True)
        bar = tqdm(total=len(run.sources), desc="searches", unit="search", file=sys.stderr, dynamic_ncols=True)
        try:
            for rec in run:
                bar.update(rec.searches_done - bar.n)
        finally:
            bar.close()
        result = run.result
    print()
    for line in ranked_lines(result, args.top) if args.top else []:
        print(line)
    s = result.summary()
    label = "simulator time" if s["device"].get("backend") == "simulator" else "GPU time"
    print(f"\n{s['searches']:,} searches; {label} {s['time_ms']:.3f} ms"
          + ("" if client is None else " (summed over the workers)")
          + ("" if s["edges_examined"] is None else f"; {s['edges_examined']:,} adjacency entries examined"))
    sys.stdout.flush()
    if args.json:
        doc = {"summary": {k: v for k, v in s.items() if k != "plan"}, "sources": result.source_ids.tolist(),
               "values": {k: np.asarray(v).tolist() for k, v in result.values.items()}}
        write_text_atomic(args.json, json.dumps(doc, default=str))
        print(f"wrote {args.json}")
    return EXIT_OK


def add_parser(sub, fmt=argparse.RawDescriptionHelpFormatter) -> None:
    """The `many` command, on the CLI's subparsers."""
    from ..multisearch import APPLICATIONS, Method

    m = sub.add_parser(
        "many", formatter_class=fmt, help="run many searches at once: centralities, hop distances, reachability",
        description="Breadth-first searches from many sources at once (explorer.multisearch): a progress bar\n"
                    "of the searches, then the application's values ranked. With --gpus or --scheduler the\n"
                    "sources are spread over Dask workers, a GPU each; the values are one process's.",
        epilog=textwrap.dedent(f"""\
            examples:
              {PROG} many bfs4k_fig2 --application betweenness --simulator
              {PROG} many bfs4k_fig2 --application closeness --simulator --gpus 2   # 2 simulator processes
              {PROG} many gen:kronecker:scale=18 --application betweenness --gpus all
              {PROG} many my.mtx --sources 4096 --method bit-parallel --scheduler tcp://head:8786"""))
    m.add_argument("graph", metavar="GRAPH", help="sample name, graph file or gen:KIND:param=value,...")
    m.add_argument("--application", default="closeness", help=f"{', '.join(APPLICATIONS)} (default %(default)s)")
    m.add_argument("--sources", default="all",
                   help="'all' (default), a number of sources sampled at random (--seed), or ids such as 0,5,9")
    m.add_argument("--method", default="warp-thread",
                   help=f"{', '.join(x.value for x in Method)} or auto (timed on a sample of the sources; not with "
                        "--gpus or --scheduler) (default %(default)s)")
    m.add_argument("--seed", type=int, default=0, help="seed of a sampled --sources (default 0)")
    m.add_argument("--top", type=int, default=10, help="values printed, highest first (default 10)")
    m.add_argument("--simulator", action="store_true", help="run on Numba's CUDA simulator instead of a GPU")
    m.add_argument("--undirected", action="store_true", help="read the graph file as undirected")
    m.add_argument("--json", metavar="PATH", help="write the summary, the sources and the values as JSON")
    add_dask_flags(m)
    m.set_defaults(func=cmd_many)
