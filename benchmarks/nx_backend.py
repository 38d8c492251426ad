"""networkx calls with backend="bfs4k" against plain networkx and scipy, on the sample graphs and
Kronecker scale 20. GPU only (--simulator: a check of this script on small graphs, its numbers
mean nothing). Writes results/<GPU>/nx_backend.{json,md}.

    python3 -m benchmarks.nx_backend                                   # samples + kron20
    python3 -m benchmarks.nx_backend --graphs facebook_combined --budget 10

Per graph and function:
  bfs4k     nx.<function>(G, ..., backend="bfs4k") on the graph converted once beforehand (the
            conversion's time is reported apart, as networkx caches it on the graph), the backend's
            result store off (cache_bytes=0: every call searches); the median of --repeats calls
            after a warm-up call that compiles the kernels. Wall time: the GPU's work, the host's
            ordering of the output and building networkx's dicts and lists.
  networkx  the same call without a backend, once; calls over many sources (closeness, betweenness,
            all pairs) run as many sources as --budget seconds allow and are extrapolated linearly
            to all of them ("extrapolated").
  scipy     scipy.sparse.csgraph's nearest equivalent where there is one (breadth_first_order,
            shortest_path(unweighted=True), connected_components), on the CSR matrix.
Every bfs4k result is compared with networkx's where networkx ran the same call in full (for
calls over many sources: with the sources networkx ran; "—" where it ran none of the same).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

from benchmarks import harness

GRAPHS = [*[n for n, s in harness.GRAPHS.items() if s.kind == "sample"], "kron20"]
SMOKE_GRAPHS = ["bfs4k_fig2", "karate"]
#: all_pairs_shortest_path_length and scipy's full distance matrix: graphs of at most this many vertices.
APSP_MAX_VERTICES = 20_000
#: closeness_centrality of every vertex: graphs of at most this many vertices x arcs (Kronecker 20's
#: 10^6 searches of 3.3 x 10^7 arcs each are left out).
CLOSENESS_MAX_WORK = 5 * 10**10


def load(name: str):
    """A benchmark graph, or for the simulator the teaching graph or networkx's karate club."""
    if name == "karate":
        import networkx as nx

        from explorer import graphs

        return graphs.from_networkx(nx.karate_club_graph(), name="karate")
    return harness.load(name)


def to_networkx(g):
    """networkx graph of a CSRGraph, nodes 0..n-1 (an undirected edge added once)."""
    import networkx as nx

    G = nx.DiGraph() if g.directed else nx.Graph()
    G.add_nodes_from(range(g.num_vertices))
    src = np.repeat(np.arange(g.num_vertices, dtype=np.int64), g.degrees())
    dst = g.indices.astype(np.int64)
    keep = slice(None) if g.directed else src <= dst
    G.add_edges_from(zip(src[keep].tolist(), dst[keep].tolist()))
    return G


def timed(fn, repeats: int = 1):
    """(median seconds, last result) of `repeats` calls."""
    times, out = [], None
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def budgeted(per_source, sources, budget: float):
    """Run per_source(s) over `sources` until `budget` seconds pass: (seconds for all of them,
    extrapolated linearly when not all ran, results of those that ran)."""
    t0 = time.perf_counter()
    done = []
    for s in sources:
        done.append(per_source(s))
        if time.perf_counter() - t0 > budget:
            break
    t = time.perf_counter() - t0
    return t * len(sources) / len(done), len(done) < len(sources), done


def cases(G, g, args):
    """(function, bfs4k call on the backend graph bg, networkx measurement, scipy call or None, check)."""
    import networkx as nx
    from scipy.sparse import csgraph

    A = g.to_scipy()
    n = g.num_vertices
    s = int(np.argmax(g.degrees()))
    rng = np.random.default_rng(1)
    sample = [int(x) for x in rng.permutation(n)]
    out = []

    def single(name, call, sp):
        def nx_side():
            t, r = timed(lambda: call(G))
            return t, False, r
        out.append((name, lambda bg: call(bg), nx_side, sp, lambda a, b: a == b))

    single("bfs_layers", lambda H: list(nx.bfs_layers(H, s)),
           lambda: csgraph.breadth_first_order(A, s, directed=g.directed, return_predecessors=False))
    single("single_source_shortest_path_length", lambda H: nx.single_source_shortest_path_length(H, s),
           lambda: csgraph.shortest_path(A, directed=g.directed, unweighted=True, indices=s))
    if not g.directed:
        single("connected_components", lambda H: sorted(map(min, nx.connected_components(H))),
               lambda: csgraph.connected_components(A, directed=False))

    def closeness_nx():
        t, ext, vals = budgeted(lambda u: nx.closeness_centrality(G, u), sample, args.budget)
        return t, ext, dict(zip(sample, vals))

    def closeness_check(mine, theirs):
        return all(abs(mine[u] - c) <= 1e-12 for u, c in theirs.items())

    closeness_sp = None
    if n <= APSP_MAX_VERTICES:
        closeness_sp = lambda: csgraph.shortest_path(A.T if g.directed else A, unweighted=True)  # noqa: E731
    if n * g.num_arcs <= CLOSENESS_MAX_WORK:
        out.append(("closeness_centrality", lambda bg: nx.closeness_centrality(bg), closeness_nx, closeness_sp,
                    closeness_check))

    k = min(args.k, n)

    def betweenness_nx():
        # The full call when it fits the budget; else networkx's time per source (Brandes from one
        # of its k sampled sources: random.Random(1).sample(list(G), k), the backend's too) times k.
        import random

        chosen = random.Random(1).sample(list(G), k)
        one = lambda x: nx.betweenness_centrality_subset(G, [x], list(G))  # noqa: E731
        if timed(lambda: one(chosen[0]))[0] * k <= args.budget:
            t, r = timed(lambda: nx.betweenness_centrality(G, k=k, seed=1))
            return t, False, r
        t, ext, _ = budgeted(one, chosen, args.budget)
        return t, ext, None

    out.append((f"betweenness_centrality k={k}", lambda bg: nx.betweenness_centrality(bg, k=k, seed=1),
                betweenness_nx, None,
                lambda a, b: all(abs(a[v] - b[v]) <= 1e-9 * max(1.0, abs(b[v])) for v in b)))

    if n <= APSP_MAX_VERTICES and (args.apsp == "all" or g.name in args.apsp.split(",")):
        def apsp_nx():
            t, ext, rows = budgeted(lambda u: nx.single_source_shortest_path_length(G, u), list(G), args.budget)
            return t, ext, dict(zip(list(G), rows))

        out.append(("all_pairs_shortest_path_length", lambda bg: dict(nx.all_pairs_shortest_path_length(bg)),
                    apsp_nx, lambda: csgraph.shortest_path(A, directed=g.directed, unweighted=True),
                    lambda a, b: all(a[u] == d for u, d in b.items())))
    return out


def bench_graph(name, args) -> dict:
    from explorer.nx_backend.interface import backend_interface

    g = load(name)
    t_nx, G = timed(lambda: to_networkx(g))
    t_conv, bg = timed(lambda: backend_interface.convert_from_nx(G))
    row = {"graph": name, "vertices": g.num_vertices, "arcs": g.num_arcs, "directed": g.directed,
           "build_networkx_s": round(t_nx, 3), "convert_to_bfs4k_s": round(t_conv, 3), "functions": []}
    print(f"{name}: {g.num_vertices:,} vertices, {g.num_arcs:,} arcs; networkx graph {t_nx:.1f} s, "
          f"bfs4k conversion {t_conv:.2f} s", flush=True)
    for fname, mine, theirs, sp, check in cases(G, g, args):
        mine_once = lambda: mine(bg)  # noqa: E731
        mine_once()  # compiles the kernels, allocates the session's buffers
        t_bk, got = timed(mine_once, args.repeats)
        t_x, extrapolated, want = theirs()
        t_sp = timed(sp)[0] if sp is not None else None
        ok = None if want is None else bool(check(got, want))
        rec = {"function": fname, "bfs4k_s": t_bk, "networkx_s": t_x, "networkx_extrapolated": extrapolated,
               "scipy_s": t_sp, "speedup_vs_networkx": t_x / t_bk if t_bk else None,
               "checked_against_networkx": ok}
        row["functions"].append(rec)
        print(f"  {fname:40s} bfs4k {t_bk:9.4f} s  networkx {t_x:9.3f} s{'*' if extrapolated else ' '}  "
              f"scipy {'-' if t_sp is None else f'{t_sp:8.4f} s'}  x{rec['speedup_vs_networkx']:.1f}  "
              f"{'' if ok is None else 'checked' if ok else 'MISMATCH'}", flush=True)
    bg.close()
    return row


def markdown(result) -> list[str]:
    lines = [f"networkx {result['versions']['networkx']}, scipy {result['versions']['scipy']}. Times in seconds: "
             f"bfs4k the median of {result['repeats']} calls after a warm-up; networkx once, * extrapolated from the "
             f"sources it ran within {result['budget']} s.", ""]
    for row in result["graphs"]:
        table = []
        for f in row["functions"]:
            sp = "—" if f["scipy_s"] is None else f"{f['scipy_s']:.4f}"
            ok = f["checked_against_networkx"]
            chk = "—" if ok is None else ("yes" if ok else "**NO**")
            table.append([f["function"], f"{f['bfs4k_s']:.4f}",
                          f"{f['networkx_s']:.3f}{'*' if f['networkx_extrapolated'] else ''}", sp,
                          f"{f['speedup_vs_networkx']:.1f}x", chk])
        lines += [f"## {row['graph']} ({row['vertices']:,} vertices, {row['arcs']:,} arcs)", "",
                  f"networkx graph built in {row['build_networkx_s']} s; converted to bfs4k in "
                  f"{row['convert_to_bfs4k_s']} s (once: networkx caches it on the graph).", "",
                  *harness.markdown_table(["function", "bfs4k", "networkx", "scipy", "bfs4k vs networkx", "checked"],
                                          table, {1, 2, 3, 4}), ""]
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default=None, help="results folder (default benchmarks/results)")
    p.add_argument("--graphs", nargs="*", help=f"default: {' '.join(GRAPHS)}")
    p.add_argument("--k", type=int, default=256, help="betweenness_centrality's sampled sources")
    p.add_argument("--budget", type=float, default=5.0, help="seconds for networkx's many-source calls")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--apsp", default="facebook_combined",
                   help="graphs (comma-separated, or 'all') to time all_pairs_shortest_path_length on")
    p.add_argument("--simulator", action="store_true", help="a check of this script on tiny graphs (no GPU)")
    args = p.parse_args(argv)
    from explorer import backend

    try:
        backend.select("simulator" if args.simulator else "gpu")
    except backend.BackendError as err:
        print(f"nx_backend needs a GPU: {err}", file=sys.stderr)
        return 2
    import networkx as nx
    import scipy

    names = args.graphs or (SMOKE_GRAPHS if args.simulator else GRAPHS)
    try:
        harness.check_names([x for x in names if x != "karate"])
    except harness.UnknownGraph as err:
        p.error(str(err))
    cfg = nx.config.backends.bfs4k
    cfg.cache_bytes = 0  # every bfs4k call searches: no stored rows
    nx.config.warnings_to_ignore.add("cache")
    env = harness.environment()
    print(harness.describe(env), flush=True)
    result = {"config": dict(cfg), "repeats": args.repeats, "budget": args.budget,
              "versions": {"networkx": nx.__version__, "scipy": scipy.__version__}, "graphs": []}
    for name in names:
        result["graphs"].append(bench_graph(name, args))
    rows = result.pop("graphs")
    harness.write_results(args.out, "nx_backend" + ("-smoke" if args.simulator else ""), env, result, rows,
                          markdown({**result, "graphs": rows}),
                          f'networkx with backend="bfs4k" against networkx and scipy, {env["gpu"]}')
    bad = [(r["graph"], f["function"]) for r in rows for f in r["functions"] if f["checked_against_networkx"] is False]
    if bad:
        print(f"MISMATCH against networkx: {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
