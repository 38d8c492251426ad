"""Weighted shortest paths on a real GPU: every SSSP technique beside scipy (the host's Dijkstra) and
Gunrock's SSSP on a road network, a Kronecker graph and a mesh with weights; the blocked
Floyd-Warshall on n = 4,096 and 8,192 beside scipy's floyd_warshall.

    python3 -m benchmarks.sssp                                    # everything (fits 8 minutes on an H100)
    python3 -m benchmarks.sssp --graphs luxembourg_osm --fw       # one graph, no Floyd-Warshall
    python3 -m benchmarks.sssp --smoke --out /tmp/sssp            # tiny graphs under the simulator
    python3 -m benchmarks.sssp --graphs kron20 --techniques h-bf --hbf-knobs --fw   # H-BF's knobs side by side

Weights: every graph gets seeded integer weights 1..100 (explorer.graphs.with_weights, seed 1),
so our distances are int64 and Gunrock's float32 ones are exact. Each configuration runs once to
compile, then --repeats times; the times are the median of those runs: `elapsed` is the engine's
(CUDA events from the first step's start to the last step's end, host round trips included, the
caller's time excluded), `no tree` the same less the last step, which makes every parent tight
(Gunrock's SSSP computes no parents: its time compares with this one); Gunrock's is
gunrock::sssp::run's own timer (best of its block-mapped, merge-path and thread-mapped advance,
median of its runs), scipy's the host's wall time of csgraph.dijkstra. Every result is checked:
ours with check_sssp_result (scipy's distances, parents forming shortest paths), Gunrock's
distances against scipy's. A run of at most 64 steps keeps its last repeat's per-step records in
the JSON (frontier, relaxations, improvements, the technique's extras such as H-BF's atomics and
warp, time).

Floyd-Warshall: a uniform random directed graph of n vertices and 8n arcs, weights 1..100; the time
is the rounds' (CUDA events), without the n x n matrix's set-up and copy back (stated beside it).
scipy's floyd_warshall is timed up to --scipy-fw-max vertices (an n = 8,192 run takes it minutes);
above, its time is extrapolated from the largest timed n by n^3 and marked "estimate". The matrix
is checked against scipy's: whole for the timed sizes, on --fw-rows sampled rows (scipy's
Dijkstra) above.

Gunrock runs where `.gunrock/sssp_bin` is built (its driver and build steps live beside
.gunrock/bfs_bin: benchmarks/README.md). Writes results/<GPU>/sssp.{json,md}.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

import numpy as np

from benchmarks import harness

DEFAULT_GRAPHS = ["luxembourg_osm", "kron20", "grid3d"]
TECHNIQUES = [("h-bf", {}), ("delta-stepping", {}), ("delta-stepping", {"form": "bucketing"}),
              ("bellman-ford", {"dedup": "stamp"})]
#: H-BF's knobs one at a time beside its defaults (--hbf-knobs): the atomic min on every arc with 4 lanes
#: at least (test_first='off', K1=4), each of the two alone, and a lower heavy-vertex degree.
HBF_KNOBS = [("h-bf", {"test_first": "off", "K1": 4}), ("h-bf", {"test_first": "off"}), ("h-bf", {"K1": 4}),
             ("h-bf", {"heavy_degree": 256})]
#: Per-step records are kept in the JSON for runs of at most this many steps.
RECORD_STEPS = 64
GUNROCK_SSSP = harness.peers.ROOT / ".gunrock" / "sssp_bin"
FW_TARGET_MS = 1000.0  # n = 8,192 under a second


def _config(text: str) -> tuple[str, dict]:
    """TECHNIQUE:KNOB=V,... as (technique, knobs), each value typed and range-checked against the
    technique's knobs as the sssp command's --knob is."""
    from explorer.knobs import KnobError
    from explorer.sssp.techniques import implementation
    from explorer.ui.cli_input import UsageError, parse_knob_values

    tech, _, rest = text.partition(":")
    try:
        return tech.strip(), parse_knob_values(None, list(filter(None, rest.split(","))),
                                               implementation(tech.strip()).Knobs)
    except (KnobError, UsageError, ValueError) as err:
        raise argparse.ArgumentTypeError(f"{text!r}: {err}") from None


def weighted(name: str, small: bool):
    from explorer.graphs import with_weights

    g = harness.load(name, small=small)
    return with_weights(g, "integer", 1, 100, seed=1)


def run_ours(g, source: int, tech: str, knobs: dict, repeats: int, expected, say) -> dict:
    from explorer.engine import Session

    label = tech + "".join(f" {k}={v}" for k, v in knobs.items())
    row = {"config": label, "technique": tech, "knobs": knobs}
    elapsed, no_tree, gpu = [], [], []
    with Session(g) as session:
        try:
            first = harness.start_sssp(g, source, tech, knobs, session=session).complete()  # compiles
            rep = harness.check_sssp(g, first, expected=expected)
            row.update(correct=rep.ok, checked=rep.message)
            if not rep.ok:
                say(f"  {label}: WRONG: {rep.message}")
                return row
            for _ in range(repeats):
                r = harness.start_sssp(g, source, tech, knobs, session=session).complete()
                tree = sum(s.time_ms for s in r.iterations if s.phase == "parents")
                elapsed.append(r.elapsed_ms)
                no_tree.append(r.elapsed_ms - tree)
                gpu.append(r.total_ms)
        except Exception as err:  # one configuration's failure is a row, not the end of the benchmark
            row.update(correct=False, error=f"{type(err).__name__}: {err}")
            say(f"  {label}: FAILED: {row['error']}")
            return row
    s = r.summary()
    if len(r.iterations) <= RECORD_STEPS:
        row["records"] = [{k: v for k, v in it.as_row().items() if k not in ("technique",)} for it in r.iterations]
    row.update(median_ms=round(statistics.median(elapsed), 4), min_ms=round(min(elapsed), 4),
               max_ms=round(max(elapsed), 4), no_tree_ms=round(statistics.median(no_tree), 4),
               gpu_ms=round(statistics.median(gpu), 4), runs_ms=[round(t, 4) for t in elapsed],
               iterations=s["iterations"], relaxations=s["relaxations"], improvements=s["improvements"],
               duplicates=s["duplicates"], distances=s["distances"])
    say(f"  {label:40s} {row['median_ms']:9.3f} ms (no tree {row['no_tree_ms']:.3f}; min {row['min_ms']:.3f}, "
        f"max {row['max_ms']:.3f}) {s['iterations']} steps, {s['relaxations']:,} relaxations")
    return row


def run_gunrock(g, weights: np.ndarray, source: int, expected: np.ndarray, runs: int, say) -> dict:
    row = {"config": "Gunrock SSSP", "technique": "gunrock"}
    if not GUNROCK_SSSP.is_file():
        row["skipped"] = f"Gunrock SSSP not built: no {GUNROCK_SSSP.relative_to(harness.peers.ROOT)}"
        say(f"  {row['skipped']}")
        return row
    tried, best = {}, None
    with harness.PeerGraph(g) as pg:
        wpath = pg.csr.with_name("weights.f32")
        weights.astype(np.float32).tofile(wpath)
        for lb in ("block", "merge", "thread"):
            dist = pg.csr.with_name(f"sssp-{lb}.out")
            cmd = [str(GUNROCK_SSSP), str(pg.path()), str(wpath), str(source), str(runs), lb, str(dist)]
            try:
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            except subprocess.TimeoutExpired:
                tried[lb] = "more than 300 s"
                continue
            found = harness.peers._TIMES.search(p.stdout)
            if p.returncode != 0 or not found:
                tried[lb] = f"exit {p.returncode}: {(p.stderr.strip().splitlines() or ['no output'])[-1]}"
                continue
            d = np.fromfile(dist, dtype=np.float32).astype(np.float64)
            d[d >= np.finfo(np.float32).max / 2] = np.inf
            ok = d.shape == expected.shape and np.array_equal(np.isfinite(d), np.isfinite(expected)) and \
                np.allclose(d[np.isfinite(d)], expected[np.isfinite(expected)], rtol=1e-6)
            med, lo, hi = (float(x) for x in found.groups())
            tried[lb] = round(med, 4) if ok else "WRONG distances"
            if ok and (best is None or med < best[0]):
                best = (med, lo, hi, lb)
    row["variants"] = tried
    if best is None:
        row.update(correct=False, error="; ".join(f"{k}: {v}" for k, v in tried.items()))
        say(f"  Gunrock SSSP: {row['error']}")
        return row
    row.update(correct=True, median_ms=round(best[0], 4), min_ms=round(best[1], 4), max_ms=round(best[2], 4),
               knobs={"load_balance": best[3]})
    say(f"  {'Gunrock SSSP (' + best[3] + ')':40s} {best[0]:9.3f} ms (min {best[1]:.3f}, max {best[2]:.3f})")
    return row


def sssp_graph(name: str, args, say) -> list[dict]:
    from explorer import backend

    g = weighted(name, args.smoke)
    common = {"graph": name, "vertices": g.num_vertices, "arcs": g.num_arcs}
    try:
        backend.check_graph_size(g.num_arcs)
    except backend.BackendError as err:  # the simulator's limit (--smoke on a sample graph)
        say(f"{name}: skipped: {err}")
        return [{**common, "config": "-", "skipped": str(err)}]
    source = harness.source_of(name, g, small=args.smoke)
    say(f"{name}: {g.num_vertices:,} vertices, {g.num_arcs:,} arcs, weights 1..100; source {source}")
    t = time.perf_counter()
    expected = harness.reference_sssp(g, source)
    scipy_ms = (time.perf_counter() - t) * 1e3
    say(f"  {'scipy dijkstra (host)':40s} {scipy_ms:9.3f} ms")
    common["source"] = source
    rows = [{**common, "config": "scipy dijkstra (host)", "technique": "scipy", "median_ms": round(scipy_ms, 4),
             "correct": True}]
    techs = [(t, k) for t, k in TECHNIQUES + (HBF_KNOBS if args.hbf_knobs else []) if t in args.techniques] + args.config
    for tech, knobs in techs:
        rows.append({**common, **run_ours(g, source, tech, dict(knobs), args.repeats, expected, say)})
    rows.append({**common, **run_gunrock(g, g.weights, source, expected, max(args.repeats, 5), say)})
    return rows


def fw_rows(args, say) -> list[dict]:
    from scipy.sparse import csgraph

    from explorer import graphs
    from explorer.reference.sssp import scipy_matrix

    rows, timed_scipy = [], {}
    for n in args.fw:
        g = graphs.generate("uniform_random", n=n, m=8 * n, directed=True, seed=1, weights="integer", weight_low=1,
                            weight_high=100)
        say(f"Floyd-Warshall: {g.name}: {n:,} vertices, {g.num_arcs:,} arcs")
        ref = None
        if n <= args.scipy_fw_max:
            t = time.perf_counter()
            ref = csgraph.floyd_warshall(scipy_matrix(g), directed=True)
            timed_scipy[n] = (time.perf_counter() - t) * 1e3
            rows.append({"graph": g.name, "n": n, "config": "scipy floyd_warshall (host)", "median_ms":
                         round(timed_scipy[n], 2), "estimate": False, "correct": True})
            say(f"  {'scipy floyd_warshall (host)':40s} {timed_scipy[n]:11.1f} ms")
        elif timed_scipy:
            base = max(timed_scipy)
            est = timed_scipy[base] * (n / base) ** 3
            rows.append({"graph": g.name, "n": n, "config": "scipy floyd_warshall (host)", "median_ms": round(est, 1),
                         "estimate": True, "from_n": base})
            say(f"  {'scipy floyd_warshall (host), estimate':40s} {est:11.1f} ms (n^3 from n = {base:,})")
        for tile in args.tiles:
            knobs = {"tile": tile}
            row = {"graph": g.name, "n": n, "config": f"floyd-warshall tile={tile}", "knobs": knobs}
            try:
                first = harness.start_apsp(g, "floyd-warshall", knobs).complete()
                if ref is not None:
                    ok = bool(np.array_equal(first.distances, ref))
                    how = "the whole matrix equals scipy's floyd_warshall"
                else:
                    rng = np.random.default_rng(1)
                    picks = rng.choice(n, min(args.fw_rows, n), replace=False)
                    ok = all(np.array_equal(first.distances[s], harness.reference_sssp(g, int(s))) for s in picks)
                    how = f"{len(picks)} sampled rows equal scipy's Dijkstra"
                row.update(correct=ok, checked=how)
                times = []
                for _ in range(args.fw_repeats):
                    times.append(harness.start_apsp(g, "floyd-warshall", knobs).complete().elapsed_ms)
            except Exception as err:
                row.update(correct=False, error=f"{type(err).__name__}: {err}")
                say(f"  {row['config']}: FAILED: {row['error']}")
                rows.append(row)
                continue
            row.update(median_ms=round(statistics.median(times), 3), min_ms=round(min(times), 3),
                       max_ms=round(max(times), 3), runs_ms=[round(t, 3) for t in times], rounds=len(first.steps))
            say(f"  {row['config']:40s} {row['median_ms']:11.3f} ms (min {row['min_ms']:.3f}) "
                f"{'ok' if ok else 'WRONG'}: {how}")
            rows.append(row)
    return rows


def verdicts(sssp: list[dict], fw: list[dict]) -> list[str]:
    lines = []
    for name in dict.fromkeys(r["graph"] for r in sssp):
        rs = [r for r in sssp if r["graph"] == name]
        ours = [r for r in rs if r.get("technique") not in ("scipy", "gunrock") and r.get("correct")]
        gun = next((r for r in rs if r.get("technique") == "gunrock"), {})
        if not ours:
            skipped = next((r["skipped"] for r in rs if r.get("skipped") and r.get("config") == "-"), None)
            lines.append(f"- {name}: skipped ({skipped})" if skipped else f"- {name}: no correct run of ours")
            continue
        best = min(ours, key=lambda r: r["no_tree_ms"])
        if gun.get("median_ms") is None:
            lines.append(f"- {name}: best {best['config']} {best['no_tree_ms']:.3f} ms without the tree "
                         f"({best['median_ms']:.3f} ms with it); Gunrock not measured ({gun.get('skipped') or gun.get('error')})")
            continue
        ahead = best["no_tree_ms"] < gun["median_ms"]
        lines.append(f"- {name}: best {best['config']} {best['no_tree_ms']:.3f} ms without the tree "
                     f"({best['median_ms']:.3f} ms with it) vs Gunrock {gun['median_ms']:.3f} ms: "
                     f"{'AHEAD' if ahead else 'BEHIND'} ({gun['median_ms'] / best['no_tree_ms']:.2f}x)")
    for r in fw:
        if r["config"].startswith("floyd-warshall") and r.get("median_ms") is not None and r["n"] == 8192:
            lines.append(f"- Floyd-Warshall n = 8,192 ({r['config']}): {r['median_ms']:.1f} ms: "
                         f"{'under' if r['median_ms'] < FW_TARGET_MS else 'OVER'} 1 s")
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graphs", nargs="*", default=DEFAULT_GRAPHS, help="registered graphs (harness.GRAPHS)")
    ap.add_argument("--techniques", nargs="*", default=sorted({t for t, _ in TECHNIQUES}))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--hbf-knobs", action="store_true", help="also H-BF's knobs one at a time (HBF_KNOBS)")
    ap.add_argument("--config", action="append", type=_config, default=[], metavar="TECHNIQUE:KNOB=V,...",
                    help="one more configuration to run (repeatable), e.g. h-bf:block_threads=256,heavy_degree=4096")
    ap.add_argument("--fw", nargs="*", type=int, default=[4096, 8192], help="Floyd-Warshall sizes (none: skip)")
    ap.add_argument("--tiles", nargs="*", type=int, default=[64, 32])
    ap.add_argument("--fw-repeats", type=int, default=3)
    ap.add_argument("--scipy-fw-max", type=int, default=4096, help="largest n scipy's floyd_warshall is timed at")
    ap.add_argument("--fw-rows", type=int, default=64, help="rows checked against scipy's Dijkstra above that")
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results)")
    ap.add_argument("--name", default="sssp", help="the results' file name (NAME.json, NAME.md)")
    ap.add_argument("--smoke", action="store_true", help="tiny graphs under the simulator: a check of the script")
    args = ap.parse_args(argv)
    from explorer import backend

    if args.smoke:
        backend.select("simulator")
        args.fw = [min(n, 40) for n in args.fw][:1]
        args.tiles = [16]
        args.repeats, args.fw_repeats = 1, 1
    else:
        backend.select("auto")
    harness.check_names(args.graphs)
    env = harness.environment()
    say = lambda msg: print(msg, flush=True)  # noqa: E731
    say(harness.describe(env))
    sssp = [r for name in args.graphs for r in sssp_graph(name, args, say)]
    fw = fw_rows(args, say) if args.fw else []
    lines = verdicts(sssp, fw)
    say("\n".join(["", "Goals (ours without the tree vs Gunrock's SSSP, which computes no parents):", *lines]))
    md = ["SSSP: median of the runs (ms); `no tree`: without the last step (every parent made tight).", ""]
    md += harness.markdown_table(
        ["graph", "configuration", "elapsed ms", "no tree ms", "min", "max", "steps", "relaxations", "check"],
        [[r["graph"], r["config"], r.get("median_ms"), r.get("no_tree_ms"), r.get("min_ms"), r.get("max_ms"),
          r.get("iterations"), r.get("relaxations"),
          "ok" if r.get("correct") else (r.get("skipped") or r.get("error") or "WRONG")] for r in sssp],
        right={2, 3, 4, 5, 6, 7})
    if fw:
        md += ["", "Floyd-Warshall: the rounds' time (the matrix's set-up and copy back excluded).", ""]
        md += harness.markdown_table(
            ["graph", "n", "configuration", "ms", "min", "check"],
            [[r["graph"], r["n"], r["config"] + (" (estimate)" if r.get("estimate") else ""), r.get("median_ms"),
              r.get("min_ms"), r.get("checked") or r.get("error") or ("-" if r.get("estimate") else "ok")] for r in fw],
            right={1, 3, 4})
    md += ["", "Goals:", *lines]
    settings = {"graphs": args.graphs, "techniques": TECHNIQUES + (HBF_KNOBS if args.hbf_knobs else []) + args.config,
                "repeats": args.repeats, "fw": args.fw,
                "tiles": args.tiles, "weights": "integer 1..100, seed 1", "scipy_fw_max": args.scipy_fw_max}
    harness.write_results(args.out, args.name, env, settings, sssp + fw, md,
                          "Weighted shortest paths: SSSP beside scipy and Gunrock; Floyd-Warshall beside scipy")
    wrong = [r for r in sssp + fw if r.get("correct") is False]
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
