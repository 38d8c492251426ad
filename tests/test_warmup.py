"""Compiling once: `python3 -m explorer warmup` compiles what a first run would, the status line
says what compiles and that it happens once, and the kernels helper processes compile ahead of a
run (those a technique declares) are the ones the engine launches."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest

from explorer import backend, graphs, warmup
from explorer.techniques import Technique, implementation, implemented_techniques, make_knobs
from explorer.ui import cli

ROOT = Path(__file__).resolve().parents[1]
SIMULATOR = backend.current().is_simulator


def fresh_env(tmp_path, **extra):
    """A fresh user's environment: empty Numba and graph caches, no simulator requested."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env.update(NUMBA_CACHE_DIR=str(tmp_path / "numba"), BFS4K_CACHE_DIR=str(tmp_path / "graphs"),
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]), **extra)
    return env


def explorer_cmd(*args, env, timeout=600):
    return subprocess.run([sys.executable, "-m", "explorer", *args], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=timeout)


#: Run in a fresh process after a warmup: loads every sample, each file format and generator at
#: sizes other than the warmup's, the statistics, the reference and the CPU techniques, and lists
#: what of the explorer's own code Numba had to compile for that.
AFTER_WARMUP = textwrap.dedent("""
    import json, sys
    from numba.core import event
    compiled = []
    class Listener(event.Listener):
        def on_start(self, ev):
            f = ev.data["dispatcher"].py_func
            if f.__module__.startswith("explorer"):
                compiled.append(f"{f.__module__}.{f.__qualname__}")
        def on_end(self, ev):
            pass
    event.register("numba:compile", Listener())
    from pathlib import Path
    from explorer import api, backend, graphs
    from explorer.reference import assert_valid_bfs, cpu_bfs
    from explorer.techniques import implementation, implemented_techniques
    backend.select("simulator")
    tmp = Path(sys.argv[1])
    (tmp / "e.txt").write_text("5 6 1.5\\n6 7 2.5\\n7 5 0.5\\n")
    (tmp / "e.mtx").write_text("%%MatrixMarket matrix coordinate integer symmetric\\n4 4 3\\n2 1 3\\n3 2 1\\n4 3 2\\n")
    (tmp / "e.graph").write_text("4 3\\n2\\n1 3\\n2 4\\n3\\n")
    gs = [graphs.sample_graph(name) for name in graphs.SAMPLE_GRAPHS]
    gs += [graphs.sample_graph("Wiki-Vote", directed=False), graphs.sample_graph("p2p-Gnutella31", symmetrize=True)]
    gs += [graphs.load_graph(tmp / f, cache=False) for f in ("e.txt", "e.mtx", "e.graph")]
    for kind, params in [("kronecker", {"scale": 9}), ("uniform_random", {"n": 3000, "m": 9000}),
                         ("grid2d", {"rows": 30, "cols": 40}), ("grid3d", {"nx": 8, "ny": 9, "nz": 10}),
                         ("luo_scale_free", {"n": 9000}), ("watts_strogatz", {"n": 3000})]:
        gs.append(graphs.generate(kind, cache=False, **params))
    from explorer._twoform import parallel_forms
    with parallel_forms():  # the forms a large graph takes
        for f in ("e.txt", "e.mtx", "e.graph"):
            graphs.load_graph(tmp / f, cache=False)
            graphs.load_graph(tmp / f, cache=False, directed=False)
        graphs.generate("kronecker", cache=False, scale=9)
        graphs.sample_graph("3elt")
    for g in gs[:4]:
        graphs.graph_stats(g)
        dist, parent = cpu_bfs(g, 0)
        assert_valid_bfs(g, 0, dist, parent)
    for tech in implemented_techniques():
        if implementation(tech).runtimes == frozenset({"cpu"}):
            for g in gs[:5]:
                api.run_bfs(g, "max-degree", tech).complete()
    print(json.dumps(compiled))
""")


@pytest.mark.slow
def test_warmup_command_compiles_what_a_first_run_would(tmp_path):
    # no helper processes: the run compiles its loaders itself and says so (the helpers' own
    # notice is tested below)
    env = fresh_env(tmp_path, BFS4K_COMPILE_HELPERS="0")
    # A first run in the fresh environment says what compiles and that it happens once.
    first = explorer_cmd("run", "bfs4k_fig2", "--simulator", "--source", "0", env=env)
    assert first.returncode == 0, first.stderr
    assert ("... compiling the graph loaders (Numba, once per environment: later runs load them from "
            "Numba's disk cache)") in first.stderr
    assert first.stderr.count("compiling the graph loaders") == 1
    assert "... compiling the CPU reference BFS and validator (Numba, once per environment" in first.stderr

    done = explorer_cmd("warmup", "--simulator", "--jobs", "2", env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    units = len(warmup.plan("simulator"))
    assert "compiling the graph loaders and the CPU techniques, once for this environment, in 2 processes" in done.stdout
    assert "the CUDA kernels run as Python there and need no compiling" in done.stdout
    assert f"{units} of {units} units ready" in done.stdout and "failed" not in done.stdout
    assert f"{units}/{units}" in done.stderr  # the progress bar reached the end
    assert any(Path(tmp_path / "numba").rglob("*.nbi")), "nothing landed in the fresh NUMBA_CACHE_DIR"

    # A later process finds every loader, the reference and the CPU techniques in the disk cache.
    script = tmp_path / "after_warmup.py"
    script.write_text(AFTER_WARMUP)
    after = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True,
                           env=env, cwd=ROOT, timeout=600)
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout.strip().splitlines()[-1]) == []

    # ... and so a run says nothing about compiling loaders.
    run = explorer_cmd("run", "bfs4k_fig2", "--simulator", "--source", "0", env=env)
    assert run.returncode == 0, run.stderr
    assert "compiling the graph loaders" not in run.stderr


def _fresh_function(offset):
    @numba.njit  # no disk cache: compiles on every first call in this process
    def add(x):
        return x + offset
    return add


def test_compile_notices_name_the_group_once_with_the_suffix():
    said = []
    mine = _fresh_function(1).py_func.__module__
    with warmup.compile_notices(said.append, "; kernels meanwhile", groups=[(mine, "the test code")]) as groups:
        _fresh_function(1)(1)
        _fresh_function(2)(2.0)  # a second compile of the group: no second notice
    assert said == ["compiling the test code (Numba, once per environment: later runs load them from "
                    "Numba's disk cache); kernels meanwhile"]
    assert groups == {"the test code"}
    with warmup.compile_notices(said.append, groups=[("explorer.graphs", "the graph loaders")]):
        _fresh_function(3)(3)  # not the group's code
    assert len(said) == 1
    _fresh_function(4)(4)  # the listener is gone after the block
    assert len(said) == 1


def test_load_for_run_says_when_the_loaders_compile(monkeypatch):
    monkeypatch.setenv(warmup.HELPERS_ENV, "0")  # this process compiles them (a host with cores to spare would not)
    said = []
    fn = _fresh_function(5)
    monkeypatch.setattr(warmup, "COMPILE_GROUPS", ((fn.py_func.__module__, "the graph loaders"),))
    graph = graphs.sample_graph("bfs4k_fig2")

    def load():
        fn(1)
        return graph

    got = warmup.load_for_run(load, "bfs4k", {}, True, said.append, gpu=False)
    assert got is graph
    assert said == ["compiling the graph loaders (Numba, once per environment: later runs load them from "
                    "Numba's disk cache)"]


def test_the_explorer_says_when_the_loaders_compile(monkeypatch):
    monkeypatch.setenv(warmup.HELPERS_ENV, "0")  # this process compiles them (a host with cores to spare would not)
    pytest.importorskip("ipywidgets", reason="the Explorer needs ipywidgets (pip install -e .[notebook])")
    pytest.importorskip("bokeh", reason="the Explorer needs Bokeh (pip install -e .[notebook])")
    from explorer.ui.widgets import Explorer

    ex = Explorer(graph="bfs4k_fig2", source=0, technique="topdown-queue")
    graph = ex.current_graph()
    fn = _fresh_function(6)
    monkeypatch.setattr(warmup, "COMPILE_GROUPS", ((fn.py_func.__module__, "the graph loaders"),))

    def load():  # as a first load in a fresh environment: the loaders compile
        fn(1)
        return graph

    monkeypatch.setattr(ex, "current_graph", load)
    shown = []
    set_status = ex._set_status
    monkeypatch.setattr(ex, "_set_status", lambda text, kind="info": (shown.append(text), set_status(text, kind)))
    assert ex.run().validation == "ok"
    assert ("compiling the graph loaders (Numba, once per environment: later runs load them from Numba's disk "
            "cache)") in shown


def test_no_helpers_where_they_cannot_help(monkeypatch):
    monkeypatch.setenv(warmup.HELPERS_ENV, "1")  # too few for the loaders' code (on a host of many cores it goes to helpers)
    assert warmup.compile_ahead("bfs4k", {}, True, gpu=False) is None  # simulator or CPU: no kernel compiles
    assert warmup.compile_ahead("cpu-topdown", {}, True, gpu=True) is None  # Numba CPU code, not a kernel
    unknown = next((t for t in implemented_techniques() if not implementation(t).kernel_signatures(make_knobs(t), True)
                    and implementation(t).runtimes != frozenset({"cpu"})), None)
    if unknown is not None:  # kernels whose types are known only once the graph is
        assert warmup.compile_ahead(unknown, {}, True, gpu=True) is None


def test_helper_count_follows_the_environment(monkeypatch):
    monkeypatch.setenv(warmup.HELPERS_ENV, "0")
    assert warmup.helper_count(6) == 0
    monkeypatch.setenv(warmup.HELPERS_ENV, "3")
    assert warmup.helper_count(6) == 3 and warmup.helper_count(2) == 2
    monkeypatch.setenv(warmup.HELPERS_ENV, "many")
    with pytest.raises(ValueError, match="BFS4K_COMPILE_HELPERS='many' is invalid"):
        warmup.helper_count(6)
    monkeypatch.delenv(warmup.HELPERS_ENV)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert warmup.helper_count(6) == 0  # one core: this process's own compiling would only slow
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert warmup.helper_count(14) == 8 and warmup.helper_count(3) == 3  # kernels: half the cores at most
    assert warmup.helper_count(14, kernels=False) == 14  # CPU code only: all but this process's core


def test_plan_covers_every_registered_technique_and_preset():
    gpu = warmup.plan("gpu")
    names = [u.name for u in gpu]
    assert len(names) == len(set(names))
    assert gpu[0].name == "loaders:snap" and {f"loaders:{s}" for s in warmup.LOADER_STEPS} <= set(names)
    assert all(set(u.after) <= set(names[:i]) for i, u in enumerate(gpu)), "a unit waits for a later one"
    kernels = [u for u in gpu if u.kind == "kernel"]
    runs = [u for u in gpu if u.kind == "technique"]
    # Each distinct kernel variant once, known in every process by the same label.
    assert len({u.label for u in kernels}) == len(kernels)
    assert not any(" at 0x" in u.label for u in kernels)
    variants = {warmup._variant_key(*warmup._kernel_of(u)) for u in kernels}
    for tech in implemented_techniques():
        impl = implementation(tech)
        mine = {(json.dumps(u.args[1], sort_keys=True), u.args[2], u.args[3]) for u in runs if u.args[0] == tech.value}
        if impl.runtimes == frozenset({"cpu"}):  # CPU techniques run on the warm-up graphs
            want = {(json.dumps(k, sort_keys=True), i, p) for k, p in warmup.knob_presets(tech) for i in (True, False)}
            assert mine == want, tech.value
            continue
        presets = {("{}", i, p) for p in impl.presets for i in (True, False)}
        declared = {i: warmup.signatures(tech.value, {}, i) for i in (True, False)}
        if not impl.kernel_signatures(make_knobs(tech), True):  # its runs compile its kernels
            assert mine == {("{}", i, None) for i in (True, False)} | presets, tech.value
            continue
        assert mine == presets, tech.value  # no run for its defaults: its kernels compile as units
        for instrument, sigs in declared.items():
            for name, kernel, args in sigs:
                assert warmup._variant_key(kernel, args) in variants, (tech.value, instrument, name)
    # What technique "auto" may choose compiles ahead as well.
    from explorer.auto.candidates import CANDIDATES

    for c in CANDIDATES:
        if implementation(c.technique).kernel_signatures(make_knobs(c.technique, c.knobs), True):
            for instrument in (True, False):
                for name, kernel, args in warmup.signatures(c.technique, c.knobs, instrument):
                    assert warmup._variant_key(kernel, args) in variants, (c.name, instrument, name)
    # The simulator's knobs only run under the simulator, which compiles no kernel.
    sim_threads = warmup.signatures("bfs4k", implementation("bfs4k").simulator_knobs, True)[0]
    assert warmup._variant_key(*sim_threads[1:]) not in variants
    assert ({}, "§7") in warmup.knob_presets(Technique.BFS4K)  # the Explorer's §7 advice button
    bfs4k_kernels = {u.name for u in kernels if u.args[:3] == ("bfs4k", {}, True)}
    assert bfs4k_kernels and all(bfs4k_kernels <= set(u.after) for u in runs if u.args[0] == "bfs4k"
                                 and u.args[2])
    # The simulator and a machine without a GPU compile the loaders and the CPU techniques only.
    for mode in ("simulator", "cpu"):
        units = warmup.plan(mode)
        assert not [u for u in units if u.kind == "kernel"]
        assert {u.args[0] for u in units if u.kind == "technique"} == {
            t.value for t in implemented_techniques() if implementation(t).runtimes == frozenset({"cpu"})}
    with pytest.raises(ValueError, match="warmup mode 'fast' is invalid"):
        warmup.plan("fast")


# ------------------------------------------------------------------ a second warm-up, its duration

def _cached_step(tmp_path, monkeypatch, name="cached_step"):
    """A loader step of a fresh module whose function Numba keeps in its disk cache: (unit, module file)."""
    import importlib

    src = tmp_path / f"{name}.py"
    src.write_text("import numba\n\n@numba.njit(cache=True)\ndef f(x):\n    return x + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(warmup._LOADERS, name, lambda: importlib.import_module(name).f(1))
    return warmup.Unit(f"loaders:{name}", f"the test step {name}", "loaders", (name,)), src


@pytest.fixture
def ledger_home(tmp_path, monkeypatch):
    monkeypatch.setenv("BFS4K_CACHE_DIR", str(tmp_path / "graphs"))
    return tmp_path


def test_a_second_warmup_runs_nothing_when_everything_is_in_the_cache(ledger_home, monkeypatch, capsys):
    unit, src = _cached_step(ledger_home, monkeypatch)
    assert warmup.todo([unit], "cpu") == [unit]  # never warmed: it runs
    done, = warmup.warm([unit], "cpu", jobs=1)
    assert done.error is None and done.entries, "the unit's compiled function was not noted"
    assert warmup.todo([unit], "cpu") == []  # everything it used is in the disk cache

    # `python3 -m explorer warmup` then says so and runs nothing.
    monkeypatch.setattr(warmup, "plan", lambda mode: [unit])
    monkeypatch.setattr(warmup, "run_unit", lambda u: pytest.fail(f"{u.label} ran again"))
    assert cli.main(["warmup", "--jobs", "1"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "warmup: everything is ready: all 1 units are in Numba's disk cache" in out and "nothing to compile" in out

    # A changed source file makes Numba drop its index: the unit is due again.
    src.write_text(src.read_text() + "\n# changed\n")
    assert warmup.todo([unit], "cpu") == [unit]


def test_a_unit_whose_cache_entry_is_gone_runs_again(ledger_home, monkeypatch):
    unit, _ = _cached_step(ledger_home, monkeypatch, "gone_step")
    done, = warmup.warm([unit], "cpu", jobs=1)
    for entry in done.entries:
        Path(entry[2]).unlink()  # the index file
    assert warmup.todo([unit], "cpu") == [unit]


def test_the_ledger_looks_past_dead_weak_proxies():
    """gc lists weakref proxies whose object is gone; asking their class raises ReferenceError."""
    import weakref

    from explorer import warmup_ledger

    class Held:
        pass

    held = Held()
    dead = [weakref.proxy(held)]
    del held
    assert any(type(o) is weakref.ProxyType for o in __import__("gc").get_objects())
    warmup_ledger.overloads_now()  # raised before dispatchers were picked by type()
    assert dead


def test_the_expected_duration_comes_from_measured_costs_and_the_cores(ledger_home, monkeypatch, capsys):
    from explorer import warmup_ledger

    units = [warmup.Unit("a", "unit a", "loaders", ("a",)), warmup.Unit("b", "unit b", "loaders", ("b",)),
             warmup.Unit("c", "unit c", "loaders", ("c",), after=("a",))]
    warmup_ledger.save([warmup.Done(units[0], 10.0, entries=[]), warmup.Done(units[1], 6.0, entries=[]),
                        warmup.Done(units[2], 4.0, entries=[])], processes=2)
    start = warmup_ledger.PROCESS_START_S
    one, two = warmup.expected(units, 1), warmup.expected(units, 2)
    assert one.seconds == pytest.approx(start + 20.0)  # one process: their sum
    assert two.seconds == pytest.approx(start + 14.0)  # a, then c after it; b beside them
    assert (two.here, two.shipped, two.by_kind) == (3, 0, 0)
    # A unit never run here: the shipped table's cost, else its kind's median.
    new = [warmup.Unit("d", "unit d", "loaders", ("d",)), warmup.Unit("e", "unit e", "loaders", ("e",))]
    monkeypatch.setattr(warmup_ledger, "shipped_costs", lambda: {"measured_on": "a test machine", "units": {"unit d": 30.0}})
    e = warmup.expected(units + new, 2)
    assert (e.here, e.shipped, e.by_kind) == (3, 1, 1)
    assert e.seconds == pytest.approx(start + 30.0)  # d alone on one process; the rest on the other
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    text = warmup.expected(units, 2).describe()
    assert text.startswith("expected about 16 s with 2 processes on this machine (16 cores; unit costs: 3 from "
                           "their last warm-up here)")

    # The command prints it before it compiles.
    monkeypatch.setattr(warmup, "plan", lambda mode: units)
    monkeypatch.setattr(warmup, "todo", lambda planned, mode: planned)
    monkeypatch.setattr(warmup, "warm", lambda todo, mode, jobs, progress: [])
    assert cli.main(["warmup", "--jobs", "2"]) == cli.EXIT_OK
    assert "warmup: 3 units to compile; expected about 16 s with 2 processes on this machine" in capsys.readouterr().out


def test_warm_reports_each_unit_and_goes_on_after_a_failure():
    units = [warmup.Unit("a", "bogus", "nonsense"), warmup.Unit("b", "the reference", "loaders", ("reference",)),
             warmup.Unit("c", "after b", "loaders", ("metis",), after=("b",))]
    seen = []
    done = warmup.warm(units, "simulator", jobs=2, progress=lambda d, k, n: seen.append((d.unit.name, k, n)))
    by = {d.unit.name: d for d in done}
    assert "unknown unit kind 'nonsense'" in by["a"].error
    assert by["b"].error is None and by["c"].error is None
    assert [s[0] for s in seen].index("b") < [s[0] for s in seen].index("c")
    assert [s[1:] for s in seen] == [(1, 3), (2, 3), (3, 3)]
    with pytest.raises(ValueError, match="jobs=0 is invalid"):
        warmup.warm(units, "simulator", jobs=0)


def test_cli_warmup_refuses_a_bad_job_count(capsys):
    assert cli.main(["warmup", "--jobs", "0"]) == cli.EXIT_USAGE
    assert "--jobs 0 is invalid: give 1 or more processes" in capsys.readouterr().err


# ------------------------------------------------------------------ the kernels compiled ahead

class _Recorder:
    """A launcher that only notes each launch: note(kernel, args)."""

    def __init__(self, note):
        self.note = note

    def __call__(self, kernel, blocks, threads, shared, *args):
        self.note(kernel, args)

    def cluster(self, kernel, cluster_size, blocks, threads, shared, *args):
        self.note(kernel, args)

    cooperative = __call__

    def zero(self, arr):
        pass


def _record_launches(monkeypatch) -> list:
    """(kernel, argument types) of every launch a run prepares or makes under the simulator."""
    from explorer.engine import launcher, runtime

    seen = []

    def note(kernel, args):
        seen.append((kernel, tuple(numba.typeof(a) for a in args)))

    # What the GPU runtime's prepare compiles before the clock starts, then what really launches.
    monkeypatch.setattr(runtime.SimulatorRuntime, "prepare", lambda self, launch, on_compile: launch(_Recorder(note)))
    launch, cluster = launcher.PlainLauncher.__call__, launcher.PlainLauncher.cluster

    def call(self, kernel, blocks, threads, shared, *args):
        note(kernel, args)
        return launch(self, kernel, blocks, threads, shared, *args)

    def call_cluster(self, kernel, cluster_size, blocks, threads, shared, *args):
        note(kernel, args)
        return cluster(self, kernel, cluster_size, blocks, threads, shared, *args)

    monkeypatch.setattr(launcher.PlainLauncher, "__call__", call)
    monkeypatch.setattr(launcher.PlainLauncher, "cluster", call_cluster)
    return seen


def _gpu_techniques():
    return [t for t in implemented_techniques() if implementation(t).runtimes != frozenset({"cpu"})]


def _ahead_graphs():
    """An undirected graph with hubs (BFS-4K's heavy-vertex grid runs) and a directed one (the
    reverse CSR, direction-optimizing's directed grid)."""
    import numpy as np

    rng = np.random.default_rng(7)
    directed = graphs.from_edges(rng.integers(0, 45, 200), rng.integers(0, 45, 200), 45, directed=True)
    return [graphs.generate("kronecker", scale=6, edge_factor=4), directed]


@pytest.mark.skipif(not SIMULATOR, reason="records launches through the simulator's launcher")
@pytest.mark.parametrize("tech", [t.value for t in _gpu_techniques()])
def test_kernels_compiled_ahead_are_those_the_engine_launches(monkeypatch, tech):
    """For every GPU technique, with its defaults (instrumented or not, on a directed and an
    undirected graph) and its test knobs (the first also uninstrumented: on graphs this small a
    technique's defaults may take one of its kernels only): every kernel a run launches (set-up
    included) was declared with the argument types it is launched with, and every kernel declared
    is launched by some run: no helper compiles in vain. The helpers find a kernel by its name:
    the names a run declares are distinct."""
    from explorer import api
    from explorer.engine import launcher
    from explorer.knobs import KnobError
    from kernels import common

    impl = implementation(tech)
    seen = _record_launches(monkeypatch)
    # go.zero: a memset on a GPU, nothing to compile (the simulator launches a kernel for it).
    monkeypatch.setattr(launcher.PlainLauncher, "zero", lambda self, arr: common.zero_int64[1, 32](arr))
    undirected, directed = _ahead_graphs()
    runs = [(knobs, i, g) for knobs in ({},) for i in (True, False) for g in (undirected, directed)]
    runs += [(knobs, True, undirected) for knobs in impl.test_knobs] + [(knobs, False, undirected)
                                                                        for knobs in impl.test_knobs[:1]]
    declared, launched = set(), set()
    for knobs, instrument, g in runs:
        knobs = {**impl.simulator_knobs, **knobs}
        signatures = warmup.signatures(tech, knobs, instrument)
        names = [name for name, _, _ in signatures]
        assert len(set(names)) == len(names), f"{tech} {knobs}: a kernel name declared twice: {names}"
        expected = {kernel: (name, tuple(types)) for name, kernel, types in signatures}
        declared |= {(name, kernel) for kernel, (name, _) in expected.items()}
        del seen[:]
        try:
            api.run_bfs(g, "max-degree", tech, knobs, instrument=instrument).complete()
        except KnobError:
            continue  # these knobs do not fit this graph
        for kernel, types in seen:
            assert kernel in expected, f"{tech} {knobs}: launched {kernel.py_func.__name__}, not declared"
            name, want = expected[kernel]
            assert types == want, f"{tech} {knobs}: {name} launched with {types}, declared {want}"
            launched.add((name, kernel))
    assert declared == launched, f"declared, never launched: {sorted(n for n, _ in declared - launched)}"


@pytest.mark.skipif(not SIMULATOR, reason="records launches through the simulator's launcher")
@pytest.mark.parametrize("knobs", [{}, {"K5": 0, "K2": 5.0}, {"claim": "atomic", "visited": "shared"}])
def test_bfs4k_prepares_every_kernel_in_set_up_so_steps_skip_preparing(monkeypatch, knobs):
    # BFS4KLevels.compiled_ahead: the enactor then prepares no step, so every kernel a step launches
    # must have been prepared (compiled, on a GPU) by the set-up, before any clock started.
    from explorer import api
    from explorer.engine import runtime
    from explorer.techniques.operators.bfs4k.levels import BFS4KLevels
    from kernels import common

    seen = _record_launches(monkeypatch)
    marks = []
    start = BFS4KLevels.__init__

    def init(self, *a, **kw):
        start(self, *a, **kw)
        marks.append(len(seen))  # what set-up prepared (and launched: init_search)

    monkeypatch.setattr(BFS4KLevels, "__init__", init)
    steps = []
    monkeypatch.setattr(runtime.SimulatorRuntime, "prepare", lambda self, launch, on_compile: (
        steps.append(len(marks)), launch(_Recorder(lambda kernel, args: seen.append((kernel, ())))))[1])
    knobs = {**implementation("bfs4k").simulator_knobs, **knobs}
    g = graphs.generate("kronecker", scale=7, edge_factor=8)
    api.run_bfs(g, "max-degree", "bfs4k", knobs).complete()
    before = {k for k, _ in seen[:marks[0]]}
    during = {k for k, _ in seen[marks[0]:]} - {common.zero_int64}
    assert steps and all(n == 0 for n in steps)  # prepared in set-up only
    assert during and during <= before, during - before


@pytest.mark.skipif(SIMULATOR, reason="compiles kernels for a real GPU")
def test_helpers_fill_the_disk_cache_so_the_run_compiles_no_kernel(tmp_path):
    """On a GPU in a fresh cache: helper processes compile BFS-4K's kernels while the graph loads;
    the run then loads every kernel from the disk cache (no cache miss in this process)."""
    script = textwrap.dedent("""
        from explorer import api, backend, graphs, warmup
        backend.select("gpu")
        said = []
        g = warmup.load_for_run(lambda: graphs.sample_graph("bfs4k_fig2"), "bfs4k", {}, True, said.append)
        assert any("helper processes" in m for m in said), said
        from kernels import bfs4k, common
        api.run_bfs(g, 0, "bfs4k", {}).complete()
        k = bfs4k.kernels_for(True, False, bfs4k.HASH64, 1024)
        misses = sum(sum(d._cache_misses.values()) for d in (*k[:4], common.fill_int32, common.set_source))
        print("misses", misses)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                          env=fresh_env(tmp_path), timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "0", done.stdout


@pytest.mark.skipif(SIMULATOR, reason="compiles kernels for a real GPU")
def test_a_small_graphs_bitmap_search_comes_from_its_helper_and_the_grid_search_is_no_wait(tmp_path):
    """On a GPU in a fresh cache: helpers compile both bitmap-direction searches; a small graph's
    run loads the block search from the disk cache (no miss), and the process ends without
    waiting for the grid search, which the slowest helper still compiles."""
    script = textwrap.dedent("""
        import time
        from explorer import api, backend, graphs, warmup
        backend.select("gpu")
        said = []
        g = warmup.load_for_run(lambda: graphs.sample_graph("bfs4k_fig2"), "bitmap-direction", {}, True, said.append)
        api.run_bfs(g, 0, "bitmap-direction", {}, on_status=said.append).complete()
        from explorer.techniques.bitmap_direction import BLOCK_THREADS
        from kernels.bitmap_direction import kernel as kk
        k = kk.block_kernel(True, kk.registers(BLOCK_THREADS.default))  # the build the run launched
        print("\\n".join(said))
        print("misses", sum(k._cache_misses.values()), "hits", sum(k._cache_hits.values()), flush=True)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                          env=fresh_env(tmp_path), timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-4:] == ["misses", "0", "hits", "1"], done.stdout
    assert "compiled in a helper process" in done.stdout, done.stdout


# ------------------------------------------------------------------ a first run's helpers

def test_the_load_waits_for_the_loaders_code_and_the_run_only_for_the_kernels_it_launches(monkeypatch, tmp_path):
    """With helpers compiling the loaders' code, the graph loads once that is in the disk cache; the
    kernels are not waited for then: the run waits for each kernel it compiles that a helper has
    started (not for one it does not launch: bitmap-direction's grid search on a small graph), and
    compiles itself a kernel no helper has started yet."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from explorer.engine import launcher

    order, release = [], threading.Event()
    pool = ThreadPoolExecutor(2)
    first = [pool.submit(lambda: order.append("loaders' code"))]

    def helper(what, marker, gate):
        (tmp_path / marker).touch()
        gate.wait(30)
        order.append(what)

    never = threading.Event()
    chosen = pool.submit(helper, "chosen kernel", "chosen", release)
    other = pool.submit(helper, "other kernel", "other", never)  # a kernel the run does not launch
    queued = pool.submit(lambda: pytest.fail("a kernel no helper started was still compiled ahead"))
    kernels = {("k1", ()): (chosen, str(tmp_path / "chosen")), ("k2", ()): (other, str(tmp_path / "other")),
               ("k3", ()): (queued, str(tmp_path / "queued"))}
    ahead = warmup.Ahead("bfs4k", pool, 2, kernels, first)
    monkeypatch.setattr(warmup, "compile_ahead", lambda *a, **k: ahead)
    monkeypatch.setattr(launcher, "IN_HELPERS", {})

    def load():
        order.append("load")
        return "graph"

    assert warmup.load_for_run(load, "bfs4k", {}, True, gpu=True) == "graph"
    assert order == ["loaders' code", "load"] and not chosen.done()  # no kernel waited for before the run
    assert set(launcher.IN_HELPERS) == set(kernels)
    assert launcher.IN_HELPERS.pop(("k3", ()))() is None and queued.cancelled()  # the run compiles it
    threading.Timer(0.2, release.set).start()
    waited = launcher.IN_HELPERS.pop(("k1", ()))()
    assert order[-1] == "chosen kernel" and waited > 0.1 and not other.done()
    assert "the graph loaders and the bfs4k kernels compile meanwhile in 2 helper processes" == ahead.describe()
    assert ahead.stop(ending=False)  # still compiling the other kernel
    never.set()
    pool.shutdown(wait=True)
    assert not ahead.stop(ending=False)


def test_an_ending_process_ends_its_idle_helpers_too(tmp_path):
    """At exit every helper is ended, not only busy ones: an idle one left to exit by itself makes
    the process wait for its CUDA context's and interpreter's teardown."""
    from concurrent.futures import Future

    class Helper:
        def __init__(self):
            self.ended = False

        def is_alive(self):
            return not self.ended

        def terminate(self):
            self.ended = True

    class Pool:
        def shutdown(self, wait=True, cancel_futures=False):
            pass

    done = Future()
    done.set_result(None)
    markers = tmp_path / "markers"
    markers.mkdir()
    ahead = warmup.Ahead("bfs4k", Pool(), 2, {("k", ()): (done, str(markers / "k"))}, [], markers=str(markers),
                         processes=[Helper(), Helper()])
    assert not ahead.stop(ending=False) and not any(h.ended for h in ahead.processes)  # the run goes on
    assert not ahead.stop(ending=True)
    assert all(h.ended for h in ahead.processes) and not markers.exists()


def test_compile_overload_waits_for_the_helper_then_loads(monkeypatch):
    """The launcher's compile_overload asks for the variant a helper compiles and says so."""
    from explorer.engine import launcher

    class Kernel:
        __name__ = "k"

        class stats:
            cache_hits = {"sig": 0}

        def compile(self, argtypes):
            self.stats.cache_hits = {"sig": 1}

    k = Kernel()
    monkeypatch.setattr(launcher, "IN_HELPERS", {(k, ("t",)): lambda: 1.5})
    said = []
    launcher.compile_overload(k, ("t",), lambda name, outcome=None: said.append((name, outcome)))
    assert said[-1][1].startswith("compiled in a helper process (waited 1.50 s for it), loaded from the disk cache in")
    assert launcher.IN_HELPERS == {}


#: A process whose helper compiles a kernel its run never launched: it must end with its run.
EXITS_WITH_A_HELPER_BUSY = textwrap.dedent("""
    import multiprocessing, sys, time
    from concurrent.futures import ProcessPoolExecutor
    from explorer import warmup
    if __name__ == "__main__":
        pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        busy = pool.submit(time.sleep, 120)
        while not busy.running():
            time.sleep(0.05)
        time.sleep(1.0)  # the worker has taken it
        ahead = warmup.Ahead("bfs4k", pool, 1, {("k", ()): (busy, sys.argv[1])}, [])
        ahead.hand_over()
        print("run done", flush=True)
""")


def test_a_run_ends_without_waiting_for_kernels_it_did_not_launch(tmp_path):
    """Helpers still compiling at exit (a kernel the graph did not choose) are ended with the
    process: the CLI's result is not held back by them."""
    import time

    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", EXITS_WITH_A_HELPER_BUSY, str(tmp_path / "m")], capture_output=True,
                          text=True, cwd=ROOT, env=fresh_env(tmp_path), timeout=100)
    assert done.returncode == 0 and "run done" in done.stdout, done.stderr
    assert time.perf_counter() - start < 60


def test_the_loaders_code_goes_to_helpers_only_with_a_core_for_each(monkeypatch):
    monkeypatch.setattr(warmup, "first_run_units", lambda: [warmup.Unit("f", "f", "functions")])
    monkeypatch.setattr(warmup, "_pool", lambda jobs, mode: pytest.fail("helpers started"))
    monkeypatch.setenv(warmup.HELPERS_ENV, str(len(warmup.FIRST_RUN_FUNCTIONS)))
    assert warmup.compile_ahead("cpu-topdown", {}, True, gpu=False) is None  # one core short: loads itself
    started = []
    monkeypatch.setattr(warmup, "_pool", lambda jobs, mode: started.append((jobs, mode)) or _NoPool())
    monkeypatch.setenv(warmup.HELPERS_ENV, str(len(warmup.FIRST_RUN_FUNCTIONS) + 1))
    ahead = warmup.compile_ahead("cpu-topdown", {}, True, gpu=False)
    assert started == [(1, "cpu")] and len(ahead.first) == 1 and ahead.kernels == {}


def test_a_techniques_own_cpu_code_goes_to_helpers_with_a_core_for_each(monkeypatch):
    """bitmap-direction's graph preparation compiles in helpers beside the loaders' code (a unit a
    group), not waited for by the load, once there is a core for every unit."""
    own = implementation("bitmap-direction").first_run_functions
    monkeypatch.setattr(warmup, "_in_disk_cache", lambda *a: False)
    monkeypatch.setattr(warmup, "_pool", lambda jobs, mode: _NoPool())
    monkeypatch.setenv(warmup.HELPERS_ENV, str(len(warmup.FIRST_RUN_FUNCTIONS) + len(own)))
    assert warmup.compile_ahead("bitmap-direction", {}, True, gpu=False).later == []  # one core short
    monkeypatch.setenv(warmup.HELPERS_ENV, str(len(warmup.FIRST_RUN_FUNCTIONS) + len(own) + 1))
    ahead = warmup.compile_ahead("bitmap-direction", {}, True, gpu=False)
    assert len(ahead.later) == len(own) and len(ahead.first) == len(warmup.FIRST_RUN_FUNCTIONS)


class _NoPool:
    def submit(self, fn, *args):
        from concurrent.futures import Future

        f = Future()
        f.set_result(None)
        return f


@pytest.mark.slow
def test_a_techniques_first_run_functions_are_what_its_graph_preparation_compiles(tmp_path):
    """bitmap-direction's graph preparation (orders none and degree) compiles nothing of its own in
    a fresh cache once its first_run_functions are compiled, as helpers would (about 30 s here)."""
    script = textwrap.dedent("""
        import json
        from numba.core import event
        import numpy as np
        from explorer import warmup
        from explorer.graphs.prepare import prepare
        from explorer.techniques import implementation
        class Graph:  # a CSR built here: the loaders' code would compile too
            name, directed, num_vertices = "g", False, 4
            offsets = np.array([0, 3, 4, 5, 6], np.int64)
            indices = np.array([1, 2, 3, 0, 0, 0], np.int32)
        g = Graph()
        for group in implementation("bitmap-direction").first_run_functions:
            warmup._compile_functions(*group)
        compiled = []
        class Listener(event.Listener):
            def on_start(self, ev):
                f = ev.data["dispatcher"].py_func
                if f.__module__ == "explorer.graphs.prepare":
                    compiled.append(f.__qualname__)
            def on_end(self, ev):
                pass
        event.register("numba:compile", Listener())
        for order in ("none", "degree"):
            prepare(g, order)
        print(json.dumps(compiled))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                          env=fresh_env(tmp_path), timeout=900)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_first_run_functions_are_what_a_first_load_and_check_compile(tmp_path):
    """In a fresh cache, with FIRST_RUN_FUNCTIONS compiled as helpers would, loading a SNAP file
    and checking a BFS of it compile none of the loaders' or the reference's code."""
    script = textwrap.dedent("""
        import json
        from numba.core import event
        from explorer import graphs, warmup
        for group in warmup.FIRST_RUN_FUNCTIONS:
            warmup._compile_functions(*group)
        compiled = []
        class Listener(event.Listener):
            def on_start(self, ev):
                f = ev.data["dispatcher"].py_func
                if f.__module__.startswith(("explorer.graphs", "explorer.reference")):
                    compiled.append(f"{f.__module__}.{f.__qualname__}")
            def on_end(self, ev):
                pass
        event.register("numba:compile", Listener())
        from explorer.reference import assert_valid_bfs, cpu_bfs
        g = graphs.sample_graph("facebook_combined")
        dist, parent = cpu_bfs(g, 0)
        assert_valid_bfs(g, 0, dist, parent)
        print(json.dumps(compiled))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT,
                          env=fresh_env(tmp_path), timeout=900)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
