"""Knob sweeps (explorer.sweep), benchmarks/sweep_knobs.py on top of it, and the Tuning panel."""
import json
import math
import weakref

import numpy as np
import pytest

from explorer import backend, graphs, sweep
from explorer.knobs import KnobError, KnobSpec
from explorer.sweep import (SweepPoint, SweepResult, SweepTooLarge, axis_values, format_sweep, load_sweep,
                            measured_apart, plan_sweep, random_value, run_sweep)

SIM = backend.current().is_simulator
FIG2 = graphs.sample_graph("bfs4k_fig2")


# ------------------------------------------------------------------ plans

def test_axis_values_cover_the_declared_range():
    assert axis_values(KnobSpec("a", "", 1, choices=(1, 2, 4))) == [1, 2, 4]
    assert axis_values(KnobSpec("K3", "", 16, low=1, high=1024)) == [1, 6, 32, 181, 1024]  # factors
    assert axis_values(KnobSpec("K5", "", 1, low=0, high=16)) == [0, 4, 8, 12, 16]  # evenly from 0
    assert axis_values(KnobSpec("K2", "", 0.15, low=0.0, high=10.0, kind=float), 3) == [0.0, 5.0, 10.0]
    assert axis_values(KnobSpec("x", "", 1, low=1, high=3), 5) == [1, 2, 3]  # rounded, no repeats


def test_random_values_stay_within_the_declared_range():
    rng = np.random.default_rng(0)
    spec = KnobSpec("K3", "", 16, low=1, high=1024)
    vals = [random_value(spec, rng) for _ in range(200)]
    assert all(isinstance(v, int) and 1 <= v <= 1024 for v in vals)
    assert min(vals) < 8 and max(vals) > 128  # log-uniform: both ends of a wide range are drawn
    assert {random_value(KnobSpec("d", "", "a", choices=("a", "b"), kind=str), rng) for _ in range(50)} == {"a", "b"}


def test_grid_plans_every_combination_in_order():
    plan = plan_sweep("bfs4k", {"K1": [4, 8], "dedup": None}, base={"K6": 32})
    assert plan.axes == {"K1": [4, 8], "dedup": ["hash64", "warp-culling", "none"]}
    assert len(plan.points) == 6 and plan.points[0] == {"K1": 4, "dedup": "hash64"}
    assert plan.knobs_of(plan.points[-1]) == {"K6": 32, "K1": 8, "dedup": "none"}


def test_random_plans_are_distinct_seeded_and_within_the_ranges():
    a = plan_sweep("bfs4k", {"K3": None, "K1": None}, mode="random", samples=8, seed=3)
    b = plan_sweep("bfs4k", {"K3": None, "K1": None}, mode="random", samples=8, seed=3)
    assert a.points == b.points and len(a.points) == 8
    assert len({tuple(p.values()) for p in a.points}) == 8
    assert all(1 <= p["K3"] <= 1024 and p["K1"] in (1, 2, 4, 8, 16, 32) for p in a.points)
    small = plan_sweep("bfs4k", {"claim": None}, mode="random", samples=10)
    assert len(small.points) == 2  # only two distinct points exist


@pytest.mark.parametrize("axes,kw,error,message", [
    ({}, {}, ValueError, "at least one knob"),
    ({"K9": None}, {}, KnobError, "unknown knob 'K9' of bfs4k"),
    ({"K1": [3]}, {}, KnobError, "K1=3 is invalid"),
    ({"K1": []}, {}, ValueError, "empty list"),
    ({"K1": None}, {"base": {"K1": 4}}, ValueError, "both swept and fixed"),
    ({"K1": None}, {"mode": "spiral"}, ValueError, "'grid' or 'random'"),
    ({"K1": None}, {"mode": "random"}, ValueError, "samples >= 1"),
    ({"K1": None}, {"base": {"K3": 0}}, KnobError, "K3=0 is out of range"),
])
def test_bad_plans_are_named(axes, kw, error, message):
    with pytest.raises(error, match=message):
        plan_sweep("bfs4k", axes, **kw)


# ------------------------------------------------------------------ running

@pytest.fixture(scope="module")
def fig2_sweep():
    plan = plan_sweep("topdown-queue", {"block_threads": [32, 64]})
    seen = []
    result = run_sweep(FIG2, 0, plan, repeats=2, on_progress=seen.append)
    return result, seen


def test_each_point_is_the_median_of_its_repeats_and_checked(fig2_sweep):
    result, seen = fig2_sweep
    assert [p.knobs for p in result.points] == [{"block_threads": 32}, {"block_threads": 64}]
    for p in result.points:
        assert len(p.times_ms) == 2 and p.median_ms == pytest.approx(sum(p.times_ms) / 2)
        assert p.ok and "distances equal the CPU reference BFS (checked on the device)" in p.check and p.levels == 4
    assert result.best is min(result.points, key=lambda p: p.median_ms)
    assert result.best_knobs() == result.best.knobs
    assert result.device["backend"] == backend.current().kind
    assert result.graph == "bfs4k_fig2" and result.source == 0 and result.graph_size["arcs"] == FIG2.num_arcs


def test_a_graph_with_its_own_ids_is_swept_from_the_vertex_asked_for(tmp_path):
    # A SNAP file's ids are rarely 0..n-1: the sweep converts the user's source once, runs from
    # that vertex and records and shows the user's id beside it.
    g = graphs.from_edges([10, 10, 20, 30, 40], [20, 30, 30, 40, 50], directed=False, remap=True)
    assert g.original_ids is not None and g.to_original(0) == 10
    top = int(np.argmax(g.degrees()))
    for source, dense, own in ((40, 3, 40), ("max-degree", top, int(g.original_ids[top]))):
        result = run_sweep(g, source, plan_sweep("topdown-queue", {"block_threads": [32]}), repeats=1)
        assert result.source == dense and result.source_id == own
        assert all(p.ok for p in result.points), result.points
    assert "from vertex 40 (vertex 3 of the remapped graph): 1 points" in sweep.format_sweep(
        load_sweep(run_sweep(g, 40, plan_sweep("topdown-queue", {"block_threads": [32]}), repeats=1)
                   .save(tmp_path / "s.json")))


def test_progress_reports_every_run_with_the_time_left(fig2_sweep):
    _, seen = fig2_sweep
    warmup = 0 if SIM else 1  # run_sweep's default: an untimed run a point on a GPU (it compiles), none simulated
    total = 2 * (warmup + 2)  # two points, each its warm-up and two repeats
    assert [p.done for p in seen] == list(range(1, total + 1)) and all(p.total == total for p in seen)
    assert [i + 1 for i, p in enumerate(seen) if p.finished] == [warmup + 2, total]  # each point's last run
    assert seen[-1].left_s == 0 and f"{total}/{total} runs" in str(seen[-1]) and "left" in str(seen[-1])


def test_a_failing_point_is_kept_and_the_others_run():
    # cluster=2 needs visited='shared' (a cross-knob rule): that point fails, the other runs.
    plan = plan_sweep("bfs4k", {"cluster": [2, 1]}, base={"single_block_threads": 32, "K6": 32})
    result = run_sweep(FIG2, 0, plan, repeats=1)
    bad, good = result.points
    assert bad.error and "visited='shared'" in bad.error and not bad.usable and "failed" in bad.status()
    assert good.usable and result.best is good


def test_a_wrong_result_is_never_the_best(monkeypatch):
    real = sweep.bfs_distances
    monkeypatch.setattr(sweep, "_REFERENCES", weakref.WeakKeyDictionary())  # no reference kept from before

    def wrong(graph, source):
        d = real(graph, source).copy()
        d[-1] += 1
        return d
    monkeypatch.setattr(sweep, "bfs_distances", wrong)
    result = run_sweep(FIG2, 0, plan_sweep("topdown-queue", {"block_threads": [32]}), repeats=1)
    p, = result.points
    assert p.ok is False and "WRONG" in p.status() and result.best is None and result.best_knobs() == {}
    assert "distance of vertex" in p.check  # failed where it ran, then named by the host's check


def test_the_reference_is_computed_once_a_graph_and_source(monkeypatch):
    calls = []
    real = sweep.bfs_distances
    monkeypatch.setattr(sweep, "_REFERENCES", weakref.WeakKeyDictionary())
    monkeypatch.setattr(sweep, "bfs_distances", lambda g, s: calls.append(s) or real(g, s))
    plan = plan_sweep("topdown-queue", {"block_threads": [32]})
    for source in (0, 0, 1, 0):
        assert all(p.ok for p in run_sweep(FIG2, source, plan, repeats=1).points)
    assert calls == [0, 1, 0]  # the graph keeps its last source's


def test_a_repeat_the_device_fails_gets_the_hosts_full_check(monkeypatch):
    # The device finds a wrong parent in the second run: its arrays come back and the host checks
    # them in full (a comparison of the distances alone would pass them).
    from explorer.reference.on_device import DeviceCheck

    calls = []
    real = DeviceCheck.passes

    def second_fails(self, *args):
        calls.append(1)
        return real(self, *args) and len(calls) != 2

    def wrong_parent(graph, result, **kw):
        if result.parents is not None:
            result.parents[result.parents == 1] = 2
        return real_check(graph, result, **kw)

    real_check = sweep.check_result
    monkeypatch.setattr(DeviceCheck, "passes", second_fails)
    monkeypatch.setattr(sweep, "check_result", wrong_parent)
    result = run_sweep(FIG2, 0, plan_sweep("topdown-queue", {"block_threads": [32]}), repeats=3, warmup=0)
    p, = result.points
    assert len(calls) == 3 and p.ok is False and p.check.startswith("repeat 2:"), p.check


def test_a_points_host_work_runs_on_at_most_host_threads_and_the_count_comes_back(monkeypatch):
    # On a host of 64 CPUs a sweep's points on all of them took 2-3x as long as on 32: the count is
    # capped for the point, and the caller's own count restored after it, a failing point's too.
    import numba
    problem = sweep.problem_of("bfs")
    seen, real_run, real_check = [], type(problem).run, type(problem).check
    monkeypatch.setattr(type(problem), "run", lambda self, *a: seen.append(numba.get_num_threads()) or real_run(self, *a))
    monkeypatch.setattr(type(problem), "check",
                        lambda self, *a, **k: seen.append(numba.get_num_threads()) or real_check(self, *a, **k))
    monkeypatch.setattr(sweep, "HOST_THREADS", 1)
    before = numba.get_num_threads()
    plan = plan_sweep("bfs4k", {"cluster": [2, 1]}, base={"single_block_threads": 32, "K6": 32})
    result = run_sweep(FIG2, 0, plan, repeats=2)
    assert result.points[0].error and result.points[1].ok
    assert seen and set(seen) == {1} and numba.get_num_threads() == before


def test_stop_ends_the_sweep_early():
    result = run_sweep(FIG2, 0, plan_sweep("topdown-queue", {"block_threads": [32, 64, 128]}), repeats=1,
                       stop=lambda: True)
    assert result.stopped and result.points == []


@pytest.mark.skipif(not SIM, reason="the size limit is the simulator's")
def test_the_simulator_refuses_a_sweep_too_large_and_says_why():
    big = graphs.generate("grid2d", rows=50, cols=50)  # 9,800 arcs
    with pytest.raises(SweepTooLarge, match=r"up to 5,000 arcs \(the CUDA simulator runs every GPU thread"):
        run_sweep(big, 0, plan_sweep("topdown-queue", {"block_threads": [32]}), repeats=1)
    many = plan_sweep("bfs4k", {"K1": None, "K3": None}, points_per_axis=50)
    with pytest.raises(SweepTooLarge, match="at most 200"):
        run_sweep(FIG2, 0, many, repeats=3)


def test_lines_and_heatmaps_leave_failed_points_blank():
    plan = plan_sweep("bfs4k", {"cluster": [1, 2], "K1": [4]}, base={"single_block_threads": 32, "K6": 32})
    result = run_sweep(FIG2, 0, plan, repeats=1)
    xs, ys, z = result.grid()
    assert xs == [1, 2] and ys == [4] and z.shape == (1, 2)
    assert z[0, 0] == result.points[0].median_ms and math.isnan(z[0, 1])
    with pytest.raises(ValueError, match="a line needs one swept knob"):
        result.line()


def test_a_sweep_saved_reopens_the_same(fig2_sweep, tmp_path):
    result, _ = fig2_sweep
    path = result.save(tmp_path / "deep" / "sweep.json")
    back = load_sweep(path)
    assert back.to_dict() == result.to_dict()
    assert back.best.knobs == result.best.knobs and back.line() == result.line()
    doc = json.loads(path.read_text())
    assert doc["format"] == 1 and doc["points"][0]["median_ms"] == result.points[0].median_ms
    with pytest.raises(IsADirectoryError, match="is a folder"):
        result.save(tmp_path)


@pytest.mark.parametrize("text,message", [(None, "no such sweep file"), ("{", "not a sweep file"),
                                          ('{"x": 1}', "no 'points'"), ('{"points": []}', "format 1")])
def test_bad_sweep_files_are_named(tmp_path, text, message):
    path = tmp_path / "s.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        load_sweep(path)


# ------------------------------------------------------------------ benchmarks/sweep_knobs.py

def _script(argv):
    from benchmarks import sweep_knobs

    return sweep_knobs.main([*argv, *(["--simulator"] if SIM else [])])


@pytest.mark.parametrize("spec", ["bfs4k_fig2", "gen:grid2d:rows=3,cols=3", "FILE"])
def test_the_script_takes_samples_generators_and_files(spec, tmp_path, capsys):
    if spec == "FILE":
        spec = str(tmp_path / "path.txt")
        (tmp_path / "path.txt").write_text("0 1\n1 2\n2 3\n")
    out = tmp_path / "s.json"
    rc = _script([spec, "block_threads=32,64", "--technique", "topdown-queue", "--repeats", "1", "--source", "0",
                  "--json", str(out)])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "block_threads=32" in text and "block_threads=64" in text and " ok " in text
    assert load_sweep(out).technique == "topdown-queue"


def test_the_script_names_bad_input(capsys):
    assert _script(["bfs4k_fig2", "K9=1"]) == 2
    assert "unknown knob 'K9'" in capsys.readouterr().err
    assert _script(["no_such_graph", "K1=4"]) == 2
    assert "neither a sample graph nor an existing file" in capsys.readouterr().err
    assert _script(["bfs4k_fig2", "K1="]) == 2
    assert "no values after '='" in capsys.readouterr().err


# ------------------------------------------------------------------ the Tuning panel

def _explorer():
    pytest.importorskip("ipywidgets", reason="the panels need ipywidgets (pip install -e .[notebook])")
    from explorer.ui.widgets import Explorer

    ex = Explorer(graph="bfs4k_fig2", source=0, technique="topdown-queue")
    return ex, ex.tools.panel("tuning")


def _sweep_plot(technique, axes):
    for mod in ("ipywidgets", "bokeh", "jupyter_bokeh"):
        pytest.importorskip(mod, reason="the Tuning panel needs ipywidgets, Bokeh and jupyter_bokeh "
                                        "(pip install -e .[notebook])")
    from explorer.ui.sweep_panel import SweepPlot

    return SweepPlot(technique, axes)


def test_a_line_keeps_the_knobs_order_and_marks_the_best():
    plot = _sweep_plot("bfs4k", {"K1": [1, 4, 32]})
    plot.add(SweepPoint({"K1": 32}, [3.0], [2.0], 4, True, "ok"))
    plot.add(SweepPoint({"K1": 1}, [5.0], [4.0], 4, True, "ok"))
    plot.add(SweepPoint({"K1": 4}, error="KnobError: no"))
    assert plot.source.data["x"] == ["1", "32"] and plot.source.data["median_ms"] == [5.0, 3.0]
    assert plot.failed.data["x"] == ["4"] and "failed" in plot.failed.data["status"][0]
    assert plot._failed_item.visible  # its legend entry shows once a point failed
    plot.mark_best(SweepPoint({"K1": 32}, [3.0], [2.0], 4, True, "ok"))
    assert plot.best.data["x"] == ["32"]


def test_a_heatmap_colours_by_time_and_greys_failed_cells():
    plot = _sweep_plot("bfs4k", {"K1": [4, 8], "K4": [0, 1]})
    plot.add(SweepPoint({"K1": 4, "K4": 0}, [2.0], [1.0], 3, True, "ok"))
    plot.add(SweepPoint({"K1": 8, "K4": 1}, [6.0], [5.0], 3, True, "ok"))
    plot.add(SweepPoint({"K1": 8, "K4": 0}, [1.0], [1.0], 3, False, "distances differ"))
    assert list(zip(plot.source.data["x"], plot.source.data["y"])) == [("4", "0"), ("8", "1")]
    assert (plot.mapper.low, plot.mapper.high) == (2.0, 6.0)
    assert plot.failed.data["status"] == ["WRONG: distances differ"]  # a wrong result is never coloured


def test_the_panel_sweeps_the_explorers_picks_and_applies_the_best(tmp_path):
    ex, panel = _explorer()
    ex.set_knobs({"block_threads": 128})
    assert "block_threads" in panel.knob1.options and panel.knob2.value == "(none)"
    result = panel.run_sweep(knob1="block_threads", values1="32, 64", repeats=1)
    assert [p.knobs for p in result.points] == [{"block_threads": 32}, {"block_threads": 64}]
    assert result.graph == "bfs4k_fig2" and result.source == 0 and result.technique == "topdown-queue"
    runs = 2 * (1 + (0 if backend.current().is_simulator else 1))  # a warm-up run a point on a GPU
    assert (panel.progress.value, panel.progress.max) == (runs, runs) and "left" in panel.progress_text.value
    assert sorted(panel.plot.source.data["x"]) == ["32", "64"] and panel.plot.best.data["x"] == [
        str(result.best.knobs["block_threads"])]
    assert "fastest median: block_threads=" in panel.best_text.value and not panel.apply_button.disabled
    assert "One run per setting measures no spread" in panel.best_text.value  # repeats=1: nothing measured
    assert "distances equal" not in panel.table.value and panel.table.value.count(">ok<") == 2
    panel.apply_button.click()
    assert ex.knob_values()["block_threads"] == result.best.knobs["block_threads"]
    panel.path.value = str(tmp_path / "s.json")
    panel.save_button.click()
    assert "saved" in panel.status.value and (tmp_path / "s.json").exists()
    panel.result = None
    panel.open_button.click()
    assert panel.result.to_dict() == result.to_dict() and "opened from" in panel.status.value
    assert sorted(panel.plot.source.data["x"]) == ["32", "64"]


def test_two_knobs_make_a_heatmap_and_a_stop_keeps_the_points_so_far():
    ex, panel = _explorer()
    ex.technique.value = "bfs4k"
    seen = panel._on_progress

    def then_stop(p):
        seen(p)
        panel.stop_button.click()  # what the user's click does while the worker thread runs
    panel._on_progress = then_stop
    panel.run_sweep(knob1="K1", values1="4,32", knob2="K4", values2="0,2", repeats=1, background=True)
    panel.worker.wait(120)
    assert panel.result is not None and panel.result.stopped and len(panel.result.points) == 1
    assert panel.plot.mapper is not None and len(panel.plot.source.data["x"]) == 1
    assert "stopped early" in panel.status.value and not panel.run_button.disabled


def test_the_panel_says_why_it_refuses(tmp_path):
    ex, panel = _explorer()
    panel.knob1.value = "block_threads"
    panel.knob2.value = "block_threads"
    panel.run_button.click()
    assert "chosen twice" in panel.status.value
    panel.knob2.value = "(none)"
    panel.values1.value = "33"
    panel.run_button.click()
    assert "block_threads=33 is invalid" in panel.status.value
    panel.apply_button.click()
    assert "no sweep" in panel.status.value
    panel.path.value = str(tmp_path / "missing.json")
    panel.open_button.click()
    assert "no such sweep file" in panel.status.value
    if SIM:
        assert "5,000 arcs" in panel.limit_note.value
        ex.set_graph("gen:grid2d:rows=50,cols=50")
        panel.values1.value = ""
        panel.run_button.click()
        assert "up to 5,000 arcs" in panel.status.value and panel.result is None


# ------------------------------------------------------------------ noise is called noise

def _result(times: dict, backend_kind="gpu", knob="K1", technique="bfs4k") -> SweepResult:
    """A finished sweep of `knob` with these run times per value (every run correct)."""
    points = [SweepPoint({knob: v}, list(ts), [t / 2 for t in ts], 4, True, "ok") for v, ts in times.items()]
    return SweepResult(graph="g", source=0, technique=technique, axes={knob: list(times)}, base={},
                       repeats=max(len(ts) for ts in times.values()), points=points,
                       device={"backend": backend_kind})


def test_a_point_has_its_spread_and_a_difference_counts_only_when_the_runs_are_apart():
    a, b, c = (SweepPoint({"K1": 4}, [10.0, 12.0, 11.0]), SweepPoint({"K1": 8}, [11.5, 13.0, 12.5]),
               SweepPoint({"K1": 32}, [20.0, 21.0, 22.0]))
    assert (a.min_ms, a.median_ms, a.max_ms) == (10.0, 11.0, 12.0)
    assert a.spread_text() == "11.000 ms (10.000–12.000, 3 runs)"
    assert not measured_apart(a, b) and measured_apart(a, c) and measured_apart(c, a)
    one, other = SweepPoint({"K1": 4}, [10.0]), SweepPoint({"K1": 8}, [30.0])
    assert not measured_apart(one, other)  # one run each: no spread, so no difference measured
    assert "no spread measured" in one.spread_text()


def test_the_verdict_calls_noise_noise_and_a_change_must_be_measured():
    # The notebook's "K1: advice 4 -> tuned 32" came from a 1.6 % difference measured once.
    once = _result({4: [100.0], 32: [98.4]})
    v = once.verdict()
    assert v.best.knobs == {"K1": 32} and not v.measured
    assert "One run per setting measures no spread, so no difference is measured" in v.text
    assert once.choose({"K1": 4}).knobs == {"K1": 4}  # the current setting stays
    # Overlapping runs: within noise, whatever the medians say.
    close = _result({4: [100.0, 104.0, 99.0], 32: [98.4, 103.0, 97.0], 8: [150.0, 151.0, 152.0]})
    v = close.verdict()
    assert v.best.knobs == {"K1": 32} and [p.knobs for p in v.ties] == [{"K1": 4}] and not v.measured
    assert "Within noise" in v.text and "K1=4" in v.text and "K1=8" not in v.text
    assert close.choose({"K1": 4}).knobs == {"K1": 4} and close.choose({"K1": 8}).knobs == {"K1": 32}
    assert close.choose(None).knobs == {"K1": 32} and close.choose({"K7": 1}).knobs == {"K1": 32}
    # Every run faster than every run of the others: a measured best.
    apart = _result({4: [100.0, 104.0, 99.0], 32: [60.0, 61.0, 62.0]})
    v = apart.verdict()
    assert v.measured and v.ties == [] and "measured, not noise" in v.text
    assert apart.choose({"K1": 4}).knobs == {"K1": 32}


def test_under_the_simulator_the_verdict_says_the_times_are_not_gpu_times():
    sim = _result({4: [100.0, 104.0, 99.0], 32: [60.0, 61.0, 62.0]}, backend_kind="simulator")
    assert sim.simulated and "not GPU times" in sim.verdict().text
    assert "not GPU times" not in _result({4: [1.0, 1.1]}).verdict().text


def test_the_text_table_shows_each_points_range_and_what_is_noise():
    result = _result({4: [100.0, 104.0, 99.0], 32: [98.4, 103.0, 97.0], 8: [150.0, 151.0, 152.0]},
                     backend_kind="simulator")
    result.points.append(SweepPoint({"K1": 16}, error="KnobError: " + "a long reason " * 12))
    text = format_sweep(result)
    lines = text.splitlines()
    assert "fastest–slowest" in lines[1] and "against the best" in lines[1]
    row = {line.split()[-1]: line for line in lines[2:5]}
    assert "97.000–103.000" in row["K1=32"] and " best " in row["K1=32"]
    assert "99.000–104.000" in row["K1=4"] and "within noise" in row["K1=4"]
    assert "slower" in row["K1=8"]
    verdict = " ".join(text.split("\nfastest median: ", 1)[1].split())
    assert verdict.startswith("K1=32") and "Within noise" in verdict and "not GPU times" in verdict
    # JupyterLab breaks output lines wider than its area anywhere, even mid-word: none is.
    assert max(len(line) for line in lines) <= sweep.TEXT_WIDTH


def test_a_saved_sweep_keeps_the_spread():
    d = _result({4: [100.0, 104.0, 99.0]}).to_dict()
    assert (d["points"][0]["min_ms"], d["points"][0]["max_ms"]) == (99.0, 104.0)
    assert SweepResult.from_dict(d).points[0].times_ms == [100.0, 104.0, 99.0]


def _legend_places(fig):
    from bokeh.models import Legend

    return {place for place in ("center", "left", "right", "above", "below")
            for m in getattr(fig, place) if isinstance(m, Legend)}


def test_a_line_shows_each_points_spread_and_rings_the_points_within_noise():
    result = _result({4: [100.0, 104.0, 99.0], 8: [150.0, 151.0, 152.0], 32: [98.4, 103.0, 97.0]})
    plot = type(_sweep_plot("bfs4k", {"K1": [4, 8, 32]})).of(result)
    data = plot.source.data
    assert data["x"] == ["4", "8", "32"]
    assert (data["min_ms"], data["max_ms"]) == ([99.0, 150.0, 97.0], [104.0, 152.0, 103.0])
    whiskers = [r for r in plot.figure.renderers if type(r.glyph).__name__ == "Segment"]
    assert whiskers and whiskers[0].glyph.y0 == "min_ms" and whiskers[0].glyph.y1 == "max_ms"
    assert plot.best.data["x"] == ["32"] and plot.ties.data["x"] == ["4"]
    # The legend ("best", "within noise of the best", ...) sits below the plot, never over a point.
    assert _legend_places(plot.figure) == {"below"}
    from bokeh.models import Legend

    legend = next(m for m in plot.figure.below if isinstance(m, Legend))
    labels = [item.label["value"] for item in legend.items if item.visible]
    assert "best" in labels and "within noise of the best" in labels and "failed" not in labels


def test_a_heatmap_writes_dark_text_on_light_cells_and_keeps_its_legend_outside():
    pytest.importorskip("ipywidgets", reason="the Tuning panel needs ipywidgets (pip install -e .[notebook])")
    from explorer.ui.sweep_panel import readable_on

    assert readable_on("#FDE724") == "black" and readable_on("#440154") == "white"  # Viridis' two ends
    plot = _sweep_plot("bfs4k", {"K1": [4, 8], "K4": [0, 1]})
    plot.add(SweepPoint({"K1": 4, "K4": 0}, [2.0, 2.2, 2.1], [1.0], 3, True, "ok"))   # fastest: dark purple
    plot.add(SweepPoint({"K1": 8, "K4": 1}, [6.0, 6.1, 6.3], [5.0], 3, True, "ok"))   # slowest: yellow
    data = plot.source.data
    assert data["text_color"] == ["white", "black"]
    assert data["cell_text"][0] == "2.1\n2–2.2"  # the median and the runs' range in the cell
    assert _legend_places(plot.figure) == {"below"}


def test_the_panel_repeats_each_point_and_says_within_noise(tmp_path):
    ex, panel = _explorer()
    assert panel.repeats.value >= 3  # one run measures no spread: the default can tell noise apart
    path = tmp_path / "close.json"
    _result({32: [100.0, 104.0, 99.0], 64: [98.4, 103.0, 97.0]}, backend_kind="simulator",
            knob="block_threads", technique="topdown-queue").save(path)
    panel.open_sweep(path)
    assert "Within noise" in panel.best_text.value and "not GPU times" in panel.best_text.value
    assert panel.apply_button.description == "Apply fastest median"
    assert "within noise of the best" in panel.table.value and "97.000" in panel.table.value
    assert panel.plot.ties.data["x"] == ["32"] and "not GPU times" in panel.plot.figure.title.text
    panel.apply_button.click()
    assert "the fastest median; not measured faster than the others" in panel.status.value
    _result({32: [100.0, 104.0, 99.0], 64: [60.0, 61.0, 62.0]}, knob="block_threads",
            technique="topdown-queue").save(path)
    panel.open_sweep(path)
    assert "measured, not noise" in panel.best_text.value and panel.apply_button.description == "Apply best"
