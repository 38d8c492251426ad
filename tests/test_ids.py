"""Vertex ids at the boundary: the entry points take the user's ids (a file's own, with gaps) and
report them; inside, everything speaks vertices 0..n-1 and code that holds one passes Vertex(v).
The CLI, the sweep, the Comparison panel, the duplicates tables and the networkx backend have
their own such tests beside their others."""
import ast
from pathlib import Path

import numpy as np
import pytest

from explorer import graphs
from explorer.api import Vertex, Vertices, run_bfs, run_many
from explorer.graphs import GraphError
from explorer.reference import check_result, cpu_bfs

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def ones():
    """A path read from a file with ids 1..4 (vertices 0..3): every id but 4 is also the number of
    another vertex, so a source taken in the wrong numbering starts elsewhere."""
    return graphs.from_edges([1, 2, 3], [2, 3, 4], directed=False, name="ones", remap=True)


def test_run_bfs_starts_at_the_users_id_and_reports_it(ones):
    r = run_bfs(ones, 1, "topdown-queue").complete()
    assert r.source == 0 and r.source_id == 1 and r.distances.tolist() == [0, 1, 2, 3]
    assert check_result(ones, r).ok
    s = r.summary()
    assert s["source"] == 1 and s["source_vertex"] == 0
    doc = r.to_json(include_arrays=True)
    assert '"ids": [\n    1,\n    2,\n    3,\n    4\n  ]' in doc
    by_vertex = run_bfs(ones, Vertex(1), "topdown-queue").complete()  # the second vertex: id 2
    assert by_vertex.source == 1 and by_vertex.source_id == 2
    assert by_vertex.distances.tolist() == cpu_bfs(ones, 1)[0].tolist() == [1, 0, 1, 2]


def test_sources_in_the_wrong_numbering_are_refused_by_name(ones):
    with pytest.raises(GraphError, match="vertex id 0 is not in graph 'ones': its 4 ids run from 1 to 4"):
        run_bfs(ones, 0)
    with pytest.raises(ValueError, match=r"source Vertex\(4\) is out of range: graph 'ones' has vertices 0\.\.3"):
        run_bfs(ones, Vertex(4))
    with pytest.raises(GraphError, match="Vertex 1.5 is not an integer"):
        Vertex(1.5)
    with pytest.raises(GraphError, match="Vertices must hold integers"):
        Vertices([0.0, 1.0])
    for text in ("²", "٣"):  # digits to str.isdigit(), not to int()
        with pytest.raises(ValueError, match=f"source '{text}' is invalid: give a vertex id"):
            run_bfs(ones, text)


def test_run_many_takes_ids_or_vertices_and_they_agree(ones):
    by_id = run_many(ones, [1, 4], "distances").complete()
    by_vertex = run_many(ones, Vertices(np.array([0, 3])), "distances").complete()
    assert by_id.sources.tolist() == by_vertex.sources.tolist() == [0, 3]
    assert np.array_equal(by_id.values["distances"], by_vertex.values["distances"])
    assert by_id.values["distances"][0].tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="source vertex 4 is out of range: graph 'ones' has vertices 0..3"):
        run_many(ones, Vertices([4]), "distances")


def test_run_many_answers_in_the_ids_it_was_given(ones):
    # The path 1-2-3-4 (vertices 0..3): 2 and 3 are the most central, and ranked() names them by id.
    close = run_many(ones, [4, 2], "closeness").complete()
    assert close.source_ids.tolist() == [4, 2] and close.sources.tolist() == [3, 1]
    assert [i for i, _ in close.ranked()] == [2, 4]
    between = run_many(ones, "all", "betweenness").complete()
    assert sorted(i for i, _ in between.ranked(top=2)) == [2, 3]
    assert {i for i, _ in between.ranked()} == {1, 2, 3, 4}


def test_the_explorer_runs_from_the_id_typed_and_shows_it(ones):
    pytest.importorskip("ipywidgets", reason="the Explorer needs ipywidgets (pip install -e .[notebook])")
    from explorer.ui.report import summary_fields
    from explorer.ui.widgets import Explorer

    ex = Explorer(graph=ones, source=2, technique="topdown-queue")
    r = ex.run()
    assert r.source == 1 and r.source_id == 2 and r.validation == "ok"
    assert r.distances.tolist() == [1, 0, 1, 2]
    assert summary_fields(r)["source"] == "2"


def test_the_demo_runs_from_vertex_0_and_names_it_by_the_files_id(tmp_path, capsys, monkeypatch):
    pytest.importorskip("bokeh", reason="the report is drawn with Bokeh")
    from explorer import backend
    from explorer.ui import cli

    path = tmp_path / "ones.txt"
    path.write_text("1 2\n2 3\n3 4\n")
    monkeypatch.chdir(tmp_path)
    sim = ["--simulator"] if backend.current().is_simulator else []
    code = cli.main(["demo", "--headless", "--graph", str(path), "--technique", "topdown-queue", *sim])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "run 1: topdown-queue from vertex 1 (vertex 0 after remapping the file's ids)" in out
    assert "run 2: topdown-queue from the max-degree vertex" in out and "validation ok" in out


def test_no_code_converts_a_vertex_back_to_an_id_except_at_the_boundary():
    # The boundary: the CLI's and the Explorer's text, the sweep's record (the benchmarks convert
    # nothing: they hold vertices and pass Vertex/Vertices). Code that converts a
    # vertex to an id to feed an entry point (which converts it back) passes Vertex(v) instead.
    allowed = {"explorer/graphs/csr.py", "explorer/ui/cli_input.py", "explorer/ui/widgets.py", "explorer/ui/compare.py",
               "explorer/sweep.py", "explorer/ui/multisearch_view.py",  # the values view's labels
               "explorer/ui/sssp_view.py", "explorer/ui/sssp_classroom.py", "explorer/ui/sssp_tools.py",  # its text
               "explorer/sssp/weights.py"}  # the shortest-path errors (negative cycles and weights) name the user's ids
    calls = {str(p.relative_to(ROOT)): _calls(p) for top in ("explorer", "benchmarks") for p in (ROOT / top).rglob("*.py")}
    found = {f for f, c in calls.items() if any(_is_to_original(n) for n in c)}
    assert found <= allowed, sorted(found - allowed)
    assert "explorer/sweep.py" in found  # the search sees calls (docstrings that name it are not)
    fed = [f for f, c in calls.items() for n in c
           if getattr(n.func, "attr", getattr(n.func, "id", "")) in ("run_bfs", "run_many")
           and any(_is_to_original(a) for arg in n.args for a in ast.walk(arg))]
    assert not fed, fed


def _calls(path: Path) -> list:
    return [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.Call)]


def _is_to_original(node) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("to_original", "to_original_many"))
