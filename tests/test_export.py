"""The Export panel (explorer.ui.export): the session's HTML report and every run's records as CSV
and JSON with graph, knobs, device and versions."""
import csv
import io
import json

import pytest

pytest.importorskip("ipywidgets", reason="the panels need ipywidgets (pip install -e .[notebook])")

from explorer.ui.export import REPORT_RUNS, export_session, levels_csv, session_runs  # noqa: E402
from explorer.ui.widgets import Explorer  # noqa: E402


@pytest.fixture(scope="module")
def explorer():
    ex = Explorer(graph="bfs4k_fig2", source=0)
    ex.run(technique="topdown-queue")
    ex.tools.panel("comparison").compare(["topdown-queue"])
    return ex


def test_the_session_is_the_explorers_runs_then_the_panels(explorer):
    labels = [label for label, _ in session_runs(explorer)]
    assert labels[0] == explorer.history[0][0] and labels[1].startswith("compare A topdown-queue")
    assert len(labels) == 2


def test_export_writes_the_report_json_and_csv(explorer, tmp_path):
    panel = explorer.tools.panel("export")
    panel.folder.value = str(tmp_path / "out")
    panel.export_button.click()
    assert "2 runs written" in panel.status.value, panel.status.value
    html = (tmp_path / "out" / "report.html").read_text()
    assert "<table class='levels'>" in html and "compare A topdown-queue" in html
    doc = json.loads((tmp_path / "out" / "runs.json").read_text())
    run = doc["runs"][0]
    assert run["label"] == explorer.history[0][0]
    summary = run["summary"]
    assert summary["graph"] == "bfs4k_fig2" and summary["knobs"] == explorer.history[0][1].knobs
    assert summary["device"]["backend"] and set(summary["device"]["versions"]) >= {"python", "numba", "numpy"}
    assert [lv["frontier_in"] for lv in run["levels"]] == [1, 3, 4, 2]
    rows = list(csv.DictReader(io.StringIO((tmp_path / "out" / "levels.csv").read_text())))
    assert len(rows) == 8 and rows[0]["graph"] == "bfs4k_fig2"
    assert json.loads(rows[0]["knobs"]) == explorer.history[0][1].knobs
    assert rows[0]["device"] and "numba" in json.loads(rows[0]["versions"])
    assert [r["frontier_in"] for r in rows[:4]] == ["1", "3", "4", "2"]
    assert not (tmp_path / "out" / "sweep.json").exists()  # no sweep this session


def test_counts_not_measured_are_empty_cells(explorer):
    result = explorer.run(instrument=False)
    rows = list(csv.DictReader(io.StringIO(levels_csv([("r", result)]))))
    assert rows[0]["dup_generated"] == "" and rows[0]["frontier_in"] == "1"


def test_export_refuses_what_it_cannot_write(explorer, tmp_path):
    with pytest.raises(ValueError, match="nothing to export"):
        export_session([], tmp_path)
    (tmp_path / "file").write_text("x")
    panel = explorer.tools.panel("export")
    panel.folder.value = str(tmp_path / "file")
    panel.export_button.click()
    assert "is a file" in panel.status.value


def test_a_long_session_reports_its_last_runs_and_keeps_them_all_in_the_files(explorer, tmp_path):
    label, result = explorer.history[0]
    runs = [(f"{label} {i}", result) for i in range(REPORT_RUNS + 2)]
    paths = export_session(runs, tmp_path)
    html = paths["report"].read_text()
    assert f"the last {REPORT_RUNS} of {REPORT_RUNS + 2} runs" in html
    assert len(json.loads(paths["json"].read_text())["runs"]) == REPORT_RUNS + 2
