"""The benchmarks' harness (benchmarks/harness/): its graphs resolve, a timed run is checked (and a
wrong one caught), the environment record has its fields, results go to one folder per GPU kind,
and a peer's program is run, checked or skipped with a note. Under the simulator, on tiny graphs."""
import json
import stat
import sys

import numpy as np
import pytest

from benchmarks import harness
from benchmarks.harness import record
from explorer import api, backend, graphs


@pytest.mark.parametrize("name", [n for n, s in harness.GRAPHS.items() if s.kind != "sample"])
def test_generated_graphs_resolve_to_their_small_stand_ins(name):
    s = harness.spec(name)
    g = harness.load(name, small=True)
    v = harness.source_of(name, g, small=True)
    assert 0 <= v < g.num_vertices and g.num_arcs > 0 and s.family and s.what
    if s.source == "centre":  # the grid's middle vertex: the farthest level is the smallest possible
        depth = harness.reference(g, v).max()
        assert depth == min(harness.reference(g, u).max() for u in range(g.num_vertices))
    else:
        assert g.degrees()[v] == g.degrees().max()


def test_sample_graphs_resolve_and_the_directed_ones_are_symmetrized():
    for name, s in harness.GRAPHS.items():
        if s.kind == "sample":
            assert graphs.sample_graph_path(s.params["name"]).exists(), name
    g = harness.load("Wiki-Vote")
    assert not g.directed and g.num_arcs == 2 * g.num_edges
    assert harness.centre((5, 5)) == 12 and harness.centre((3, 3, 3)) == 13


def test_unknown_graphs_are_named_with_the_registry():
    assert harness.check_names(["kron22", "3elt", "gen:grid2d:rows=2,cols=3"]) == ["kron22", "3elt",
                                                                                  "gen:grid2d:rows=2,cols=3"]
    with pytest.raises(harness.UnknownGraph, match="'no_such_graph'.*kron22"):
        harness.check_names(["no_such_graph"])
    with pytest.raises(ValueError, match="centre"):
        harness.source_of("3elt", harness.load("3elt"), "centre")
    assert harness.load("gen:grid2d:rows=2,cols=3").num_vertices == 6  # read as `bfs4k run` reads it


def test_a_timed_run_has_its_spread_and_is_checked():
    g = harness.load("kron22", small=True)
    s = harness.source_of("kron22", g, small=True)
    m = harness.measure(g, s, "topdown-queue", repeats=3)
    assert m.ok and m.correct and not m.wrong, m.error
    assert len(m.times_ms) == 3 and m.min_ms <= m.median_ms <= m.max_ms
    assert m.levels == harness.reference(g, s).max() + 1 and m.steps == "M" * m.levels
    row = m.row()
    assert row["correct"] and row["runs_ms"] and row["median_ms"] == round(m.median_ms, 4)


def test_a_wrong_result_is_caught_and_a_failing_run_reported(monkeypatch):
    g = harness.load("grid1000", small=True)
    real = api.run_bfs

    class Wrong:
        """A run whose farthest vertex is one level too far."""

        def __init__(self, run):
            self.run = run

        def complete(self):
            r = self.run.complete()
            r.distances = np.array(r.distances)
            r.distances[int(np.argmax(r.distances))] += 1
            return r

    monkeypatch.setattr(api, "run_bfs", lambda *a, **k: Wrong(real(*a, **k)))
    m = harness.measure(g, 12, "topdown-queue", repeats=2)
    assert not m.ok and m.correct is False and m.wrong and "warm-up run: distance of vertex" in m.error
    monkeypatch.setattr(api, "run_bfs", real)
    m = harness.measure(g, 12, "topdown-queue", {"no_such_knob": 1}, repeats=1)
    assert m.correct is False and not m.wrong and "no_such_knob" in m.error  # failed, not wrong


def test_the_light_check_finds_a_parent_on_the_wrong_level():
    from explorer.reference import cpu_bfs

    g = harness.load("grid1000", small=True)
    d, p = cpu_bfs(g, 12)
    assert harness.check_tree_levels(12, d, p, d).ok
    bad = p.copy()
    v = int(np.argmax(d))
    bad[v] = v  # a vertex its own parent
    c = harness.check_tree_levels(12, d, bad, d)
    assert not c.ok and f"vertex {v} at level {d[v]}" in c.message


def test_the_environment_record_has_its_fields():
    env = harness.environment()
    assert set(record.FIELDS) <= set(env)
    assert env["backend"] == "simulator" or env["driver"] and env["cuda"] and env["compute_capability"]
    assert env["numba"] and env["numba_cuda"] and env["numpy"] and env["date"].endswith("+00:00")
    kind = harness.gpu_kind(env)
    assert kind and all(c.isalnum() or c in "._-" for c in kind)
    assert env["numba_cuda"] in harness.describe(env)


def test_results_go_to_one_folder_per_gpu_kind(tmp_path, monkeypatch):
    env = {**harness.environment(), "backend": "gpu", "gpu": "NVIDIA H100 80GB HBM3"}
    js, md = harness.write_results(tmp_path, "table", env, {"repeats": 3}, [{"config": "x", "median_ms": 1.5}],
                                   harness.markdown_table(["a", "b"], [[1, "x|y"]], {0}), "A title")
    assert js == tmp_path / "NVIDIA_H100_80GB_HBM3" / "table.json"
    doc = json.loads(js.read_text())
    assert doc["environment"]["gpu"] == "NVIDIA H100 80GB HBM3" and doc["results"][0]["median_ms"] == 1.5
    assert doc["settings"] == {"repeats": 3}
    text = md.read_text()
    assert text.startswith("# A title\n") and "| a | b |\n|---:|---|\n| 1 | x\\|y |" in text
    monkeypatch.setattr(record, "RESULTS", tmp_path / "results")  # the simulator's times are no results
    assert harness.write_results(None, "t", {**env, "backend": "simulator"}, {}, [], [], "t") is None
    assert not (tmp_path / "results").exists()


FAKE_PEER = """#!{python}
# A stand-in for a peer's binary: reads the binary CSR, searches, writes the distances.
import sys
import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import shortest_path
args = sys.argv[1:]
csr, source, dist = args[0], int(args[1]), args[-1]
raw = np.fromfile(csr, np.int32)
n, m = raw[0], raw[1]
offsets, indices = raw[2:3 + n], raw[3 + n:]
a = csr_array((np.ones(m), indices, offsets), shape=(n, n))
d = shortest_path(a, unweighted=True, indices=source)
d = np.where(np.isinf(d), {unreached}, d).astype(np.int32)
if {wrong}:
    d[int(np.argmax(d))] += 1
d.tofile(dist)
ms = {{"block": 2.0, "merge": 1.0}}.get(args[3] if len(args) == 5 else "", 0.5)
print(("gunrock lb=x " if len(args) == 5 else "") + f"median_ms={{ms}} min_ms={{ms / 2}}"
      + (f" max_ms={{ms * 2}}" if len(args) == 5 else f" levels={{int(d.max()) + 1}}"))
import os
if os.environ.get("BLEST_DEVICE_CLOCK") == "1":  # as benchmarks/yardsticks/blest/device_clock.cu
    print("device_median_ms=0.3 device_min_ms=0.2 device_max_ms=0.4")
"""


def _fake(tmp_path, name, variants=(), wrong=False, unreached=-1):
    path = tmp_path / name
    path.write_text(FAKE_PEER.format(python=sys.executable, wrong=wrong, unreached=unreached))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return harness.Peer(name, path, variants, "a stand-in")


def test_a_peer_runs_from_its_binary_and_its_distances_are_checked(tmp_path):
    g = harness.load("grid1000", small=True)
    expected = harness.reference(g, 12)
    with harness.PeerGraph(g) as pg:
        m = harness.run_peer(_fake(tmp_path, "blest"), pg, 12, expected, runs=3)
        assert m.ok and m.summary_ms == (0.5, 0.25, None) and m.levels == expected.max() + 1
        assert "max" not in harness.spread(m)
        m = harness.run_peer(_fake(tmp_path, "gunrock", ("block", "merge"), unreached=2**31 - 1), pg, 12, expected)
        assert m.ok and m.median_ms == 1.0 and m.max_ms == 2.0 and m.knobs == {"load_balance": "merge"}
        assert m.extra["variants"] == {"block": 2.0, "merge": 1.0}
        m = harness.run_peer(_fake(tmp_path, "wrong", wrong=True), pg, 12, expected)
        assert m.correct is False and m.wrong and "distance of vertex" in m.error
        raw = np.fromfile(pg.csr, np.int32)
        assert raw[0] == g.num_vertices and raw[1] == g.num_arcs and (raw[2:3 + raw[0]] == g.offsets).all()
    assert not pg.csr.exists()  # the CSR's folder is removed


def test_blests_device_clock_is_read_from_its_own_line_with_its_switch_set(tmp_path):
    """BLEST_DEVICE's times are the device clock's line, which its driver prints only with
    BLEST_DEVICE_CLOCK=1 (set for its runs); its own clock's line is not taken for it."""
    g = harness.load("grid1000", small=True)
    expected = harness.reference(g, 12)
    fake = _fake(tmp_path, "blest")
    with harness.PeerGraph(g) as pg:
        m = harness.run_peer(harness.BLEST_DEVICE._replace(binary=fake.binary), pg, 12, expected, runs=3)
        assert m.ok and m.summary_ms == (0.3, 0.2, 0.4)
        m = harness.run_peer(harness.BLEST_DEVICE._replace(binary=fake.binary, env=()), pg, 12, expected)
        assert not m.ok and "exit 0" in m.error
        assert harness.run_peer(fake, pg, 12, expected).summary_ms == (0.5, 0.25, None)


def test_a_peer_without_its_binary_or_on_a_directed_graph_is_skipped_with_a_note(tmp_path):
    g = harness.load("grid1000", small=True)
    with harness.PeerGraph(g) as pg:
        m = harness.run_peer(harness.Peer("BLEST", tmp_path / "absent", (), ""), pg, 12, harness.reference(g, 12))
    assert m.skipped.startswith("BLEST not built: no executable") and m.correct is None and not pg.csr.exists()
    d = graphs.from_edges([0, 1], [1, 2], num_vertices=3, directed=True)
    with harness.PeerGraph(d) as pg:
        m = harness.run_peer(_fake(tmp_path, "blest"), pg, 0, harness.reference(d, 0))
    assert "symmetric" in m.skipped


def test_the_table_and_a_configuration_set_run_on_the_harness(tmp_path, monkeypatch):
    from benchmarks import bfs, table

    if harness.environment()["backend"] != "simulator":
        pytest.skip("--smoke selects the simulator: on a GPU the benchmarks themselves run")
    monkeypatch.setattr(harness.peers, "PEERS", {"fake": _fake(tmp_path, "fake"),
                                                 "absent": harness.Peer("absent", tmp_path / "no", (), "")})
    monkeypatch.setattr(harness, "PEERS", harness.peers.PEERS)
    assert table.main(["--smoke", "--graphs", "grid1000", "--techniques", "topdown-queue", "--repeats", "1",
                       "--peers", "--out", str(tmp_path)]) == 0
    doc = json.loads(next(tmp_path.glob("*/table-smoke.json")).read_text())
    cells = doc["results"][0]["cells"]
    assert cells["topdown-queue"]["correct"] and cells["fake"]["correct"] and cells["fake"]["median_ms"] == 0.5
    assert "not built" in cells["absent"]["skipped"]
    assert bfs.main(["luo", "--smoke", "--graphs", "grid3d", "--repeats", "1", "--out", str(tmp_path)]) == 0
    rows = json.loads(next(tmp_path.glob("*/luo-smoke.json")).read_text())["results"]
    assert len(rows) == len(bfs.LUO) and all(r["correct"] and r["layer_levels"] for r in rows)
    assert "| grid3d | luo-hierarchical defaults" in next(tmp_path.glob("*/luo-smoke.md")).read_text()


def test_the_auto_benchmark_puts_auto_beside_the_oracle(tmp_path):
    from benchmarks import auto

    if not backend.current().is_simulator:
        pytest.skip("--smoke selects the simulator: on a GPU the benchmark itself runs")
    assert auto.main(["--smoke", "--graphs", "grid1000", "--configs", "cpu-topdown", "edge-parallel", "--repeats",
                      "1", "--no-roots", "--no-peers", "--out", str(tmp_path)]) == 0
    rows = json.loads(next(tmp_path.glob("*/auto-smoke.json")).read_text())["results"]
    by = {r["config"]: r for r in rows}
    assert set(by) == {"auto", "cpu-topdown", "edge-parallel", "scipy breadth_first_order (1 thread)"}
    assert all(r["correct"] for r in rows) and by["auto"]["chosen"] and by["auto"]["choose_us"] > 0
    md = next(tmp_path.glob("*/auto-smoke.md")).read_text()
    assert "| grid1000 |" in md and "Geometric mean of auto / oracle over 1 graphs" in md


_PAGE = '''"Kernel Name","search[abi:v1](Graph)",
"Address","Source","# Samples","Instructions Executed","stall_barrier","stall_long_sb","stall_no_inst","stall_barrier (Not Issued)"
"0x7f00","      BAR.SYNC.DEFER_BLOCKING 0x0","30","100","30","0","0","30"
"0x7f10","      LDG.E R2, [R4.64]","5","100","0","4","1","0"
"Kernel Name","__cuda_sm20_div_s64",
"Address","Source","# Samples","Instructions Executed","stall_barrier","stall_long_sb","stall_no_inst","stall_barrier (Not Issued)"
"0x9f00","      IMAD R1, R2, R3, RZ","5","1,000","0","0","5","0"
'''


def test_warp_samples_are_summed_by_reason_over_every_function(tmp_path):
    """The profiler tool reads ncu's exported source page (a header a function), sums each stall
    reason over every instruction (the not-issued columns are a subset, left out) and ranks the
    instructions; a file that is not such a page is named with what to export instead."""
    from benchmarks.tools import warp_samples as ws

    page = tmp_path / "page.csv"
    page.write_text(_PAGE)
    rows = ws.read_source_page(page)
    assert len(rows) == 3
    assert ws.stall_reasons(rows) == [("barrier", 30), ("no_inst", 6), ("long_sb", 4)]
    top = ws.top_instructions(rows, 2)
    assert [(t["sass"], t["samples"], t["executed"]) for t in top] == [("BAR.SYNC.DEFER_BLOCKING 0x0", 30, 100),
                                                                      ("LDG.E R2, [R4.64]", 5, 100)]
    assert top[1]["reasons"] == [("long_sb", 4), ("no_inst", 1)]
    result, md = ws.summary(rows, 1)
    assert [r["share"] for r in result if r["kind"] == "reason"] == [0.75, 0.15, 0.1]
    assert "| barrier | 30 | 75.0 % |" in md
    details = tmp_path / "details.csv"
    details.write_text('"ID","Section Name","Metric Name","Metric Value"\n"0","WarpStateStats","Stall","3"\n')
    with pytest.raises(ws.PageError, match="--page source --csv --print-source sass"):
        ws.read_source_page(details)
    short = tmp_path / "short.csv"
    short.write_text(_PAGE.replace('"0x7f10","      LDG.E R2, [R4.64]","5",', '"0x7f10","5",'))
    with pytest.raises(ws.PageError, match="short.csv, line 4: 7 fields where the header has 8"):
        ws.read_source_page(short)
