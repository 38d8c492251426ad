"""The conformance suite: every registered technique x small named graphs x the knob grid the
technique declares for testing (its defaults, its `test_knobs` and every knob's range extremes).
A technique gets these tests by being registered; they run under the simulator in CI and on a GPU.

Each run must give exact distances and a Graph500-valid parent tree (one `check_result`), one
record per level in order whose core fields agree with each other and with the answer, and the
extras its technique declares. Technique "auto" runs on every graph too, its choice held to the
same rules."""
import numpy as np
import pytest

from explorer import backend, graphs
from explorer.api import Vertex, run_bfs
from explorer.knobs import KnobError
from explorer.reference import check_result
from explorer.stats import LEVEL_FIELDS, Direction, Kernel
from explorer.techniques import implementation, implemented_techniques

SIM = backend.current().is_simulator
TECHS = [t.value for t in implemented_techniques()]


#: The path's vertices (its levels): 31 on a GPU, 21 under the simulator, whose runs of the path
#: cost about a second a level with some knobs.
PATH = 21 if SIM else 31


def _graphs() -> dict:
    e = np.array([], np.int64)
    hub = 60
    star_src = np.r_[np.zeros(hub, np.int64), np.arange(1, hub)]
    star_dst = np.r_[np.arange(1, hub + 1), np.arange(2, hub + 1)]  # a hub and a path through its leaves
    loops = graphs.from_edges(np.array([0, 0, 1, 1, 2, 3]), np.array([0, 1, 1, 2, 3, 3]), directed=False,
                              drop_self_loops=False, name="self-loops")
    return {
        "edgeless": graphs.from_edges(e, e, num_vertices=5, name="edgeless5"),
        "single": graphs.from_edges(e, e, num_vertices=1, name="single"),
        "path": graphs.from_edges(np.arange(PATH - 1), np.arange(1, PATH), directed=False, name=f"path{PATH}"),
        "star": graphs.from_edges(star_src, star_dst, directed=False, name="hub60"),
        "grid": graphs.generate("grid2d", rows=7, cols=9),
        "disconnected": graphs.from_edges(np.array([0, 1, 2, 6, 7]), np.array([1, 2, 3, 7, 8]),
                                          num_vertices=11, directed=False, name="two-parts+isolated"),
        "directed": graphs.from_edges(np.array([0, 0, 1, 2, 3, 4, 5, 6]), np.array([1, 2, 3, 3, 0, 5, 6, 4]),
                                      num_vertices=8, directed=True, name="directed8"),
        "self-loops": loops,
        "teaching": graphs.sample_graph("bfs4k_fig2"),
        "kronecker": graphs.generate("kronecker", scale=6, edge_factor=8, seed=2),
    }


GRAPHS = _graphs()
#: Knob extremes run on this graph only under the simulator (1,024 Python threads a block; the
#: paper's figure: several levels, duplicates; the hub runs them on a GPU); on a GPU on every graph.
EXTREME_GRAPHS = ("teaching",) if SIM else tuple(GRAPHS)


def knob_grid(tech: str) -> list[tuple[str, dict]]:
    impl = implementation(tech)
    grid = [("defaults", {})] + [(",".join(f"{k}={v}" for k, v in k.items()), k) for k in impl.test_knobs]
    for spec in impl.Knobs.specs():
        for value in spec.extremes():
            if value != spec.default and not any(k.get(spec.name) == value for _, k in grid):
                grid.append((f"extreme:{spec.name}={value}", {spec.name: value}))
    return grid


#: Graphs whose shape, not a knob, is the point: the simulator runs their defaults only (the hub's
#: high degree is the Kronecker graph's too, where the knob sets run).
SHAPE_GRAPHS = ("edgeless", "single", "self-loops", "disconnected", "teaching", "star")


def _simulator_skips(label: str, knobs: dict, graph: str) -> bool:
    """What the simulator leaves to the GPU (which runs every case): a block of over 128 threads as
    an extreme, as many Python threads, up to 40 s a run (as the shortest-paths suite skips them);
    the declared test knobs on the grid (its many levels are the path's, and a cluster of 16 blocks
    took up to 25 s a run there; the defaults run on every graph) and on SHAPE_GRAPHS (empty and
    one-vertex graphs, self loops, parts out of reach, the paper's figure, the hub: the defaults and
    the extremes cover them; the knobs run on the path, the directed and the Kronecker graph),
    which keeps CI within its time; a cluster of 16 blocks on the path, 512 Python threads a level,
    38 s a run of 31 levels (the cluster forms run there with 4 blocks, and with 16 on every other
    graph)."""
    if not SIM:
        return False
    if label.startswith("extreme:"):
        return any(k.endswith("block_threads") and isinstance(v, int) and v > 128 for k, v in knobs.items())
    return label != "defaults" and (graph in ("grid",) + SHAPE_GRAPHS
                                    or (graph == "path" and knobs.get("cluster", 0) >= 16))


def cases():
    for tech in TECHS:
        for label, knobs in knob_grid(tech):
            names = EXTREME_GRAPHS if label.startswith("extreme:") else GRAPHS
            for name in names:
                if not _simulator_skips(label, knobs, name):
                    yield pytest.param(tech, name, knobs, id=f"{tech}-{name}-{label}")


def _sim_knobs(impl, knobs: dict) -> dict:
    return {**(impl.simulator_knobs if SIM else {}), **knobs}


@pytest.mark.parametrize("tech", TECHS)
def test_every_knob_extreme_is_runnable_or_covered(tech):
    """An extreme that needs other knobs (a cross-knob rule) must appear in the declared test grid."""
    impl = implementation(tech)
    for label, knobs in knob_grid(tech):
        try:
            impl.Knobs.from_dict(_sim_knobs(impl, knobs) if label == "defaults" else knobs)
        except KnobError as err:
            pytest.fail(f"{tech}: knob setting {label} is refused ({err}); declare it in test_knobs with "
                        "the knobs it needs")


@pytest.mark.parametrize("tech,name,knobs", list(cases()))
def test_conformance(tech, name, knobs):
    impl = implementation(tech)
    g = GRAPHS[name]
    try:
        full = impl.Knobs.from_dict(_sim_knobs(impl, knobs))
    except KnobError:
        pytest.skip("needs other knobs: covered by the declared grid (test_every_knob_extreme_is_runnable_or_covered)")
    source = int(np.argmax(g.degrees())) if g.num_vertices else 0
    try:
        run = run_bfs(g, Vertex(source), tech, full)
    except KnobError as err:  # what this device cannot hold (e.g. K5=16 x 1,024 threads of shared memory)
        if knobs in impl.test_knobs or not knobs:
            raise  # the declared grid must run everywhere
        pytest.skip(f"this device cannot run it: {err}")
    _check_run(g, impl, full, run)


@pytest.mark.parametrize("name", list(GRAPHS))
def test_auto_conforms(name):
    """Technique "auto" (run_bfs's default) on every graph: the technique it chose, held to the same
    rules, and named in every record."""
    g = GRAPHS[name]
    source = int(np.argmax(g.degrees())) if g.num_vertices else 0
    run = run_bfs(g, Vertex(source))
    impl = implementation(run.choice.technique)
    _check_run(g, impl, impl.Knobs.from_dict(run.choice.knobs), run)
    assert run.result.choice == run.choice.as_dict()


def _check_run(g, impl, full, run) -> None:
    tech = impl.name
    levels = list(run)
    r = run.result

    report = check_result(g, r)
    assert report.ok, report.message
    d = report.expected
    depth = int(d.max()) + 1
    sizes = np.bincount(d[d >= 0], minlength=depth)

    assert [lv.level for lv in levels] == list(range(depth))
    dups = impl.creates_duplicates(full)
    declared = {e.name: e for e in impl.extras}
    deg = g.degrees()
    for i, lv in enumerate(levels):
        assert lv.technique == tech and lv.time_ms >= 0
        assert lv.kernel in impl.kernel_kinds and isinstance(lv.kernel, Kernel)
        assert lv.direction in impl.directions and isinstance(lv.direction, Direction)
        assert set(lv.extras) == set(declared), "extras must be exactly the declared ones"
        for name_, e in declared.items():
            v = lv.extras[name_]
            assert v is None or isinstance(v, e.kind) or (e.kind is int and isinstance(v, (int, np.integer))), (name_, v)
        assert set(lv.as_row()) == set(LEVEL_FIELDS) | set(declared)
        if not dups:
            assert lv.frontier_in == sizes[i], "frontier in must be the level's size"
            if lv.edges_examined is not None and lv.direction is Direction.TOP_DOWN:
                assert lv.edges_examined == int(deg[d == i].sum())
            elif lv.edges_examined is not None:  # bottom-up: the unvisited stop at their first parent
                in_deg = np.bincount(g.indices, minlength=g.num_vertices)
                assert lv.discovered <= lv.edges_examined <= int(in_deg[(d == -1) | (d > i)].sum())
        else:
            assert lv.frontier_in >= sizes[i]
        if lv.discovered is not None:
            assert lv.discovered == (sizes[i + 1] if i + 1 < depth else 0)
        if i + 1 < depth:
            assert lv.frontier_out == levels[i + 1].frontier_in
        assert lv.frontier_out >= (sizes[i + 1] if i + 1 < depth else 0)
        counts = [lv.dup_generated, lv.dup_detected, lv.dup_undetected]
        if None not in counts:
            assert lv.dup_generated == lv.dup_detected + lv.dup_undetected
            assert lv.frontier_out == (sizes[i + 1] if i + 1 < depth else 0) + lv.dup_undetected
            if not dups:
                assert lv.dup_generated == 0
    assert levels[-1].frontier_out == 0
    assert r.total_ms == pytest.approx(sum(lv.time_ms for lv in levels))
    assert r.reached == int((d >= 0).sum())
