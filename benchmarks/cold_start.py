"""Cold start (GPU only): seconds from a fresh process's start to the first level of a BFS-4K run
on facebook_combined, as the Explorer runs it, with empty caches.

Each scenario starts `python3` with its own empty NUMBA_CACHE_DIR and BFS4K_CACHE_DIR and times,
from the parent, the process's start to the line the child prints when the run yields its first
level (interpreter start and imports included). The child does what the Explorer's Run button
does: select the backend, load the sample through `warmup.load_for_run` (which compiles the run's
kernels in helper processes meanwhile when they are not in the disk cache), open a Session, then
`api.run_bfs(..., "bfs4k", defaults, instrument=True)`. Scenarios:

  cold             an empty cache: loaders and kernels compile, kernels in helper processes
  cold, serial     the same with BFS4K_COMPILE_HELPERS=0: everything compiles in the one process;
                   shows whether the helpers pay
  after warmup     `python3 -m explorer warmup` in an empty cache (timed too), then the run

    python3 -m benchmarks.cold_start [--out benchmarks/results] [--no-serial]

Prints the GPU, driver, CPU and versions, and writes results/<GPU>/cold_start.{json,md}. Takes
about two minutes on an H100 host and stops the warmup at --budget (170 s by default). Each run's
result is checked once it has finished, outside the measured time.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

from benchmarks import harness

ROOT = Path(__file__).resolve().parents[1]

GRAPH = "facebook_combined"
TARGET_S = 20.0  # the goal for a first run

#: The Explorer's Run button, without the widgets (the GPU machine may lack ipywidgets and Bokeh).
CHILD = textwrap.dedent("""
    import time
    T0 = time.perf_counter()
    def mark(what):
        print(f"@{time.perf_counter() - T0:.3f} {what}", flush=True)
    from explorer import api, backend, graphs, warmup
    from explorer.engine import Session
    from explorer.techniques import make_knobs
    info = backend.select("auto")
    mark(f"backend {info.describe()}")
    knobs = make_knobs("bfs4k", {})
    say = lambda m: mark(f"status {m}")
    g = warmup.load_for_run(lambda: graphs.sample_graph(%(graph)r), "bfs4k", knobs, True, say)
    mark(f"graph loaded: {g.num_vertices} vertices, {g.num_arcs} arcs")
    session = Session(g)
    run = api.run_bfs(g, "max-degree", "bfs4k", knobs, instrument=True, session=session, on_status=say)
    for i, level in enumerate(run):
        if i == 0:
            mark("FIRST LEVEL")
    mark(f"all {run.result.num_levels} levels")
    import gc
    from numba.cuda.dispatcher import CUDADispatcher
    kernels = [d for d in gc.get_objects() if isinstance(d, CUDADispatcher)]
    mark(f"kernels compiled in this process: {sum(sum(d.stats.cache_misses.values()) for d in kernels)} "
         f"(loaded from the disk cache: {sum(sum(d.stats.cache_hits.values()) for d in kernels)})")
    from benchmarks import harness
    c = harness.check(g, run.result)
    mark(f"CHECKED {'right' if c.ok else 'WRONG'}: {c.message}")
""")


def fresh_env(tmp: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_ENABLE_CUDASIM", "BFS4K_COMPILE_HELPERS")}
    env.update(NUMBA_CACHE_DIR=str(tmp / "numba"), BFS4K_CACHE_DIR=str(tmp / "graphs"), PYTHONUNBUFFERED="1",
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])), **extra)
    return env


def _kill(proc) -> None:
    """The process and what it started (helper processes, a warmup's workers)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def first_level(env: dict, timeout: float) -> dict:
    """Start the child; seconds from its start to its FIRST LEVEL line, and its timeline. The child
    is killed after `timeout` seconds."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD % {"graph": GRAPH}], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT, start_new_session=True)
    watchdog = threading.Timer(timeout, _kill, (proc,))
    watchdog.start()
    lines, first, right = [], None, None
    try:
        for line in proc.stdout:
            lines.append(line.rstrip())
            print(f"    {line.rstrip()}", flush=True)
            said = line.split(" ", 1)[-1]
            if first is None and said.startswith("FIRST LEVEL"):
                first = time.perf_counter() - start
            if said.startswith("CHECKED"):
                right = said.startswith("CHECKED right")
        proc.wait()
    finally:
        watchdog.cancel()
    return {"first_level_s": None if first is None else round(first, 2), "correct": right, "exit": proc.returncode,
            "timeline": lines}


def _incomplete(row: dict) -> str:
    code = row.get("warmup_exit", 0)
    return "" if code == 0 else f", incomplete: exit {code}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results)")
    ap.add_argument("--no-serial", action="store_true", help="skip the cold run without helper processes")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds allowed to one scenario's run")
    ap.add_argument("--budget", type=float, default=170.0, help="seconds for the whole benchmark (the warmup "
                    "gets what the cold runs leave)")
    args = ap.parse_args(argv)
    begin = time.perf_counter()

    from explorer import backend

    ok, why = backend.gpu_present()
    if not ok or backend.simulator_requested():
        print(f"cold_start.py measures compiling for a GPU; there is none here ({why or 'simulator requested'})")
        return 2
    backend.select("gpu")
    env = harness.environment()
    print(harness.describe(env), flush=True)
    rows = []
    scenarios = [("cold", {})] + ([] if args.no_serial else [("cold, serial (BFS4K_COMPILE_HELPERS=0)",
                                                              {"BFS4K_COMPILE_HELPERS": "0"})])
    for label, extra in scenarios:
        with tempfile.TemporaryDirectory(prefix="bfs4k-cold-") as d:
            print(f"\n{label}:", flush=True)
            r = first_level(fresh_env(Path(d), **extra), args.timeout)
            rows.append({"scenario": label, **r})
            print(f"  -> first level after {r['first_level_s']} s", flush=True)
    with tempfile.TemporaryDirectory(prefix="bfs4k-warm-") as d:
        e = fresh_env(Path(d))
        # What is left of the budget, less the run after it (a warmup cut short is reported so;
        # the run then compiles what it missed).
        limit = max(30.0, args.budget - (time.perf_counter() - begin) - 25.0)
        print(f"\nwarmup (empty cache; at most {limit:.0f} s):", flush=True)
        t = time.perf_counter()
        w = subprocess.Popen([sys.executable, "-m", "explorer", "warmup"], env=e, cwd=ROOT, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = w.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            _kill(w)
            out, err = w.communicate()
            err += f"\nstopped after {limit:.0f} s"
        warm_s = round(time.perf_counter() - t, 1)
        tail = [line for line in out.splitlines() if line.strip()][-3:] + err.splitlines()[-3:]
        print("\n".join(f"    {line}" for line in tail), flush=True)
        print(f"  -> warmup took {warm_s} s (exit {w.returncode})", flush=True)
        print("\nafter warmup:", flush=True)
        r = first_level(e, args.timeout)
        rows.append({"scenario": "after warmup", **r, "warmup_s": warm_s, "warmup_exit": w.returncode,
                     "warmup_output": tail})
        print(f"  -> first level after {r['first_level_s']} s", flush=True)

    print(f"\n{GRAPH}, BFS-4K defaults, as the Explorer runs it, on {harness.describe(env)}; target "
          f"{TARGET_S:.0f} s")
    for r in rows:
        extra = f"  (warmup itself {r['warmup_s']} s{_incomplete(r)})" if "warmup_s" in r else ""
        print(f"  {r['scenario']:42s} first level after {r['first_level_s']} s{extra}")
    md = [f"Seconds from a fresh process's start to the first level of BFS-4K (defaults, instrumented) on {GRAPH}, "
          "as the Explorer runs it, with empty NUMBA_CACHE_DIR and BFS4K_CACHE_DIR "
          f"(`python3 -m benchmarks.cold_start`). Target: {TARGET_S:.0f} s.", "",
          *harness.markdown_table(["scenario", "first level (s)", "warmup (s)", "result"],
                                  [[r["scenario"], r["first_level_s"], f"{r.get('warmup_s', '')}{_incomplete(r)}",
                                    {True: "right", False: "**WRONG**", None: "not checked"}[r["correct"]]]
                                   for r in rows], {1, 2})]
    harness.write_results(args.out, "cold_start", env, {"graph": GRAPH, "target_s": TARGET_S}, rows, md,
                          f"Cold start, {env['gpu']}")
    return 0 if all(r["first_level_s"] is not None and r["correct"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
