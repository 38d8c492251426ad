"""bitmap-direction on a real GPU beside BLEST and Gunrock, on the benchmark harness (GPU only).

    python3 -m benchmarks.bitmap_direction table roots instrument --before  # the comparison, 64 roots, the counts' cost
    python3 -m benchmarks.bitmap_direction phases --graphs luxembourg_osm facebook_combined
    python3 -m benchmarks.bitmap_direction table --graphs 3elt --configs explore --no-peers
    python3 -m benchmarks.bitmap_direction table roots --smoke          # the script itself, simulator
    python3 -m benchmarks.bitmap_direction --resources                  # registers and spills (no GPU)

Sections (each writes results/<GPU>/bitmap-direction-SECTION[-TAG].{json,md} through the harness):
  compile     every kernel build the others use, into Numba's disk cache, launching nothing (it may run
              beside a timed run; writes nothing).
  floor       what a level cannot go below on this GPU: a grid barrier (cuda.cg.this_grid().sync()) and
              a block barrier, a launch of one block (ordinary and cooperative) and of the whole
              grid, the latency of reading the device clocks (%globaltimer, %clock64).
  phases      a timing build (kernel.PHASE_CLOCKS): block 0's thread 0 stamps each level with its
              cycles at the phase marks (kernel.PHASE_MARKS); per graph, the mean cycles of each
              phase over the levels run by block 0 alone and over those of the grid, and a level's
              mean time, from one search after a warm-up.
  table       the comparison table's graphs (the harness's registry, each from its max-degree vertex,
              the 1000 x 1000 grid from its centre): graph preparation by vertex order (seconds,
              pairs per arc), then each configuration of --configs (harness.measure: median of
              --repeats uninstrumented runs after a warm-up, every run checked), BLEST and Gunrock
              on the same graph and source (harness.run_peer; their own clocks), and BLEST on the
              GPU's clock alone (harness.BLEST_DEVICE, where built); with --before,
              this project's best configuration of another technique on that graph (before_configs():
              the techniques and settings of BEFORE's numbers) measured beside them the same way.
  roots       Kronecker scale 22, --roots random roots of non-zero degree (Graph500: each search timed
              once after a warm-up, harmonic mean of TEPS; harness.measure_roots, every root checked).
  instrument  Kronecker scale 22 from its max-degree vertex: the per-level counts on and off (medians), each
              of its configurations (--configs).
  streaming   the 1000 x 1000 grid: when each level's record reaches the host, against the search's
              own time (records that arrive before the search ends came while the kernel ran).

Times are explorer's: `elapsed` is the CUDA-event time from before the launch to the last level's
completion (the launch included); `kernels` the levels' own device-clock times summed. --tag names
the files of a run beside another (e.g. another checkout's code run with this script on the same
GPU in the same call).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

from benchmarks import harness

TECH = "bitmap-direction"
SECTIONS = ("compile", "floor", "phases", "table", "roots", "instrument", "streaming")
GRAPHS = ("kron22", "kron20", "uniform", "smallworld", "grid3d", "grid1000", "luxembourg_osm", "delaunay_n16",
          "facebook_combined", "Wiki-Vote", "p2p-Gnutella31", "3elt")
LARGE = ("kron22", "kron20", "uniform", "smallworld")
SMALL = ("facebook_combined", "Wiki-Vote", "p2p-Gnutella31", "3elt")
#: This project's best before bitmap-direction (ms, H100: the comparison table of the issue that
#: asked for it, best of eight configurations of the other techniques), beside the new numbers.
BEFORE = {"kron22": 0.502, "kron20": 0.259, "uniform": 0.986, "smallworld": 0.874, "grid3d": 5.02,
          "grid1000": 4.63, "luxembourg_osm": 3.14, "delaunay_n16": 0.629, "facebook_combined": 0.233,
          "Wiki-Vote": 0.149, "p2p-Gnutella31": 0.499, "3elt": 0.198}
ROOTS, ROOTS_SEED = 64, 18


def before_configs() -> dict:
    """graph -> (label, technique, knobs, the compute capability it needs): the configuration behind
    each of BEFORE's numbers (BFS-4K's tuned forms from benchmarks/bfs.py), which --before measures
    in the same call as bitmap-direction."""
    from benchmarks.bfs import DO, TUNED, TUNED_CLUSTER, TUNED_ROAD

    do = ("direction-optimizing defaults", DO, {}, None)
    hybrid = ("hybrid", "hybrid", {}, None)
    edge = ("edge-parallel", "edge-parallel", {}, None)
    cluster = ("bfs4k tuned, cluster form (16 x 256)", "bfs4k", TUNED_CLUSTER, 9.0)
    return {"kron22": do, "kron20": do, "uniform": hybrid, "smallworld": hybrid,
            "grid3d": ("luo-hierarchical defaults", "luo-hierarchical", {}, None), "grid1000": cluster,
            "luxembourg_osm": ("bfs4k tuned, one block of 512", "bfs4k", TUNED_ROAD, None),
            "delaunay_n16": cluster, "facebook_combined": edge, "Wiki-Vote": do, "p2p-Gnutella31": edge,
            "3elt": ("bfs4k tuned", "bfs4k", TUNED["grid1000"], None)}

#: --configs name -> kind of graph -> [(label, knobs)]; the defaults come first.
CONFIGS = {
    "final": {
        "large": [("defaults", {}), ("bottom-up to the end (beta 10^6)", {"beta": 1_000_000}),
                  ("blocks of 1024", {"block_threads": 1024})],
        "small": [("defaults", {}), ("blocks of 1024", {"block_threads": 1024})],
        "high": [("defaults", {}), ("blocks of 1024", {"block_threads": 1024}),
                 ("block_visited global", {"block_visited": "global"})],
    },
    "explore": {
        "large": [("defaults", {}), ("bottom-up to the end (beta 10^6)", {"beta": 1_000_000}),
                  ("blocks of 1024", {"block_threads": 1024}), ("block_visited global", {"block_visited": "global"})],
        "small": [("defaults", {}), ("blocks of 1024", {"block_threads": 1024}),
                  ("one block up to 65,536 vertices", {"one_block_vertices": 65536}),
                  ("one block up to 65,536 vertices, blocks of 1024",
                   {"one_block_vertices": 65536, "block_threads": 1024}),
                  ("the grid (one_block_vertices 0)", {"one_block_vertices": 0})],
        "high": [("defaults", {}), ("blocks of 1024", {"block_threads": 1024}),
                 ("block_visited global", {"block_visited": "global"}), ("order rcm", {"order": "rcm"}),
                 ("narrow up to 8,192 edges", {"narrow_edges": 8192}), ("narrow up to 512 edges", {"narrow_edges": 512})],
    },
    # The defaults of narrow_edges (2,048) and block_threads (512) beside the values around them and
    # the former defaults (8,192 edges, 1,024 threads), every graph the same configurations.
    "knobs": {kind_: [("defaults", {}), ("narrow up to 1,024 edges", {"narrow_edges": 1024}),
                      ("narrow up to 4,096 edges", {"narrow_edges": 4096}),
                      ("narrow up to 8,192 edges", {"narrow_edges": 8192}),
                      ("blocks of 1024", {"block_threads": 1024}),
                      ("8,192 edges, blocks of 1024 (the former defaults)", {"narrow_edges": 8192, "block_threads": 1024})]
              for kind_ in ("large", "small", "high")},
    # One thread-block cluster for the whole search (knob cluster) beside the defaults, whatever the
    # graph's size (cluster_arcs out of the way); the small graphs leave their one block for it.
    "cluster": {kind_: [("defaults", {})] + [
        (label, {"cluster": c, "cluster_arcs": 1 << 40, "one_block_vertices": 0, **extra})
        for label, c, extra in (("one cluster of 16", 16, {}), ("one cluster of 8", 8, {}),
                                ("one cluster of 16, blocks of 1024", 16, {"block_threads": 1024}),
                                ("one cluster of 16, no narrow levels", 16, {"narrow_edges": 0}),
                                ("one cluster of 16, narrow up to 8,192 edges", 16, {"narrow_edges": 8192}))]
        for kind_ in ("large", "small", "high")},
    # Small low-diameter graphs pulled at every level (alpha and beta at their top: bottom-up from the
    # source on), in one block and in one cluster, beside the cluster's best so far.
    "throughout": {kind_: [("defaults", {}), ("bottom-up throughout", {"alpha": 1_000_000, "beta": 1_000_000})] + [
        (label, {"cluster": c, "cluster_arcs": 1 << 40, "one_block_vertices": 0, "narrow_edges": 0, **extra})
        for label, c, extra in (("one cluster of 16, no narrow levels", 16, {}),
                                ("one cluster of 16, bottom-up after the first level", 16, {"beta": 1_000_000}),
                                ("one cluster of 16, bottom-up throughout", 16, {"alpha": 1_000_000, "beta": 1_000_000}),
                                ("one cluster of 8, bottom-up throughout", 8, {"alpha": 1_000_000, "beta": 1_000_000}))]
        for kind_ in ("large", "small", "high")},
    # heavy_degree on the large graphs: a frontier vertex of moderate degree (the uniform graph's, about
    # 64) walked by its own warp rather than in the flat heavy range.
    "heavy": {kind_: [("defaults", {})] + [
        (label, {**base, "heavy_degree": h})
        for blabel, base in (("blocks of 1024", {"block_threads": 1024}),
                             ("bottom-up to the end (beta 10^6)", {"beta": 1_000_000}))
        for label, h in ((blabel, 32), (f"{blabel}, heavy_degree 128", 128), (f"{blabel}, heavy_degree 4,096", 4096))]
        for kind_ in ("large", "small", "high")},
    # Knobs every version of the technique has (another checkout's code, run by this script).
    "common": {
        "large": [("defaults", {}), ("bottom-up to the end (beta 10^6)", {"beta": 1_000_000})],
        "small": [("defaults", {}), ("blocks of 512", {"block_threads": 512}),
                  ("the grid (one_block_vertices 0)", {"one_block_vertices": 0})],
        "high": [("defaults", {}), ("blocks of 512", {"block_threads": 512})],
    },
}


def kind(name: str) -> str:
    return "large" if name in LARGE else "small" if name in SMALL else "high"


def source_rule(name: str) -> str:
    """The comparison's source: the max-degree vertex, the 1000 x 1000 grid's centre."""
    return "centre" if name == "grid1000" else "max-degree"


class Bench:
    """The run's settings, its graphs (built once: several sections share Kronecker scale 22 and
    the grid) and the environment."""

    def __init__(self, args, env):
        self.args, self.env = args, env
        self._graphs: dict = {}
        self.base = {}
        if args.smoke:
            from explorer.techniques import implementation

            self.base = dict(implementation(TECH).simulator_knobs)

    def graph(self, name: str):
        if name not in self._graphs:
            t = time.perf_counter()
            g = harness.load(name, small=self.args.smoke)
            s = harness.source_of(name, g, source_rule(name) if name in harness.GRAPHS else None, small=self.args.smoke)
            self._graphs[name] = (g, s, harness.reference(g, s), time.perf_counter() - t)
        return self._graphs[name]

    def configs(self, name: str) -> list[tuple[str, dict]]:
        return [(label, {**knobs, **self.base}) for label, knobs in CONFIGS[self.args.configs][kind(name)]]

    def write(self, section: str, settings: dict, rows: list[dict], markdown: list[str], title: str) -> None:
        name = f"bitmap-direction-{section}" + (f"-{self.args.tag}" if self.args.tag else "")
        harness.write_results(self.args.out, name + ("-smoke" if self.args.smoke else ""), self.env,
                              {"section": section, **settings}, rows, markdown, title)


def _ms(x, digits=4):
    return None if x is None else round(float(x), digits)


# ---------------------------------------------------------------------------------- floor
def section_floor(b: Bench) -> None:
    """Barriers, launches and clock reads, with kernels of the search's own shapes (CUDA events)."""
    from numba import cuda, int64

    from kernels.bitmap_direction.device import globaltimer
    from kernels.primitives import clock64

    @cuda.jit
    def grid_barriers(out, k):
        grid = cuda.cg.this_grid()
        for _ in range(k):
            grid.sync()
        if cuda.grid(1) == 0:
            out[0] = k

    @cuda.jit
    def block_barriers(out, k):
        for _ in range(k):
            cuda.syncthreads()
        if cuda.grid(1) == 0:
            out[0] = k

    @cuda.jit
    def clocks(out, k):
        """Cycles a thread waits for k dependent reads of each clock (each read feeds the next)."""
        if cuda.grid(1) == 0:
            x = int64(0)
            c0 = clock64()
            for _ in range(k):
                x += globaltimer() & 1
            c1 = clock64()
            for _ in range(k):
                x += clock64() & 1
            c2 = clock64()
            out[0] = c1 - c0
            out[1] = c2 - c1
            out[2] = x

    out = cuda.device_array(4, np.int64)

    def timed(launch, reps=21) -> float:
        ts = []
        for _ in range(reps):
            a, z = cuda.event(), cuda.event()
            a.record()
            launch()
            z.record()
            z.synchronize()
            ts.append(cuda.event_elapsed_time(a, z))
        return statistics.median(ts)

    rows = []
    k = 2000
    for threads in (1024, 512):
        grid_barriers[1, threads](out, 1)
        fits = grid_barriers.overloads[tuple(grid_barriers.typeof_pyval(a) for a in (out, 1))]
        blocks = fits.max_cooperative_grid_blocks(threads)
        one = timed(lambda: grid_barriers[1, threads](out, 0))
        full = timed(lambda: grid_barriers[blocks, threads](out, 0))
        many = timed(lambda: grid_barriers[blocks, threads](out, k), 5)
        block_barriers[1, threads](out, 1)
        plain = timed(lambda: block_barriers[1, threads](out, 0))
        bb = timed(lambda: block_barriers[1, threads](out, k), 5)
        rows += [{"config": f"cooperative launch, 1 block of {threads}", "median_ms": _ms(one)},
                 {"config": f"cooperative launch, {blocks} blocks of {threads}", "median_ms": _ms(full)},
                 {"config": f"grid barrier, {blocks} x {threads}", "us": round(1e3 * (many - full) / k, 3)},
                 {"config": f"ordinary launch, 1 block of {threads}", "median_ms": _ms(plain)},
                 {"config": f"block barrier, {threads} threads", "us": round(1e3 * (bb - plain) / k, 4)}]
    clocks[1, 32](out, 1)
    n = 1000
    clocks[1, 32](out, n)
    h = out.copy_to_host()
    rows += [{"config": "%globaltimer read (dependent reads)", "cycles": round(h[0] / n, 1)},
             {"config": "%clock64 read (dependent reads)", "cycles": round(h[1] / n, 1)}]
    for r in rows:
        print(f"  {r}", flush=True)
    b.write("floor", {}, rows, harness.markdown_table(["what", "median ms", "µs", "cycles"], [
        [r["config"], r.get("median_ms"), r.get("us"), r.get("cycles")] for r in rows], {1, 2, 3}),
        f"bitmap-direction: the floor, {b.env['gpu']}")


# ---------------------------------------------------------------------------------- resources
def resources(cc=(9, 0)) -> list[dict]:
    """Registers, spills and 64-bit shared-memory atomics (compare-and-swap loops on the GPU) of
    each kernel build, from Numba's PTX and the CUDA toolkit's `ptxas -v` (CUDA_HOME or
    /usr/local/cuda): no GPU needed."""
    import re
    import subprocess
    import tempfile
    from pathlib import Path
    from types import SimpleNamespace

    from numba import cuda
    from numba.cuda import dispatcher

    dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=cc)  # device functions' target
    from kernels.args import signature
    from kernels.bitmap_direction import kernel as kk

    ptxas = Path(os.environ.get("CUDA_HOME") or "/usr/local/cuda") / "bin" / "ptxas"
    rows = []
    for kernel, inst, regs, cluster in _builds(kk):
        ptx, _ = cuda.compile_ptx(kernel.py_func, signature(kernel), cc=cc, lineinfo=False)
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "k.ptx"
            src.write_text(ptx)
            # -c: the grid barrier's device runtime is linked at load time, not here
            res = subprocess.run([str(ptxas), f"-arch=sm_{cc[0]}{cc[1]}", "-v", "-c", f"--maxrregcount={regs}",
                                  "-o", str(Path(tmp) / "k.cubin"), str(src)], capture_output=True, text=True)
        info = " ".join(res.stderr.split())
        num = lambda pat: int(m.group(1)) if (m := re.search(pat, info)) else None  # noqa: E731
        rows.append({"kernel": kernel.py_func.__name__, "cluster": cluster, "instrument": inst, "max_registers": regs,
                     "registers": num(r"Used (\d+) registers"), "stack_bytes": num(r"(\d+) bytes stack frame"),
                     "spill_stores": num(r"(\d+) bytes spill stores"), "spill_loads": num(r"(\d+) bytes spill loads"),
                     "shared_atomics_64": len(re.findall(r"atom\.shared\.\w+\.[us]64", ptx)),
                     "ptxas": "ok" if res.returncode == 0 else info[-300:]})
        print(f"  {rows[-1]}", flush=True)
    return rows


# ---------------------------------------------------------------------------------- compile
def section_compile(b: Bench) -> None:
    """The kernel builds the table, roots and instrument sections use compiled into Numba's disk
    cache, with no launch (so that it can run beside a timed run): blocks of 1024 and 512 threads,
    the counts on. Nothing to write."""
    from kernels.args import signature
    from kernels.bitmap_direction import kernel as kk

    if b.args.smoke:
        return
    for kernel, inst, regs, cluster in _builds(kk):
        t = time.perf_counter()
        kernel.compile(signature(kernel))
        print(f"  {kernel.py_func.__name__} cluster={cluster} instrument={inst} registers={regs}: "
              f"{time.perf_counter() - t:.1f} s", flush=True)


def _builds(kk) -> list:
    """(kernel, instrument, registers, cluster) of each build the sections launch: the grid's search,
    its one-cluster form and the small graphs' block, for blocks of 1024 threads (64 registers) and
    512 (128), the counts off and on; no timing build."""
    counts_registers = [(inst, regs) for inst in (False, True) for regs in (64, 128)]
    return ([(kk._search_kernel(inst, regs, False, cluster), inst, regs, cluster)
             for cluster in (False, True) for inst, regs in counts_registers]
            + [(kk._block_kernel(inst, regs, False), inst, regs, False) for inst, regs in counts_registers])


# ---------------------------------------------------------------------------------- phases
def _capture_loops() -> list:
    """The technique's level loops, as runs create them (their device log of rows stays readable)."""
    from explorer.techniques import bitmap_direction as bd

    loops: list = []
    start = bd.BitmapDirection.start
    if getattr(start, "captures", None) is not None:
        return start.captures

    def capturing(self, ctx):
        loop = start(self, ctx)
        loops.append(loop)
        return loop

    capturing.captures = loops
    bd.BitmapDirection.start = capturing
    return loops


def phase_profile(loop, levels: int) -> dict:
    """Per kind of level (block 0 alone or the grid; top-down or bottom-up): the levels, their mean
    cycles from the level's start to each phase mark, the mean cycles between marks, and the mean
    level in µs (block 0's cycles at the SM clock the run's log implies)."""
    from kernels.bitmap_direction import kernel as kk
    from kernels.bitmap_direction import layout as L

    rows = loop.search.rows.copy_to_host().reshape(-1, L.LOG_FIELDS)[:levels]
    log = np.asarray(loop.log)
    last = rows[levels - 1]
    ns_per_cycle = (last[L.R_GT] - log[L.H_GT0]) / max(1, last[L.R_CLOCK] - log[L.H_CLK0])
    out = {"ns_per_cycle": round(float(ns_per_cycle), 4)}
    for narrow in (1, 0):
        for bu in (0, 1):
            sel = rows[(rows[:, L.R_NARROW] == narrow) & (rows[:, L.R_BU] == bu)]
            if not len(sel):
                continue
            marks = sel[:, L.R_PHASE:L.R_PHASE + L.PHASES].astype(np.float64)
            steps = np.diff(np.concatenate([np.zeros((len(marks), 1)), marks], axis=1), axis=1)
            names = [kk.PHASE_MARKS[i][0 if narrow == 0 else 1] for i in range(L.PHASES)]
            key = ("block" if narrow else "grid") + (" bottom-up" if bu else " top-down")
            out[key] = {"levels": int(len(sel)), "mean_frontier": round(float(sel[:, L.R_FRONTIER].mean()), 1),
                        "mean_level_us": round(float(marks[:, -1].mean() * ns_per_cycle / 1e3), 3),
                        "phases_cycles": {nm: round(float(x), 1) for nm, x in zip(names, steps.mean(axis=0))}}
    return out


def section_phases(b: Bench) -> None:
    from kernels.bitmap_direction import kernel as kk

    loops = _capture_loops()
    rows, md = [], []
    for name in b.args.graphs or ("luxembourg_osm", "3elt", "facebook_combined", "kron20", "grid1000"):
        g, source, expected, _ = b.graph(name)
        for label, knobs in b.configs(name)[:b.args.phase_configs]:
            kk.PHASE_CLOCKS = True
            try:
                harness.start_bfs(g, source, TECH, knobs).complete()  # compiles the timing build
                r = harness.start_bfs(g, source, TECH, knobs).complete()
                c = harness.check(g, r, expected, full=False)
                prof = phase_profile(loops[-1], r.num_levels)
            except Exception as exc:  # noqa: BLE001  (report it, go on)
                print(f"  {name} {label}: FAILED {type(exc).__name__}: {exc}", flush=True)
                rows.append({"graph": name, "config": label, "error": f"{type(exc).__name__}: {exc}"})
                continue
            finally:
                kk.PHASE_CLOCKS = False
            row = {"graph": name, "config": label, "knobs": knobs, "levels": r.num_levels,
                   "elapsed_ms": _ms(r.elapsed_ms), "correct": c.ok, **prof}
            rows.append(row)
            print(f"  {name} {label}: {r.num_levels} levels, {r.elapsed_ms:.3f} ms (timing build), ok={c.ok}", flush=True)
            md += [f"### {name}, {label}: {r.num_levels} levels, {r.elapsed_ms:.3f} ms (timing build), "
                   f"{prof['ns_per_cycle']} ns a cycle, correct: {c.ok}", ""]
            for key, v in prof.items():
                if key == "ns_per_cycle":
                    continue
                print(f"    {key}: {v['levels']} levels, mean frontier {v['mean_frontier']}, "
                      f"{v['mean_level_us']} µs a level: {v['phases_cycles']}", flush=True)
                md += [f"{key}: {v['levels']} levels, mean frontier {v['mean_frontier']}, **{v['mean_level_us']} µs** "
                       "a level; mean cycles of each phase:", "",
                       *harness.markdown_table(["phase (what had just ended)", "cycles"],
                                               [[k, x] for k, x in v["phases_cycles"].items()], {1}), ""]
    b.write("phases", {"graphs": b.args.graphs}, rows, md, f"bitmap-direction: a level's phases, {b.env['gpu']}")


# ---------------------------------------------------------------------------------- table
def section_table(b: Bench) -> None:
    from explorer.engine import Session
    from explorer.graphs.prepare import prepare

    rows = []
    for name in b.args.graphs or GRAPHS:
        t = time.perf_counter()
        try:
            g, source, expected, built = b.graph(name)
        except Exception as exc:  # noqa: BLE001
            print(f"{name}: FAILED to build: {exc}", flush=True)
            continue
        levels = int(expected.max()) + 1
        print(f"{name}: {g.num_vertices:,} vertices, {g.num_arcs:,} arcs, source {source}, {levels} levels "
              f"(built and searched on the CPU in {built:.1f} s)", flush=True)
        common = {"graph": name, "vertices": g.num_vertices, "arcs": g.num_arcs, "source": source, "levels": levels}
        prep = {}
        orders = ("none", "degree") if g.num_arcs > b.args.rcm_arcs else ("none", "degree", "rcm")
        for order in orders:
            pg = prepare(g, order)
            prep[order] = {"seconds": round(sum(pg.seconds.values()), 3),
                           "pairs_per_arc": round(len(pg.pairs) / max(g.num_arcs, 1), 3)}
        auto = prepare(g, "auto").order
        print(f"  preparation (auto: {auto}): {prep}", flush=True)
        ms = []
        with Session(g) as session:
            for label, knobs in b.configs(name):
                m = harness.measure(g, source, TECH, knobs, label=label, repeats=b.args.repeats, session=session,
                                    expected=expected)
                ms.append(m)
                print(f"  {label:48s} {_line(m)}", flush=True)
            before = before_configs().get(name) if b.args.before else None
            if before:
                label, tech, knobs, min_cc = before
                cc = b.env.get("compute_capability")
                if min_cc and cc and float(cc) < min_cc:
                    print(f"  before: {label}: skipped (needs compute capability {min_cc})", flush=True)
                else:
                    if b.args.smoke:
                        from explorer.techniques import implementation

                        knobs = {**knobs, **implementation(tech).simulator_knobs}
                    m = harness.measure(g, source, tech, knobs, label=f"before: {label}", repeats=b.args.repeats,
                                        session=session, expected=expected)
                    rows.append({**common, **m.row(), "before": True})
                    print(f"  {'before: ' + label:48s} {_line(m)}", flush=True)
        for m in ms:
            rows.append({**common, **m.row(), "preparation": prep, "auto_order": auto, "before_ms": BEFORE.get(name)})
        if b.args.peers:
            os.environ.setdefault("BLEST_JACCARD", "0")  # a social graph in its own order (BLEST's README)
            with harness.PeerGraph(g) as pg:
                for peer in (*harness.PEERS.values(), harness.BLEST_DEVICE):
                    m = harness.run_peer(peer, pg, source, expected, runs=b.args.repeats)
                    rows.append({**common, **m.row()})
                    print(f"  {peer.name:48s} {_line(m)}", flush=True)
        print(f"  ({time.perf_counter() - t:.1f} s)", flush=True)
        b.write("table", {"configs": b.args.configs, "repeats": b.args.repeats, "graphs": b.args.graphs,
                          "peers": b.args.peers, "before": b.args.before}, rows, table_markdown(rows, b.args),
                f"bitmap-direction beside BLEST and Gunrock, {b.env['gpu']}")


def _line(m: harness.Measurement) -> str:
    if m.skipped:
        return f"skipped: {m.skipped}"
    if m.error:
        return f"{'WRONG' if m.wrong else 'FAILED'}: {m.error}"
    k = f" kernels {statistics.median(m.kernels_ms):.4f}" if m.kernels_ms else ""
    return f"{harness.spread(m)}{k} levels {m.levels} {m.steps[:40]}"


def _versus(a: dict | None, b: dict | None) -> str:
    """a's median over b's (above 1: b faster), called within noise where their runs' ranges overlap."""
    if not a or not b:
        return ""
    return f"{a['median_ms'] / b['median_ms']:.2f}" + (", within noise" if harness.runs_overlap(a, b) else "")


def table_markdown(rows: list[dict], args) -> list[str]:
    by_graph: dict = {}
    for r in rows:
        by_graph.setdefault(r["graph"], []).append(r)
    out = [f"Median of {args.repeats} runs a configuration (every run checked; peers: their own clocks and their "
           "distances checked). BLEST, device clock: the same kernels timed by CUDA events around the launch, "
           "queued with the stream held, so without the host's launch call, which ours and BLEST's own clock "
           "include: not a clock to compare ours with, it shows how much of BLEST's is its host's. ms.", ""]
    measured = any(r.get("before") for r in rows)
    head = ["graph", "levels", "ours best (configuration)", "ours defaults", "BLEST", "BLEST, device clock", "Gunrock",
            "before, this call (configuration)" if measured else "before (H100, earlier)",
            "BLEST / ours", *(["before / ours"] if measured else []), "every result right"]
    table, ratios = [], []
    for name, rs in by_graph.items():
        ours = [r for r in rs if r["technique"] == TECH and r.get("median_ms") is not None and r.get("correct")]
        peer = {r["config"]: r for r in rs if r["technique"] != TECH}
        best = min(ours, key=lambda r: r["median_ms"], default=None)
        dflt = next((r for r in ours if r["config"] == "defaults"), None)
        bl = peer.get("BLEST", {}).get("median_ms")
        ratio = f"{bl / best['median_ms']:.2f}" if best and bl else ""
        bf = next((r for r in rs if r.get("before") and r.get("median_ms") is not None and r.get("correct")), None)
        if ratio:
            ratios.append(bl / best["median_ms"])
        bd = peer.get(harness.BLEST_DEVICE.name, {})
        wrong = [r["config"] for r in rs if r.get("wrong")]
        failed = [r["config"] for r in rs if r.get("error") and not r.get("wrong")]
        status = (f"**WRONG**: {', '.join(wrong)}" if wrong else
                  "yes" + (f"; failed to run: {', '.join(failed)}" if failed else ""))
        levels = next((r["levels"] for r in rs if r.get("levels")), None)
        table.append([name, levels, f"{best['median_ms']:.4f} ({best['config']})" if best else "-",
                      dflt and dflt["median_ms"], bl or peer.get("BLEST", {}).get("skipped"),
                      bd.get("median_ms") or bd.get("skipped") or bd.get("error"),
                      peer.get("Gunrock", {}).get("median_ms") or peer.get("Gunrock", {}).get("skipped"),
                      (f"{bf['median_ms']} ({bf['config'].removeprefix('before: ')})" if bf else "-") if measured
                      else BEFORE.get(name), ratio, *([_versus(bf, best)] if measured else []), status])
    out += harness.markdown_table(head, table, set(range(1, len(head) - 1)) - {2})
    if ratios:
        gm = float(np.exp(np.mean(np.log(ratios))))
        out += ["", f"Geometric mean of BLEST / ours over {len(ratios)} graphs: **{gm:.2f}** (above 1: ours faster)."]
    out += ["", "Every configuration (median, min–max, the levels' device time, steps: S a level of one block, "
            "M of the grid, b after a bottom-up one):", ""]
    def result(r) -> str:
        if r.get("wrong"):
            return f"**WRONG**: {r.get('error')}"
        return f"failed: {r.get('error')}" if r.get("error") else "right" if r.get("correct") else ""

    cfg = [[r["graph"], r["config"], r.get("median_ms"),
            f"{r.get('min_ms')}–{r.get('max_ms')}" if r.get("min_ms") is not None else "", r.get("kernels_ms"),
            r.get("steps", "")[:40], result(r)] for r in rows if r["technique"] == TECH]
    out += harness.markdown_table(["graph", "configuration", "median ms", "min–max", "kernels ms", "steps", "results"],
                                  cfg, {2, 4})
    out += ["", "Graph preparation (seconds; pairs per arc: 1 = no packing), not in any time above:", ""]
    seen = set()
    for r in rows:
        if "preparation" in r and r["graph"] not in seen:
            seen.add(r["graph"])
            out.append(f"- {r['graph']} (auto: {r['auto_order']}): " + ", ".join(
                f"{k} {v['seconds']} s, {v['pairs_per_arc']}" for k, v in r["preparation"].items()))
    return out


# ---------------------------------------------------------------------------------- roots, instrument, streaming
def draw_roots(g, count: int) -> list[int]:
    """Graph500's roots: `count` random vertices of non-zero degree (seed ROOTS_SEED)."""
    rng = np.random.default_rng(ROOTS_SEED)
    candidates = np.flatnonzero(g.degrees() > 0)
    return [int(r) for r in rng.choice(candidates, size=min(count, candidates.size), replace=False)]


def _reference_of(root: int) -> np.ndarray:
    return harness.reference(_POOL_GRAPH, root).astype(np.int8)  # distances stay below 127 here


_POOL_GRAPH = None


def write_references(path: str, count: int, workers: int = 12, small: bool = False) -> None:
    """The CPU reference's distances from each of Kronecker scale 22's `count` roots, computed in
    `workers` processes (no GPU) and saved to `path` (int8 [roots, n] and the roots), for a roots
    section run beside it or after it (--references): the CPU searches are most of that section's
    time."""
    import multiprocessing

    global _POOL_GRAPH
    t = time.perf_counter()
    _POOL_GRAPH = harness.load("kron22", small=small)
    roots = draw_roots(_POOL_GRAPH, count)
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        dist = np.stack(pool.map(_reference_of, roots))
    if int(dist.max()) >= 127:
        raise ValueError("a distance does not fit the references' int8")
    np.savez(path, roots=np.array(roots), dist=dist)
    print(f"references of {len(roots)} roots written to {path} in {time.perf_counter() - t:.1f} s", flush=True)


def section_roots(b: Bench) -> None:
    """Graph500's method (harness.measure_roots's, with the CPU references read from --references
    when it holds these roots): each root's search timed once after a warm-up, checked against the
    CPU reference (each configuration's first root in full: the Graph500 rules)."""
    from explorer.engine import Session

    g, _, _, _ = b.graph("kron22")
    roots = draw_roots(g, b.args.roots)
    refs = None
    if b.args.references and os.path.exists(b.args.references):
        saved = np.load(b.args.references)
        if list(saved["roots"][:len(roots)]) == roots:
            refs = saved["dist"]
    t = time.perf_counter()
    configs = b.configs("kron22")
    ms = [harness.Measurement(label, TECH, knobs) for label, knobs in configs]
    per = [[] for _ in configs]
    with Session(g) as s:
        for (_, knobs), m in zip(configs, ms):
            harness.start_bfs(g, roots[0], TECH, knobs, session=s).complete()
        for i, root in enumerate(roots):
            expected = refs[i].astype(np.int32) if refs is not None else harness.reference(g, root)
            for (_, knobs), m, p in zip(configs, ms, per):
                if m.error:
                    continue
                r = harness.start_bfs(g, root, TECH, knobs, session=s).complete()
                c = harness.check(g, r, expected, full=(i == 0))
                if not c.ok:
                    m.fail(f"root {root}: {c.message}", wrong=True)
                    continue
                m.times_ms.append(r.elapsed_ms)
                p.append({"root": root, "ms": round(r.elapsed_ms, 4), "edges": r.traversed_edges,
                          "levels": r.num_levels})
    rows, table = [], []
    for m, p in zip(ms, per):
        if not m.error and p:
            teps = np.array([x["edges"] / (x["ms"] * 1e-3) for x in p])
            m.levels = max(x["levels"] for x in p)
            m.extra.update(roots=len(p), harmonic_gteps=round(len(teps) / float(np.sum(1.0 / teps)) / 1e9, 3),
                           per_root=p)
            m.correct = True
        rows.append({"graph": "kron22", **m.row()})
        times = m.times_ms or [float("nan")]
        print(f"  roots {m.label}: {m.extra.get('harmonic_gteps')} GTEPS (harmonic mean of {m.extra.get('roots')}), "
              f"median {statistics.median(times):.4f} ms, slowest {max(times):.4f} ms, correct {m.correct} "
              f"{m.error or ''}", flush=True)
        table.append([m.label, m.extra.get("roots"), m.extra.get("harmonic_gteps"), _ms(statistics.median(times)),
                      _ms(max(times)), m.levels, m.correct])
    md = [f"Kronecker scale 22, {len(roots)} random roots of non-zero degree (seed {ROOTS_SEED}); each search timed "
          "once after a warm-up; every root's distances equal to the CPU reference's and every parent one level "
          "nearer (each configuration's first root: the Graph500 rules in full). "
          f"{time.perf_counter() - t:.0f} s{' (references read from ' + b.args.references + ')' if refs is not None else ''}.",
          "", *harness.markdown_table(["configuration", "roots", "harmonic mean GTEPS", "median ms", "slowest ms",
                                       "most levels", "correct"], table, {1, 2, 3, 4, 5})]
    b.write("roots", {"roots": len(roots), "seed": ROOTS_SEED}, rows, md,
            f"bitmap-direction: Graph500 roots on Kronecker scale 22, {b.env['gpu']}")


def section_instrument(b: Bench) -> None:
    """The counts' cost on Kronecker 22: runs without and with them in turns (a drift of the GPU or
    the host touches both alike), the cost from their medians and from the pairs' ratios, with a
    95 % bootstrap interval of the pairs' median ratio (the noise that decides whether a cost is
    shown below a goal)."""
    from explorer.engine import Session

    name = "kron22"
    g, source, expected, _ = b.graph(name)
    rows = []
    with Session(g) as s:
        for label, knobs in b.configs(name):
            off, on = _in_turns(g, source, knobs, b.args.repeats, s, expected)
            if off is None:
                rows.append({"graph": name, "config": label, "correct": False})
                print(f"  instrumentation ({label}): a run was wrong", flush=True)
                continue
            ratios = np.array(on) / np.array(off)
            low, high = _median_interval(ratios)
            row = {"graph": name, "config": label, "runs": len(off), "off_ms": _ms(statistics.median(off)),
                   "on_ms": _ms(statistics.median(on)),
                   "cost": round(statistics.median(on) / statistics.median(off) - 1, 4),
                   "paired_cost": round(float(np.median(ratios)) - 1, 4),
                   "interval": [round(low - 1, 4), round(high - 1, 4)], "correct": True}
            rows.append(row)
            print(f"  instrumentation ({label}): off {row['off_ms']} ms, on {row['on_ms']} ms, cost {row['cost']}, "
                  f"paired {row['paired_cost']} (95 % {row['interval']})", flush=True)
    b.write("instrument", {"repeats": b.args.repeats, "design": "counts off and on in turns, each run checked"},
            rows, harness.markdown_table(
                ["graph", "configuration", "pairs", "counts off ms", "counts on ms", "cost (medians)",
                 "cost (pairs' median)", "95 % interval", "correct"],
                [[r["graph"], r["config"], r.get("runs"), r.get("off_ms"), r.get("on_ms"), r.get("cost"),
                  r.get("paired_cost"), r.get("interval"), r["correct"]] for r in rows], {2, 3, 4, 5, 6}),
            f"bitmap-direction: the per-level counts' cost, {b.env['gpu']}")


def _in_turns(g, source, knobs, repeats, session, expected) -> tuple[list, list] | tuple[None, None]:
    """Elapsed ms of `repeats` runs without the counts and `repeats` with them, one of each in turn
    after a warm-up of each, every run checked (the warm-ups against the Graph500 rules in full;
    (None, None) if one is wrong)."""
    off, on = [], []
    for i in range(repeats + 1):
        for instrument, times in ((False, off), (True, on)):
            r = harness.start_bfs(g, source, TECH, knobs, instrument=instrument, session=session).complete()
            if not harness.check(g, r, expected, full=i == 0).ok:
                return None, None
            if i:
                times.append(r.elapsed_ms)
    return off, on


def _median_interval(x: np.ndarray, resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95 % percentile-bootstrap interval of x's median."""
    rng = np.random.default_rng(seed)
    medians = np.median(rng.choice(x, size=(resamples, len(x)), replace=True), axis=1)
    return float(np.quantile(medians, 0.025)), float(np.quantile(medians, 0.975))


def section_streaming(b: Bench) -> None:
    from explorer.engine import Session

    g, source, _, _ = b.graph("grid1000")
    knobs = b.configs("grid1000")[0][1]
    with Session(g) as s:
        harness.start_bfs(g, source, TECH, knobs, session=s).complete()
        run = harness.start_bfs(g, source, TECH, knobs, session=s)
        t0 = time.perf_counter()
        arrivals = [time.perf_counter() - t0 for _ in run]
        r = run.result
    row = {"graph": "grid1000", "levels": len(arrivals), "elapsed_ms": _ms(r.elapsed_ms, 3),
           "first_record_ms": _ms(1e3 * arrivals[0], 3), "last_record_ms": _ms(1e3 * arrivals[-1], 3),
           "records_before_the_search_ended": int(sum(1e3 * a < r.elapsed_ms for a in arrivals))}
    print(f"  streaming: {row}", flush=True)
    b.write("streaming", {}, [row], harness.markdown_table(list(row), [list(row.values())], set(range(1, 6))),
            f"bitmap-direction: levels streamed while the kernel runs, {b.env['gpu']}")


SECTION_RUNS = {"compile": section_compile, "floor": section_floor, "phases": section_phases, "table": section_table, "roots": section_roots,
                "instrument": section_instrument, "streaming": section_streaming}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sections", nargs="*", choices=[*SECTIONS, []],
                    help="what to run (default: table roots instrument)")
    ap.add_argument("--graphs", nargs="*", help="the table's (or phases') graphs (default: the comparison's twelve)")
    ap.add_argument("--configs", default="final", choices=list(CONFIGS), help="bitmap-direction's configurations")
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--roots", type=int, default=ROOTS)
    ap.add_argument("--no-peers", dest="peers", action="store_false", help="leave BLEST and Gunrock out")
    ap.add_argument("--before", action="store_true", help="table: also this project's best configuration of "
                    "another technique on each graph (before_configs), in the same call")
    ap.add_argument("--rcm-arcs", type=int, default=50_000_000,
                    help="preparation: time the rcm order only on graphs with at most this many arcs")
    ap.add_argument("--tag", default="", help="added to the result files' names")
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results)")
    ap.add_argument("--smoke", action="store_true", help="tiny graphs under the simulator: a check of the script")
    ap.add_argument("--phase-configs", type=int, default=2, help="phases: the first N configurations of each graph")
    ap.add_argument("--references", help="roots: the CPU references saved by --write-references (used when they "
                    "are of these roots)")
    ap.add_argument("--write-references", metavar="FILE", help="compute the roots section's CPU references in "
                    "processes of their own (no GPU) and save them to FILE, instead of the sections")
    ap.add_argument("--resources", action="store_true", help="registers, spills and 64-bit shared atomics of "
                    "each kernel build (ptxas; no GPU needed), instead of the sections")
    args = ap.parse_args(argv)
    if args.resources:
        resources()
        return 0
    if args.write_references:
        write_references(args.write_references, args.roots, small=args.smoke)
        return 0
    args.sections = args.sections or ["table", "roots", "instrument"]
    if args.repeats < 1:
        ap.error(f"--repeats {args.repeats}: give at least 1")
    if args.graphs:
        harness.check_names(args.graphs)
    if args.smoke:
        args.graphs = [g for g in (args.graphs or GRAPHS) if harness.spec(g) and harness.spec(g).kind != "sample"]
        args.sections = [s for s in args.sections if s != "floor"]
    from explorer import backend

    backend.select("simulator" if args.smoke else "gpu")
    env = harness.environment()
    print(harness.describe(env), flush=True)
    b = Bench(args, env)
    for section in args.sections:
        t = time.perf_counter()
        print(f"== {section}", flush=True)
        try:
            SECTION_RUNS[section](b)
        except Exception as exc:  # noqa: BLE001  (one failing section must not hide the others)
            print(f"{section}: FAILED {type(exc).__name__}: {exc}", flush=True)
        print(f"== {section}: {time.perf_counter() - t:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
