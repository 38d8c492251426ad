"""benchmarks/tools/fuzz.py: random graphs, roots and knob settings, every result checked; a wrong
answer must be reported with what reproduces it, and fail the run."""
import json
import re

import numpy as np

from benchmarks.tools import fuzz
from explorer import api, backend

SIM = backend.current().is_simulator


def _main(argv):
    return fuzz.main([*argv, *(["--simulator"] if SIM else [])])


def test_fuzz_runs_and_checks_every_result(tmp_path, capsys):
    out = tmp_path / "fuzz.json"
    assert _main(["--runs", "4", "--seed", "3", "--technique", "cpu-topdown", "--technique", "topdown-queue",
                  "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["counts"] == {"ok": 4, "refused": 0, "wrong": 0, "error": 0}
    assert {r["technique"] for r in report["runs"]} <= {"cpu-topdown", "topdown-queue"}
    assert all(r["outcome"] == "ok" and r["levels"] >= 1 for r in report["runs"])
    assert "4 ok, 0 refused" in capsys.readouterr().out


def test_fuzz_runs_auto_the_default_and_checks_it(tmp_path):
    out = tmp_path / "fuzz.json"
    assert _main(["--runs", "3", "--seed", "5", "--technique", "auto", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["counts"]["ok"] == 3 and {r["technique"] for r in report["runs"]} == {"auto"}
    assert all(r["knobs"] == {} for r in report["runs"])  # auto sets its own


class Wrong:
    """A run whose farthest reached vertex is one too far (a level, or a unit of weight)."""

    def __init__(self, run):
        self.run = run

    def __iter__(self):
        return iter(self.run)

    @property
    def result(self):
        r = self.run.result
        d = np.array(r.distances)
        reached = r.reached_mask if hasattr(r, "reached_mask") else d >= 0  # a shortest path's, or a BFS's -1
        d[int(np.argmax(np.where(reached, d, -1)))] += 1
        r.distances = d
        return r


def test_fuzz_reports_a_wrong_answer_with_what_reproduces_it(monkeypatch, capsys):
    real = api.run_bfs
    monkeypatch.setattr(api, "run_bfs", lambda *a, **k: Wrong(real(*a, **k)))
    assert _main(["--runs", "2", "--seed", "4", "--technique", "cpu-topdown"]) == 1
    out = capsys.readouterr().out
    assert "FAIL run 0: cpu-topdown on " in out and " from " in out and "knobs" in out
    assert "(the same graph again: --seed 4 --runs 1 --technique cpu-topdown)" in out
    assert "0 ok" in out and "2 wrong" in out


def test_fuzz_reports_a_device_check_that_disagrees_with_the_host(monkeypatch, capsys):
    from explorer.reference.on_device import DeviceCheck

    monkeypatch.setattr(DeviceCheck, "passes", lambda *a: True)  # a check that passes everything
    assert _main(["--runs", "1", "--seed", "4", "--technique", "topdown-queue"]) == 1
    assert "the device check passed the tree with vertex" in capsys.readouterr().out
    monkeypatch.setattr(DeviceCheck, "passes", lambda *a: False)
    assert _main(["--runs", "1", "--seed", "4", "--technique", "topdown-queue"]) == 1
    assert "the device check failed a tree that the host's check passed" in capsys.readouterr().out


def test_fuzz_checks_many_searches_at_once_source_by_source(monkeypatch, capsys):
    assert _main(["--runs", "1", "--seed", "3", "--multi", "1"]) == 0
    assert re.search(r"run_many:\S+ +ok 1\n", capsys.readouterr().out)

    from explorer import reference

    real = reference.cpu_bfs
    monkeypatch.setattr(reference, "cpu_bfs", lambda g, s: (real(g, s)[0] + 1, real(g, s)[1]))
    assert _main(["--runs", "1", "--seed", "2", "--multi", "1"]) == 1
    out = capsys.readouterr().out
    assert "FAIL run 0: run_many:" in out and "vertices at the wrong level" in out


def test_a_time_limit_keeps_the_summary_of_the_runs_done(tmp_path, capsys):
    """--seconds stops drawing runs; the summary and the JSON say how many of those asked ran."""
    out = tmp_path / "fuzz.json"
    assert _main(["--runs", "50", "--seed", "3", "--technique", "cpu-topdown", "--seconds", "0.001",
                  "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    done = len(report["runs"])
    assert 1 <= done < 50 and report["asked"] == 50 and report["stopped"] == "--seconds 0.001 passed"
    assert report["counts"]["ok"] == done
    assert f"fuzz: {done} of 50 runs (--seconds 0.001 passed): {done} ok" in capsys.readouterr().out


def test_sigterm_ends_the_fuzz_with_the_summary_of_the_runs_done(monkeypatch, tmp_path, capsys):
    """timeout's SIGTERM mid-way: the runs done are summarized and written, none counted as an
    error, and the process's own SIGTERM handler is back afterwards."""
    import signal

    real, calls = fuzz._fuzz_one, []

    def two_then_term(i, *args):
        calls.append(i)
        if i == 2:
            signal.raise_signal(signal.SIGTERM)
        real(i, *args)

    monkeypatch.setattr(fuzz, "_fuzz_one", two_then_term)
    handler = signal.getsignal(signal.SIGTERM)
    out = tmp_path / "fuzz.json"
    assert _main(["--runs", "9", "--seed", "3", "--technique", "cpu-topdown", "--json", str(out)]) == 0
    assert signal.getsignal(signal.SIGTERM) is handler
    report = json.loads(out.read_text())
    assert calls == [0, 1, 2] and len(report["runs"]) == 2 and report["stopped"] == "stopped by SIGTERM"
    assert report["counts"] == {"ok": 2, "refused": 0, "wrong": 0, "error": 0}
    assert "fuzz: 2 of 9 runs (stopped by SIGTERM): 2 ok" in capsys.readouterr().out


def test_fuzz_draws_from_the_graphs_named_and_refuses_an_unknown_one(tmp_path, capsys):
    import pytest

    out = tmp_path / "fuzz.json"
    names = ["gen:grid2d:rows=4,cols=5", "bfs4k_fig2.txt"]
    argv = ["--runs", "5", "--seed", "2", "--technique", "topdown-queue", "--technique", "cpu-topdown"]
    assert _main([*argv, *(a for n in names for a in ("--graph", n)), "--json", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert all(r["outcome"] == "ok" for r in runs) and {r["graph"] for r in runs} <= set(names)
    assert {r["vertices"] for r in runs if r["graph"] == names[0]} <= {20}
    with pytest.raises(SystemExit):
        _main([*argv, "--graph", "no-such-graph.mtx"])
    assert "--graph: unknown graph 'no-such-graph.mtx'" in capsys.readouterr().err


def test_fuzz_checks_shortest_paths_with_drawn_weights_against_scipy(tmp_path, capsys):
    """--weighted 1: every run a shortest-path technique on the drawn graph with drawn weights."""
    out = tmp_path / "fuzz.json"
    assert _main(["--runs", "3", "--seed", "5", "--weighted", "1", "--graph", "gen:grid2d:rows=3,cols=4",
                  "--json", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert len(runs) == 3 and all(r["technique"].startswith("sssp:") for r in runs)
    assert all(" weights " in r["graph"] for r in runs)
    assert sum(r["outcome"] == "ok" for r in runs) >= 2 and all(r["outcome"] in ("ok", "refused") for r in runs)


def test_fuzz_reports_a_wrong_shortest_path_with_what_reproduces_it(monkeypatch, capsys):
    real = api.run_sssp
    monkeypatch.setattr(fuzz, "WEIGHTS", (("integer", 1, 9),))
    monkeypatch.setattr(api, "run_sssp", lambda *a, **k: Wrong(real(*a, **k)))
    assert _main(["--runs", "1", "--seed", "4", "--weighted", "1", "--graph", "gen:grid2d:rows=3,cols=4"]) == 1
    out = capsys.readouterr().out
    assert "FAIL run 0: sssp:" in out and "scipy's" in out
    assert "(the same graph again: --seed 4 --runs 1 --weighted 1 --graph gen:grid2d:rows=3,cols=4)" in out


def test_a_negative_cycle_from_the_source_must_be_reported(monkeypatch, tmp_path, capsys):
    """Every weight negative: each edge of the undirected grid is a negative cycle. Bellman-Ford and
    H-BF must say so (ok), delta-stepping refuse the weights; a run that answers instead is wrong."""
    import explorer.reference.sssp as ref
    from explorer.graphs.weights import with_weights

    monkeypatch.setattr(fuzz, "WEIGHTS", (("integer", -5, -1),))
    argv = ["--seed", "3", "--weighted", "1", "--graph", "gen:grid2d:rows=3,cols=4"]
    out = tmp_path / "fuzz.json"
    assert _main(["--runs", "4", *argv, "--json", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    found = [r for r in runs if r["outcome"] == "ok"]
    assert found and all(r["message"] == "negative cycle found, as scipy" for r in found)
    assert all(r["outcome"] == "refused" and r["technique"] == "sssp:delta-stepping" for r in runs if r not in found)
    # The technique given positive weights (no cycle) while scipy sees negative ones (a cycle).
    monkeypatch.setattr(fuzz, "WEIGHTS", (("integer", 1, 9),))
    real = ref.reference_sssp
    monkeypatch.setattr(ref, "reference_sssp", lambda g, s, w=None: real(with_weights(g, "integer", -5, -1), s))
    capsys.readouterr()
    assert _main(["--runs", "1", *argv]) == 1
    assert "no negative cycle reported; scipy finds one reachable from vertex" in capsys.readouterr().out


def test_shares_of_the_runs_that_sum_past_one_are_refused(capsys):
    import pytest

    with pytest.raises(SystemExit):
        _main(["--runs", "1", "--multi", "0.6", "--weighted", "0.5"])
    assert "--multi 0.6 and --weighted 0.5: shares of the runs that sum to at most 1" in capsys.readouterr().err
