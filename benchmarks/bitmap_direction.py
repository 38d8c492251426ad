"""bitmap-direction on a real GPU beside BLEST and Gunrock, in one call: the graphs of the
comparison table, each from its max-degree vertex (the 1000 x 1000 grid from its centre), 64
random roots of Kronecker scale 22, the cost of graph preparation, the cost of the per-level
counts, and levels arriving while the kernel runs. GPU only.

    python benchmarks/bench_bitmap_direction.py --out DIR                    # everything
    python benchmarks/bench_bitmap_direction.py --out DIR --graphs kron22 facebook_combined --no-peers
    python benchmarks/bench_bitmap_direction.py --out DIR --sections floor table --repeats 11
    NUMBA_ENABLE_CUDASIM=1 python benchmarks/bench_bitmap_direction.py --out /tmp/x --smoke   # the script itself

Sections (rows printed as they come; DIR/DATE-GPU-bitmap-direction.{json,md} rewritten after each):
  floor       what a search cannot go below on this GPU: an empty cooperative launch (CUDA events),
              a grid barrier (cuda.cg.this_grid().sync(), the search's own grid), the device
              nanosecond clock's step, and the copy bandwidth (a device-to-device copy).
  table       per graph: preparation (each vertex order, seconds, pairs per arc), then each
              configuration of bitmap-direction: median of --repeats uninstrumented runs after a
              warm-up on one Session, CUDA-event time of the launch (`elapsed`, launch included)
              and the sum of the levels' device-clock times (`kernel`); BLEST and Gunrock on the
              same graph and source (--blest, --gunrock binaries; ../shared/tools/*/README.md).
  roots       Kronecker scale 22, --roots random roots of non-zero degree (Graph500: each search
              timed once after a warm-up, harmonic mean of TEPS), the defaults and the best
              table configuration.
  instrument  Kronecker scale 22 from the max-degree vertex: the per-level counts on and off.
  streaming   the 1000 x 1000 grid: when each level's record reaches the host, against the search's
              own time (records that arrive while the kernel runs are streamed).

Checks: every run's distances equal the CPU reference (explorer.reference.cpu_bfs); the Graph500
validator (check_result: parents too) runs on every run of graphs below VALIDATE_ALL_ARCS arcs and
on the first and last timed run of larger ones (it takes seconds there); every random root's search
goes through the Graph500 rules (validate, the reached set from one CPU BFS of its component).
Peers' distances are compared with the reference too (they compute no parents).

Mapping onto a benchmark harness: each (graph, configuration) row is one case with a setup (the
graph, its Session, one warm-up), a timed body (one run_bfs(...).complete(), its elapsed_ms) and a
check (distances against the reference, check_result); GRAPHS and CONFIGS are the case matrix;
`peer` rows are external commands whose output line `median_ms=...` is the measurement.
"""
from __future__ import annotations

import argparse
import datetime
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer import backend, graphs  # noqa: E402
from explorer.api import Vertex, run_bfs  # noqa: E402
from explorer.engine import Session  # noqa: E402
from explorer.graphs.prepare import ORDERS, prepare  # noqa: E402
from explorer.reference import check_result, cpu_bfs  # noqa: E402
from explorer.reference.validate import validate  # noqa: E402

TECH = "bitmap-direction"
SECTIONS = ("floor", "table", "roots", "instrument", "streaming")
VALIDATE_ALL_ARCS = 10_000_000
ROOTS_SEED = 18  # the roots bench_direction.py draws

#: name -> (label, builder, source: "max-degree" or "centre"). The comparison table's graphs.
GRAPHS = {
    "kron22": ("Kronecker s22 ef16", lambda: graphs.generate("kronecker", scale=22, edge_factor=16, seed=1),
               "max-degree"),
    "kron20": ("Kronecker s20 ef16", lambda: graphs.generate("kronecker", scale=20, edge_factor=16, seed=1),
               "max-degree"),
    "uniform": ("uniform random 2 M / 134 M arcs",
                lambda: graphs.generate("uniform_random", n=1 << 21, m=1 << 26, seed=1), "max-degree"),
    "smallworld": ("small world 2 M", lambda: graphs.generate("watts_strogatz", n=1 << 21, k=10, p=0.3, seed=1),
                   "max-degree"),
    "grid3d": ("3-D grid 128³", lambda: graphs.generate("grid3d", nx=128, ny=128, nz=128), "max-degree"),
    "grid1000": ("1000² grid (centre)", lambda: graphs.generate("grid2d", rows=1000, cols=1000), "centre"),
    "luxembourg_osm": ("luxembourg_osm", lambda: graphs.sample_graph("luxembourg_osm"), "max-degree"),
    "delaunay_n16": ("delaunay_n16", lambda: graphs.sample_graph("delaunay_n16"), "max-degree"),
    "facebook_combined": ("facebook_combined", lambda: graphs.sample_graph("facebook_combined"), "max-degree"),
    "Wiki-Vote": ("Wiki-Vote (symmetrized)", lambda: graphs.sample_graph("Wiki-Vote", symmetrize=True),
                  "max-degree"),
    "p2p-Gnutella31": ("p2p-Gnutella31 (symmetrized)",
                       lambda: graphs.sample_graph("p2p-Gnutella31", symmetrize=True), "max-degree"),
    "3elt": ("3elt", lambda: graphs.sample_graph("3elt"), "max-degree"),
}
#: The table's best of this project before bitmap-direction (ms, H100, the comparison table), and BLEST's there.
BEFORE = {"kron22": 0.502, "kron20": 0.259, "uniform": 0.986, "smallworld": 0.874, "grid3d": 5.02,
          "grid1000": 4.63, "luxembourg_osm": 3.14, "delaunay_n16": 0.629, "facebook_combined": 0.233,
          "Wiki-Vote": 0.149, "p2p-Gnutella31": 0.499, "3elt": 0.198}

#: bitmap-direction's configurations: the defaults first, then what each kind of graph may want
#: (--configs explore), or the defaults and one alternative (--configs final).
COMMON = [("defaults", {})]
LARGE = [("order none", {"order": "none"}), ("solo_pairs 1", {"solo_pairs": 1}),
         ("blocks of 512", {"block_threads": 512}), ("bottom-up to the end (beta 10^6)", {"beta": 1_000_000})]
SMALL = [("order none", {"order": "none"}), ("blocks of 512", {"block_threads": 512}),
         ("the grid (one_block_vertices 0)", {"one_block_vertices": 0}),
         ("the grid, at most 16 blocks", {"one_block_vertices": 0, "max_blocks": 16})]
HIGH = [("order rcm", {"order": "rcm"}), ("blocks of 512", {"block_threads": 512}),
        ("narrow up to 65536 edges", {"narrow_edges": 65536}), ("narrow up to 2048 edges", {"narrow_edges": 2048})]
FINAL = {"large": [("bottom-up to the end (beta 10^6)", {"beta": 1_000_000}), ("solo_pairs 4", {"solo_pairs": 4})],
         "small": [("the grid (one_block_vertices 0)", {"one_block_vertices": 0}),
                   ("the grid, at most 16 blocks", {"one_block_vertices": 0, "max_blocks": 16})],
         "high": [("blocks of 512", {"block_threads": 512}), ("order rcm", {"order": "rcm"}),
                  ("one block in all (max_blocks 1)", {"max_blocks": 1})]}
SMALL_GRAPHS = ("facebook_combined", "Wiki-Vote", "p2p-Gnutella31")
LARGE_GRAPHS = ("kron22", "kron20", "uniform", "smallworld")
CONFIGS = "explore"


_BUILT: dict = {}


def built(name: str):
    """GRAPHS[name] built once a process (the sections share Kronecker scale 22 and the grid)."""
    if name not in _BUILT:
        _BUILT[name] = GRAPHS[name][1]()
    return _BUILT[name]


#: Kronecker scale 22 (roots, instrument) and the 1000 x 1000 grid (streaming).
KRON = functools.partial(built, "kron22")
GRID = functools.partial(built, "grid1000")
#: Knobs every run gets (--smoke: the technique's simulator knobs).
BASE: dict = {}


def configs(name: str) -> list[tuple[str, dict]]:
    kind = "large" if name in LARGE_GRAPHS else "small" if name in SMALL_GRAPHS else "high"
    own = FINAL[kind] if CONFIGS == "final" else {"large": LARGE, "small": SMALL, "high": HIGH}[kind]
    return [(label, {**BASE, **knobs}) for label, knobs in COMMON + own]


def smoke() -> None:
    """Tiny graphs on the simulator: a check of this script, not a benchmark."""
    global BASE
    from explorer.techniques import implementation

    small = {"kron22": lambda: graphs.generate("kronecker", scale=7, edge_factor=8, seed=1),
             "grid1000": lambda: graphs.generate("grid2d", rows=12, cols=12),
             "facebook_combined": lambda: graphs.generate("watts_strogatz", n=200, k=6, p=0.3, seed=1)}
    for name in list(GRAPHS):
        if name in small:
            GRAPHS[name] = (GRAPHS[name][0] + " (smoke: tiny)", small[name], GRAPHS[name][2])
        else:
            del GRAPHS[name]
    BASE = dict(implementation(TECH).simulator_knobs)


def environment() -> dict:
    import numba
    import numba.cuda

    env = backend.current().as_dict()
    try:
        env["nvidia_smi"] = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        env["nvidia_smi"] = "unavailable"
    env.update(numba=numba.__version__, numpy=np.__version__, python=platform.python_version(),
               host=platform.node(), cpus=os.cpu_count(),
               date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    try:
        from importlib.metadata import version

        env["numba_cuda"] = version("numba-cuda")
    except Exception:  # noqa: BLE001  (a version string is only informative)
        pass
    return env


def source_of(g, rule: str) -> int:
    if rule == "centre":
        side = int(round(np.sqrt(g.num_vertices)))
        return (side // 2) * side + side // 2
    return int(np.argmax(g.degrees()))


# ---------------------------------------------------------------------------------- floor
def section_floor() -> dict:
    """Launch, barrier, clock and bandwidth on this GPU, with kernels of the search's own shape."""
    from numba import cuda, int64

    from kernels.bitmap_direction.device import globaltimer

    @cuda.jit
    def empty(out):
        grid = cuda.cg.this_grid()
        if cuda.grid(1) == 0:
            out[0] = 1
        grid.sync()

    @cuda.jit
    def barriers(out, k):
        grid = cuda.cg.this_grid()
        for _ in range(k):
            grid.sync()
        if cuda.grid(1) == 0:
            out[0] = k

    @cuda.jit
    def ticks(out, k):
        if cuda.grid(1) == 0:
            last = globaltimer()
            steps = int64(0)
            smallest = int64(1) << 40
            while steps < k:
                now = globaltimer()
                if now != last:
                    smallest = min(smallest, now - last)
                    steps += 1
                    last = now
            out[0] = smallest

    out = cuda.device_array(1, np.int64)
    res = {}
    for threads in (1024, 512):
        empty[1, threads](out)  # compile
        fits = empty.overloads[tuple(empty.typeof_pyval(a) for a in (out,))].max_cooperative_grid_blocks(threads)
        barriers[1, threads](out, 1)
        fitsb = barriers.overloads[tuple(barriers.typeof_pyval(a) for a in (out, 1))].max_cooperative_grid_blocks(
            threads)
        blocks = min(fits, fitsb)
        times = []
        for _ in range(21):
            a, b = cuda.event(), cuda.event()
            a.record()
            empty[blocks, threads](out)
            b.record()
            b.synchronize()
            times.append(cuda.event_elapsed_time(a, b))
        k = 2000
        bt = []
        for _ in range(5):
            a, b = cuda.event(), cuda.event()
            a.record()
            barriers[blocks, threads](out, k)
            b.record()
            b.synchronize()
            bt.append(cuda.event_elapsed_time(a, b))
        res[f"{blocks}x{threads}"] = {"empty_cooperative_launch_ms": round(statistics.median(times), 4),
                                      "grid_barrier_us": round(1e3 * (statistics.median(bt) - statistics.median(times))
                                                               / k, 3)}
    ticks[1, 32](out, 100)
    res["globaltimer_step_ns"] = int(out.copy_to_host()[0])
    n = 1 << 28
    src = cuda.device_array(n, np.uint8)
    dst = cuda.device_array(n, np.uint8)
    dst.copy_to_device(src)
    a, b = cuda.event(), cuda.event()
    a.record()
    for _ in range(5):
        dst.copy_to_device(src)
    b.record()
    b.synchronize()
    res["copy_gb_s"] = round(5 * 2 * n / (cuda.event_elapsed_time(a, b) * 1e6), 1)  # bytes read + written
    print(f"  floor: {res}", flush=True)
    return res


# ---------------------------------------------------------------------------------- ours
def time_ours(g, source, knobs, repeats, ref, session, instrument=False) -> dict:
    own = Vertex(source)
    t = time.perf_counter()
    run_bfs(g, own, TECH, knobs, instrument=instrument, session=session).complete()  # warm-up (compiles once)
    warm_s = time.perf_counter() - t
    runs = [run_bfs(g, own, TECH, knobs, instrument=instrument, session=session).complete() for _ in range(repeats)]
    wrong = [i for i, r in enumerate(runs) if not np.array_equal(r.distances, ref)]
    validate = range(len(runs)) if g.num_arcs < VALIDATE_ALL_ARCS else (0, len(runs) - 1)
    bad = [check_result(g, runs[i], expected=ref) for i in validate]
    bad = [b.message for b in bad if not b.ok]
    el = statistics.median(r.elapsed_ms for r in runs)
    r0 = runs[0]
    return {
        "elapsed_ms": round(el, 4), "elapsed_ms_all": [round(r.elapsed_ms, 4) for r in runs],
        "kernel_ms": round(statistics.median(r.total_ms for r in runs), 4),
        "gteps": round(r0.traversed_edges / (el * 1e6), 3), "levels": r0.num_levels, "warm_up_s": round(warm_s, 2),
        "steps": "".join(("S" if lv.kernel.value == "single-block" else "M") + ("b" if lv.direction.value == "bottom-up"
                                                                               else "") for lv in r0.levels)[:120],
        "launches": sum(lv.launches for lv in r0.levels),
        "correct": not wrong and not bad, "validated_runs": len(validate),
        "errors": ([f"run {wrong[0]}: distances differ"] if wrong else []) + bad[:1],
    }


def level_rows(g, source, knobs, session) -> list[dict]:
    """One instrumented run's records (what the Explorer plots)."""
    r = run_bfs(g, Vertex(source), TECH, knobs, instrument=True, session=session).complete()
    keys = ("level", "kernel", "direction", "frontier_in", "edges_examined", "discovered", "time_ms")
    return [{**{k: (getattr(lv, k).value if hasattr(getattr(lv, k), "value") else getattr(lv, k)) for k in keys},
             **dict(lv.extras)} for lv in r.levels]


# ---------------------------------------------------------------------------------- peers
def write_csr(path: Path, g) -> None:
    """The binary CSR BLEST's and Gunrock's drivers read: int32 n, m, offsets[n+1], indices[m]."""
    with open(path, "wb") as f:
        np.array([g.num_vertices, g.num_arcs], np.int32).tofile(f)
        np.asarray(g.offsets).astype(np.int32).tofile(f)
        np.asarray(g.indices).astype(np.int32).tofile(f)


def run_peer(cmd: list[str], dist_path: Path, ref, timeout: float, env=None) -> dict:
    t = time.perf_counter()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    wall = time.perf_counter() - t
    line = [ln for ln in p.stdout.splitlines() if "median_ms=" in ln]
    if p.returncode or not line:
        return {"error": f"exit {p.returncode}: {(p.stderr or p.stdout)[-300:]}"}
    fields = dict(kv.split("=", 1) for kv in line[-1].split() if "=" in kv)
    d = np.fromfile(dist_path, np.int32)
    d = np.where((d < 0) | (d > len(ref)), -1, d)
    return {"median_ms": float(fields["median_ms"]), "min_ms": float(fields.get("min_ms", "nan")),
            "correct": bool(len(d) == len(ref) and np.array_equal(d, ref)), "wall_s": round(wall, 1)}


def peers(g, source, ref, runs, args, tmp: Path) -> dict:
    out = {}
    csr = tmp / "g.csr"
    write_csr(csr, g)
    if args.blest and Path(args.blest).exists():
        dist = tmp / "blest.dist"
        env = {**os.environ, "BLEST_JACCARD": "0"}
        out["blest"] = run_peer([args.blest, str(csr), str(source), str(runs), str(dist)], dist, ref,
                                args.peer_timeout, env)
        print(f"    BLEST {out['blest']}", flush=True)
    if args.gunrock and Path(args.gunrock).exists():
        best = None
        for lb in ("block", "merge", "thread"):
            dist = tmp / f"gunrock-{lb}.dist"
            r = run_peer([args.gunrock, str(csr), str(source), str(runs), lb, str(dist)], dist, ref, args.peer_timeout)
            out[f"gunrock_{lb}"] = r
            if "median_ms" in r and r["correct"] and (best is None or r["median_ms"] < best["median_ms"]):
                best = {**r, "load_balance": lb}
        out["gunrock"] = best or {"error": "no correct run"}
        print(f"    Gunrock {out['gunrock']}", flush=True)
    return out


# ---------------------------------------------------------------------------------- sections
def section_table(name, args, tmp) -> dict:
    label, _, rule = GRAPHS[name]
    t = time.perf_counter()
    g = built(name)
    source = source_of(g, rule)
    ref = cpu_bfs(g, source)[0]
    row = {"graph": name, "label": label, "vertices": g.num_vertices, "arcs": g.num_arcs, "source": source,
           "levels": int(ref.max()) + 1, "reached": int((ref >= 0).sum()), "build_s": round(time.perf_counter() - t, 1),
           "before_best_ms": BEFORE.get(name)}
    print(f"{name}: {label}, {g.num_vertices:,} vertices, {g.num_arcs:,} arcs, {row['levels']} levels", flush=True)
    prep = {}
    for order in args.orders:
        t = time.perf_counter()
        pg = prepare(g, order)
        prep[order] = {"applied": pg.order, "seconds": round(time.perf_counter() - t, 3),
                       "stages": {k: round(v, 3) for k, v in pg.seconds.items()},
                       "pairs_per_arc": round(len(pg.pairs) / max(g.num_arcs, 1), 3)}
    row["preparation"] = prep
    print(f"  preparation: { {k: (v['applied'], v['seconds'], v['pairs_per_arc']) for k, v in prep.items()} }",
          flush=True)
    ours = []
    with Session(g) as s:
        for clabel, knobs in configs(name):
            try:
                m = time_ours(g, source, knobs, args.repeats, ref, s)
            except Exception as exc:  # noqa: BLE001  (one failing configuration must not hide the others)
                m = {"error": f"{type(exc).__name__}: {exc}"}
            ours.append({"config": clabel, "knobs": knobs, **m})
            print(f"  {clabel:34s} {m.get('elapsed_ms', float('nan')):9.4f} ms (kernel {m.get('kernel_ms', 0):8.4f})"
                  f" ok={m.get('correct')} {m.get('steps', m.get('error', ''))[:60]}", flush=True)
        best = min((o for o in ours if o.get("correct")), key=lambda o: o["elapsed_ms"], default=None)
        if best is not None:
            row["levels_of_best"] = level_rows(g, source, best["knobs"], s)
    row["ours"] = ours
    row["best"] = best and {"config": best["config"], "elapsed_ms": best["elapsed_ms"]}
    if not args.no_peers and (args.peer_graphs is None or name in args.peer_graphs):
        row["peers"] = peers(g, source, ref, args.repeats, args, tmp)
    return row


def section_roots(args, table_rows) -> dict:
    g = KRON()
    rng = np.random.default_rng(ROOTS_SEED)
    roots = [int(r) for r in rng.choice(np.flatnonzero(g.degrees() > 0), size=args.roots, replace=False)]
    sets = [("defaults", dict(BASE))]
    kron = next((r for r in table_rows if r["graph"] == "kron22" and r.get("best")), None)
    if kron and kron["best"]["config"] != "defaults":
        sets.append((kron["best"]["config"], next(o["knobs"] for o in kron["ours"] if o["config"] == kron["best"]["config"])))
    # Validation without a CPU BFS a root: the Graph500 rules imply exact distances once the reached
    # set is right, and every root in one component reaches the same set.
    component = {}
    out = {}
    with Session(g) as s:
        for label, knobs in sets:
            run_bfs(g, Vertex(roots[0]), TECH, knobs, instrument=False, session=s).complete()
            per = []
            for root in roots:
                r = run_bfs(g, Vertex(root), TECH, knobs, instrument=False, session=s).complete()
                ref = next((c for c in component.values() if c[root] >= 0), None)
                if ref is None:
                    ref = component[root] = cpu_bfs(g, root)[0]
                ok = np.array_equal(r.distances >= 0, ref >= 0) and (
                    len(per) % args.validate_every != 0
                    or validate(g, root, r.distances, r.parents, reference_distances=ref).ok)
                per.append({"root": root, "elapsed_ms": round(r.elapsed_ms, 4), "edges": r.traversed_edges,
                            "levels": r.num_levels, "correct": bool(ok)})
            teps = np.array([p["edges"] / (p["elapsed_ms"] * 1e-3) for p in per])
            out[label] = {"knobs": knobs, "roots": len(per), "seed": ROOTS_SEED, "validated_every": args.validate_every,
                          "harmonic_gteps": round(float(len(teps) / np.sum(1.0 / teps)) / 1e9, 2),
                          "median_ms": round(statistics.median(p["elapsed_ms"] for p in per), 4),
                          "max_ms": max(p["elapsed_ms"] for p in per), "correct": all(p["correct"] for p in per),
                          "per_root": per}
            print(f"  roots ({label}): {out[label]['harmonic_gteps']} GTEPS harmonic mean, median "
                  f"{out[label]['median_ms']} ms, correct={out[label]['correct']}", flush=True)
    return out


def section_instrument(args) -> dict:
    g = KRON()
    source = source_of(g, "max-degree")
    ref = cpu_bfs(g, source)[0]
    with Session(g) as s:
        off = time_ours(g, source, BASE, args.repeats, ref, s, instrument=False)
        on = time_ours(g, source, BASE, args.repeats, ref, s, instrument=True)
    res = {"off_ms": off["elapsed_ms"], "on_ms": on["elapsed_ms"], "cost": round(on["elapsed_ms"] / off["elapsed_ms"] - 1,
                                                                                 4),
           "correct": off["correct"] and on["correct"]}
    print(f"  instrumentation: {res}", flush=True)
    return res


def section_streaming(args) -> dict:
    g = GRID()
    source = source_of(g, "centre")
    with Session(g) as s:
        run_bfs(g, source, TECH, BASE, session=s).complete()
        t0 = time.perf_counter()
        arrivals = []
        run = run_bfs(g, source, TECH, BASE, session=s)
        for _ in run:
            arrivals.append(time.perf_counter() - t0)
        r = run.result
    res = {"levels": len(arrivals), "elapsed_ms": round(r.elapsed_ms, 3),
           "first_record_ms": round(1e3 * arrivals[0], 3), "last_record_ms": round(1e3 * arrivals[-1], 3),
           "records_before_half": int(sum(1 for a in arrivals if 1e3 * a < r.elapsed_ms / 2))}
    print(f"  streaming: {res}", flush=True)
    return res


def write(out: Path, doc: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    gpu = doc["environment"].get("device_name") or doc["environment"].get("name") or "gpu"
    stem = f"{doc['environment']['date'][:10]}-{str(gpu).replace(' ', '_')}-bitmap-direction"
    (out / f"{stem}.json").write_text(json.dumps(doc, indent=1, default=str))
    (out / f"{stem}.md").write_text(markdown(doc))


def markdown(doc: dict) -> str:
    lines = [f"# bitmap-direction on {doc['environment'].get('nvidia_smi', '?')}", "",
             f"{doc['environment']}", "", "| graph | levels | ours ms (config) | kernel ms | BLEST ms | Gunrock ms | "
             "before ms | ours vs BLEST | correct |", "|---|---:|---|---:|---:|---:|---:|---:|---|"]
    for r in doc.get("table", []):
        best = r.get("best") or {}
        bo = next((o for o in r["ours"] if o["config"] == best.get("config")), {})
        bl = (r.get("peers") or {}).get("blest", {})
        gr = (r.get("peers") or {}).get("gunrock", {})
        ratio = f"{bl['median_ms'] / best['elapsed_ms']:.2f}×" if best and bl.get("median_ms") else ""
        lines.append(f"| {r['label']} | {r['levels']} | {best.get('elapsed_ms', '')} ({best.get('config', '')}) | "
                     f"{bo.get('kernel_ms', '')} | {bl.get('median_ms', bl.get('error', ''))} | "
                     f"{gr.get('median_ms', gr.get('error', ''))} | {r.get('before_best_ms')} | {ratio} | "
                     f"{all(o.get('correct') for o in r['ours'])} |")
    lines += ["", "Preparation (seconds; pairs per arc) by order:", ""]
    for r in doc.get("table", []):
        lines.append(f"- {r['label']}: " + ", ".join(f"{k}→{v['applied']} {v['seconds']} s, {v['pairs_per_arc']}"
                                                        for k, v in r["preparation"].items()))
    for key in ("floor", "roots", "instrument", "streaming"):
        if key in doc:
            lines += ["", f"## {key}", "", "```", json.dumps(doc[key] if key != "roots" else {
                k: {kk: vv for kk, vv in v.items() if kk != "per_root"} for k, v in doc[key].items()}, indent=1), "```"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sections", nargs="*", default=list(SECTIONS), choices=SECTIONS)
    ap.add_argument("--graphs", nargs="*", default=list(GRAPHS), choices=list(GRAPHS))  # noqa: B008
    ap.add_argument("--orders", nargs="*", default=["none", "degree", "rcm"], choices=ORDERS)
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--roots", type=int, default=64)
    ap.add_argument("--blest", default=".blest/bfs_blest")
    ap.add_argument("--gunrock", default=".gunrock/bfs_bin")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--peer-graphs", nargs="*", help="run the peers on these graphs only (default: all)")
    ap.add_argument("--peer-timeout", type=float, default=240)
    ap.add_argument("--smoke", action="store_true", help="tiny graphs on the simulator: a check of this script")
    ap.add_argument("--configs", choices=("explore", "final"), default="final",
                    help="bitmap-direction's configurations: several a kind of graph, or the defaults and one or two")
    ap.add_argument("--validate-every", type=int, default=1, help="roots: the Graph500 rules on every k-th root")
    args = ap.parse_args(argv)
    global CONFIGS
    CONFIGS = args.configs
    if args.smoke:
        smoke()
        args.graphs = [g for g in args.graphs if g in GRAPHS]
        args.sections = [x for x in args.sections if x != "floor"]
    info = backend.select("simulator" if args.smoke else "gpu")
    doc = {"environment": {**environment(), "device_name": info.as_dict().get("device")}, "args": vars(args) | {
        "out": str(args.out)}}
    print(doc["environment"], flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        if "floor" in args.sections:
            doc["floor"] = section_floor()
            write(args.out, doc)
        if "table" in args.sections:
            doc["table"] = []
            for name in args.graphs:
                try:
                    doc["table"].append(section_table(name, args, Path(tmp)))
                except Exception as exc:  # noqa: BLE001
                    print(f"{name}: FAILED {type(exc).__name__}: {exc}", flush=True)
                    doc["table"].append({"graph": name, "label": GRAPHS[name][0], "error": str(exc), "ours": [],
                                         "levels": None, "preparation": {}})
                write(args.out, doc)
        for key, fn in (("roots", lambda: section_roots(args, doc.get("table", []))),
                        ("instrument", lambda: section_instrument(args)), ("streaming", lambda: section_streaming(args))):
            if key in args.sections:
                try:
                    doc[key] = fn()
                except Exception as exc:  # noqa: BLE001
                    doc[key] = {"error": f"{type(exc).__name__}: {exc}"}
                    print(f"{key}: FAILED {doc[key]['error']}", flush=True)
                write(args.out, doc)
    print(markdown(doc), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
