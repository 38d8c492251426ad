"""Many searches and sweeps over Dask workers (explorer.scale_out), under the simulator: a GPUCluster
of 2 worker processes; results identical to one process's, a killed worker's chunk run again."""
import os
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed", reason="scale-out needs dask.distributed (pip install -e .[dask])")

from explorer import graphs  # noqa: E402
from explorer.multisearch import APPLICATIONS  # noqa: E402
from explorer.multisearch.run import _concat, resolve_sources, run_many  # noqa: E402
from explorer.scale_out import (DistributedManyRun, GPUCluster, default_chunks, guided, on_every_worker, split, warm,  # noqa: E402
                                warm_sweep)
from explorer.sweep import plan_sweep, run_sweep  # noqa: E402

SIM = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"
# Two simulated workers (CPU processes) and CLI calls with --simulator, which a process already on
# its GPU cannot make: on GPUs, benchmarks/scale_out.py runs the same over 1, 2 and 4 of them, every
# result compared with one GPU's.
pytestmark = pytest.mark.skipif(not SIM, reason="its Dask workers are simulator processes (CI); on GPUs "
                                "benchmarks/scale_out.py runs the same, every result compared with one GPU's")


@pytest.fixture(scope="module")
def cluster():
    c = GPUCluster(workers=2) if SIM else GPUCluster()
    yield c
    c.close()


@pytest.fixture(scope="module")
def graph():
    return graphs.sample_graph("bfs4k_fig2")


def _same(one: dict, many: dict) -> None:
    assert one.keys() == many.keys()
    for k, v in one.items():
        v, w = np.asarray(v), np.asarray(many[k])
        if v.dtype.kind == "f":  # betweenness: a float sum, whose last bits follow the additions' order
            np.testing.assert_allclose(w, v, rtol=1e-12, atol=0, err_msg=k)
        else:
            np.testing.assert_array_equal(w, v, err_msg=k)


def _pairs():
    """(application, method) for every application, by the search-per-block method and by MS-BFS
    where it takes the application."""
    from explorer.multisearch.methods import implementation

    out = []
    for app in sorted(APPLICATIONS):
        for method in ("warp-thread", "bit-parallel"):
            try:
                implementation(method).check(APPLICATIONS[app]())
            except ValueError:
                continue
            out.append((app, method))
    return out


@pytest.mark.parametrize("app,method", _pairs())
def test_every_application_over_two_workers_equals_one_process(cluster, graph, app, method):
    one = run_many(graph, "all", app, method=method).complete()
    records = []
    many = run_many(graph, "all", app, method=method, client=cluster, chunks=3, on_progress=records.append).complete()
    _same(one.values, many.values)
    assert [s.source for s in many.searches] == list(one.sources) == list(many.sources)
    assert [s.row for s in many.searches] == list(range(graph.num_vertices))
    assert sorted(r.batch for r in records) == list(range(len(records)))  # one record per chunk
    assert records[-1].searches_done == graph.num_vertices
    assert [s.levels for s in many.searches] == [s.levels for s in one.searches]


def test_each_search_names_its_batch_when_a_chunk_runs_several(cluster, graph):
    # k=2 searches a batch: each of the 3 chunks runs several batches; the merged result numbers
    # them one after another, and every search names the batch that ran it.
    many = run_many(graph, "all", "closeness", method="warp-thread", k=2, client=cluster, chunks=3).complete()
    assert len(many.batches) > 3 and [b.batch for b in many.batches] == list(range(len(many.batches)))
    per_batch = np.bincount(many.searches.column("batch"), minlength=len(many.batches))
    assert per_batch.tolist() == [b.searches for b in many.batches]
    rows = many.searches.column("row")
    assert all(np.all(np.diff(rows[many.searches.column("batch") == b]) == 1) for b in range(len(many.batches)))


def test_a_distributed_run_says_what_it_will_do_before_it_runs(cluster, graph):
    run = run_many(graph, "all", "closeness", client=cluster)
    assert run.describe() == (f"{graph.num_vertices} searches in {len(run.ranges)} chunks over 2 Dask workers; "
                              "each chunk planned and run on one worker's GPU")
    assert run_many(graph, "all", "closeness").describe().startswith(f"{graph.num_vertices} searches")


def test_sampled_sources_in_the_graphs_own_ids_go_through_unchanged(cluster, graph):
    one = run_many(graph, 5, "closeness", seed=3).complete()
    many = run_many(graph, 5, "closeness", seed=3, client=cluster.client).complete()
    _same(one.values, many.values)
    np.testing.assert_array_equal(one.sources, many.sources)


def _die_once(marker: str, chunk: int) -> None:
    """On a worker: the first attempt at chunk 1 kills its process (a marker file remembers)."""
    if chunk == 1 and not os.path.exists(marker):
        open(marker, "w").close()
        os._exit(1)


def test_a_killed_workers_chunk_runs_again_and_is_merged_once(cluster, graph, tmp_path):
    import functools

    marker = tmp_path / "died"
    sys.modules.setdefault("test_scale_out", sys.modules[__name__])
    srcs = resolve_sources(graph, "all")
    app = APPLICATIONS["closeness"]()
    run = DistributedManyRun(cluster.client, graph, srcs, app, {"method": "warp-thread"}, 3, None, hook=functools.partial(_die_once, str(marker)),
                             run_many=run_many, concat=_concat)
    records = list(run)
    assert marker.exists()  # a worker died running chunk 1
    assert sorted(r.batch for r in records) == [0, 1, 2]
    _same(run_many(graph, "all", app).complete().values, run.result.values)
    cluster.client.wait_for_workers(2, timeout=60)


def _profiling() -> bool:
    import dask

    return dask.config.get("distributed.worker.profile.enabled")


def test_the_workers_do_not_profile_their_threads(cluster):
    # Dask's profiler (sys._current_frames, 100 times a second) can deadlock Python 3.11 while a
    # simulated kernel starts its threads: no worker of ours runs it.
    assert set(cluster.client.run(_profiling).values()) == {False}


def _malloc_trim():
    return os.environ.get("MALLOC_TRIM_THRESHOLD_")


def test_the_workers_leave_mallocs_own_thresholds_alone(cluster):
    # Dask sets MALLOC_TRIM_THRESHOLD_ for its workers, which also pins glibc's mmap threshold:
    # every large array read back from the GPU would be mapped and faulted in afresh.
    assert set(cluster.client.run(_malloc_trim).values()) == {None}


def _held_graph_collectable():
    """Whether the garbage collector still walks this worker's held graph (frozen objects are in
    none of its generations)."""
    import gc

    from explorer import scale_out

    held = scale_out._HELD["graph"][0]
    return any(o is held for o in gc.get_objects())


def test_a_worker_freezes_its_long_lived_objects_once_it_holds_a_graph(cluster, graph):
    # Full collections walking a worker's long-lived objects took 0.1 s each on an H100 host.
    warm(cluster, graph, run_many, np.arange(3), "closeness")
    assert set(cluster.client.run(_held_graph_collectable).values()) == {False}


def test_a_sweep_over_the_workers_has_the_points_of_one_process(cluster, graph):
    plan = plan_sweep("topdown-queue", {"block_threads": [32, 64]})
    local = run_sweep(graph, 0, plan, repeats=2)
    progress = []
    spread = run_sweep(graph, 0, plan, repeats=2, client=cluster, on_progress=progress.append)
    key = lambda r: [(p.knobs, p.ok, p.levels, len(p.times_ms), p.error) for p in r.points]  # noqa: E731
    assert key(spread) == key(local) and all(p.ok for p in spread.points)
    assert progress[-1].done == progress[-1].total == 4
    assert {id(p.finished) for p in progress} >= {id(p) for p in spread.points}


def test_a_sweeps_points_go_out_in_chunks_and_come_back_in_their_places(cluster, graph):
    import dataclasses

    from explorer.scale_out import guided

    knobs = [{"block_threads": b} for b in (32, 64, 64, 32, 64, 32)]
    plan = dataclasses.replace(plan_sweep("topdown-queue", {"block_threads": [32, 64]}), points=knobs)
    assert max(hi - lo for lo, hi in guided(np.arange(6), 2)) > 1  # a chunk of several points
    progress = []
    spread = run_sweep(graph, 0, plan, repeats=1, client=cluster, on_progress=progress.append)
    assert [p.knobs for p in spread.points] == knobs and all(p.ok for p in spread.points)
    assert [p.done for p in progress] == list(range(1, 7))


def test_the_workers_are_asked_of_the_scheduler_not_read_from_the_clients_cached_identity(cluster, graph,
                                                                                          monkeypatch):
    """distributed's periodic refresh leaves the client's scheduler_info() with no per-worker entries;
    a sweep (and whatever counts or pins to the workers) must still find both workers."""
    from explorer import scale_out

    client = cluster.client
    monkeypatch.setattr(client, "scheduler_info", lambda *a, **k: {"workers": {}})
    assert scale_out.worker_count(client) == 2 and len(scale_out.worker_addresses(client)) == 2
    assert len(on_every_worker(cluster, os.getpid)) == 2
    plan = plan_sweep("topdown-queue", {"block_threads": [32, 64]})
    spread = run_sweep(graph, 0, plan, repeats=1, client=cluster)
    assert [p.knobs for p in spread.points] == [plan.knobs_of(q) for q in plan.points] and all(p.ok for p in spread.points)


def test_bad_arguments_are_named(graph):
    with pytest.raises(TypeError, match="client must be a distributed.Client or an explorer.scale_out.GPUCluster"):
        run_many(graph, "all", "closeness", client="tcp://127.0.0.1:8786")
    with pytest.raises(ValueError, match="chunks= splits the sources over the workers of a client="):
        run_many(graph, "all", "closeness", chunks=4)
    with pytest.raises(ValueError, match="workers=0 is invalid"):
        GPUCluster(workers=0, simulator=True)


def test_without_dask_the_error_names_the_extra(graph, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(ImportError, match=r"bfs4k-explorer\[dask\]"):
        run_many(graph, "all", "closeness", client=object())


def test_chunks_are_even_and_whole_words_where_asked():
    s = np.arange(300)
    assert split(s, 4) == [(0, 75), (75, 150), (150, 225), (225, 300)]
    assert split(s, 4, 64) == [(0, 128), (128, 256), (256, 300)]
    assert split(s[:3], 8) == [(0, 1), (1, 2), (2, 3)]


def test_the_default_chunks_shrink_so_the_run_ends_on_small_ones():
    """Guided sizes: every source once, in order; sizes never grow; the first is 1/(2 x workers) of
    all, the last ones at most FEWEST; whole 64-row words where asked."""
    for k, workers, multiple in ((262144, 4, 1), (262144, 2, 1), (16384, 4, 64), (10, 2, 1), (300, 2, 64)):
        r = guided(np.arange(k), workers, multiple)
        assert r[0][0] == 0 and r[-1][1] == k and all(a[1] == b[0] for a, b in zip(r, r[1:]))
        sizes = [hi - lo for lo, hi in r]
        assert sizes == sorted(sizes, reverse=True)
        assert all(sz % multiple == 0 for sz in sizes[:-1])
        assert sizes[0] <= max(multiple, -(-k // (2 * workers)) + multiple)
    big = [hi - lo for lo, hi in guided(np.arange(262144), 4)]
    assert big[0] == 32768 and max(big[-8:]) <= 1024 and len(big) < 40  # 9 a worker, not hundreds
    assert len(guided(np.arange(10), 2)) >= 4  # a few sources still spread over both workers
    assert default_chunks(np.arange(262144), 4, "warp-thread") == guided(np.arange(262144), 4)
    # MS-BFS's words share each pass over the graph: one part a worker, whole words
    assert default_chunks(np.arange(16384), 4, "bit-parallel") == [(0, 4096), (4096, 8192), (8192, 12288),
                                                                   (12288, 16384)]


def test_a_sweeps_chunks_hold_every_point_once_spread_over_the_plan():
    """Guided sizes over a fixed shuffle: a chunk of an 8 x 8 grid's points is not one row of it."""
    from explorer.scale_out import sweep_chunks

    for points, workers in ((64, 4), (64, 2), (7, 3), (3, 4), (1, 1)):
        chunks = sweep_chunks(points, workers)
        assert sorted(i for c in chunks for i in c) == list(range(points))
        assert [len(c) for c in chunks] == [hi - lo for lo, hi in guided(np.arange(points), workers)]
    assert sweep_chunks(64, 4) == sweep_chunks(64, 4)  # the same order each time
    first = sweep_chunks(64, 4)[0]
    assert len(first) == 8 and len({i // 8 for i in first}) > 2 and len({i % 8 for i in first}) > 2


def test_each_worker_gets_cores_of_its_own():
    from explorer.scale_out import cpu_shares

    shares = cpu_shares(list(range(64)), 4)
    assert shares == [list(range(16 * k, 16 * k + 16)) for k in range(4)]
    assert [len(s) for s in cpu_shares(list(range(10)), 4)] == [3, 3, 2, 2]
    assert sum(cpu_shares([3, 5, 7, 9, 11], 2), []) == [3, 5, 7, 9, 11]
    assert cpu_shares([0, 1], 3) == [[0], [1], [0]]  # fewer cores than workers: shared in turn


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="this system has no CPU affinities")
def test_a_worker_keeps_every_thread_of_its_process_on_its_cores():
    # In a process of its own: the test's pytest worker keeps all its cores.
    import subprocess

    cpu = min(os.sched_getaffinity(0))
    code = f"""
import os, threading
from explorer import scale_out
stop = threading.Event()
before = threading.Thread(target=stop.wait); before.start()
os.environ[scale_out.CPUS_ENV] = "{cpu}"
scale_out._on_worker()
after = threading.Thread(target=lambda: print(sorted(os.sched_getaffinity(0)))); after.start(); after.join()
print(sorted({{c for t in os.listdir("/proc/self/task") for c in os.sched_getaffinity(int(t))}}))
stop.set(); before.join()
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [f"[{cpu}]", f"[{cpu}]"]  # a thread started later; every thread, the earlier too


def test_warm_runs_on_every_worker_and_leaves_the_graph_there(cluster, graph):
    from explorer import scale_out

    assert warm(cluster, graph, run_many, np.arange(3), "closeness") == 2
    held = cluster.client.run(lambda: scale_out._HELD["graph"][0].num_vertices if "graph" in scale_out._HELD else None)
    assert sorted(held.values()) == [graph.num_vertices] * 2


def test_a_task_pinned_to_every_worker_runs_once_on_each(cluster):
    assert sorted(on_every_worker(cluster, os.getpid)) == sorted(cluster.client.run(os.getpid).values())


def test_warm_sweep_runs_the_first_point_on_every_worker_and_names_a_failure(cluster, graph):
    from explorer import scale_out
    from explorer.sweep import run_point

    ok = plan_sweep("topdown-queue", {"block_threads": [32]})
    assert warm_sweep(cluster, graph, 0, ok, run_point=run_point) == 2
    held = cluster.client.run(lambda: scale_out._HELD["graph"][0].num_vertices if "graph" in scale_out._HELD else None)
    assert sorted(held.values()) == [graph.num_vertices] * 2
    bad = plan_sweep("bfs4k", {"hash_entries": [3]})  # not a power of two: refused as the worker makes the knobs
    with pytest.raises(RuntimeError, match="first point failed on a worker.*hash_entries"):
        warm_sweep(cluster, graph, 0, bad, run_point=run_point)


def test_a_second_run_reuses_the_graph_already_on_the_workers(cluster, graph, monkeypatch):
    """The graph is sent to the workers once per client: a second run neither sends it again nor
    makes the workers' Sessions upload it again."""
    from explorer import scale_out

    run_many(graph, "all", "closeness", client=cluster).complete()
    sent = []
    monkeypatch.setattr(scale_out, "sent", lambda *a: sent.append(a) or pytest.fail("the graph was sent again"))
    run_many(graph, "all", "closeness", client=cluster).complete()
    assert sent == []


def test_a_second_sweep_reuses_the_reference_already_on_the_workers(cluster, graph, monkeypatch):
    from explorer import scale_out

    plan = plan_sweep("topdown-queue", {"block_threads": [32, 64]})
    first = run_sweep(graph, 0, plan, repeats=1, client=cluster)
    monkeypatch.setattr(scale_out, "sent", lambda *a: pytest.fail("the reference was sent again"))
    second = run_sweep(graph, 0, plan, repeats=1, client=cluster)
    assert all(p.ok for p in first.points + second.points)


def test_the_graph_outlives_the_worker_holding_it_and_the_worker_comes_back(cluster, graph):
    """Scattered data dies with its worker, cancelling every chunk that needs it; the graph is a
    task's result instead, which Dask computes again. The dead worker's nanny starts another, which
    the cluster keeps however long it takes to start (a SpecCluster closes the nanny of a worker not
    back within lost-worker-timeout, 0 s here)."""
    import dask

    from explorer.scale_out import sent

    client = cluster.client
    held = sent(client, graph)
    assert held.result().num_vertices == graph.num_vertices
    holders = list(client.who_has([held])[held.key])
    with dask.config.set({"distributed.deploy.lost-worker-timeout": "0s"}):
        # The worker dies, as in a crash (Client.restart_workers can lose the worker for good on a
        # busy machine: dask/distributed#7312).
        client.run(os._exit, 1, workers=holders, on_error="ignore")
        assert client.submit(lambda g: g.num_vertices, held, pure=False).result(timeout=120) == graph.num_vertices
        deadline = time.monotonic() + 60  # the holder gone, a new worker in its place
        while set(holders) & set(client.scheduler_info()["workers"]) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not set(holders) & set(client.scheduler_info()["workers"]), "the worker holding the graph did not die"
        client.wait_for_workers(2, timeout=120)


# ------------------------------------------------------------------ the CLI, the sweep script, the Explorer

def _cli(argv, capsys):
    from explorer.ui.cli import main

    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def _without_times(out: str) -> list[str]:
    return [line for line in out.splitlines() if " time " not in line and not line.startswith("wrote ")]


def test_the_cli_over_two_workers_prints_and_writes_what_one_process_does(cluster, capsys, tmp_path):
    import json

    one, many, mine = tmp_path / "one.json", tmp_path / "many.json", tmp_path / "mine.json"
    args = ["many", "bfs4k_fig2", "--application", "closeness", "--simulator"]
    rc1, out1, _ = _cli([*args, "--json", str(one)], capsys)
    rc2, out2, err2 = _cli([*args, "--gpus", "2", "--json", str(many)], capsys)
    assert rc1 == rc2 == 0
    assert "spread over 2 Dask worker(s)" in err2 and "10/10" in err2  # the bar reached every search
    assert _without_times(out1) == _without_times(out2) and "closeness, highest first:" in out1
    values = lambda p: json.loads(p.read_text())["values"]  # noqa: E731
    assert values(one) == values(many)
    address = cluster.client.scheduler.address  # a user's running scheduler: only the client is closed
    rc3, out3, err3 = _cli([*args, "--scheduler", address, "--json", str(mine)], capsys)
    assert rc3 == 0 and f"the 2 Dask worker(s) of the scheduler at {address}" in err3
    assert values(mine) == values(one) and cluster.size == 2


def test_the_clis_dask_flags_are_checked(capsys, monkeypatch):
    for bad in ("0", "two"):
        rc, _, err = _cli(["many", "bfs4k_fig2", "--simulator", "--gpus", bad], capsys)
        assert rc == 2 and f"--gpus '{bad}' is invalid: a number of GPUs >= 1, or 'all'" in err
    with pytest.raises(SystemExit) as ended:
        _cli(["many", "bfs4k_fig2", "--gpus", "2", "--scheduler", "tcp://127.0.0.1:8786"], capsys)
    assert ended.value.code == 2 and "not allowed with argument --gpus" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "distributed", None)
    rc, _, err = _cli(["many", "bfs4k_fig2", "--simulator", "--gpus", "2"], capsys)
    assert rc == 2 and "--gpus spreads the searches over Dask workers" in err and "bfs4k-explorer[dask]" in err


def test_sweep_knobs_takes_its_points_over_the_workers_of_a_scheduler(cluster, capsys, tmp_path):
    from benchmarks import sweep_knobs

    out = tmp_path / "s.json"
    assert sweep_knobs.main(["bfs4k_fig2", "block_threads=32,64", "--technique", "topdown-queue", "--simulator",
                             "--repeats", "1", "--scheduler", cluster.client.scheduler.address,
                             "--json", str(out)]) == 0
    text = capsys.readouterr()
    assert "Dask worker(s)" in text.err and "block_threads=32" in text.out and out.exists()
    assert sweep_knobs.main(["bfs4k_fig2", "block_threads=32", "--simulator", "--gpus", "-1"]) == 2
    assert "--gpus '-1' is invalid" in capsys.readouterr().err


def test_the_explorers_tuning_tab_sweeps_over_its_client(cluster):
    pytest.importorskip("ipywidgets", reason="the panels need ipywidgets (pip install -e .[notebook])")
    from explorer.ui.widgets import Explorer

    ex = Explorer(graph="bfs4k_fig2", source=0, technique="topdown-queue", client=cluster)
    panel = ex.tools.panel("tuning")
    seen = []
    panel._on_progress = (lambda show: lambda p: (seen.append(p), show(p)))(panel._on_progress)
    result = panel.run_sweep(knob1="block_threads", values1="32, 64", repeats=1)
    assert sorted(p.knobs["block_threads"] for p in result.points) == [32, 64] and all(p.ok for p in result.points)
    assert [p.done for p in seen] == [1, 2] and (panel.progress.value, panel.progress.max) == (2, 2)
    assert sorted(panel.plot.source.data["x"]) == ["32", "64"]  # the plot took each point as it finished
    assert "over 2 Dask workers" in panel.status.value and "2 settings" in panel.status.value
    with pytest.raises(TypeError, match="client must be a distributed.Client"):
        Explorer(graph="bfs4k_fig2", client="tcp://127.0.0.1:8786")


def _slow_point(graph, source, plan, point, **_):
    """On a worker: a sweep point that takes a while and measures nothing."""
    import time

    from explorer.sweep import SweepPoint

    time.sleep(0.5)
    return SweepPoint(dict(point), [1.0], [1.0], 1, True, "ok"), {}


def _uneven_point(graph, source, plan, point, **_):
    """On a worker: a sweep point that takes 0.3 s on the first worker to run one (a marker file
    names it), 0.02 s on the other; the device names the worker. The slow worker's points start
    once the fast one has started its first, so that a worker slow to start on a busy machine does
    not decide the race."""
    import time

    from distributed import get_worker

    from explorer.sweep import SweepPoint

    me = get_worker().address
    marker, fast = Path(point["marker"]), Path(point["marker"] + "-fast")
    try:
        with marker.open("x") as f:
            f.write(me)
    except FileExistsError:
        pass
    if marker.read_text() == me:
        while not fast.exists() and time.time() < marker.stat().st_mtime + 30:  # 30 s in all, not a point
            time.sleep(0.01)
        time.sleep(0.3)
    else:
        fast.touch()
        time.sleep(0.02)
    return SweepPoint(dict(point), [1.0], [1.0], 1, True, "ok"), {"worker": me}


def test_a_worker_that_ends_its_chunks_sooner_gets_more_of_the_sweep(cluster, graph, tmp_path):
    import dataclasses

    from explorer.scale_out import run_sweep_points

    sys.modules.setdefault("test_scale_out", sys.modules[__name__])
    points = [{"block_threads": 32, "marker": str(tmp_path / "slow")}] * 16
    plan = dataclasses.replace(plan_sweep("topdown-queue", {"block_threads": [32]}), points=points)
    ran = []
    run_sweep_points(cluster.client, graph, 0, plan, np.zeros(graph.num_vertices), repeats=1, warmup=0, limits=None,
                     on_point=lambda i, sp, dev: ran.append((i, dev["worker"])), run_point=_uneven_point)
    assert sorted(i for i, _ in ran) == list(range(16))
    slow = (tmp_path / "slow").read_text()
    assert sum(w == slow for _, w in ran) < sum(w != slow for _, w in ran)


def test_stop_cancels_the_sweep_points_not_yet_finished(cluster, graph):
    import dataclasses

    from explorer.scale_out import run_sweep_points

    sys.modules.setdefault("test_scale_out", sys.modules[__name__])
    plan = dataclasses.replace(plan_sweep("topdown-queue", {"block_threads": [32]}), points=[{"block_threads": 32}] * 12)
    finished = []
    stopped = run_sweep_points(cluster.client, graph, 0, plan, np.zeros(graph.num_vertices), repeats=1, warmup=0,
                               limits=None, on_point=lambda i, sp, dev: finished.append(i), run_point=_slow_point,
                               stop=lambda: len(finished) >= 2)
    assert stopped and 2 <= len(finished) < 12


def test_the_cross_technique_table_spreads_its_cells_over_workers(tmp_path, capsys):
    """benchmarks/table.py --gpus 2 --smoke: each cell, all its runs, on one simulator worker; the
    table as one process writes it, every cell checked."""
    import json

    from benchmarks import table

    if not SIM:
        pytest.skip("--smoke selects the simulator: on a GPU the benchmark itself runs")
    assert table.main(["--smoke", "--graphs", "grid1000", "--techniques", "topdown-queue", "virtual-warp",
                       "--repeats", "1", "--gpus", "2", "--out", str(tmp_path)]) == 0
    doc = json.loads(next(tmp_path.glob("*/table-smoke.json")).read_text())
    cells = doc["results"][0]["cells"]
    assert sorted(cells) == ["topdown-queue", "virtual-warp"] and all(c["correct"] for c in cells.values())
    assert [s["knobs"]["W"] for s in cells["virtual-warp"]["swept"]] == [1, 32]  # its sweep on one worker
    assert "| grid1000 |" in next(tmp_path.glob("*/table-smoke.md")).read_text()



def test_chunks_spread_over_the_workers_though_one_holds_the_graph(cluster, graph):
    """Dask's memory manager drops the extra replicas of a key once no task waits for it; the
    chunks still go one to each worker (they name the graph, each worker keeps its own copy)
    instead of all to the worker left holding it. And no chunk task depends on the graph's key."""
    from distributed import get_task_stream

    warm(cluster, graph, run_many, np.arange(3), "closeness")
    for _ in range(2):
        cluster.client.amm.run_once()
        with get_task_stream(cluster.client) as ts:
            res = run_many(graph, np.arange(4), "closeness", client=cluster, chunks=2).complete()
        assert len(ts.data) == 2 and len({t["worker"] for t in ts.data}) == 2, ts.data
    _same(run_many(graph, np.arange(4), "closeness").complete().values, res.values)
    sys.modules.setdefault("test_scale_out", sys.modules[__name__])
    srcs = resolve_sources(graph, "all")
    run = DistributedManyRun(cluster.client, graph, srcs, APPLICATIONS["closeness"](), {"method": "warp-thread"}, 2,
                             None, hook=_no_dependencies, run_many=run_many, concat=_concat)
    assert len(list(run)) == 2


def _no_dependencies(chunk: int) -> None:
    """On a worker: this chunk's task waited for no other key (its graph is named, not depended on)."""
    from distributed import get_worker
    from distributed.worker import thread_state

    deps = [str(d.key) for d in get_worker().state.tasks[thread_state.key].dependencies]
    if deps:
        raise RuntimeError(f"chunk {chunk} depends on {deps}")


def test_a_task_on_a_worker_takes_its_share_of_the_cpu_threads(monkeypatch):
    # Numba reads NUMBA_NUM_THREADS at its import, which in a worker comes before the Nanny sets
    # the worker's environment: each task applies the worker's share itself.
    import numba

    from explorer import scale_out

    before = numba.get_num_threads()
    monkeypatch.setenv(scale_out.THREADS_ENV, "1")
    try:
        scale_out._on_worker()
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(before)
