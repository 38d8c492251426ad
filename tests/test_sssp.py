"""Weighted shortest paths beyond the conformance suite: weights from generators and files, what
a graph without weights gets, each technique's own knobs and records, the reference check's own
failures, all pairs (Floyd-Warshall and Johnson's) with its memory check, the CLI, and the kernels
compiled for the GPU."""
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from explorer import backend, graphs
from explorer.api import Vertex, run_apsp, run_sssp
from explorer.knobs import KnobError
from explorer.reference import check_sssp_result, reference_apsp, reference_sssp
from explorer.sssp import INT64_INF, NegativeCycleError, UnweightedGraphError, weighting
from explorer.sssp.apsp import APSPMemoryError, check_matrix_memory

SIM = backend.current().is_simulator
ROOT = Path(__file__).resolve().parents[1]
FAST = {"block_threads": 32} if SIM else {}
# the single-block kernel's 1,024 threads are as many Python threads on the simulator
HBF = {"block_threads": 32, "K1": 1, "single_block_threads": 32} if SIM else {}
DELTA = {"block_threads": 32, "single_block_threads": 32} if SIM else {}


# ------------------------------------------------------------------ weights

def test_generated_weights_are_seeded_symmetric_and_in_range():
    a = graphs.generate("grid2d", rows=6, cols=5, weights="integer", weight_low=2, weight_high=7, weight_seed=3)
    b = graphs.generate("grid2d", rows=6, cols=5, weights="integer", weight_low=2, weight_high=7, weight_seed=3)
    c = graphs.generate("grid2d", rows=6, cols=5, weights="integer", weight_low=2, weight_high=7, weight_seed=4)
    assert np.array_equal(a.weights, b.weights) and not np.array_equal(a.weights, c.weights)
    assert a.weights.min() >= 2 and a.weights.max() <= 7 and np.all(a.weights == np.floor(a.weights))
    assert set(np.unique(a.weights)) == set(range(2, 8))  # every value drawn on 49 arcs
    M = a.to_scipy().toarray()
    assert np.array_equal(M, M.T), "both arcs of an undirected edge weigh the same"
    u = graphs.generate("kronecker", scale=5, edge_factor=4, weights="uniform", weight_low=0.5, weight_high=2.0)
    assert 0.5 <= u.weights.min() and u.weights.max() < 2.0 and weighting(u).kind == "float64"
    assert "uniform weights" in u.notes["weights"] and u.notes["params"]["weights"] == "uniform"
    assert graphs.generate("grid2d", rows=2, cols=2).weights is None


@pytest.mark.parametrize("params,match", [
    ({"weights": "gaussian"}, "weights='gaussian' is invalid"),
    ({"weights": "integer", "weight_low": 1.5}, "integer weights need whole bounds"),
    ({"weights": "uniform", "weight_low": 3.0, "weight_high": 3.0}, "weight_low < weight_high"),
])
def test_bad_weight_parameters_are_refused_by_name(params, match):
    with pytest.raises(graphs.GraphError, match=match):
        graphs.generate("grid2d", rows=2, cols=2, **params)


def test_parallel_arcs_keep_their_least_weight_and_say_so():
    g = graphs.from_edges(np.array([0, 0, 0, 1]), np.array([1, 1, 1, 2]), weights=[4.0, 1.5, 3.0, 2.0])
    assert g.weights.tolist() == [1.5, 2.0] and "smallest weight" in g.notes["parallel_edges"]


def test_weights_load_from_every_file_format(tmp_path):
    mtx = tmp_path / "w.mtx"
    mtx.write_text("%%MatrixMarket matrix coordinate integer general\n3 3 3\n1 2 4\n2 3 -1\n1 3 5\n")
    snap = tmp_path / "w.txt.gz"
    with gzip.open(snap, "wt") as f:
        f.write("# weighted\n10 20 4\n20 30 -1\n10 30 5\n")
    metis = tmp_path / "w.graph"
    metis.write_text("3 2 1\n2 4\n1 4 3 1\n2 1\n")
    for path, src in ((mtx, 0), (snap, 10), (metis, 0)):
        g = graphs.load_graph(path)
        r = run_sssp(g, src, "bellman-ford", FAST).complete()
        assert r.dtype == "int64" and check_sssp_result(g, r).ok, path
    assert run_sssp(graphs.load_graph(mtx), 0, "bellman-ford", FAST).complete().distances.tolist() == [0, 4, 3]


def test_a_graph_without_weights_is_refused_unless_unit_weights_are_asked_for():
    g = graphs.sample_graph("bfs4k_fig2")
    with pytest.raises(UnweightedGraphError, match="has no weights.*unit_weights=True"):
        run_sssp(g, 0, "h-bf")
    r = run_sssp(g, 0, "h-bf", HBF, unit_weights=True).complete()
    from explorer.reference import cpu_bfs

    d, _ = cpu_bfs(g, 0)
    assert r.dtype == "int64" and np.array_equal(np.where(r.reached_mask, r.distances, -1), d)
    assert check_sssp_result(g, r, weights=np.ones(g.num_arcs)).ok


def test_infinite_weights_are_refused_with_the_arc():
    g = graphs.from_edges(np.array([0, 1]), np.array([1, 2]), weights=[1.0, np.inf])
    with pytest.raises(ValueError, match=r"arc 1 -> 2 weighs inf"):
        run_sssp(g, 0, "h-bf")


# ------------------------------------------------------------------ techniques' own knobs and records

def test_hbf_packs_distance_and_parent_only_when_they_fit_32_bits():
    real = graphs.generate("grid2d", rows=3, cols=3, weights="uniform")
    with pytest.raises(KnobError, match="packed='on' needs 32-bit distances.*reals"):
        run_sssp(real, 0, "h-bf", {"packed": "on"})
    big = graphs.from_edges(np.array([0, 1]), np.array([1, 2]), weights=[2.0 ** 30, 2.0 ** 30])
    assert weighting(big).integer and not weighting(big).packable
    with pytest.raises(KnobError, match=r"\(n - 1\) x max\|w\|"):
        run_sssp(big, 0, "h-bf", {"packed": "on"})
    r = run_sssp(big, 0, "h-bf", {**HBF, "packed": "auto"}).complete()  # the 64-bit distance instead
    assert r.distances.tolist() == [0, 2 ** 30, 2 ** 31]


def test_hbf_classification_needs_duplicate_removal():
    with pytest.raises(KnobError, match="classify='on'.*needs dedup='stamp'"):
        run_sssp(graphs.generate("grid2d", rows=2, cols=2, weights="integer"), 0, "h-bf", {"dedup": "none"})


def test_hbf_classification_and_heavy_vertices_show_in_the_records():
    # a hub of degree 30 (heavy at 8) whose leaves have in-degree 1; all are sinks but leaf 5, which
    # has a self loop (no out-arc by itself) and an arc on to 31
    hub = graphs.from_edges(np.r_[np.zeros(30, np.int64), 5, 5], np.r_[np.arange(1, 31), 5, 31], drop_self_loops=False,
                            weights=np.r_[np.arange(1, 31), 2.0, 1.0], name="hub")
    run = run_sssp(hub, 0, "h-bf", {**HBF, "heavy_degree": 8, "K3": 2, "K5": 0})  # the heavy grid: multi-block steps
    steps = list(run)
    first = steps[0]
    assert first.heavy_vertices == 1 and first.plain_stores == 30 and first.sinks == 29 and first.frontier_out == 1
    assert steps[1].self_loops == 1 and steps[1].sinks == 1 and check_sssp_result(hub, run.result).ok


def _relax_steps(g, source, knobs, limits=None):
    run = run_sssp(g, source, "h-bf", {**HBF, **knobs}, limits=limits)
    steps = [s for s in run if s.phase == "relax"]
    assert check_sssp_result(g, run.result).ok
    return run.result, steps


def test_hbf_test_first_runs_the_atomic_only_for_arcs_that_beat_a_plain_read():
    # (the distance alone, packed='off', is always tested first: the conformance suite runs it both ways)
    g = graphs.generate("kronecker", scale=6, edge_factor=6, seed=2, weights="integer", weight_low=1, weight_high=50)
    src = int(np.argmax(g.degrees()))
    on, on_steps = _relax_steps(g, src, {"test_first": "on"})
    off, off_steps = _relax_steps(g, src, {"test_first": "off"})
    assert np.array_equal(on.distances, off.distances)
    for s in off_steps:  # every arc but self loops and plain stores runs the packed word's atomic
        assert s.atomics + s.plain_stores + s.self_loops == s.relaxations
    for s in on_steps:  # an improvement passed the test; most arcs did not
        assert s.improvements <= s.atomics + s.plain_stores <= s.relaxations
    on_atomics, relaxations = sum(s.atomics for s in on_steps), sum(s.relaxations for s in on_steps)
    assert on_atomics * 3 < relaxations, (on_atomics, relaxations)


def test_hbf_k1_zero_takes_bfs4ks_rule_from_the_degrees():
    from explorer.sssp.techniques.hbf import degree_k1

    kron = graphs.generate("kronecker", scale=7, edge_factor=8, seed=1, weights="integer")
    road = graphs.generate("grid2d", rows=8, cols=8, weights="integer")
    assert degree_k1(kron) >= 8 and degree_k1(road) == 4  # a skewed graph gets wide warps, a mesh 4 lanes
    assert degree_k1(graphs.from_edges(np.array([], np.int64), np.array([], np.int64), num_vertices=0)) == 4
    # on a GPU of 64 resident threads the frontiers' own warps (BFS-4K §5.2) fall below the rule's K1,
    # which then holds them up
    from explorer.device import DeviceLimits
    from kernels.rules import virtual_warp_size

    tiny, k1 = DeviceLimits("tiny", sm_count=1, max_threads_per_sm=64), degree_k1(kron)
    _, steps = _relax_steps(kron, 0, {"K1": 0, "K5": 0}, limits=tiny)
    assert [s.warp_size for s in steps] == [virtual_warp_size(64, s.frontier_in, k1) for s in steps]
    assert any(virtual_warp_size(64, s.frontier_in, 1) < k1 for s in steps)


def test_hbf_heavy_grid_walks_many_heavy_vertices_of_every_degree():
    # heavy at 2 with K3 = 3: a lane's arcs, 32 apart, cross several heavy vertices in a chunk
    g = graphs.generate("kronecker", scale=6, edge_factor=6, seed=5, weights="integer", weight_low=1, weight_high=9)
    src = int(np.argmax(g.degrees()))
    _, steps = _relax_steps(g, src, {"heavy_degree": 2, "K3": 3, "K5": 0})
    assert max(s.heavy_vertices for s in steps) > 8


def test_hbf_a_frontier_holding_a_heavy_vertex_runs_on_the_grid_however_small():
    # 0 - 1 - hub 2 (20 leaves), a leaf leads on to 23, 24: the single-block kernel stops once it
    # queues the hub, whose step runs on the grid (its heavy-vertex kernel walks the hub's arcs);
    # from the hub itself, the search starts there
    src = np.concatenate([[0, 1], np.full(20, 2), [3, 23]])
    dst = np.concatenate([[1, 2], np.arange(3, 23), [23, 24]])
    g = graphs.from_edges(src, dst, directed=False, weights=np.arange(1, 25) % 5 + 1, name="hub")
    knobs = {"heavy_degree": 8, "K5": 1}
    _, steps = _relax_steps(g, 0, knobs)
    assert [s.kernel for s in steps[:4]] == ["single-block", "single-block", "multi-block", "single-block"]
    assert [s.frontier_in for s in steps[:3]] == [1, 1, 1] and steps[2].heavy_vertices == 1
    assert steps[1].heavy_vertices == 0  # the single-block kernel never walks a heavy vertex
    _, steps = _relax_steps(g, 2, knobs)
    assert steps[0].kernel == "multi-block" and steps[0].heavy_vertices == 1
    assert steps[1].kernel == "single-block"
    _, steps = _relax_steps(g, 2, {"heavy_degree": 0, "K5": 1})  # no heavy vertices: one block from the start
    assert steps[0].kernel == "single-block"


@pytest.mark.skipif(SIM, reason="the register file's limit is a GPU's: the simulator runs any block")
@pytest.mark.parametrize("kind", ["integer", "uniform"])
def test_every_kernel_runs_in_blocks_of_1024_threads(kind):
    # 1024 threads x 64 registers fill an SM: a kernel compiled to more (H-BF's heavy grid took 76,
    # Δ-stepping's next-bucket search 66) could not launch such a block at all.
    g = graphs.generate("kronecker", scale=10, edge_factor=8, seed=3, weights=kind, weight_low=1, weight_high=9)
    src = int(np.argmax(g.degrees()))
    big = {"block_threads": 1024}
    for technique, knobs in (("bellman-ford", {**big, "dedup": "stamp"}),
                             ("h-bf", {**big, "single_block_threads": 1024, "heavy_degree": 16}),
                             ("delta-stepping", {**big, "single_block_threads": 1024, "form": "bucketing"}),
                             ("delta-stepping", {**big, "form": "near-far"})):
        run = run_sssp(g, src, technique, knobs)
        steps = list(run)
        assert check_sssp_result(g, run.result).ok, (technique, knobs)
        if technique == "h-bf":
            assert any(s.heavy_vertices for s in steps)
    apsp = run_apsp(g, "johnson", {"block_threads": 1024}).complete()  # its searches' batch kernel too
    assert np.allclose(apsp.distances, reference_apsp(g))


@pytest.mark.parametrize("technique", ["bellman-ford", "h-bf", "delta-stepping"])
def test_every_technique_refuses_blocks_larger_than_the_devices(technique):
    from explorer.device import DeviceLimits

    g = graphs.with_weights(graphs.sample_graph("bfs4k_fig2"), "integer", seed=1)
    small = DeviceLimits("small", sm_count=1, max_threads_per_sm=1024, max_threads_per_block=64)
    with pytest.raises(KnobError, match="knob block_threads=128 exceeds this GPU's 64 threads per block"):
        run_sssp(g, 0, technique, {"block_threads": 128}, limits=small)


def test_bellman_ford_queues_every_improvement_and_dedup_queues_a_vertex_once():
    # two paths reach 3 in one step with falling distances: a duplicate entry without dedup
    g = graphs.from_edges(np.array([0, 0, 1, 2, 3]), np.array([1, 2, 3, 3, 4]), weights=[1, 1, 5, 1, 1],
                          name="diamond")
    rows = {}
    for tech, knobs in (("bellman-ford", FAST), ("bellman-ford", {**FAST, "dedup": "stamp"})):
        r = run_sssp(g, 0, tech, knobs).complete()
        rows[knobs.get("dedup", "none")] = r.iterations[1]
        assert check_sssp_result(g, r).ok
    # whether 3 improves once or twice depends on which relaxation lands first (2 -> 3 first: once);
    # either way every improvement is queued without dedup, and 3 is queued once with it
    for row in rows.values():
        assert row.improvements in (1, 2) and row.duplicates == row.improvements - 1
    assert rows["none"].frontier_out == rows["none"].improvements
    assert rows["stamp"].frontier_out == 1


def test_delta_defaults_to_davidsons_cw_over_d_and_buckets_rise():
    from explorer.sssp.techniques.delta_stepping import default_delta

    g = graphs.generate("grid2d", rows=6, cols=6, weights="integer", weight_low=1, weight_high=9)
    expected = 32 * g.weights.mean() / (g.num_arcs / g.num_vertices)
    assert default_delta(g, weighting(g)) == pytest.approx(expected)
    r = run_sssp(g, 0, "delta-stepping", {**DELTA, "delta": 3.0, "form": "bucketing"}).complete()
    assert check_sssp_result(g, r).ok
    gathers = [s for s in r.iterations if s.phase == "gather"]
    assert gathers and all(s.delta == 3.0 for s in r.iterations)
    buckets = [s.bucket for s in r.iterations if s.bucket is not None]
    assert buckets == sorted(buckets) and buckets[-1] >= int(r.distances.max() // 3)


def test_zero_weight_cycles_still_give_a_tree():
    # 1 <-> 2 <-> 3 weigh 0 both ways: tight parents could point round in a circle
    src, dst = np.array([0, 1, 2, 2, 3, 3, 1]), np.array([1, 2, 1, 3, 2, 1, 3])
    g = graphs.from_edges(src, dst, weights=[2, 0, 0, 0, 0, 0, 0], name="zero-cycle")
    for tech, knobs in (("bellman-ford", FAST), ("h-bf", HBF), ("h-bf", {**HBF, "packed": "off"})):
        r = run_sssp(g, 0, tech, knobs).complete()
        assert check_sssp_result(g, r).ok and r.distances.tolist() == [0, 2, 2, 2]


def test_the_result_writes_json_and_csv_with_the_users_ids():
    g = graphs.from_edges(np.array([10, 20]), np.array([20, 30]), weights=[1.5, 2.0], remap=True, num_vertices=None)
    r = run_sssp(g, 20, "h-bf", HBF).complete()
    doc = json.loads(r.to_json(include_arrays=True))
    assert doc["summary"]["source"] == 20 and doc["summary"]["source_vertex"] == 1
    assert doc["distances"] == [None, 0.0, 2.0] and doc["ids"] == [10, 20, 30]
    assert r.to_csv().splitlines()[0].startswith("iteration,phase,frontier_in,relaxations,improvements")
    assert r.as_float()[0] == np.inf


def test_int64_distances_mark_unreached_vertices_with_int64_inf():
    g = graphs.from_edges(np.array([0]), np.array([1]), num_vertices=3, weights=[7])
    r = run_sssp(g, 0, "bellman-ford", FAST).complete()
    assert r.distances.tolist() == [0, 7, INT64_INF] and r.parents.tolist() == [0, 0, -1] and r.reached == 2


# ------------------------------------------------------------------ the reference check fails when it should

def test_check_sssp_result_catches_wrong_distances_and_parents():
    g = graphs.generate("grid2d", rows=3, cols=4, weights="integer", weight_low=1, weight_high=5)
    r = run_sssp(g, 0, "h-bf", HBF).complete()
    assert check_sssp_result(g, r).ok
    good_d, good_p = r.distances.copy(), r.parents.copy()
    r.distances[5] += 1
    assert check_sssp_result(g, r).rule == "distances"
    r.distances[:] = good_d
    v = int(np.flatnonzero(good_p != np.arange(len(good_p)))[-1])
    r.parents[v] = next(u for u in range(g.num_vertices) if u != good_p[v] and u not in g.neighbors(v))
    assert check_sssp_result(g, r).rule == "parent-is-arc"
    r.parents[:] = good_p
    loose = [(x, int(g.indices[k])) for x in range(g.num_vertices) for k in range(g.offsets[x], g.offsets[x + 1])
             if good_d[x] + g.weights[k] != good_d[g.indices[k]] and g.indices[k] != r.source]
    u, v = loose[0]
    r.parents[v] = u  # an arc into v, but not on a shortest path
    assert check_sssp_result(g, r).rule == "parent-tight"


def test_the_reference_takes_the_least_of_parallel_arcs():
    g = graphs.from_edges(np.array([0, 0]), np.array([1, 1]), weights=[5.0, 2.0], merge_multi_edges=False)
    assert reference_sssp(g, 0)[0].tolist() == [0.0, 2.0]


# ------------------------------------------------------------------ all pairs

APSP_KNOBS = {"floyd-warshall": {"tile": 16}, "johnson": {"block_threads": 32}} if SIM else {}


@pytest.mark.parametrize("method", ["floyd-warshall", "johnson"])
def test_all_pairs_equal_scipy_with_negative_weights_and_unreachable_pairs(method):
    g = graphs.from_edges(np.array([0, 0, 1, 2, 2, 3, 4, 1, 6]), np.array([1, 2, 3, 1, 4, 4, 5, 2, 7]),
                          num_vertices=19, weights=[4, 2, -2, -1, 3, -3, 1, 2, 0.5], name="negative19")
    r = run_apsp(g, method, APSP_KNOBS.get(method)).complete()
    assert np.allclose(r.distances, reference_apsp(g), rtol=1e-12, atol=1e-12)
    stages = {s.stage for s in r.steps}
    assert stages == ({"round"} if method == "floyd-warshall" else {"potentials", "searches"})
    if method == "floyd-warshall":
        tile = (APSP_KNOBS.get(method) or {}).get("tile", 64)
        assert len(r.steps) == -(-19 // tile)


@pytest.mark.parametrize("method", ["floyd-warshall", "johnson"])
def test_all_pairs_report_a_negative_cycle(method):
    g = graphs.from_edges(np.array([0, 1, 2]), np.array([1, 2, 0]), weights=[1, 1, -3], name="triangle")
    with pytest.raises(NegativeCycleError, match="negative cycle"):
        run_apsp(g, method, APSP_KNOBS.get(method)).complete()
    if method == "floyd-warshall":
        r = run_apsp(g, method, APSP_KNOBS.get(method), negative_cycles="keep").complete()
        assert r.negative_cycle and (np.diagonal(r.distances) < 0).all()


def test_the_memory_check_names_the_n_by_n_matrix_before_anything_is_allocated():
    from explorer.engine.runtime import for_technique

    n = 3_000_000  # 72 TB of float64
    g = graphs.from_edges(np.array([0]), np.array([1]), num_vertices=n, weights=[1.0])
    with pytest.raises(APSPMemoryError, match=r"n x n matrix of float64: 65,?\d*.\d TB"):
        check_matrix_memory(g, __import__("explorer.sssp.apsp", fromlist=["APSPMethod"]).APSPMethod.JOHNSON,
                            for_technique(frozenset({"gpu", "simulator"})))
    with pytest.raises(APSPMemoryError, match="n x n matrix"):
        run_apsp(g, "floyd-warshall")


# ------------------------------------------------------------------ the command line

def _cli(*args):
    from explorer.ui import cli

    return cli.main(list(args) + (["--simulator"] if SIM else []))


def test_knobs_of_another_technique_are_refused_by_name():
    from explorer.sssp import make_knobs
    from explorer.techniques import make_knobs as bfs_make_knobs

    hbf = make_knobs("h-bf", {"K1": 8})
    assert make_knobs("h-bf", hbf) is hbf and hbf.K1 == 8
    with pytest.raises(KnobError, match="knobs of type HBFKnobs do not belong to technique 'bfs4k'"):
        bfs_make_knobs("bfs4k", hbf)
    with pytest.raises(KnobError, match="knobs of type BFS4KKnobs do not belong to technique 'delta-stepping'"):
        make_knobs("delta-stepping", bfs_make_knobs("bfs4k", {}))


def test_cli_sssp_prints_a_row_a_step_validates_and_writes_files(tmp_path, capsys):
    out_json, out_csv = tmp_path / "r.json", tmp_path / "r.csv"
    code = _cli("sssp", "gen:grid2d:rows=4,cols=5,weights=integer,weight_high=9", "--source", "0",
                "--technique", "delta-stepping", "--knob", "delta=4", "--json", str(out_json), "--arrays",
                "--csv", str(out_csv))
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "phase" in out and "gather" in out and "validation ok" in out
    doc = json.loads(out_json.read_text())
    assert doc["summary"]["validation"] == "ok" and len(doc["distances"]) == 20
    assert out_csv.read_text().count("\n") == len(doc["iterations"]) + 1


def test_cli_sssp_refuses_bad_input_with_one_line(capsys):
    assert _cli("sssp", "bfs4k_fig2") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has no weights" in err and "--unit-weights" in err
    assert _cli("sssp", "gen:grid2d:rows=2,cols=2,weights=integer", "--knob", "delta=-1",
                "--technique", "delta-stepping") == 2
    assert "knob delta=-1" in capsys.readouterr().err


def test_cli_apsp_runs_both_methods(capsys):
    for method in ("floyd-warshall", "johnson"):
        assert _cli("apsp", "gen:grid2d:rows=3,cols=4,weights=uniform", "--method", method) == 0
        assert "validation ok" in capsys.readouterr().out


# ------------------------------------------------------------------ the GPU's compiler

_PTX_SCRIPT = """
from types import SimpleNamespace
from numba.cuda import dispatcher
dispatcher.get_current_device = lambda: SimpleNamespace(compute_capability=(9, 0))  # no GPU needed
from numba import cuda, types
from kernels import apsp
from kernels.args import I64, V32, V64, Heavy
from kernels.sssp import batch, relax, single, steps
from kernels.sssp.args import Bounds, Marks, Paths, Policy, SingleLimits, Sweep, WGraph
from kernels.args import QueuePair
done = 0
def ptx(k, sig):
    global done
    cuda.compile_ptx(k.py_func, sig, cc=(9, 0)); done += 1
nt = lambda cls, *tys: types.NamedTuple(list(tys), cls)
for dt in (types.int64, types.float64):
    A, M = dt[::1], dt[:, ::1]
    wg, pa = nt(WGraph, V64, V32, A), nt(Paths, A, V32, V64)
    mk = nt(Marks, V32, V32, types.int8[::1])
    sig = (wg, pa, mk, nt(Sweep, V32, I64, V32, I64, I64), nt(Bounds, I64, types.float64, dt), nt(Policy, I64, I64),
           nt(Heavy, I64, I64, V32, V64, V64), V64)
    ptx(relax.sssp_relax, sig); ptx(relax.sssp_heavy, sig)
    ptx(single.sssp_single, (wg, pa, mk, nt(QueuePair, V32, V32, types.boolean, I64, I64, I64), sig[4], sig[5],
                             nt(SingleLimits, I64, I64, I64, I64), V64, types.int64[:, ::1]))
    ptx(steps.sssp_fill, (pa, mk, dt, types.boolean, V32)); ptx(steps.sssp_source, (pa, I64, V32))
    ptx(steps.sssp_unpack, (pa, dt)); ptx(steps.sssp_parents, (wg, pa, dt, I64))
    ptx(steps.delta_far_min, (pa, mk, I64, types.float64, V64))
    ptx(steps.delta_gather, (pa, mk, I64, I64, types.float64, V32, I64, I64, V64))
    ptx(batch.batch_init, (M, types.int8[:, ::1], types.int8[:, ::1], V32, I64, dt))
    ptx(batch.batch_relax, (wg, M, types.int8[:, ::1], types.int8[:, ::1], V64, dt))
D = types.float64[:, ::1]
for T in apsp.TILES:
    for k in apsp.kernels(T):
        ptx(k, (D, I64, I64))
ptx(apsp.fw_fill, (D,)); ptx(apsp.fw_arcs, (V64, V32, types.float64[::1], D))
print(f"compiled {done} kernels")
"""


def _nvvm() -> bool:
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    return any(Path(p).exists() for p in (home, "/usr/local/cuda-13.0", "/usr/local/cuda-12.8"))


@pytest.mark.slow
@pytest.mark.skipif(not _nvvm(), reason="needs the CUDA toolkit's NVVM to compile PTX")
def test_sssp_and_apsp_kernels_compile_for_the_gpu():
    # The simulator runs the kernels as Python: this compiles them as the GPU would (typing,
    # lowering, PTX for sm_90) in a process without the simulator.
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    out = subprocess.run([sys.executable, "-c", _PTX_SCRIPT], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=900)
    if "cannot find libnvvm" in out.stderr or "NvvmSupportError" in out.stderr:
        pytest.skip("NVVM is not usable here")
    assert out.returncode == 0, out.stderr[-3000:]
    assert "compiled 33 kernels" in out.stdout
