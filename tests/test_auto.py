"""`auto`: the features it reads, its cost model, what it may choose, and run_bfs, the CLI and the
calibration command with it (under the simulator in CI; the same tests on a GPU)."""
import dataclasses
import json

import numpy as np
import pytest

from explorer import api, backend
from explorer.auto import AUTO, Calibration, CalibrationError, CostModel, choose
from explorer.auto.choose import CONTENDERS, TRIAL_RUNS, WITHIN
from explorer.auto.calibrate import LADDER
from explorer.auto.candidates import CANDIDATES, SIMULATOR_CAPS, by_name
from explorer.auto.model import SHIPPED, DEFAULT_GPU, file_name
from explorer.device import DeviceLimits
from explorer.graphs import generate, search_features
from explorer.knobs import KnobError
from explorer.reference import check_result
from explorer.ui import cli

from _support import small_graphs

SMALL = small_graphs()
SIM = ["--simulator"] if backend.current().is_simulator else []
H100 = DeviceLimits(name=DEFAULT_GPU, sm_count=132, max_threads_per_sm=2048, shared_per_block_optin=227 * 1024,
                    clusters=True)


def _calibration(times: dict, graphs) -> Calibration:
    return Calibration(device={"name": "test GPU", "date": "2026-01-01"},
                       graphs=[{"name": g.name, "features": search_features(g).__dict__} for g in graphs],
                       times=times)


def test_features_come_from_one_probe_and_are_kept():
    star = SMALL["star40"]
    f = search_features(star)
    assert f is search_features(star)  # computed once
    assert (f.vertices, f.arcs, f.levels, f.max_degree) == (41, 80, 2, 40)
    assert f.peak == pytest.approx(40 / 41) and f.reached == 1.0
    assert f.skew == pytest.approx(40 / (80 / 41))
    path = search_features(SMALL["path25"])  # from vertex 1 (the first of degree 2): 24 levels to vertex 24
    assert path.levels == 24 and path.reached == 1.0
    assert search_features(SMALL["two-parts"]).reached == pytest.approx(4 / 9)


def test_the_model_reproduces_the_ladder_and_ranks_by_shape():
    long_, short = SMALL["path25"], SMALL["kron6"]
    cal = _calibration({"a": [1.0, 0.2], "b": [0.3, 0.5]}, [long_, short])
    m = CostModel(cal)
    assert m.predict(search_features(long_)) == pytest.approx({"a": 1.0, "b": 0.3})
    assert m.predict(search_features(short)) == pytest.approx({"a": 0.2, "b": 0.5})
    grid = search_features(SMALL["grid6x7"])  # between them: a prediction for each, both positive
    p = m.predict(grid)
    assert set(p) == {"a", "b"} and all(v > 0 for v in p.values())
    assert m.predict(grid) == p  # deterministic


def test_a_candidate_that_cannot_run_somewhere_is_left_out_there_only():
    g1, g2 = SMALL["path25"], SMALL["kron6"]
    m = CostModel(_calibration({"a": [None, 0.2], "b": [0.3, 0.5]}, [g1, g2]))
    assert m.predict(search_features(g1))["a"] > 0  # still predicted, from where it ran


@pytest.mark.parametrize("path", sorted(SHIPPED.glob("*.json")), ids=lambda p: p.stem)
def test_a_shipped_calibration_covers_every_candidate_and_its_own_ladder(path):
    cal = Calibration.load(path)
    assert path.name == file_name(cal.gpu) and set(cal.times) == {c.name for c in CANDIDATES}
    assert [g["name"] for g in cal.graphs] == [name for name, _, _ in LADDER]
    m = CostModel(cal)
    for i, f in enumerate(cal.features()):  # on a ladder graph the measured best is chosen
        measured = {k: t[i] for k, t in cal.times.items() if t[i] is not None}
        p = m.predict(f)
        assert min(p, key=p.get) == min(measured, key=measured.get), cal.graphs[i]["name"]


@pytest.mark.parametrize("text, message", [
    ("{not json", "line 1: not JSON"),
    ('{"format": 99}', "not a calibration of format"),
    ('{"format": 1, "device": {}, "graphs": [], "times": {"a": [1.0]}}', "one positive time"),
    ('{"format": 1, "device": {}, "graphs": [{"name": "g"}], "times": {}}', "missing or malformed"),
])
def test_a_bad_calibration_file_is_named_with_its_problem(tmp_path, text, message):
    p = tmp_path / "cal.json"
    p.write_text(text)
    with pytest.raises(CalibrationError, match=message) as err:
        Calibration.load(p)
    assert str(p) in str(err.value)


def test_choice_is_deterministic_explained_and_runnable():
    g = SMALL["kron6"]
    a, b = choose(g, H100, "gpu"), choose(g, H100, "gpu")
    assert a == b
    assert a.candidate == next(iter(a.predicted)) and a.predicted_ms == min(a.predicted.values())
    text = a.reason()
    assert text.startswith(f"auto: {a.candidate} (") and f"{search_features(g).levels} levels expected" in text
    assert "predicted" in text and DEFAULT_GPU in text
    ru = a.runner_up()
    assert ru is not None and ru[1] >= 1.0 and f"{ru[0]} predicted" in text


def test_a_runner_up_predicted_faster_than_what_the_trials_chose_is_called_faster():
    c = choose(SMALL["kron6"], H100, "gpu")
    first = next(iter(c.predicted))
    timed = next(n for n in c.predicted if by_name(n).technique != by_name(first).technique)
    won = dataclasses.replace(c, candidate=timed, technique=by_name(timed).technique, measured={timed: 0.01, first: 0.02})
    times = c.predicted[timed] / c.predicted[first]
    assert won.runner_up() == (first, 1 / times)
    assert f"{first} predicted {times:.2g}x faster" in won.reason() and "slower" not in won.reason()


def test_close_contenders_are_timed_once_per_graph_and_the_fastest_kept():
    g = generate("kronecker", scale=6, edge_factor=4, seed=3)  # a graph of its own: trials are kept with it
    names = [c.name for c in CANDIDATES]
    slow_first = {n: [0.10 + 0.001 * i] for i, n in enumerate(names)}  # the model's order: names' order
    m = CostModel(_calibration(slow_first, [g]))
    calls = []

    def timer(technique, knobs):  # the model's last contender runs fastest here
        calls.append((technique, knobs.as_dict()))
        return 1.0 / len(calls)

    c = choose(g, H100, "gpu", model=m, timer=timer)
    plain = choose(g, H100, "gpu", model=m)
    contenders = [n for n in plain.predicted if plain.predicted[n] <= min(plain.predicted.values()) * WITHIN]
    contenders = contenders[:CONTENDERS]
    assert len(contenders) == CONTENDERS and len(calls) == CONTENDERS * TRIAL_RUNS
    assert list(c.measured) == contenders and c.candidate == contenders[-1] != plain.candidate
    assert c.measured[c.candidate] == min(c.measured.values())
    assert "timed on this graph" in c.reason() and "timed on this graph" not in plain.reason()
    again = choose(g, H100, "gpu", model=m, timer=timer)
    assert len(calls) == CONTENDERS * TRIAL_RUNS and again == c  # kept with the graph: no second trial


def test_a_graph_built_from_another_shares_its_trials():
    from explorer.auto.choose import share_trials
    from explorer.graphs import CSRGraph

    g = generate("kronecker", scale=6, edge_factor=4, seed=7)
    sup = CSRGraph(np.append(g.offsets, g.offsets[-1] + 1), np.append(g.indices, 0), True, "with a super-source")
    names = [c.name for c in CANDIDATES]
    m = CostModel(_calibration({n: [0.10 + 0.001 * i] for i, n in enumerate(names)}, [g]))
    calls = []
    share_trials(sup, g)
    first = choose(sup, H100, "gpu", model=m, timer=lambda t, k: calls.append(t) or 1.0)
    assert len(calls) == CONTENDERS * TRIAL_RUNS and first.measured
    assert choose(g, H100, "gpu", model=m, timer=lambda t, k: pytest.fail("timed again")).measured == first.measured


def test_a_clear_favourite_runs_once_to_show_it_sets_up_here():
    g = generate("kronecker", scale=6, edge_factor=4, seed=4)
    names = [c.name for c in CANDIDATES]
    m = CostModel(_calibration({n: [0.1 if i == 0 else 1.0] for i, n in enumerate(names)}, [g]))
    calls = []
    c = choose(g, H100, "gpu", model=m, timer=lambda technique, knobs: calls.append(technique) or 0.5)
    assert c.candidate == names[0] and c.measured == {names[0]: 0.5} and len(calls) == 1
    assert choose(g, H100, "gpu", model=m).measured == {}  # the model alone runs nothing


def _refusing(refused: set, calls: list):
    """A stand-in GPU timer: the candidates of `refused` (knob dicts) fail to set up, as a cluster the
    GPU cannot place does; the others take 1 ms less a thousandth per call."""
    def timer(technique, knobs):
        calls.append((technique, knobs.as_dict()))
        if (technique, tuple(sorted(knobs.as_dict().items()))) in refused:
            raise KnobError(f"this GPU cannot launch {technique} in clusters of 16 (knob cluster)")
        return 1.0 - 0.001 * len(calls)
    return timer


def _key(name):
    from explorer.auto.choose import _prepared

    _, knobs = _prepared(name, False)
    return by_name(name).technique, tuple(sorted(knobs.as_dict().items()))


def test_a_contender_that_cannot_set_up_is_left_out_and_the_others_run_in_its_place():
    g = generate("kronecker", scale=6, edge_factor=4, seed=8)
    names = [c.name for c in CANDIDATES]
    m = CostModel(_calibration({n: [0.10 + 0.001 * i] for i, n in enumerate(names)}, [g]))
    plain = choose(g, H100, "gpu", model=m)
    first = plain.candidate
    calls = []
    c = choose(g, H100, "gpu", model=m, timer=_refusing({_key(first)}, calls))
    assert c.candidate != first and first not in c.measured and first not in c.predicted
    assert "knob cluster" in c.excluded[first]
    assert len(c.measured) == CONTENDERS  # the next candidate's contenders took its place
    assert len(calls) == 1 + CONTENDERS * TRIAL_RUNS  # it failed at its first run, and is not run again
    again = choose(g, H100, "gpu", model=m, timer=_refusing(set(), calls))
    assert again == c and len(calls) == 1 + CONTENDERS * TRIAL_RUNS  # kept with the graph


def test_a_lone_favourite_that_cannot_set_up_gives_way_to_the_next():
    g = generate("kronecker", scale=6, edge_factor=4, seed=9)
    names = [c.name for c in CANDIDATES]
    m = CostModel(_calibration({n: [0.1 * (i + 1)] for i, n in enumerate(names)}, [g]))  # none within WITHIN
    order = list(choose(g, H100, "gpu", model=m).predicted)
    calls = []
    c = choose(g, H100, "gpu", model=m, timer=_refusing({_key(order[0]), _key(order[1])}, calls))
    assert c.candidate == order[2] and list(c.measured) == [order[2]] and len(calls) == 3
    assert set(c.excluded) >= {order[0], order[1]} and "auto: " + order[2] in c.reason()
    refuse_all = {_key(n) for n in order}
    with pytest.raises(KnobError, match="no technique can run here.*knob cluster"):
        choose(generate("kronecker", scale=6, edge_factor=4, seed=10), H100, "gpu", model=m,
               timer=_refusing(refuse_all, []))


def test_no_cluster_is_chosen_where_the_gpu_has_none():
    old = DeviceLimits(name="NVIDIA A100-SXM4-80GB", sm_count=108, max_threads_per_sm=2048,
                       shared_per_block_optin=163 * 1024, clusters=False)
    for g in SMALL.values():
        c = choose(g, old, "gpu")
        assert "cluster" not in c.candidate and c.knobs.get("cluster", 0) <= 1  # bfs4k: 1 is one block
        assert any("cluster" in why for why in c.excluded.values())
        assert "has no calibration of its own" in c.reason()


def test_without_a_gpu_auto_chooses_among_the_cpu_techniques():
    c = choose(SMALL["karate"], None, None)
    assert c.technique.startswith("cpu-") and "no GPU" in c.reason()
    assert all(name.startswith("cpu-") for name in c.predicted)


def test_nothing_runnable_is_an_error_naming_why():
    g = SMALL["kron6"]
    m = CostModel(_calibration({"bitmap-direction, one cluster of 16": [0.1]}, [g]))
    old = DeviceLimits(name="old", sm_count=4, max_threads_per_sm=1024, clusters=False)
    with pytest.raises(KnobError, match="no technique can run here.*cluster"):
        choose(g, old, "gpu", model=m)


def test_under_the_simulator_the_choice_keeps_to_its_sizes():
    for g in SMALL.values():
        c = choose(g, DeviceLimits.simulator(), "simulator")
        assert all(c.knobs.get(k, 0) <= cap for k, cap in SIMULATOR_CAPS.items())
        assert "simulator" in c.reason()


@pytest.mark.parametrize("name", ["karate", "grid6x7", "directed", "two-parts"])
def test_run_bfs_chooses_by_default_and_is_exact(name):
    g = SMALL[name]
    run = api.run_bfs(g, "max-degree")
    r = run.complete()
    assert check_result(g, r).ok
    assert run.choice is not None and r.technique == run.choice.technique
    assert r.choice["reason"] == run.choice.reason() and r.summary()["chosen"]["technique"] == r.technique
    assert all(lv.technique == r.technique for lv in r.levels)
    measured = run.choice.measured
    if backend.current().is_simulator:  # simulated times would decide nothing: the model alone
        assert measured == {}
    elif measured:  # a GPU's trials: the fastest contender, each timed from this source
        assert set(measured) <= set(run.choice.predicted) and measured[run.choice.candidate] == min(measured.values())
    named = api.run_bfs(g, "max-degree", "topdown-queue").complete()
    assert named.choice is None and "chosen" not in named.summary()


def test_auto_takes_no_knobs():
    with pytest.raises(KnobError, match="chooses its own knobs"):
        api.run_bfs(SMALL["karate"], 0, AUTO, {"K1": 2})
    with pytest.raises(KnobError, match="chooses its own knobs"):
        api.run_bfs(SMALL["karate"], 0, "Auto", {"block_threads": 32})


def test_cli_run_prints_the_choice_in_one_line(capsys):
    code = cli.main(["run", "gen:grid2d:rows=5,cols=6", "--source", "0", *SIM])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("auto: ")]
    assert len(lines) == 1 and "levels expected" in lines[0]
    assert "validation" in out and "ok" in out


def test_cli_run_auto_refuses_knobs(capsys):
    code = cli.main(["run", "bfs4k_fig2", "--source", "0", *SIM, "--knob", "K1=2"])
    _, err = capsys.readouterr()
    assert code != 0 and "chooses its own knobs" in err


def test_calibrate_writes_what_auto_reads(tmp_path, capsys):
    out = tmp_path / "cal.json"
    code = cli.main(["calibrate", *SIM, "--smoke", "--repeats", "1", "--candidate", "cpu-topdown",
                     "--candidate", "hybrid", "--out", str(out)])
    text, err = capsys.readouterr()
    assert code == 0, err
    cal = Calibration.load(out)
    assert set(cal.times) == {"cpu-topdown", "hybrid"} and len(cal.graphs) == 3
    assert all(t > 0 for ts in cal.times.values() for t in ts)
    assert cal.device["backend"] == backend.current().kind and f"written to {out}" in text
    g = generate("grid2d", rows=5, cols=5)
    assert choose(g, DeviceLimits.simulator(), "simulator", model=CostModel(cal)).candidate in cal.times
    data = json.loads(out.read_text())
    assert data["graphs"][0]["params"] == {"scale": 5, "edge_factor": 4, "seed": 1}


def test_an_interrupted_calibration_goes_on_where_it_stopped(monkeypatch, tmp_path, capsys):
    """--resume: the graphs an interrupted calibration saved are kept, not measured again, and the rest
    of the ladder is measured; a file of another device, of other candidates or of another ladder is
    refused, naming what differs, and left as it was."""
    from explorer.auto import calibrate as cal

    out = tmp_path / "cal.json"
    names = ("cpu-topdown", "hybrid")
    flags = ["calibrate", *SIM, "--repeats", "1", "--out", str(out)]
    picked = [x for n in names for x in ("--candidate", n)]

    class Stop(Exception):
        pass

    def first_graph_only(c):
        c.save(out)
        raise Stop

    with pytest.raises(Stop):
        cal.calibrate(cal.SMOKE_LADDER, tuple(by_name(n) for n in names), repeats=1, progress=False,
                      after_graph=first_graph_only)
    part = Calibration.load(out)
    assert [g["name"] for g in part.graphs] == [cal.SMOKE_LADDER[0][0]]
    timed, real = [], cal._time
    monkeypatch.setattr(cal, "_time", lambda cand, g, *a: timed.append(g.name) or real(cand, g, *a))
    assert cli.main([*flags, "--smoke", *picked, "--resume"]) == 0, capsys.readouterr()[1]
    assert "the first 1 kept from" in capsys.readouterr()[0]
    whole = Calibration.load(out)
    assert [g["name"] for g in whole.graphs] == [name for name, _, _ in cal.SMOKE_LADDER]
    assert sorted(set(timed)) == sorted(name for name, _, _ in cal.SMOKE_LADDER[1:]) and len(timed) == 2 * len(names)
    assert all(whole.times[n][0] == part.times[n][0] for n in names)
    assert whole.device["resumed_from"] == part.device["date"]
    whole.device["resumed_from"] = "2026-01-02T03:04:05+00:00"  # a calibration resumed on another day says so
    label = choose(generate("grid2d", rows=5, cols=5), DeviceLimits.simulator(), "simulator",
                   model=CostModel(whole)).calibration
    assert label.endswith(f", 2026-01-02 to {whole.device['date'][:10]}"), label

    part.save(out)
    text = out.read_text()
    for argv, message in (([*flags, "--smoke", "--candidate", "hybrid", "--resume"], "it has ['cpu-topdown']"),
                          ([*flags, *picked, "--resume"], f"graph 1 is {cal.SMOKE_LADDER[0][0]}"),
                          ([*flags[:-1], str(tmp_path / "none.json"), "--smoke", *picked, "--resume"],
                           "there is no calibration at")):
        assert cli.main(argv) != 0
        assert message in capsys.readouterr()[1]
    other = json.loads(text)
    other["device"]["name"] = "Another GPU"
    out.write_text(json.dumps(other))
    assert cli.main([*flags, "--smoke", *picked, "--resume"]) != 0
    assert "measured on Another GPU, not on" in capsys.readouterr()[1]
    assert json.loads(out.read_text()) == other and not (tmp_path / "none.json").exists()


def test_calibrate_refuses_an_unknown_candidate_and_a_simulator_file_auto_would_read(tmp_path, capsys):
    assert cli.main(["calibrate", *SIM, "--smoke", "--candidate", "nope", "--out",
                     str(tmp_path / "c.json")]) != 0
    assert "unknown auto candidate 'nope'" in capsys.readouterr()[1]
    if backend.current().is_simulator:
        assert cli.main(["calibrate", "--simulator", "--smoke"]) != 0
        assert "needs --out" in capsys.readouterr()[1]
    assert not list(tmp_path.iterdir())
