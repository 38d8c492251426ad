"""Many searches and a knob sweep over 1, 2 and 4 GPUs through Dask (explorer.scale_out), each
compared with one GPU in the same call, every result compared with the one-GPU result.

    python3 -m benchmarks.scale_out --gpus 1 2 4
    python3 -m benchmarks.scale_out --smoke          # tiny graphs, simulator workers: a check of the script

Workloads (each timed on a GPUCluster of the first N GPUs, one worker a GPU, after an untimed
run of 64 sources on every worker of that cluster that sends the graph and loads the kernels):
  betweenness   exact betweenness of --bc-graph (every vertex a source), warp-thread;
  closeness     --closeness-sources sampled sources (seed 1) of --closeness-graph, bit-parallel;
  sweep         --sweep-technique (direction-optimizing or bitmap-direction) over an 8 x 8 grid of alpha
                and beta on --sweep-graph from its max-degree vertex (a grid's centre),
                --sweep-repeats timed runs a point (each point on one GPU). One
                process holds the graph on its GPU across its sweeps (a Session), as a worker does;
                the reference distances are computed once, in the untimed first sweep. Each
                cluster's sweeps alternate with one process's, shown beside (the speed-up is over
                one process alone).
Times are the caller's wall time of the whole run (scheduling, transfers of results and the merge
included), the median of --runs timed runs; one-process runs without Dask are timed too. Writes
results/<GPU>/scale-out.{json,md}.
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pstats
import statistics
import time

import numpy as np

from benchmarks import harness

ALPHAS = (2, 4, 8, 14, 32, 64, 128, 512)
BETAS = (4, 8, 16, 24, 48, 96, 512, 4096)


def _equal(a: dict, b: dict) -> tuple[bool, str]:
    for k, v in a.items():
        v, w = np.asarray(v), np.asarray(b[k])
        if v.dtype.kind == "f":  # a float sum: its last bits follow the order of the additions
            if not np.allclose(v, w, rtol=1e-9, atol=0, equal_nan=True):
                return False, f"{k} differs beyond 1e-9"
        elif not np.array_equal(v, w):
            return False, f"{k} differs"
    floats = any(np.asarray(v).dtype.kind == "f" for v in a.values())
    return True, "equal (floats within 1e-9 relative)" if floats else "identical"


def _cluster(n: int, smoke: bool):
    from explorer.scale_out import GPUCluster

    return GPUCluster(workers=n, simulator=True) if smoke else GPUCluster(gpus=n)


def _few(g, sources):
    """64 of the run's sources, for the untimed run that compiles the kernels (on every worker)."""
    from explorer.graphs import Vertices
    from explorer.multisearch.run import resolve_sources

    return Vertices(resolve_sources(g, sources, 1)[:64])


@contextlib.contextmanager
def _watched(cluster, profile: bool):
    """Dask's task stream of the run inside (the dict it fills: tasks, the busiest worker's compute
    seconds, the compute seconds of all); with `profile`, the caller's profile printed after."""
    from distributed import get_task_stream

    seen: dict = {}
    prof = cProfile.Profile() if profile else None
    with get_task_stream(cluster.client) as ts:
        if prof:
            prof.enable()
        try:
            yield seen
        finally:
            if prof:
                prof.disable()
    per_worker: dict = {}
    for task in ts.data:
        busy = sum(ss["stop"] - ss["start"] for ss in task["startstops"] if ss["action"] == "compute")
        tasks, before = per_worker.get(task["worker"], (0, 0.0))
        per_worker[task["worker"]] = (tasks + 1, before + busy)
    seen.update(tasks=len(ts.data), busiest_s=max((b for _, b in per_worker.values()), default=0.0),
                compute_s=sum(b for _, b in per_worker.values()),
                per_worker=" ".join(f"{k}:{b:.2f}s" for k, b in sorted(per_worker.values(), reverse=True)))
    if prof:
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)


def _tasks_line(seen: dict) -> str:
    return (f"{seen['tasks']} tasks, busiest worker {seen['busiest_s']:.2f} s, all {seen['compute_s']:.2f} s "
            f"(tasks:compute a worker {seen['per_worker']})")


def _profiled(fn, *args) -> str:
    """fn(*args) under cProfile (on a worker, where it is submitted, or here): its wall time and
    the profile as text, by cumulative and by own time."""
    prof = cProfile.Profile()
    t = time.perf_counter()
    prof.enable()
    fn(*args)
    prof.disable()
    wall = time.perf_counter() - t
    out = io.StringIO()
    out.write(f"wall {wall:.3f} s (profiled)\n")
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(30)
    stats.sort_stats("tottime").print_stats(15)
    return out.getvalue()


def _worker_profile(cluster, g, run_many, sources, application, settings, n: int) -> str:
    """A chunk of the size the run's chunks had, profiled on the first worker (after the run)."""
    from explorer.multisearch.run import resolve_sources
    from explorer.scale_out import _run_chunk, on_workers, worker_addresses

    every = resolve_sources(g, sources, settings.get("seed", 0))
    rows = every[: -(-len(every) // n)]
    worker = worker_addresses(cluster.client)[0]
    fut = cluster.client.submit(_profiled, _run_chunk, run_many, on_workers(cluster.client, g), rows, application,
                                settings, 0, pure=False, workers=[worker], allow_other_workers=False)
    return fut.result()


def _point_profile(cluster, g, source: int, plan) -> str:
    """The sweep's last point (a warm-up run, 3 timed) profiled on the first worker and in this
    process, one after the other."""
    from explorer.scale_out import _sweep_point, on_workers, sent, worker_addresses
    from explorer.sweep import problem_of, run_point

    expected = problem_of(plan.problem).expected(g, source)
    last = len(plan.points) - 1
    worker = worker_addresses(cluster.client)[0]
    fut = cluster.client.submit(_profiled, _sweep_point, run_point, on_workers(cluster.client, g), source, plan, last,
                                sent(cluster.client, expected), 3, 1, None, pure=False, workers=[worker],
                                allow_other_workers=False)
    here = _profiled(_sweep_point, run_point, g, source, plan, last, expected, 3, 1, None)
    timed = cluster.client.submit(_point_phases, on_workers(cluster.client, g), source, plan, last,
                                  sent(cluster.client, expected), pure=False, workers=[worker],
                                  allow_other_workers=False).result()
    return (f"on a worker:\n{fut.result()}\nin this process:\n{here}\n"
            f"the point's phases (s), on a worker: {timed}\n"
            f"                      in this process: {_point_phases(g, source, plan, last, expected)}")


def _point_phases(g, source: int, plan, i: int, expected) -> dict:
    """Sweep point i's phases timed by the host clock, not a profiler: four runs, the first run's
    full check and the others' (and whether the graph's arrays are aligned where this runs)."""
    from explorer.scale_out import _fetched, _on_worker, _session
    from explorer.sweep import problem_of

    g = _fetched(g)
    _on_worker()
    problem, session = problem_of(plan.problem), _session(g)
    knobs = problem.make_knobs(plan.technique, plan.knobs_of(plan.points[i]))
    out, results = {}, []
    t = time.perf_counter()
    for _ in range(4):
        results.append(problem.run(g, source, plan.technique, knobs, None, session))
    out["4 runs"] = time.perf_counter() - t
    t = time.perf_counter()
    problem.check(g, results[0], expected, first=True)
    out["full check"] = time.perf_counter() - t
    t = time.perf_counter()
    for r in results[1:]:
        problem.check(g, r, expected, first=False)
    out["3 distance checks"] = time.perf_counter() - t
    out = {k: round(v, 4) for k, v in out.items()}
    out["graph aligned"] = all(a.flags.aligned for a in (g.offsets, g.indices))
    return out


def _runs_s(result) -> float:
    """A sweep's runs' wall time (s), summed over its points (the rest: checks, scheduling)."""
    return sum(sum(p.times_ms) for p in result.points) / 1000


def _gpu_s(result) -> float:
    """The run's batches' GPU time (s), summed over the workers that ran them."""
    return sum(b.time_ms for b in result.batches) / 1000


def _clocked(fn):
    """fn() and the seconds it took: (seconds, value)."""
    t = time.perf_counter()
    value = fn()
    return time.perf_counter() - t, value


def _timed(runs: int, fn):
    """fn() -> (seconds, value), `runs` times: (the median run's (seconds, value), every run's
    seconds, every value)."""
    out = [fn() for _ in range(runs)]
    return sorted(out, key=lambda x: x[0])[(len(out) - 1) // 2], [x for x, _ in out], [v for _, v in out]


def _timed_watched(runs: int, cluster, profile: bool, fn, before=None):
    """_timed of fn() over `cluster`, each run clocked inside Dask's task stream watch: (the median
    run's (seconds, (value, what the watch saw)), every run's seconds, every (value, seen)).
    `before()`, if given, runs ahead of each run, outside its clock and its watch."""
    def watched():
        if before is not None:
            before()
        with _watched(cluster, profile) as seen:
            s, value = _clocked(fn)
        return s, (value, seen)

    return _timed(runs, watched)


def many(args, rows: list, label: str, g, sources, application: str, settings: dict) -> None:
    from explorer.multisearch.run import run_many
    from explorer.scale_out import warm

    few = _few(g, sources)
    run_many(g, few, application, **settings).complete()  # compiles; not timed
    (one, base), ones, bases = _timed(args.runs, lambda: _clocked(
        lambda: run_many(g, sources, application, **settings).complete()))
    same = [_equal(base.values, b.values) for b in bases]
    rows.append({"workload": label, "gpus": 1, "how": "one process", "s": one, "times_s": ones, "speedup": 1.0,
                 "gpu_s": _gpu_s(base), "result": "the reference" if all(ok for ok, _ in same) else
                 "WRONG: one process's runs differ"})
    print(f"  {label}: one process {one:.2f} s (runs {_list(ones)}), of which batches' GPU time {_gpu_s(base):.2f} s",
          flush=True)
    if args.profile:  # after the timed run: where one process's time beside its kernels goes
        print("one process, profiled:\n" + _profiled(lambda: run_many(g, sources, application, **settings).complete()),
              flush=True)
    for n in args.gpus:
        with _cluster(n, args.smoke) as c:
            warm(c, g, run_many, few.vertices, application, **settings)  # kernels, graph: untimed
            chunks = None if args.chunks_per_worker is None else args.chunks_per_worker * n
            (s, (res, seen)), times, results = _timed_watched(args.runs, c, args.profile, lambda: run_many(
                g, sources, application, client=c, chunks=chunks, **settings).complete())
            if args.profile:
                print(_worker_profile(c, g, run_many, sources, application, settings, n), flush=True)
        checks = [_equal(base.values, r.values) for r, _ in results]
        ok, what = next(((ok, w) for ok, w in checks if not ok), checks[0])
        how = f"Dask, {n} worker(s)" + ("" if chunks is None else f", {chunks} equal chunks")
        rows.append({"workload": label, "gpus": n, "how": how, "s": s, "times_s": times, "speedup": one / s,
                     "gpu_s": _gpu_s(res), **seen, "result": what if ok else f"WRONG: {what}"})
        print(f"  {label}: {n} GPU(s) {s:.2f} s (runs {_list(times)}), {one / s:.2f}x, {what}; {_tasks_line(seen)}",
              flush=True)


def _list(times: list) -> str:
    return ", ".join(f"{t:.2f}" for t in times)


def sweep(args, rows: list, g, source: int) -> None:  # source: a vertex 0..n-1
    from explorer.engine import Session
    from explorer.scale_out import warm_sweep
    from explorer.sweep import plan_sweep, run_point, run_sweep

    side = 3 if args.smoke else len(ALPHAS)  # the simulator's sweeps are small
    tech = args.sweep_technique
    plan = plan_sweep(tech, {"alpha": list(ALPHAS[:side]), "beta": list(BETAS[:side])})
    label = f"sweep of {args.sweep_graph}: {tech} alpha x beta, {len(plan.points)} points x {args.sweep_repeats} runs"
    first = plan_sweep(tech, {"alpha": [ALPHAS[0]], "beta": [BETAS[0]]})  # alpha, beta: run-time values
    key = lambda r: [(p.knobs, p.ok, p.levels, p.error) for p in r.points]  # noqa: E731
    with Session(g) as held:  # one process keeps the graph on its GPU across its sweeps, as each worker does
        run_sweep(g, source, first, repeats=1, session=held)  # compiles, the graph on the GPU; not timed
        def here():
            return _clocked(lambda: run_sweep(g, source, plan, repeats=args.sweep_repeats, session=held))

        (one, base), ones, bases = _timed(args.runs, here)
        same = all(key(b) == key(base) and all(p.ok for p in b.points) for b in bases)
        rows.append({"workload": label, "gpus": 1, "how": "one process", "s": one, "times_s": ones, "speedup": 1.0,
                     "runs_s": _runs_s(base),
                     "result": "the reference" if same else "WRONG: one process's points differ"})
        print(f"  sweep: one process {one:.2f} s (runs {_list(ones)}); runs {_runs_s(base):.2f} s", flush=True)
        for n in args.gpus:
            with _cluster(n, args.smoke) as c:
                warm_sweep(c, g, source, first, run_point=run_point)  # every worker: kernels, graph; untimed
                turns = []  # one process's sweeps in turns with the cluster's: a host's speed drifts over a call
                (s, (res, seen)), times, results = _timed_watched(
                    args.runs, c, args.profile,
                    lambda: run_sweep(g, source, plan, repeats=args.sweep_repeats, client=c),
                    before=lambda: turns.append(here()[0]))
                if args.profile:
                    print(_point_profile(c, g, source, plan), flush=True)
            ok = all(key(r) == key(base) and all(p.ok for p in r.points) for r, _ in results)
            beside = statistics.median(turns)
            rows.append({"workload": label, "gpus": n, "how": f"Dask, {n} worker(s)", "s": s, "times_s": times,
                         "speedup": one / s, "one_in_turns_s": turns, "speedup_in_turns": beside / s, **seen,
                         "runs_s": _runs_s(res),
                         "result": "every point checked, as one process's" if ok else "WRONG: points differ"})
            print(f"  sweep: {n} GPU(s) {s:.2f} s (runs {_list(times)}), {one / s:.2f}x; one process in turns "
                  f"{beside:.2f} s ({_list(turns)}), {beside / s:.2f}x of that; ok={ok}; runs {_runs_s(res):.2f} s; "
                  f"{_tasks_line(seen)}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, nargs="+", default=[1, 2, 4], help="cluster sizes (first N GPUs)")
    ap.add_argument("--workloads", nargs="+", default=["betweenness", "closeness", "sweep"],
                    choices=["betweenness", "closeness", "sweep"])
    ap.add_argument("--bc-graph", default="kron18")
    ap.add_argument("--closeness-graph", default="kron22")
    ap.add_argument("--closeness-sources", type=int, default=16384)
    ap.add_argument("--sweep-graph", default="kron20")
    ap.add_argument("--sweep-technique", default="direction-optimizing",
                    choices=["direction-optimizing", "bitmap-direction"])
    ap.add_argument("--sweep-repeats", type=int, default=3)
    ap.add_argument("--runs", type=int, default=1, metavar="N",
                    help="timed runs of each workload a configuration: the median (of an even count, the lower "
                    "middle) gives its speed-up; every run's time is kept")
    ap.add_argument("--chunks-per-worker", type=int, default=None, metavar="N",
                    help="many searches in N equal chunks a worker (default: explorer.scale_out.default_chunks)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--name", default="scale-out", help="the results' file name (NAME.json, NAME.md)")
    ap.add_argument("--smoke", action="store_true", help="tiny graphs, simulator workers")
    ap.add_argument("--profile", action="store_true",
                    help="print the caller's profile of each Dask run, and a chunk's profiled on a worker")
    args = ap.parse_args(argv)
    if args.runs < 1:
        ap.error(f"--runs {args.runs} is invalid: timed runs a configuration, 1 or more")
    if args.smoke:
        args.sweep_repeats = min(args.sweep_repeats, 2)
    from explorer import backend

    backend.select("simulator" if args.smoke else "gpu")
    env = harness.environment()
    rows: list = []
    if "betweenness" in args.workloads:
        g = harness.load(args.bc_graph, small=args.smoke)
        print(f"betweenness of {args.bc_graph}: {g.num_vertices:,} vertices, {g.num_arcs:,} arcs", flush=True)
        many(args, rows, f"exact betweenness, {args.bc_graph} ({g.num_vertices:,} sources)", g, "all", "betweenness",
             {"method": "warp-thread"})
        write(args, env, rows)
    if "closeness" in args.workloads:
        g = harness.load(args.closeness_graph, small=args.smoke)
        k = min(args.closeness_sources, g.num_vertices)
        print(f"closeness of {args.closeness_graph}: {k:,} sources", flush=True)
        many(args, rows, f"closeness, {args.closeness_graph}, {k:,} sources", g, k, "closeness",
             {"method": "bit-parallel", "seed": 1})
        write(args, env, rows)
    if "sweep" in args.workloads:
        g = harness.load(args.sweep_graph, small=args.smoke)
        sweep(args, rows, g, harness.source_of(args.sweep_graph, g, small=args.smoke))
        write(args, env, rows)
    return 0 if all(not r["result"].startswith("WRONG") for r in rows) else 1


def write(args, env: dict, rows: list) -> None:
    """The rows so far (each workload's as it ends: a time limit keeps those done)."""
    md = ["Wall time of each whole run on the caller (s): the median of --runs timed runs (every run's in "
          "'runs s'), after an untimed one on the same cluster (the kernels compiled on every worker by a run "
          "of 64 sources, or of each sweep point once); speed-up: one process's median (without Dask, on one "
          "GPU of the same machine, no cluster started) over this one. A sweep's cluster runs alternate with "
          "one process's ('one process in turns s'; 'in turns': the speed-up over their median): beside "
          "a cluster, its workers idle, one process has run slower than alone. GPU s: the many searches' "
          "batches' kernel time, summed over the GPUs that ran them (a sweep's: none listed); busiest worker "
          "s: the compute time of the worker that computed longest in the median run (Dask's task stream). "
          "Every run's result is compared.", "",
          *harness.markdown_table(["workload", "GPUs", "how", "s", "runs s", "speed-up", "one process in turns s",
                                   "in turns", "GPU s", "busiest worker s", "result"],
                                  [[r["workload"], r["gpus"], r["how"], f"{r['s']:.2f}",
                                    _list(r.get("times_s", [r["s"]])), f"{r['speedup']:.2f}",
                                    _list(r.get("one_in_turns_s", [])),
                                    "" if r.get("speedup_in_turns") is None else f"{r['speedup_in_turns']:.2f}",
                                    "" if r.get("gpu_s") is None else f"{r['gpu_s']:.2f}",
                                    "" if r.get("busiest_s") is None else f"{r['busiest_s']:.2f}", r["result"]]
                                   for r in rows], right={1, 3, 5, 7, 8, 9})]
    harness.write_results(args.out, args.name, env, vars(args), rows, md, "Scale-out over GPUs through Dask")


if __name__ == "__main__":
    raise SystemExit(main())
