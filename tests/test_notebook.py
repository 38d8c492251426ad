"""The quickstart notebook runs top to bottom headless, and the Explorer widget runs from code."""
from pathlib import Path

import pytest

W = pytest.importorskip("ipywidgets", reason="the notebook needs ipywidgets (pip install -e .[notebook])")

from explorer import backend
from explorer.techniques import KnobError, Knobs, implemented_techniques, missing_techniques
from explorer.widgets import Explorer

NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "01_quickstart.ipynb"


@pytest.mark.slow  # deselect with -m "not slow"; runs by default
def test_quickstart_notebook_executes_headless_under_the_simulator(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), "store it without outputs"
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")  # the kernel inherits it
    client = nbclient.NotebookClient(nb, timeout=110, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    text = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs
                     if o.output_type == "stream")
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    assert "simulator" in text.lower()
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:3] == ["level", "frontier_in", "discovered"])
    assert [line.split()[:3] for line in lines[header + 1:header + 5]] == \
        [["0", "1", "3"], ["1", "3", "4"], ["2", "4", "2"], ["3", "2", "0"]]
    assert "validation       ok" in text
    assert (tmp_path / "quickstart-report.html").exists()
    # Without BokehJS in the page the plots show only "javascript error": the explorer's cell
    # must publish the BokehJS load before the widget itself.
    explorer_cell = next(c for c in nb.cells if c.cell_type == "code" and "Explorer(" in c.source)
    kinds = [next(iter(o.get("data", {})), o.output_type) for o in explorer_cell.outputs]
    data = [o.get("data", {}) for o in explorer_cell.outputs]
    load = next(i for i, d in enumerate(data) if "application/vnd.bokehjs_load.v0+json" in d)
    widget = next(i for i, d in enumerate(data) if "application/vnd.jupyter.widget-view+json" in d)
    assert load < widget, kinds


@pytest.fixture(scope="module")
def explorer():
    return Explorer(graph="bfs4k_fig2", source=0)


def test_explorer_run_streams_levels_into_the_plots(explorer):
    result = explorer.run(source=0, technique="topdown-queue")
    label = explorer.history[-1][0]
    data = explorer.stream.sources[label].data
    assert data["level"] == [0, 1, 2, 3]
    assert data["frontier_in"] == [1, 3, 4, 2]
    assert result.validation == "ok"
    assert "✓" in explorer.status.value and "valid BFS" in explorer.status.value
    assert label in explorer.summary.value and "approx_diameter" in explorer.summary.value


def test_runs_overlay_and_keep_history(explorer):
    before = len(explorer.history)
    explorer.run(instrument=False)
    assert len(explorer.history) == before + 1
    labels = [label for label, _ in explorer.history]
    assert labels[-1] in explorer.stream.sources and labels[-2] in explorer.stream.sources
    assert explorer.stream.color(labels[-1]) != explorer.stream.color(labels[-2])


@pytest.mark.parametrize("kwargs,message", [
    ({"knobs": {"K3": 5000}}, "out of range"),
    ({"source": 99}, "source vertex 99 is out of range"),
    ({"graph": "/nonexistent/graph.txt"}, "no such file"),
    ({"graph": "gen:grid2d:rows=0"}, "rows, cols must be >= 1"),
])
def test_bad_input_shows_one_line_in_the_status(explorer, kwargs, message):
    with pytest.raises(ValueError):
        explorer.run(**kwargs)
    status = explorer.status.value
    assert message in status.replace("&#x27;", "'").replace("&gt;", ">")
    assert "Traceback" not in status
    explorer.set_graph("bfs4k_fig2")
    explorer.set_source(0)


def test_controls_are_generated_from_the_declarations(explorer):
    assert list(explorer.technique.options) == [t.value for t in implemented_techniques()]
    for t in missing_techniques():
        assert t.value in explorer.missing_note.value
    for spec in Knobs.specs():
        w = explorer.knob_widgets[spec.name]
        assert spec.meaning in w.tooltip
        if spec.choices is not None:
            assert isinstance(w, W.Dropdown) and tuple(w.options) == spec.choices
        else:
            assert (w.min, w.max) == (spec.low, spec.high)
    explorer.graph_mode.value = "generator"
    explorer.generator.value = "grid2d"
    assert [w.description for w in explorer.gen_params.children] == ["rows", "cols"]
    explorer.graph_mode.value = "sample"


def test_knob_errors_name_the_range(explorer):
    with pytest.raises(KnobError, match="power of two"):
        explorer.set_knobs({"hash_entries": 3})


@pytest.mark.skipif(backend.gpu_present()[0], reason="checks the no-GPU path (backend.select is faked)")
def test_no_gpu_offers_the_simulator(monkeypatch):
    def no_gpu(mode="auto"):
        if mode == "simulator":
            return backend.current()
        raise backend.NoGPUError("No CUDA GPU is available (test). The kernels can run on the simulator.")
    monkeypatch.setattr(backend, "select", no_gpu)
    ex = Explorer(graph="bfs4k_fig2")
    assert "No CUDA GPU" in ex.backend_line.value
    assert ex.simulator_button.layout.display != "none" and ex.run_button.disabled
    monkeypatch.setattr(backend, "select", lambda mode="auto": backend._selected)
    ex.simulator_button.click()
    assert ex.simulator_button.layout.display == "none" and not ex.run_button.disabled
    assert "simulator" in ex.backend_line.value.lower()


def test_section7_advice_sets_knobs_and_says_why():
    ex = Explorer(graph="3elt")
    values = ex.apply_recommended_knobs()
    assert values["K1"] == 4 and values["K2"] == 0.0  # a mesh: low degree and deviation, no hubs
    assert ex.knob_values()["K1"] == 4
    assert "K1=4" in ex.knob_advice.value and "§7" in ex.knob_advice.value
