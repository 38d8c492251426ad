"""Where a 64-point sweep's time goes on 4 GPUs (benchmarks.scale_out's sweep, Kronecker 20): one
process's sweep and a point's phases, then 4-worker sweeps with their timeline (points submitted,
each point's start and stop on its worker, the results' arrival), the points submitted one task at a
time (as explorer.scale_out.run_sweep_points) or one client.map a worker, in turns.

    python3 -m benchmarks.tools.sweep_timeline            # 4 GPUs
    SMOKE=1 python3 -m benchmarks.tools.sweep_timeline    # 2 simulator workers, tiny graph: a check
"""
import os
import statistics
import time

from benchmarks import harness
from benchmarks.scale_out import ALPHAS, BETAS, _point_phases
from explorer.scale_out import GPUCluster, on_workers, sent, warm_sweep, worker_addresses, _sweep_point
from explorer.sweep import plan_sweep, run_point, run_sweep, problem_of


def one_sweep(cl, g, src, plan, expected, how):
    from distributed import as_completed

    t0 = time.time()
    ref, exp = on_workers(cl, g), sent(cl, expected)
    workers = worker_addresses(cl)
    args = (run_point, ref, src, plan)
    if how == "submit":
        futs = {cl.submit(_sweep_point, *args, i, exp, 3, 1, None, pure=False, workers=[workers[i % len(workers)]],
                          allow_other_workers=True): i for i in range(len(plan.points))}
    else:
        futs = {}
        for k, w in enumerate(workers):
            idx = list(range(k, len(plan.points), len(workers)))
            fs = cl.map(_sweep_point, [run_point] * len(idx), [ref] * len(idx), [src] * len(idx), [plan] * len(idx),
                        idx, [exp] * len(idx), [3] * len(idx), [1] * len(idx), [None] * len(idx), pure=False,
                        workers=[w], allow_other_workers=True)
            futs.update({f: i for f, i in zip(fs, idx)})
    t_sub = time.time()
    arrive = {}
    for fut, res in as_completed(list(futs), with_results=True):
        arrive[futs[fut]] = time.time()
        assert res[0].ok, res[0].check
    t_end = time.time()
    return t0, t_sub, arrive, t_end


def main():
    from distributed import get_task_stream

    smoke = bool(os.environ.get("SMOKE"))
    g = harness.load("kron20", small=smoke)
    src = harness.source_of("kron20", g, small=smoke)
    side = 2 if smoke else 8
    plan = plan_sweep("direction-optimizing", {"alpha": list(ALPHAS[:side]), "beta": list(BETAS[:side])})
    expected = problem_of(plan.problem).expected(g, src)
    run_sweep(g, src, plan, repeats=3)
    ones = []
    for _ in range(1 if smoke else 5):
        t = time.perf_counter(); run_sweep(g, src, plan, repeats=3); ones.append(time.perf_counter() - t)
    one = statistics.median(ones)
    print("\none process sweep s:", [round(x, 3) for x in ones], "median", round(one, 3), flush=True)
    print("one process phases:", [_point_phases(g, src, plan, 3, expected) for _ in range(3)], flush=True)
    with (GPUCluster(workers=2, simulator=True) if smoke else GPUCluster(gpus=4)) as c:
        cl = c.client
        warm_sweep(c, g, src, plan_sweep("direction-optimizing", {"alpha": [2], "beta": [4]}), run_point=run_point)
        ref, exp = on_workers(cl, g), sent(cl, expected)
        workers = worker_addresses(cl)
        for conc in ((1, 2) if smoke else (1, 4, 4)):
            futs = [cl.submit(_point_phases, ref, src, plan, 1 + j, exp, pure=False, workers=[w], allow_other_workers=False)
                    for j, w in enumerate(workers[:conc])]
            print(f"phases, {conc} at once:", cl.gather(futs), flush=True)
        for how in ("submit", "map") if smoke else ("submit", "map", "submit", "map", "submit", "map"):
            walls = []
            for rep in range(1 if smoke else 3):
                with get_task_stream(cl) as ts:
                    t0, t_sub, arrive, t_end = one_sweep(cl, g, src, plan, expected, how)
                walls.append(t_end - t0)
                per = {}
                starts, stops = [], []
                for task in ts.data:
                    for ss in task["startstops"]:
                        if ss["action"] == "compute":
                            per.setdefault(task["worker"], []).append((ss["start"] - t0, ss["stop"] - t0))
                            starts.append(ss["start"] - t0); stops.append(ss["stop"] - t0)
                busy = {w[-5:]: round(sum(b - a for a, b in v), 3) for w, v in per.items()}
                firsts = {w[-5:]: round(min(a for a, _ in v), 3) for w, v in per.items()}
                lasts = {w[-5:]: round(max(b for _, b in v), 3) for w, v in per.items()}
                gaps = {w[-5:]: round(max(b for _, b in v) - min(a for a, _ in v) - sum(b - a for a, b in v), 3)
                        for w, v in per.items()}
                print(f"{how}: wall {t_end - t0:.3f} submitted {t_sub - t0:.3f} first start {min(starts):.3f} "
                      f"last stop {max(stops):.3f} last arrival {max(arrive.values()) - t0:.3f}; tasks {len(ts.data)}; "
                      f"busy {busy} first {firsts} last {lasts} idle-between {gaps}", flush=True)
            print(f"== {how}: median wall {statistics.median(walls):.3f} -> {one / statistics.median(walls):.2f}x", flush=True)


if __name__ == "__main__":
    main()
