"""Cold start (GPU only): how long a first run takes in a fresh environment, how long `python3 -m
explorer warmup` takes, and how long a second warmup takes once everything is compiled.

First runs: for every GPU technique and the CPU ones, `python3 -m explorer run facebook_combined
--technique T` in a fresh process with its own empty NUMBA_CACHE_DIR and BFS4K_CACHE_DIR, timed
from the parent: seconds to the level table's first row (the first level) and to the process's
end (the result printed and checked against the CPU reference, which the CLI does). The CLI
compiles the run's kernels, and with a core for each the loaders' code, in helper processes while
it loads the graph (explorer.warmup.load_for_run).

Warm-up: `python3 -m explorer warmup` (one process per core) in a fresh environment, then a second
one in the same environment, which must compile nothing ("everything is ready"); then a first
run of BFS-4K there. The warm-up's own expected duration (the line it prints) is kept beside the
measured one, and the cost of each of its units (the ledger, explorer.warmup_ledger) is written
to results/<GPU>/warmup_costs.json: copy it to explorer/warmup_costs.json to ship those costs.

    python3 -m benchmarks.cold_start [--out benchmarks/results] [--technique T ...] [--timeout 90]

Prints the GPU, driver, CPU and versions and writes results/<GPU>/cold_start.{json,md}. Takes
about seven minutes on a 16-core H100 host (every technique's first run, a minute and a half of
warm-up).
"""
from __future__ import annotations

import argparse
import json
import os
import re
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
FIRST_RUN_TARGET_S = 15.0
WARMUP_TARGET_S = 90.0

#: Prints the warm-up's per-unit costs from its ledger (run with the warm-up's environment).
COSTS = textwrap.dedent("""
    import json
    from explorer import warmup, warmup_ledger
    ledger = warmup_ledger.load()
    mode = "gpu"
    print(json.dumps({u.label: ledger["costs"][warmup_ledger.unit_key(u)][0] for u in warmup.plan(mode)
                      if warmup_ledger.unit_key(u) in ledger["costs"]}))
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


def timed(cmd: list[str], env: dict, timeout: float, first_marker: str | None = None) -> dict:
    """Run `cmd`; seconds to the first output line starting with `first_marker` and to its end,
    its exit code, its output and the second each line came at. Killed (with what it started)
    after `timeout` seconds."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT,
                            start_new_session=True)
    watchdog = threading.Timer(timeout, _kill, (proc,))
    watchdog.start()
    lines, times, first = [], [], None
    try:
        for line in proc.stdout:
            lines.append(line.rstrip())
            times.append(round(time.perf_counter() - start, 2))
            if first is None and first_marker and line.lstrip().startswith(first_marker):
                first = time.perf_counter() - start
        proc.wait()
    finally:
        watchdog.cancel()
    return {"first_s": None if first is None else round(first, 2), "total_s": round(time.perf_counter() - start, 2),
            "exit": proc.returncode, "output": lines, "times": times}


#: The first line of the CLI's summary, printed once the result is checked: "graph", then spaces.
SUMMARY = re.compile(r"^graph {2,}\S")


def first_run(technique: str, env: dict, timeout: float) -> dict:
    """A first `run` of `technique` on GRAPH: seconds to its first level (the level table's first
    row: a line starting with "0 "), to its result (the summary's first line, printed once the
    result is checked against the CPU reference) and to the process's end."""
    r = timed([sys.executable, "-m", "benchmarks.tools.compile_log", "explorer", "run", GRAPH, "--technique",
               technique, "--source", "0"], env, timeout, first_marker="0 ")
    ok = r["exit"] == 0 and not any("validation FAILED" in line for line in r["output"])
    printed = next((t for t, line in zip(r["times"], r["output"]) if SUMMARY.match(line)), None)
    return {"technique": technique, "first_level_s": r["first_s"], "result_s": printed, "exit_s": r["total_s"],
            "exit": r["exit"], "correct": ok and printed is not None,
            "tail": [x for x in r["output"] if not x.startswith("compile log")][-4:], "timeline": timeline(r)}


def timeline(r: dict) -> list[str]:
    """Where a first run's time went: its status lines and first level row, each with the second it
    came at, and this process's own compiles (benchmarks.tools.compile_log)."""
    out, rows, prev_t, prev = [], 0, 0.0, ""
    for t, line in zip(r["times"], r["output"]):
        if line[:1] == " " and line.strip()[:1].isdigit():  # a level row: the first one only
            rows += 1
            prev_t, prev = t, line
            if rows > 1:
                continue
        if line.startswith(("...", "  ...", "backend:", "graph:", "compile log", "warmup", "helpers")) or rows == 1:
            out.append(f"{t:6.2f}  {line.strip()[:200]}")
        elif rows > 1 and line[:1].isalpha():  # the level table's last row, then the result's first line
            out.append(f"{prev_t:6.2f}  {prev.strip()[:200]}  (the last level)")
            out.append(f"{t:6.2f}  {line.strip()[:200]}  (the result, printed)")
            rows = -1
    out.append(f"{r['total_s']:6.2f}  (the process ends)")
    return out


def warmups(args, env: dict) -> list[dict]:
    """The warm-up scenarios: a warm-up in a fresh environment, a second one there, then a first run
    of BFS-4K there; writes the warm-up's unit costs."""
    with tempfile.TemporaryDirectory(prefix="bfs4k-warm-") as d:
        e = fresh_env(Path(d))
        warm = [sys.executable, "-m", "explorer", "warmup"]
        w1 = timed(warm, e, args.warmup_timeout)
        said = next((line for line in w1["output"] if "expected about" in line), "")
        print(f"  warmup (empty cache): {w1['total_s']} s, exit {w1['exit']}; it said: {said}", flush=True)
        for line in w1["output"][-3:]:
            print(f"      {line}", flush=True)
        w2 = timed(warm, e, args.warmup_timeout)
        ready = any("everything is ready" in line for line in w2["output"])
        print(f"  second warmup: {w2['total_s']} s, exit {w2['exit']}; "
              f"{'said everything is ready' if ready else 'did NOT say everything is ready'}", flush=True)
        after = first_run("bfs4k", e, args.timeout)
        print(f"  bfs4k after the warmup: first level after {after['first_level_s']} s, result after "
              f"{after['result_s']} s", flush=True)
        costs = subprocess.run([sys.executable, "-c", COSTS], capture_output=True, text=True, env=e, cwd=ROOT)
    rows = [{"scenario": "warmup (empty cache)", "seconds": w1["total_s"], "exit": w1["exit"], "expected": said,
             "correct": w1["exit"] == 0, "tail": w1["output"][-3:]},
            {"scenario": "second warmup", "seconds": w2["total_s"], "exit": w2["exit"], "correct": ready and
             w2["exit"] == 0, "tail": w2["output"][-3:]},
            {"scenario": "first run after warmup: bfs4k", **after}]
    try:
        unit_costs = json.loads(costs.stdout.strip().splitlines()[-1])
        folder = Path(args.out or harness.RESULTS) / harness.gpu_kind(env)
        folder.mkdir(parents=True, exist_ok=True)
        measured_on = f"{env['cpu_cores']}-core {env['cpu']} host with an {env['gpu']}, one warm-up of {len(unit_costs)} units"
        (folder / "warmup_costs.json").write_text(json.dumps({"measured_on": measured_on, "units": unit_costs},
                                                             indent=1, sort_keys=True) + "\n")
        print(f"wrote {folder / 'warmup_costs.json'}")
    except (ValueError, IndexError, KeyError) as err:
        print(f"could not read the warm-up's unit costs ({err}): {costs.stderr[-500:]}")
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=None, help="results folder (default benchmarks/results)")
    ap.add_argument("--technique", action="append", metavar="T", help="first runs of these only (repeatable; "
                    "default every implemented technique)")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds allowed to one first run")
    ap.add_argument("--warmup-timeout", type=float, default=300.0, help="seconds allowed to a warm-up")
    ap.add_argument("--no-warmup", action="store_true", help="the first runs only (no warm-up scenarios)")
    ap.add_argument("--helpers", type=int, default=None, metavar="N",
                    help="at most N helper processes a first run (BFS4K_COMPILE_HELPERS; default: the CLI's own rule)")
    ap.add_argument("--name", default="cold_start", help="the results' file name (NAME.json, NAME.md)")
    args = ap.parse_args(argv)

    from explorer import backend
    from explorer.techniques import implemented_techniques

    ok, why = backend.gpu_present()
    if not ok or backend.simulator_requested():
        print(f"cold_start.py measures compiling for a GPU; there is none here ({why or 'simulator requested'})")
        return 2
    backend.select("gpu")
    env = harness.environment()
    print(harness.describe(env), flush=True)
    techniques = args.technique or [t.value for t in implemented_techniques()]
    rows = []
    for tech in techniques:
        with tempfile.TemporaryDirectory(prefix="bfs4k-cold-") as d:
            extra = {} if args.helpers is None else {"BFS4K_COMPILE_HELPERS": str(args.helpers)}
            r = first_run(tech, fresh_env(Path(d), **extra), args.timeout)
        rows.append({"scenario": f"first run: {tech}", **r})
        print(f"  first run of {tech:22s} first level after {r['first_level_s']} s, result after {r['result_s']} s, "
              f"end after {r['exit_s']} s"
              f"{'' if r['correct'] else '  (exit ' + str(r['exit']) + ': ' + ' | '.join(r['tail']) + ')'}", flush=True)

    if not args.no_warmup:
        rows += warmups(args, env)

    def target(r) -> str:  # the goal each row is held to, met or not
        limit = {"warmup (empty cache)": WARMUP_TARGET_S}.get(r["scenario"], FIRST_RUN_TARGET_S)
        if r["scenario"] == "second warmup":
            return "compiled nothing" if r["correct"] else "**compiled again**"
        took = r.get("result_s", r.get("seconds"))
        if took in (None, ""):
            return ""
        return f"within {limit:.0f} s" if took <= limit else f"**over {limit:.0f} s**"

    md = [f"A fresh environment (empty NUMBA_CACHE_DIR and BFS4K_CACHE_DIR) on {GRAPH}, through the CLI "
          f"(`python3 -m benchmarks.cold_start`). Targets: a first run's result within {FIRST_RUN_TARGET_S:.0f} s "
          "(the result: the summary the CLI prints once the run is checked against the CPU reference; the "
          "process then stops its helpers and ends), "
          f"`warmup` within {WARMUP_TARGET_S:.0f} s, a second warmup compiling nothing.", "",
          *harness.markdown_table(
              ["scenario", "first level (s)", "result (s)", "process end (s)", "target", "ran"],
              [[r["scenario"], r.get("first_level_s", ""), r.get("result_s", r.get("seconds")), r.get("exit_s", ""),
                target(r), ("right" if r["correct"] else "**FAILED**") + (f"; {r['expected']}" if r.get("expected") else "")]
               for r in rows], {1, 2, 3})]
    for r in rows:
        if r.get("timeline"):
            md += ["", f"### Where the time went: {r['scenario']}", "", "```", *r["timeline"], "```"]
    harness.write_results(args.out, args.name, env, {"graph": GRAPH, "first_run_target_s": FIRST_RUN_TARGET_S,
                                                      "warmup_target_s": WARMUP_TARGET_S, "helpers": args.helpers},
                          rows, md,
                          f"Cold start, {env['gpu']}")
    return 0 if all(r["correct"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
