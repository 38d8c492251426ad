"""The shortest-path conformance suite: every registered SSSP technique x small weighted graphs
(integer and real weights, zero and negative weights, parallel arcs of different weights,
unreachable vertices, self loops, a hub) x the knob grid it declares for testing. A technique gets
these tests by being registered; they run under the simulator in CI and on a GPU.

Each run must give scipy's distances and parents forming shortest paths (one check_sssp_result),
and records whose counts agree with each other: one step after another, each relax step reading
the frontier the step before wrote, the tree's pass last."""
import numpy as np
import pytest

from explorer import backend, graphs
from explorer.api import Vertex
from explorer.knobs import KnobError
from explorer.reference import check_sssp_result
from explorer.sssp import (ITERATION_FIELDS, NegativeCycleError, NegativeWeightError, PHASES, implementation,
                           run_sssp, sssp_techniques)

SIM = backend.current().is_simulator
TECHS = [t.value for t in sssp_techniques()]


def _graphs() -> dict:
    e = np.array([], np.int64)
    hub = 40
    star_src = np.r_[np.zeros(hub, np.int64), np.arange(1, hub)]
    star_dst = np.r_[np.arange(1, hub + 1), np.arange(2, hub + 1)]
    return {
        "single": graphs.from_edges(e, e, num_vertices=1, weights=np.array([], float), name="single"),
        "path-integer": graphs.from_edges(np.arange(12), np.arange(1, 13), directed=False,
                                          weights=np.arange(1, 13) % 5 + 1, name="path13"),
        "grid-real": graphs.generate("grid2d", rows=5, cols=6, weights="uniform", weight_low=0.5, weight_high=4.0),
        # zero weights, a zero-weight cycle 2 -> 3 -> 4 -> 2 and ties between paths
        "zero-weights": graphs.from_edges(np.array([0, 0, 1, 2, 3, 4, 4, 5]), np.array([1, 2, 2, 3, 4, 2, 5, 0]),
                                          num_vertices=7, weights=[1, 1, 0, 0, 0, 0, 2, 0], name="zero-weights"),
        # negative arcs, no negative cycle (1 -> 2 -> 1 weighs +1)
        "negative": graphs.from_edges(np.array([0, 0, 1, 2, 2, 3, 4, 1]), np.array([1, 2, 3, 1, 4, 4, 5, 2]),
                                      num_vertices=6, weights=[4, 2, -2, -1, 3, -3, 1, 2], name="negative"),
        # parallel arcs of different weights kept in the CSR (scipy would add them up)
        "parallel": graphs.from_edges(np.array([0, 0, 0, 1, 1, 2]), np.array([1, 1, 2, 2, 2, 3]),
                                      weights=[5.0, 2.0, 9.0, 4.0, 1.5, 1.0], merge_multi_edges=False,
                                      name="parallel"),
        "unreachable": graphs.from_edges(np.array([0, 1, 2, 6, 7]), np.array([1, 2, 3, 7, 8]), num_vertices=11,
                                         directed=False, weights=[3, 1, 2, 5, 5], name="two-parts+isolated"),
        "self-loops": graphs.from_edges(np.array([0, 0, 1, 1, 2]), np.array([0, 1, 1, 2, 2]), directed=True,
                                        drop_self_loops=False, weights=[1, 2, 0, 3, 7], name="self-loops"),
        "hub": graphs.from_edges(star_src, star_dst, directed=False, weights=(np.arange(star_src.size) % 7) + 1.5,
                                 name="hub40"),
        "kronecker": graphs.generate("kronecker", scale=6, edge_factor=6, seed=2, weights="integer",
                                     weight_low=1, weight_high=20),
    }


GRAPHS = _graphs()
#: Knob extremes under the simulator (a Python thread for each GPU thread): on the graphs with
#: negative and zero weights (the first is skipped by techniques that refuse negative weights); on
#: a GPU on every graph.
EXTREME_GRAPHS = ("negative", "zero-weights") if SIM else tuple(GRAPHS)


def knob_grid(tech: str) -> list:
    impl = implementation(tech)
    grid = [("defaults", {})] + [(",".join(f"{k}={v}" for k, v in k.items()), k) for k in impl.test_knobs]
    for spec in impl.Knobs.specs():
        for value in spec.extremes():
            if value == spec.default or any(k.get(spec.name) == value for _, k in grid):
                continue
            if SIM and spec.name.endswith("block_threads") and value > 128:
                continue  # 1,024 Python threads a block: minutes under the simulator; the GPU runs it
            grid.append((f"extreme:{spec.name}={value}", {spec.name: value}))
    return grid


def cases():
    for tech in TECHS:
        for label, knobs in knob_grid(tech):
            names = EXTREME_GRAPHS if label.startswith("extreme:") else GRAPHS
            for name in names:
                if name == "negative" and not implementation(tech).negative_weights:
                    continue
                yield pytest.param(tech, name, knobs, id=f"{tech}-{name}-{label}")


def _knobs(impl, knobs: dict) -> dict:
    return {**(impl.simulator_knobs if SIM else {}), **knobs}


@pytest.mark.parametrize("tech", TECHS)
def test_every_knob_extreme_is_runnable_or_covered(tech):
    impl = implementation(tech)
    for label, knobs in knob_grid(tech):
        try:
            impl.Knobs.from_dict(_knobs(impl, knobs))
        except KnobError as err:
            pytest.fail(f"{tech}: knob setting {label} is refused ({err}); declare it in test_knobs with the knobs "
                        "it needs")


@pytest.mark.parametrize("tech,name,knobs", list(cases()))
def test_sssp_conformance(tech, name, knobs):
    impl = implementation(tech)
    g = GRAPHS[name]
    try:
        full = impl.Knobs.from_dict(_knobs(impl, knobs))
    except KnobError:
        pytest.skip("needs other knobs: covered by the declared grid")
    source = int(np.argmax(g.degrees())) if g.num_vertices else 0
    run = run_sssp(g, Vertex(source), tech, full)
    steps = list(run)
    r = run.result
    report = check_sssp_result(g, r)
    assert report.ok, report.message
    assert r.dtype == ("int64" if np.all(np.floor(g.weights) == g.weights) else "float64")

    declared = {e.name: e for e in impl.extras}
    assert [s.iteration for s in steps] == list(range(len(steps)))
    assert [s.phase for s in steps].count("parents") == 1 and steps[-1].phase == "parents"
    size = 1
    for s in steps:
        assert s.phase in PHASES and s.technique == tech and s.time_ms >= 0
        assert set(s.extras) == set(declared), "extras must be exactly the declared ones"
        for key, e in declared.items():
            v = s.extras[key]
            assert v is None or isinstance(v, e.kind) or (e.kind is int and isinstance(v, (int, np.integer))), (key, v)
        assert set(s.as_row()) == set(ITERATION_FIELDS) | set(declared)
        if s.phase == "relax":
            assert s.frontier_in == size, "a relax step reads the frontier the step before wrote"
            assert s.relaxations >= s.improvements >= 0
            assert 0 <= s.duplicates <= s.improvements
            assert s.frontier_out <= s.improvements
        elif s.phase == "gather":
            assert s.relaxations == s.improvements == 0
        size = s.frontier_out
    relax = [s for s in steps if s.phase == "relax"]
    assert relax[-1].frontier_out == 0 or steps[-2].phase == "gather"
    assert sum(s.improvements for s in relax) >= r.reached - 1
    buckets = [s.bucket for s in steps if s.bucket is not None]
    assert buckets == sorted(buckets), "buckets are settled in increasing order"
    assert r.total_ms == pytest.approx(sum(s.time_ms for s in steps))


def _negative_cycle_graph():
    # 0 -> 1 -> 2 -> 3 -> 1 weighs 1 - 2 - 1 + 2 ... the cycle 1 -> 2 -> 3 -> 1 weighs -1; 4 -> 5 is apart
    return graphs.from_edges(np.array([0, 1, 2, 3, 4]), np.array([1, 2, 3, 1, 5]), num_vertices=6,
                             weights=[1, 2, -4, 1, 1], name="negative-cycle")


@pytest.mark.parametrize("tech", [t for t in TECHS if implementation(t).negative_weights])
def test_a_negative_cycle_reachable_from_the_source_is_reported_with_its_vertices(tech):
    g = _negative_cycle_graph()
    impl = implementation(tech)
    with pytest.raises(NegativeCycleError, match="negative cycle reachable from source 0") as err:
        run_sssp(g, 0, tech, impl.simulator_knobs if SIM else None).complete()
    assert sorted(err.value.cycle) == [1, 2, 3]
    # ... and one the source cannot reach is none of its business
    r = run_sssp(g, 4, tech, impl.simulator_knobs if SIM else None).complete()
    assert check_sssp_result(g, r).ok


@pytest.mark.parametrize("tech", [t for t in TECHS if implementation(t).negative_weights])
def test_a_negative_self_loop_is_a_negative_cycle(tech):
    g = graphs.from_edges(np.array([0, 1]), np.array([1, 1]), weights=[2.0, -0.5], drop_self_loops=False,
                          name="negative-loop")
    with pytest.raises(NegativeCycleError) as err:
        run_sssp(g, 0, tech, implementation(tech).simulator_knobs if SIM else None).complete()
    assert err.value.cycle == [1]


@pytest.mark.parametrize("tech", [t for t in TECHS if not implementation(t).negative_weights])
def test_negative_weights_are_refused_by_name(tech):
    g = GRAPHS["negative"]
    with pytest.raises(NegativeWeightError, match=r"arc 1 -> 3 of graph 'negative' weighs -2"):
        run_sssp(g, 0, tech)
