"""Many searches and sweeps over Dask workers (explorer.scale_out), under the simulator: a GPUCluster
of 2 worker processes; results identical to one process's, a killed worker's chunk run again."""
import os
import sys

import numpy as np
import pytest

pytest.importorskip("distributed", reason="scale-out needs dask.distributed (pip install -e .[dask])")

from explorer import graphs  # noqa: E402
from explorer.multisearch import APPLICATIONS  # noqa: E402
from explorer.multisearch.run import _concat, resolve_sources, run_many  # noqa: E402
from explorer.scale_out import DistributedManyRun, GPUCluster, guided, split, warm  # noqa: E402
from explorer.sweep import plan_sweep, run_sweep  # noqa: E402

SIM = os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


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


def test_a_sweep_over_the_workers_has_the_points_of_one_process(cluster, graph):
    plan = plan_sweep("topdown-queue", {"block_threads": [32, 64]})
    local = run_sweep(graph, 0, plan, repeats=2)
    progress = []
    spread = run_sweep(graph, 0, plan, repeats=2, client=cluster, on_progress=progress.append)
    key = lambda r: [(p.knobs, p.ok, p.levels, len(p.times_ms), p.error) for p in r.points]  # noqa: E731
    assert key(spread) == key(local) and all(p.ok for p in spread.points)
    assert progress[-1].done == progress[-1].total == 4
    assert {id(p.finished) for p in progress} >= {id(p) for p in spread.points}


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


def test_warm_runs_on_every_worker_and_leaves_the_graph_there(cluster, graph):
    from explorer import scale_out

    assert warm(cluster, graph, run_many, np.arange(3), "closeness") == 2
    held = cluster.client.run(lambda: scale_out._HELD["graph"][0].num_vertices if "graph" in scale_out._HELD else None)
    assert sorted(held.values()) == [graph.num_vertices] * 2


def test_a_second_run_reuses_the_graph_already_on_the_workers(cluster, graph, monkeypatch):
    """The graph is sent to the workers once per client: a second run neither sends it again nor
    makes the workers' Sessions upload it again."""
    from explorer import scale_out

    run_many(graph, "all", "closeness", client=cluster).complete()
    sent = []
    monkeypatch.setattr(scale_out, "sent", lambda *a: sent.append(a) or pytest.fail("the graph was sent again"))
    run_many(graph, "all", "closeness", client=cluster).complete()
    assert sent == []


def test_the_graph_outlives_the_worker_holding_it(cluster, graph):
    """Scattered data dies with its worker, cancelling every chunk that needs it; the graph is a
    task's result instead, which Dask computes again."""
    from explorer.scale_out import sent

    client = cluster.client
    held = sent(client, graph)
    assert held.result().num_vertices == graph.num_vertices
    holders = list(client.who_has([held])[held.key])
    client.restart_workers(holders)
    assert client.submit(lambda g: g.num_vertices, held, pure=False).result(timeout=120) == graph.num_vertices
    client.wait_for_workers(2, timeout=60)
