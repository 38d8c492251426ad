"""Cold start (issue 16 item 17, GPU only): seconds from a fresh process's start to the first level
of a BFS-4K run on facebook_combined, as the Explorer runs it, with empty caches.

Each scenario starts `python3` with its own empty NUMBA_CACHE_DIR and BFS4K_CACHE_DIR and times,
from the parent, the process's start to the line the child prints when the run yields its first
level (interpreter start and imports included). The child does what the Explorer's Run button
does: select the backend, load the sample through `warmup.load_for_run` (which compiles the run's
kernels in helper processes meanwhile when they are not in the disk cache), open a Session, then
`api.run_bfs(..., "bfs4k", defaults, instrument=True)`. Scenarios:

  cold             an empty cache: loaders and kernels compile, kernels in helper processes
  cold, serial     the same with BFS4K_COMPILE_HELPERS=0: everything compiles in the one process
                   (the 37 s of the issue, less what the loaders' fix saves); shows whether the
                   helpers pay
  after warmup     `python3 -m explorer warmup` in an empty cache (timed too), then the run

    python3 benchmarks/cold_start.py [--out benchmarks/results] [--no-serial]

Prints the GPU, driver, CPU and versions, and writes benchmarks/results/DATE-GPU-cold-start.{json,md}.
Takes about two minutes on an H100 host and stops the warmup at --budget (170 s by default).
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

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
    from kernels import bfs4k, common
    k = bfs4k.kernels_for(True, False, bfs4k.HASH64, 1024)
    kernels = (k.multi, k.heavy, k.stats, k.single, common.fill_int32, common.set_source)
    mark(f"kernels compiled in this process: {sum(sum(d._cache_misses.values()) for d in kernels)} "
         f"(loaded from the disk cache: {sum(sum(d._cache_hits.values()) for d in kernels)})")
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
    lines, first = [], None
    try:
        for line in proc.stdout:
            lines.append(line.rstrip())
            print(f"    {line.rstrip()}", flush=True)
            if first is None and line.split(" ", 1)[-1].startswith("FIRST LEVEL"):
                first = time.perf_counter() - start
        proc.wait()
    finally:
        watchdog.cancel()
    return {"first_level_s": None if first is None else round(first, 2), "exit": proc.returncode,
            "timeline": lines}


def _incomplete(row: dict) -> str:
    code = row.get("warmup_exit", 0)
    return "" if code == 0 else f", incomplete: exit {code}"


def environment() -> dict:
    from explorer import backend

    info = backend.select("gpu")
    env = info.as_dict()
    try:
        env["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                                            "--format=csv,noheader"], capture_output=True, text=True,
                                           timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        env["nvidia_smi"] = "unavailable"
    cpu = platform.processor()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    env.update(host=platform.node(), cpu=cpu, cpu_count=os.cpu_count())
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
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
    env = environment()
    print(json.dumps(env, indent=1), flush=True)
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

    print(f"\n{GRAPH}, BFS-4K defaults, as the Explorer runs it, on {env['name']} ({env['nvidia_smi']}), "
          f"{env['cpu_count']} CPUs ({env['cpu']}); target {TARGET_S:.0f} s")
    for r in rows:
        extra = f"  (warmup itself {r['warmup_s']} s{_incomplete(r)})" if "warmup_s" in r else ""
        print(f"  {r['scenario']:42s} first level after {r['first_level_s']} s{extra}")

    args.out.mkdir(parents=True, exist_ok=True)
    name = f"{datetime.date.today().isoformat()}-{env['name'].replace(' ', '_')}-cold-start"
    (args.out / f"{name}.json").write_text(json.dumps({"environment": env, "graph": GRAPH, "results": rows},
                                                      indent=1, default=str))
    md = [f"# Cold start on {env['name']} ({env['nvidia_smi']})", "",
          f"date {env['date']}, {env['cpu_count']} CPUs ({env['cpu']}), versions {env['versions']}", "",
          f"Seconds from a fresh process's start to the first level of BFS-4K (defaults, instrumented) on "
          f"{GRAPH}, as the Explorer runs it, with empty NUMBA_CACHE_DIR and BFS4K_CACHE_DIR "
          f"(benchmarks/cold_start.py). Target: {TARGET_S:.0f} s.", "",
          "| scenario | first level (s) | warmup (s) |", "|---|---:|---:|"]
    md += [f"| {r['scenario']} | {r['first_level_s']} | {r.get('warmup_s', '')}{_incomplete(r)} |" for r in rows]
    (args.out / f"{name}.md").write_text("\n".join(md) + "\n")
    print(f"\nwrote {args.out / name}.json and .md")
    return 0 if all(r["first_level_s"] is not None for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
