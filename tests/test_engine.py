"""The engine and the first technique (topdown-queue) against the CPU reference, and every way a
user can call it wrongly."""
import itertools
import json
import time
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import backend, graphs
from explorer.api import resolve_source, run_bfs
from explorer.engine import Session, level_shares
from explorer.engine.enactor import Enactor
from explorer.engine.session import SessionClosed
from explorer.techniques import KnobError, Technique, TechniqueNotImplemented
from explorer.techniques.base import cycle_weights

from _support import checked_run, small_graphs

SMALL = small_graphs()


def check_run(g, source, technique="topdown-queue", knobs=None, **kw):
    return checked_run(g, source, technique, knobs, **kw)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_topdown_queue_small_graphs(name):
    g = SMALL[name]
    r = check_run(g, "max-degree")
    for lv in r.levels:
        assert lv.dup_generated == 0 and lv.technique == "topdown-queue"
        assert lv.frontier_out == lv.discovered


@pytest.mark.parametrize("name", sorted(graphs.SAMPLE_GRAPHS))
def test_topdown_queue_sample_graphs(name):
    g = graphs.sample_graph(name)
    if backend.current().is_simulator and g.num_arcs > backend.SIMULATOR_MAX_ARCS:
        pytest.skip(f"{name} has {g.num_arcs:,} arcs, over the simulator's limit; runs on a GPU")
    if backend.current().is_simulator and g.num_vertices > 20_000:
        # Every vertex is a Python thread of each set-up kernel there: p2p-Gnutella31 took 4 minutes of CI.
        pytest.skip(f"{name} has {g.num_vertices:,} vertices: minutes under the simulator; runs on a GPU")
    r = check_run(g, "max-degree")
    assert r.traversed_edges > 0 and r.total_ms > 0


edge_lists = st.integers(1, 40).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=120), st.booleans()))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edge_lists, st.integers(0, 10**6))
def test_topdown_queue_hypothesis_graphs(case, seed):
    n, edges, directed = case
    src = np.array([e[0] for e in edges], np.int64)
    dst = np.array([e[1] for e in edges], np.int64)
    g = graphs.from_edges(src, dst, num_vertices=n, directed=directed, name="hyp")
    check_run(g, seed % n)


def test_sources_resolve():
    g = SMALL["star40"]
    assert resolve_source(g, "max-degree") == 0
    assert resolve_source(g, " Max-Degree ") == 0
    a, b = resolve_source(g, "random", seed=7), resolve_source(g, "random", seed=7)
    assert a == b and g.degrees()[a] >= 1
    assert resolve_source(g, "12") == 12 and resolve_source(g, np.int64(3)) == 3


@pytest.mark.parametrize("source,pattern", [
    (41, r"source vertex 41 is out of range: graph 'star40' has vertices 0\.\.40"),
    (-1, r"source vertex -1 is out of range"),
    ("middle", r"source 'middle' is invalid: give a vertex id, 'max-degree' or 'random'"),
    (2.5, r"source 2.5 is invalid"),
    (True, r"source True is invalid"),
])
def test_bad_source(source, pattern):
    with pytest.raises(ValueError, match=pattern):
        run_bfs(SMALL["star40"], source)


def test_random_source_needs_an_edge():
    g = graphs.from_edges(np.array([], np.int64), np.array([], np.int64), num_vertices=3, name="empty3")
    with pytest.raises(ValueError, match="no vertex of degree >= 1"):
        run_bfs(g, "random")
    r = run_bfs(g, 1).complete()  # an isolated source is a valid one-level BFS
    assert r.num_levels == 1 and r.reached == 1


def test_unknown_and_missing_techniques(monkeypatch):
    from explorer import techniques

    with pytest.raises(ValueError, match=r"unknown technique 'dfs'; known techniques: topdown-queue, bfs4k"):
        run_bfs(SMALL["karate"], 0, "dfs")
    monkeypatch.delitem(techniques._REGISTRY, Technique.BOTTOM_UP)  # declared, not implemented
    with pytest.raises(TechniqueNotImplemented, match=r"'bottom-up' is declared but not implemented.*missing: .*bottom-up"):
        run_bfs(SMALL["karate"], 0, Technique.BOTTOM_UP)


def test_bad_knob_fails_before_running():
    with pytest.raises(KnobError, match=r"knob K1=5 is invalid: one of 1, 2, 4, 8, 16, 32"):
        run_bfs(SMALL["karate"], 0, "bfs4k", {"K1": 5})


def test_not_a_graph():
    with pytest.raises(TypeError, match="graph must be a CSRGraph"):
        run_bfs([[0, 1]], 0)


def test_run_iterates_once_and_result_needs_completion():
    run = run_bfs(SMALL["karate"], 0)
    with pytest.raises(RuntimeError, match="has not finished"):
        run.result
    run.complete()
    with pytest.raises(RuntimeError, match="iterated once"):
        list(run)


@pytest.mark.parametrize("problem", ["bfs", "sssp"])
def test_a_row_the_record_cannot_hold_is_refused_naming_its_fields(problem):
    """EnactedRun checks each row a technique's loop returns (BFS levels and shortest-path steps alike)."""
    from explorer.engine.enactor import BFSRun, RecordError
    from explorer.knobs import NoKnobs
    from explorer.sssp import SSSPRun
    from explorer.sssp.weights import weighting
    from explorer.techniques.base import Batch, LevelLoop

    class Loop(LevelLoop):
        compiled_ahead, readback = True, None

        def __init__(self, ctx):
            self.ctx = ctx

        def launch(self, go):
            pass

        def collect(self, ms):
            self.converged = True
            return Batch([dict(frontier_in=1, made_up=7)])

    class Fake:
        name, extras, runtimes = "fake", (), frozenset({"cpu"})
        technique = None

        def start(self, ctx):
            return Loop(ctx)

    g = graphs.from_edges(np.array([0]), np.array([1]), directed=False, weights=[1.0])
    run = (BFSRun(Fake(), g, 0, NoKnobs(), True, None) if problem == "bfs"
           else SSSPRun(Fake(), g, 0, NoKnobs(), weighting(g), None))
    with pytest.raises(RecordError, match=r"technique 'fake' returned a row with fields \['frontier_in', 'made_up'\]"):
        run.complete()
    if problem == "bfs":  # a declared extra the row lacks
        from explorer.stats import Extra

        Fake.extras = (Extra("words", "words tested"),)
        with pytest.raises(RecordError, match=r"technique 'fake' returned a row without its extra 'words'"):
            BFSRun(Fake(), g, 0, NoKnobs(), True, None).complete()


def test_a_record_made_for_a_level_is_the_one_its_constructor_makes():
    """LevelStats.made (the engine's, for every level) builds what LevelStats(...) builds, frozen the
    same, and refuses a row without a required field as the constructor does."""
    import dataclasses

    from explorer.stats import Direction, Kernel, LevelStats

    row = dict(frontier_in=3, edges_examined=None, discovered=2, frontier_out=2, dup_generated=None, dup_detected=0,
               dup_undetected=None, kernel="cluster", direction="bottom-up", launches=0)
    made = LevelStats.made(4, "bitmap-direction", 0.25, {"words_tested": 7}, dict(row))
    built = LevelStats(level=4, technique="bitmap-direction", time_ms=0.25, extras={"words_tested": 7}, **row)
    assert made == built and repr(made) == repr(built) and made.as_row() == built.as_row()
    assert made.kernel is Kernel.CLUSTER and made.direction is Direction.BOTTOM_UP and made.words_tested == 7
    plain = LevelStats.made(0, "x", 0.0, {}, {k: v for k, v in row.items() if k not in ("direction", "launches")})
    assert plain.direction is Direction.TOP_DOWN and plain.launches == 1  # the defaults
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.level = 5
    with pytest.raises(TypeError, match=r"missing the fields \['frontier_out'\]"):
        LevelStats.made(0, "x", 0.0, {}, {k: v for k, v in row.items() if k != "frontier_out"})


def test_instrumentation_off_marks_counts_unmeasured():
    r = run_bfs(SMALL["karate"], 0, "topdown-queue", instrument=False).complete()
    assert all(lv.dup_generated is None and lv.edges_examined is None for lv in r.levels)
    assert r.to_csv().splitlines()[1].split(",")[2] == ""  # not measured: an empty cell
    assert not r.instrumented


def test_status_messages_and_result_files(tmp_path):
    messages = []
    r = run_bfs(SMALL["grid6x7"], 0, on_status=messages.append).complete()
    doc = json.loads(r.to_json(include_arrays=True))
    assert doc["summary"]["levels"] == r.num_levels == 12
    assert doc["distances"] == r.distances.tolist()
    assert doc["summary"]["device"]["backend"] in ("gpu", "simulator")
    rows = r.to_csv().strip().splitlines()
    assert rows[0].startswith("level,frontier_in,edges_examined") and len(rows) == r.num_levels + 1
    assert r.gteps > 0


def test_simulator_size_limit_is_stated():
    if not backend.current().is_simulator:
        pytest.skip("the size limit applies to the simulator only")
    big = graphs.generate("grid2d", rows=320, cols=320)  # 203,840 arcs
    with pytest.raises(backend.BackendError, match=r"limited to 200,000 arcs"):
        run_bfs(big, 0)


def test_result_files_are_written_whole_or_not_at_all(tmp_path, monkeypatch):
    from explorer import stats

    target = tmp_path / "run.json"
    stats.write_text_atomic(target, "{}")
    assert target.read_text() == "{}"

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(stats.os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        stats.write_text_atomic(target, '{"new": 1}')
    assert target.read_text() == "{}"  # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]  # no temporary left behind


def test_single_block_levels_share_its_time_by_their_cycles():
    # The kernel started at cycle 90, its levels ended at 100, 150, 400 and the kernel at 500:
    # the first level includes the set-up, the last the kernel's exit.
    share = level_shares(cycle_weights(np.array([100, 150, 400]), 90, 500), 3)
    assert share == pytest.approx(np.array([10, 50, 350]) / 410)
    assert level_shares(None, 4) == pytest.approx([0.25] * 4)


def test_reported_time_excludes_the_callers_work_between_levels():
    # The caller sleeps 0.3 s on each of grid6x7's 12 levels (3.6 s): none of it is BFS time.
    # The elapsed time is the levels' own times plus the host's work between them (milliseconds;
    # the bound leaves room for a loaded machine, not for the sleeps).
    g = SMALL["grid6x7"]
    run = run_bfs(g, 0)
    for _ in run:
        time.sleep(0.3)
    r = run.result
    assert r.num_levels == 12
    assert r.total_ms <= r.elapsed_ms < r.total_ms + 12 * 300 / 3, (r.elapsed_ms, r.total_ms)


def test_two_runs_on_one_session_advanced_alternately_do_not_interfere():
    g = SMALL["two-parts"]
    with Session(g) as s:
        a = iter(run_bfs(g, 0, session=s))
        b_run = run_bfs(g, 5, session=s)
        b = iter(b_run)
        levels_a, levels_b = [], []
        for x, y in itertools.zip_longest(a, b):
            levels_a += [x] if x else []
            levels_b += [y] if y else []
        ra = checked_run(g, 0, "topdown-queue", session=s)
        assert b_run.result.distances.tolist() == [-1] * 5 + [0, 1, 2, -1]
        assert [lv.frontier_in for lv in levels_a] == [lv.frontier_in for lv in ra.levels]
    with pytest.raises(SessionClosed, match="session is closed"):
        run_bfs(g, 0, session=s).complete()


def test_a_session_belongs_to_its_graph():
    with Session(SMALL["karate"]) as s, pytest.raises(ValueError, match="session holds graph 'karate'"):
        run_bfs(SMALL["star40"], 0, session=s)


def test_knobs_belong_to_their_technique():
    with pytest.raises(KnobError, match=r"unknown knob 'K1' of topdown-queue; its knobs: block_threads"):
        run_bfs(SMALL["karate"], 0, "topdown-queue", {"K1": 4})


def test_runs_in_several_threads_take_turns():
    # Numba's simulator keeps thread state in globals and the GPU launcher shares marshalled
    # arguments: without the engine's step lock, parallel runs failed ('Thread' object has no
    # attribute 'blockIdx') or crashed the process (8 threads on an H100).
    import threading

    g, results, errors = SMALL["grid6x7"], {}, []

    def work(i):
        try:
            results[i] = run_bfs(g, i, "topdown-queue").complete()
        except Exception as err:  # collected, reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, r in results.items():
        check = checked_run(g, i, "topdown-queue")
        assert r.distances.tolist() == check.distances.tolist()


class _Log:
    """A runtime, clock, meter and loop that log what the enactor asks of them."""

    def __init__(self, steps: int, compiled_ahead: bool):
        self.events, self.left, self.compiled_ahead = [], steps, compiled_ahead
        self.launcher, self.readback, self.held = "go", ("dev", "host"), 0.0

    # the runtime
    def clock(self):
        return self

    def prepare(self, launch, on_compile):
        self.events.append("prepare")

    def read(self, dev, host):
        self.events.append("read")

    # its clock
    def start(self, go):
        self.events.append("start")

    def stop(self, go):
        self.events.append("stop")

    def step_ms(self):
        return 2.0

    def hold(self, seconds):
        self.held += seconds

    # a meter
    def begin(self):
        self.events.append("begin")

    def end(self):
        self.events.append("end")

    # the loop
    @property
    def converged(self):
        return self.left == 0

    def launch(self, go):
        self.events.append("launch")

    def collect(self, ms):
        self.left -= 1
        self.events.append("collect")
        return self.left


@pytest.mark.parametrize("compiled_ahead", [False, True])
def test_the_enactor_prepares_meters_times_reads_and_collects_each_step(compiled_ahead):
    # The one step loop single-source runs and multi-search runs share: compile outside the timed
    # window, the meter around it (through the read-back), records from what collect returns, and
    # the time the caller holds a record given back to the clock.
    log = _Log(3, compiled_ahead)
    enactor = Enactor(log, on_compile=None, meter=log)
    records = []
    for rec in enactor.run(log, lambda left, ms: [(left, ms, "a"), (left, ms, "b")]):
        records.append(rec)
        time.sleep(0.01)
    step = ([] if compiled_ahead else ["prepare"]) + ["begin", "start", "launch", "stop", "read", "end", "collect"]
    assert log.events == step * 3
    assert records == [(left, 2.0, x) for left in (2, 1, 0) for x in "ab"]
    assert log.held >= 6 * 0.01


def test_compiling_between_steps_is_held_off_the_runs_elapsed_time(monkeypatch):
    """A step's untimed pass may compile a kernel that step launches first (a shortest-path run's
    tree pass): the GPU waits for it, so the clock holds it off the run's elapsed time. The first
    step's comes before the clock starts, and is not held; a pass that compiles nothing (it only
    marshals the arguments) is the run's own time."""
    from explorer.engine import enactor as enactor_module

    now, heard = [0.0], []
    monkeypatch.setattr(enactor_module, "time", SimpleNamespace(perf_counter=lambda: now[0]))
    log = _Log(4, compiled_ahead=False)

    def prepare(launch, on_compile):  # steps 1, 2 and 4 compile a kernel (5 s); step 3 marshals (1 s)
        log.events.append("prepare")
        if log.left == 2:
            now[0] += 1.0
            return
        on_compile("k")
        now[0] += 5.0
        on_compile("k", "compiled in 5.00 s")

    log.prepare = prepare
    list(Enactor(log, on_compile=lambda *a: heard.append(a), meter=log).run(log, lambda left, ms: [left]))
    assert log.events.count("prepare") == 4 and log.held == 10.0
    assert heard == [("k",), ("k", "compiled in 5.00 s")] * 3  # the caller still hears every compile
