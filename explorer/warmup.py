"""Compile once, before class: what compiles, when, and how to do it ahead of time.

Numba compiles each function the first time a process calls it with new argument types, and keeps
the result in its disk cache (`cache=True`: `__pycache__` beside the sources, or
`$NUMBA_CACHE_DIR`), so only the first process of an environment pays:

- the graph loaders (explorer/graphs: tokenizer, CSR builder, generators) and the CPU reference
  and validator (explorer/reference), CPU code: about 11 s on an H100 host for a first SNAP file,
  compiled in one process;
- each technique's kernels, compiled for the GPU at hand per combination of the knobs fixed at
  compile time (BFS-4K: instrumentation, claim, duplicate filter, single block size, visited
  flags, cluster): BFS-4K's single-block kernel, the largest, about 11 s on an H100 host. The
  simulator runs kernels as Python: they never compile there. CPU techniques are Numba CPU code
  and compile anywhere.

`plan(mode)` lists the units to compile: the loaders (each file format, the generators, the
reference, the graph cache's checksum), on a GPU each distinct kernel variant of every GPU
technique's defaults with and without instrumentation (one unit each), and runs on the warm-up
graphs of what needs a graph (the CPU techniques, the presets chosen per graph). `todo` drops the
units whose code is all in the disk cache already (explorer.warmup_ledger), `expected` says how
long the rest will take here, and `warm(units, mode)` compiles them in parallel processes, the
longest chains first, reporting each unit to a progress callback (`python3 -m explorer warmup`
draws it as a bar).

Numba's compiler lock lets one thread of a process compile at a time, so "in parallel" means
processes that share the disk cache. Numba keeps one index file per function and rewrites it on
every save; two processes saving different variants of one function at once could pair one's
index entry with the other's code, so the processes started here serialise their saves with a
file lock (`_serialise_cache_saves`). A first run uses the same: `load_for_run` compiles the
kernels the run may launch in helper processes (one kernel each, the slowest first) while this
process loads the graph; the run waits for each kernel it launches as it comes to it and loads it
from the disk cache (a kernel the graph did not choose is no wait); with a core for each, helpers
compile the loaders' and the check's CPU code too (FIRST_RUN_FUNCTIONS), and the load waits for
it. That needs each kernel's argument types before the graph exists: a technique declares them
(`BFSTechnique.kernel_signatures`, read off the kernels' argument groups, kernels.args), and
`operators.frontier.setup_signatures` those of the set-up kernels every GPU technique uses; a
technique that declares none compiles in the run, before its clock starts.
"""
from __future__ import annotations

import contextlib
import functools
import os
import tempfile
import time
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable

from .warmup_loaders import _LOADERS

#: Where compile notices come from (module prefix) and what they are called.
COMPILE_GROUPS = (
    ("explorer.graphs", "the graph loaders"),
    ("explorer.reference", "the CPU reference BFS and validator"),
    ("explorer.techniques", "the CPU techniques"),
)
ONCE = "once per environment: later runs load them from Numba's disk cache"

#: Graphs the technique variants run on in a warmup: the Explorer's samples, whose directed and
#: undirected, long and wide searches take each technique's paths, and a Kronecker graph whose
#: hubs and big frontiers take the rest.
WARMUP_GRAPHS = ("samples", "gen:kronecker:scale=14")

#: $BFS4K_COMPILE_HELPERS: 0 turns the helper processes of a first run off, N allows at most N.
HELPERS_ENV = "BFS4K_COMPILE_HELPERS"


# ============================================================================================
# Saying what compiles

@contextlib.contextmanager
def compile_notices(on_status: Callable[[str], None] | None, suffix: str = "",
                    groups: Iterable[tuple[str, str]] | None = None):
    """While the block runs, say once per group (default `COMPILE_GROUPS`) when Numba starts
    compiling a function of it (CPU code: the loaders, the reference, CPU techniques), e.g.
    "compiling the graph loaders (Numba, once per environment: ...)". Numba's compile event is
    the hook, so the loaders need no status argument. Yields the set of groups announced."""
    said: set[str] = set()
    if on_status is None:
        yield said
        return
    from numba.core import event

    groups = tuple(COMPILE_GROUPS if groups is None else groups)

    class _Listener(event.Listener):
        def on_start(self, ev):
            func = getattr(ev.data.get("dispatcher"), "py_func", None)
            module = getattr(func, "__module__", None) or ""
            for prefix, what in groups:
                if module.startswith(prefix) and what not in said:
                    said.add(what)
                    on_status(f"compiling {what} (Numba, {ONCE}){suffix}")

        def on_end(self, ev):
            pass

    with event.install_listener("numba:compile", _Listener()):
        yield said


# ============================================================================================
# Units: what to compile

@dataclass(frozen=True)
class Unit:
    """One piece of compiling, run in one process. `kind` and `args` say what (picklable),
    `after` names units that must finish first (their results come from the disk cache)."""

    name: str
    label: str
    kind: str  # "loaders" | "kernel" | "technique"
    args: tuple = ()
    after: tuple[str, ...] = ()


@dataclass
class Done:
    unit: Unit
    seconds: float
    error: str | None = None
    #: What a unit other than a kernel used from Numba's disk cache (warmup_ledger.entries_since).
    entries: list | None = None


def signatures(technique: str, knobs: dict, instrument: bool) -> list:
    """(name, kernel, argument types) of the kernels a GPU run of `technique` with these knobs
    launches, known before the graph is: the technique's own (slowest first), then the set-up
    kernels every GPU technique launches."""
    from .techniques import implementation, make_knobs
    from .techniques.operators.frontier import setup_signatures

    impl = implementation(technique)
    return impl.kernel_signatures(make_knobs(technique, knobs), bool(instrument)) + setup_signatures()


def _variant_key(kernel, argtypes) -> tuple:
    """What makes two compiles the same: the function, its closure (the static knobs), the types."""
    func = kernel.py_func
    cells = tuple(c.cell_contents for c in func.__closure__ or ())
    return (func.__module__, func.__qualname__, cells, tuple(map(str, argtypes)))


def _variant_text(kernel) -> str:
    """The kernel's name and its static knobs, the same in every process (a device function in the
    closure by its name)."""
    func = kernel.py_func

    def text(value):
        inner = getattr(value, "py_func", value)
        return getattr(inner, "__name__", None) if callable(inner) else value

    cells = [f"{n}={text(c.cell_contents)}" for n, c in zip(func.__code__.co_freevars, func.__closure__ or ())]
    return f"{func.__name__} [{', '.join(cells)}]" if cells else func.__name__


def kernel_units(technique: str, knobs: dict, instrument: bool, seen: dict | None = None) -> list[Unit]:
    """One unit per kernel `signatures` knows for this run (the set-up kernels included); a
    variant already in `seen` (variant -> unit) is that unit again, not a new one."""
    seen = {} if seen is None else seen
    units = []
    for name, kernel, args in signatures(technique, knobs, instrument):
        key = _variant_key(kernel, args)
        if key not in seen:
            seen[key] = Unit(f"kernel:{len(seen) + 1}:{name}", f"kernel {_variant_text(kernel)}", "kernel",
                             (technique, dict(knobs), bool(instrument), name))
        units.append(seen[key])
    return units


def knob_presets(technique) -> list[tuple[dict, str | None]]:
    """(knobs, preset) a technique is run with: its defaults, its simulator_knobs, and its presets
    chosen per graph (`BFSTechnique.presets`: BFS-4K's §7 advice)."""
    from .techniques import implementation

    impl = implementation(technique)
    out: list[tuple[dict, str | None]] = [({}, None)]
    if impl.simulator_knobs:
        out.append((dict(impl.simulator_knobs), None))
    out.extend(({}, name) for name in impl.presets)
    return out


LOADER_STEPS = ("snap", "matrix-market", "metis", "generators", "reference", "graph-cache")
_LOADER_LABELS = {"snap": "graph loaders: SNAP edge lists", "matrix-market": "graph loaders: Matrix Market",
                  "metis": "graph loaders: METIS", "generators": "graph generators",
                  "reference": "CPU reference BFS and validator", "graph-cache": "graph cache checksums"}


def plan(mode: str) -> list[Unit]:
    """Everything `warm` compiles on this machine: `mode` "gpu" (loaders, CPU techniques and every
    GPU kernel variant), "simulator" or "cpu" (loaders and CPU techniques: the simulator runs kernels
    as Python, and without a GPU there is nothing to compile them for).

    On a GPU each distinct kernel variant is one unit: those of every GPU technique's defaults and
    of the settings technique "auto" may choose, instrumented or not (the simulator's knobs only ever run under the simulator, which compiles
    no kernel). What needs a graph runs on the warm-up graphs once the loaders are ready: the CPU
    techniques, the presets chosen per graph (after the technique's kernels: they load them), and
    a GPU technique that declares no kernels. Ordered by `warmup_ledger.by_priority` when warmed."""
    from .auto.candidates import CANDIDATES
    from .techniques import implementation, implemented_techniques

    if mode not in ("gpu", "simulator", "cpu"):
        raise ValueError(f"warmup mode {mode!r} is invalid: use 'gpu', 'simulator' or 'cpu'")
    # The SNAP step compiles the builder every loader shares; the others then load it.
    loaders = [Unit("loaders:snap", _LOADER_LABELS["snap"], "loaders", ("snap",))]
    loaders += [Unit(f"loaders:{s}", _LOADER_LABELS[s], "loaders", (s,), after=("loaders:snap",))
                for s in LOADER_STEPS[1:]]
    graph_ready = ("loaders:snap", "loaders:matrix-market", "loaders:generators")
    kernels, runs, seen = [], [], {}

    def run(tech, knobs, instrument, preset, after=()):
        what = preset or ", ".join(f"{k}={v}" for k, v in knobs.items()) or "defaults"
        runs.append(Unit(f"run:{len(runs)}:{tech.value}",
                         f"{tech.value} ({what}; instrument {'on' if instrument else 'off'})", "technique",
                         (tech.value, knobs, instrument, preset), after=graph_ready + tuple(after)))

    for tech in implemented_techniques():
        impl = implementation(tech)
        if impl.runtimes == frozenset({"cpu"}):
            for knobs, preset in knob_presets(tech):
                for instrument in (True, False):
                    run(tech, knobs, instrument, preset)
            continue
        if mode != "gpu":
            continue
        mine = []
        # its defaults', then the variants technique "auto" may choose (explorer.auto.candidates)
        settings = [{}] + [dict(c.knobs) for c in CANDIDATES if c.technique == tech.value and c.knobs]
        for instrument in (True, False):
            if impl.kernel_signatures(impl.Knobs(), instrument):
                for knobs in settings:
                    mine += [u for u in kernel_units(tech.value, knobs, instrument, seen) if u not in mine]
            else:  # its kernels' types are known once a graph is: its runs compile them
                run(tech, {}, instrument, None)
        kernels += [u for u in mine if u not in kernels]
        for preset in impl.presets:
            for instrument in (True, False):
                run(tech, {}, instrument, preset, after=[u.name for u in mine])
    return loaders[:1] + kernels + loaders[1:] + runs


# ============================================================================================
# Running units (in this process or in a worker)

def _serialise_cache_saves() -> None:
    """Make Numba's cache saves (index, then data) atomic between the processes started here."""
    try:
        import fcntl
    except ImportError:  # not POSIX: Numba's own saves, as in any two processes
        return
    import numba.core.caching as cpu_caching

    classes = [cpu_caching.IndexDataCacheFile]
    try:
        import numba.cuda.core.caching as cuda_caching

        classes.append(cuda_caching.IndexDataCacheFile)
    except ImportError:  # the simulator has no CUDA cache
        pass
    uid = os.getuid() if hasattr(os, "getuid") else 0
    lock_path = Path(tempfile.gettempdir()) / f"bfs4k-numba-cache-{uid}.lock"
    for cls in classes:
        if getattr(cls.save, "_bfs4k_serialised", False):
            continue
        original = cls.save

        def save(self, key, data, _original=original):
            with open(lock_path, "a") as f:
                fcntl.flock(f, fcntl.LOCK_EX)
                try:
                    _original(self, key, data)
                finally:
                    fcntl.flock(f, fcntl.LOCK_UN)

        save._bfs4k_serialised = True
        cls.save = save


def _init_worker(mode: str) -> None:
    from . import backend

    if mode in ("gpu", "simulator"):
        backend.select(mode)
    _serialise_cache_saves()


def run_unit(unit: Unit) -> Done:
    """Compile one unit here; an error is reported, not raised (the other units go on)."""
    from . import warmup_ledger

    # What the unit uses is noted for the ledger (a kernel unit is checked by its variant).
    before = warmup_ledger.overloads_now() if unit.kind != "kernel" else None
    start = time.perf_counter()
    try:
        if unit.kind == "loaders":
            from ._twoform import parallel_forms

            _LOADERS[unit.args[0]]()  # small inputs: the serial forms
            with parallel_forms():  # and the forms large graphs take
                _LOADERS[unit.args[0]]()
        elif unit.kind == "kernel":
            _compile_kernel(*unit.args)
        elif unit.kind == "technique":
            _run_technique(*unit.args)
        elif unit.kind == "functions":
            _compile_functions(*unit.args)
        else:
            raise ValueError(f"unknown unit kind {unit.kind!r}")
    except Exception as err:  # reported with the unit; the warmup goes on with the others
        where = traceback.extract_tb(err.__traceback__)[-1]
        return Done(unit, time.perf_counter() - start,
                    f"{type(err).__name__}: {err} ({Path(where.filename).name}:{where.lineno})")
    seconds = time.perf_counter() - start
    return Done(unit, seconds, entries=None if before is None else warmup_ledger.entries_since(before))


def _compile_kernel(technique: str, knobs: dict, instrument: bool, name: str) -> None:
    kernel, args = _kernel_named(technique, knobs, instrument, name)
    kernel.compile(tuple(args))  # compiles, or loads from the disk cache


def _kernel_named(technique: str, knobs: dict, instrument: bool, name: str):
    for n, kernel, args in signatures(technique, knobs, instrument):
        if n == name:
            return kernel, args
    raise LookupError(f"{technique} has no kernel {name!r} with {knobs}")


_GRAPHS: list = []  # this process's warmup graphs, loaded once


def warmup_graphs() -> list:
    from . import graphs

    if not _GRAPHS:
        for spec in WARMUP_GRAPHS:
            if spec == "samples":
                _GRAPHS.extend(graphs.sample_graph(name) for name in graphs.SAMPLE_GRAPHS)
            else:
                kind, _, params = spec[4:].partition(":")
                kw = dict(p.split("=") for p in params.split(",") if p)
                _GRAPHS.append(graphs.generate(kind, **{k: int(v) for k, v in kw.items()}))
    return _GRAPHS


def _run_technique(technique: str, knobs: dict, instrument: bool, preset: str | None) -> None:
    """Run the technique on every warmup graph it can run on: what it launches compiles."""
    from . import api, backend
    from .knobs import KnobError
    from .techniques import implementation, make_knobs

    impl = implementation(technique)
    failed = []
    # A CPU technique's steps compile for the arrays' types, the same for every graph: the smallest
    # graph compiles them all (each further graph only cost time, oversubscribed beside the other
    # processes' threads).
    cpu_only = impl.runtimes == frozenset({"cpu"})
    for g in sorted(warmup_graphs(), key=lambda g: g.num_arcs)[:1] if cpu_only else warmup_graphs():
        k = make_knobs(technique, knobs)
        if preset is not None:
            k = impl.presets[preset](g, k)
        try:
            api.run_bfs(g, "max-degree", impl.technique, k, instrument=instrument).complete()
        except (KnobError, backend.BackendError):
            continue  # this graph is too big for these knobs or this backend: the others compile it
        except Exception as err:  # the other graphs still compile what they take
            failed.append(f"{g.name}: {type(err).__name__}: {err}")
    if failed:
        raise RuntimeError(f"{len(failed)} of {len(warmup_graphs())} graphs failed; first {failed[0]}")


# ============================================================================================
# Running many units: a pool of processes

def default_jobs(units: int) -> int:
    return max(1, min(units, os.cpu_count() or 1))


def _pool(jobs: int, mode: str):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    # spawn, not fork: a forked CUDA context is unusable, and the workers need their own backend.
    return ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_init_worker, initargs=(mode,))


def warm(units: list[Unit], mode: str, jobs: int | None = None,
         progress: Callable[[Done, int, int], None] | None = None) -> list[Done]:
    """Compile `units` (from `plan`, or what `todo` leaves of it: a unit waits only for units
    among these) with `jobs` processes (1: in this one), the longest chains of costs first,
    calling progress(done, finished_count, total) as each finishes. Returns every unit's Done,
    and keeps what they used and cost in the ledger (explorer.warmup_ledger)."""
    from . import warmup_ledger

    jobs = default_jobs(len(units)) if jobs is None else jobs
    if jobs < 1:
        raise ValueError(f"jobs={jobs} is invalid: use 1 or more processes")
    names = {u.name for u in units}
    units = [replace(u, after=tuple(a for a in u.after if a in names)) for u in units]
    units = warmup_ledger.by_priority(units, warmup_ledger.unit_costs(units, warmup_ledger.load())[0])
    results = _warm(units, mode, jobs, progress or (lambda done, k, n: None))
    warmup_ledger.save(results, jobs)
    return results


def _warm(units: list[Unit], mode: str, jobs: int, report) -> list[Done]:
    results: list[Done] = []
    if jobs == 1:
        _init_worker(mode)
        for unit in units:
            results.append(run_unit(unit))
            report(results[-1], len(results), len(units))
        return results
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    pending, running, finished = list(units), {}, set()
    with _pool(jobs, mode) as pool:
        while pending or running:
            for unit in [u for u in pending if finished.issuperset(u.after)]:
                if len(running) >= jobs:
                    break  # submit as workers free up, so that priorities hold
                running[pool.submit(run_unit, unit)] = unit
                pending.remove(unit)
            if not running:  # only units waiting for units that do not exist
                raise ValueError(f"units wait for unknown units: {sorted(set().union(*(u.after for u in pending)))}")
            ready, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in ready:
                unit = running.pop(fut)
                try:
                    done = fut.result()
                except BrokenProcessPool as err:
                    done = Done(unit, 0.0, f"its worker process died ({err})")
                finished.add(unit.name)  # after a failure, what waited on it compiles it itself
                results.append(done)
                report(done, len(results), len(units))
    return results


# ============================================================================================
# What is left to compile, and how long it will take here

def todo(units: list[Unit], mode: str) -> list[Unit]:
    """The units whose compiled code is not all in Numba's disk cache yet (explorer.warmup_ledger):
    what a warm-up still has to run. A kernel unit is checked by its variant, any other by what
    it used when it last ran."""
    from . import backend, warmup_ledger

    if mode == "gpu" and any(u.kind == "kernel" for u in units):
        backend.select("gpu")  # a kernel variant's cache key names the GPU's compute capability
    ready = warmup_ledger.units_ready(units, warmup_ledger.load(), _kernel_of)
    return [u for u in units if u.name not in ready]


@dataclass
class Expected:
    """How long `warm` should take: `seconds` with `jobs` processes, from costs measured here
    (`here` units), shipped (`shipped`, measured on `measured_on`) or the median of their kind."""

    seconds: float
    jobs: int
    cores: int
    here: int
    shipped: int
    by_kind: int
    measured_on: str

    def describe(self) -> str:
        parts = []
        if self.here:
            parts.append(f"{self.here} from their last warm-up here")
        if self.shipped:
            parts.append(f"{self.shipped} from compile times measured on {self.measured_on}")
        if self.by_kind:
            parts.append(f"{self.by_kind} estimated from units of their kind")
        return (f"expected about {self.seconds:.0f} s with {self.jobs} processes on this machine "
                f"({self.cores} cores; unit costs: {'; '.join(parts)})")


def expected(units: list[Unit], jobs: int) -> Expected:
    """The expected duration of warm(units, jobs=jobs) on this machine: each unit's cost (seconds
    it took here last, else the shipped table's, else its kind's median) scheduled over `jobs`
    processes as `warm` takes them (warmup_ledger.schedule)."""
    from . import warmup_ledger

    names = {u.name for u in units}
    units = [replace(u, after=tuple(a for a in u.after if a in names)) for u in units]
    costs, sources = warmup_ledger.unit_costs(units, warmup_ledger.load())
    ordered = warmup_ledger.by_priority(units, costs)
    return Expected(warmup_ledger.schedule(ordered, costs, jobs), jobs, os.cpu_count() or 1, sources["here"],
                    sources["shipped"], sources["kind"], warmup_ledger.shipped_costs()["measured_on"])


# ============================================================================================
# A first run: the kernels compile in helper processes while this one loads the graph

def _in_disk_cache(kernel, argtypes) -> bool:
    from .warmup_ledger import in_disk_cache

    return in_disk_cache(kernel, argtypes)


def helper_count(units: int, kernels: bool = True) -> int:
    """Processes for a first run's compiling: $BFS4K_COMPILE_HELPERS (0 turns them off), else one a
    unit, up to half the cores where GPU kernels compile, or while a core is left for this process
    where only CPU code does (a CPU technique's). Kernels compiling side by side slow each other
    down: on a 16-core H100 host, a first run's result came after 14.1-15.4 s with 14-15 helpers,
    10.3-12.2 s with 8 and 13.0-15.2 s with 5 (benchmarks/results/NVIDIA_H100_80GB_HBM3/
    cold_start-helpers-*)."""
    raw = os.environ.get(HELPERS_ENV, "").strip()
    if raw:
        try:
            cap = int(raw)
        except ValueError:
            raise ValueError(f"{HELPERS_ENV}={raw!r} is invalid: give a number of processes (0: none)") from None
        return max(0, min(units, cap))
    cores = os.cpu_count() or 1
    return max(0, min(units, cores // 2 if kernels else cores - 1))


#: The CPU functions a first run of a SNAP file compiles before its first level (the graph cache's
#: checksum, the tokenizer, the CSR builder and checks) and for its result's check (the reference
#: BFS and validator), with their argument types: with a core for each, helper processes compile
#: them beside the run's kernels, a unit each (a function's callees with it), so that the graph
#: loads from the disk cache. tests/test_warmup.py checks that a first load compiles these. The
#: loaders' serial forms (explorer._twoform): a first run's graph is most often small.
_A = "Array({}, 1, 'C', False, aligned=True)"
_TEXT = "Array(uint8, 1, 'C', True, aligned=True)"
_V64, _V32 = _A.format("int64"), _A.format("int32")
FIRST_RUN_FUNCTIONS = (
    (("explorer.graphs.cache", "_mix_sum.serial", f"({_A.format('uint64')}, int64, uint64)"),),
    (("explorer.graphs.text", "_tokenize", f"({_TEXT}, int64, int64, bool, int64)"),),
    (("explorer.graphs.build", "_mark_and_rank.serial", f"({_V64}, {_V64}, int64)"),),
    (("explorer.graphs.build", "_bucket_counts.serial", f"({_V32}, {_V32}, int64, int64, bool, bool, int64)"),),
    (("explorer.graphs.build", "_bucket_scatter.serial", f"({_V32}, {_V32}, int64, Array(int64, 2, 'C', False, aligned=True), "
                                                   f"{_V64}, bool, bool, int64, none, none)"),),
    (("explorer.graphs.build", "_bucket_rows.serial", f"({_V64}, {_V64}, int64, bool, int64, {_V32}, {_V64}, {_V64}, none, none)"),),
    (("explorer.graphs.csr", "_decreases.serial", f"({_V64},)"), ("explorer.graphs.csr", "_id_range.serial", f"({_V32},)")),
    (("explorer.reference.bfs", "_self_loops_per_vertex", f"({_V64}, {_V32})"),
     ("explorer.reference.bfs", "_count_reached_arcs.serial", f"({_V64}, {_V32}, {_V32})"),
     ("explorer.reference.bfs", "_bfs_kernel", f"({_V64}, {_V32}, int64)"),
     ("explorer.reference.bfs", "_distances_kernel.serial", f"({_V64}, {_V32}, int64, bool)"),
     ("explorer.reference.validate", "_vertex_on_cycle", f"({_V32}, int64)"),
     ("explorer.reference.validate", "_first_parent_without_arc.serial", f"({_V64}, {_V32}, {_V32}, int64, bool)"),
     ("explorer.reference.validate", "_first_bad_arc.serial", f"({_V64}, {_V32}, {_V32}, bool)"),
     ("explorer.reference.validate", "_levels_agree.serial", f"({_V32}, {_V32}, {_V32}, int64)")),
)


def function_signature(module: str, name: str, types: str) -> tuple:
    """(dispatcher, argument types) of a FIRST_RUN_FUNCTIONS entry."""
    import importlib

    from numba.core import types as nt

    return (functools.reduce(getattr, name.split("."), importlib.import_module(module)),
            eval(types, {**vars(nt), "bool": nt.boolean}))


def _compile_functions(*entries) -> None:
    for entry in entries:
        function, args = function_signature(*entry)
        function.compile(args)  # compiles, or loads from the disk cache


def first_run_units(groups=FIRST_RUN_FUNCTIONS) -> list[Unit]:
    """The functions of `groups` (FIRST_RUN_FUNCTIONS' form) not in the disk cache yet, a unit each group."""
    return [Unit(f"functions:{group[0][1]}", f"CPU code {', '.join(e[1] for e in group)}", "functions", group)
            for group in groups if not all(_in_disk_cache(*function_signature(*e)) for e in group)]


_RUNNING: list = []  # the Ahead objects whose helpers may still be compiling at exit


@dataclass
class Ahead:
    """Code compiling in helper processes: the graph loaders' (`first`: wait before loading) and
    the run's kernels (`kernels`: (kernel, argument types) -> (future, the file its helper creates
    as it starts it)). A run waits only for the kernels it launches, as it comes to each (the
    launcher's `compile_overload`): of the kernels the graph chooses among, the others go on
    compiling into the disk cache while this process lives."""

    technique: str
    pool: object
    jobs: int
    kernels: dict
    first: list
    markers: str = ""  # the folder of the files helpers create as they start a kernel
    later: list = field(default_factory=list)  # the technique's own CPU code (its run compiles what is not ready)
    processes: list = field(default_factory=list)

    def describe(self) -> str:
        what = "the graph loaders and " if self.first else ""
        return f"{what}the {self.technique} kernels compile meanwhile in {self.jobs} helper processes"

    def wait_first(self) -> None:
        for fut in self.first:
            try:
                fut.result()
            except Exception:  # a helper died: the load compiles what it did not
                pass

    def hand_over(self) -> None:
        """The kernels to the run: it waits for each it launches (the launcher's `compile_overload`)."""
        from .engine.launcher import IN_HELPERS

        IN_HELPERS.update({variant: functools.partial(await_helper, *e) for variant, e in self.kernels.items()})
        # Its processes, which shutdown forgets (the submitted units still run).
        self.processes = list((getattr(self.pool, "_processes", None) or {}).values())
        self.pool.shutdown(wait=False)
        if not _RUNNING:
            import threading

            # Before concurrent.futures joins its workers at exit (registered earlier, run later).
            threading._register_atexit(_stop_helpers)
        _RUNNING[:] = [a for a in _RUNNING if a.stop(ending=False)] + [self]

    def stop(self, ending: bool = True) -> bool:
        """Whether a kernel is still compiling (one the run did not launch). If the process is
        `ending`, end the helpers, busy or idle (what they write is whole or nothing: Numba writes
        a file, then renames it): an idle helper left to exit by itself tears down its CUDA context
        and its interpreter, and the pool joins them one by one, 1.4 s after a first run's result
        on an H100 host. The markers go once nothing compiles."""
        import shutil

        busy = not all(f.done() for f in [f for f, _ in self.kernels.values()] + self.later)
        if ending:
            self.pool.shutdown(wait=False, cancel_futures=True)
            for proc in self.processes:
                if proc.is_alive():
                    proc.terminate()
        if (ending or not busy) and self.markers:
            shutil.rmtree(self.markers, ignore_errors=True)
        return busy


def _stop_helpers() -> None:
    for ahead in _RUNNING:
        ahead.stop()


def await_helper(fut, marker: str) -> float | None:
    """Wait for a kernel a helper process compiles (`fut`) if the helper has started it (`marker`
    exists): the seconds waited, once it is in the disk cache. None if no helper has started it
    (queued behind other units: compiling it here is sooner; it is cancelled, or the helper loads
    it from the disk cache, or compiles it too) or the helper failed: this process compiles it."""
    if not os.path.exists(marker):
        fut.cancel()
        return None
    start = time.perf_counter()
    try:
        fut.result()
    except Exception:  # a helper died: this process compiles it
        return None
    return time.perf_counter() - start


def _run_marked(unit: Unit, marker: str) -> Done:
    """run_unit, first creating `marker`: the run waits for a kernel a helper has started."""
    Path(marker).touch()
    return run_unit(unit)


def compile_ahead(technique, knobs=None, instrument: bool = True, gpu: bool | None = None,
                  on_status: Callable[[str], None] | None = None) -> Ahead | None:
    """Start helper processes compiling what a run of `technique` with `knobs` needs and the disk
    cache lacks: the kernels it may launch (on a GPU, those the technique declares:
    `BFSTechnique.kernel_signatures`, the slowest first) and, when there is a core for every unit,
    the graph loaders' and the check's CPU code (FIRST_RUN_FUNCTIONS) and the technique's own
    (`first_run_functions`: its graph preparation's, which the run calls after the load, compiling
    itself what is not ready by then). None when there is nothing
    to gain. `gpu`: whether the run will use a GPU (None: the selected backend, else whether one
    is present and the simulator not requested)."""
    from . import backend
    from .engine.launcher import IN_HELPERS
    from .techniques import Technique, implementation, make_knobs

    tech = Technique.parse(technique)
    impl = implementation(tech)
    if gpu is None:
        info = backend.selected()
        gpu = (not info.is_simulator) if info is not None else (
            not backend.simulator_requested() and backend.gpu_present()[0])
    todo, variants = [], {}
    if gpu and impl.runtimes != frozenset({"cpu"}) and impl.kernel_signatures(make_knobs(tech, knobs), bool(instrument)):
        backend.select("gpu")
        units = kernel_units(tech.value, make_knobs(tech, knobs).as_dict(), instrument)
        variants = {u.name: _variant(u) for u in units}
        todo = [u for u in units if variants[u.name] not in IN_HELPERS and not _in_disk_cache(*_kernel_of(u))]
    # The loaders' code in helpers only with a core for each of its units and one for the kernels
    # (their units are a second or three each): with fewer, this process compiles it while loading.
    own = getattr(impl, "first_run_functions", ())  # e.g. a graph preparation's
    cores = helper_count(1 << 20, kernels=bool(todo))
    first = first_run_units() if cores > len(FIRST_RUN_FUNCTIONS) else []
    later = first_run_units(own) if own and cores > len(FIRST_RUN_FUNCTIONS) + len(own) else []
    jobs = helper_count(len(todo) + len(first) + len(later), kernels=bool(todo))
    if not (todo or first or later) or jobs == 0:
        return None
    pool = _pool(jobs, "gpu" if gpu else "cpu")
    markers = tempfile.mkdtemp(prefix="bfs4k-helpers-")

    def submit(u):
        marker = os.path.join(markers, u.name.replace(":", "_"))
        return variants[u.name], (pool.submit(_run_marked, u, marker), marker)

    # The slowest kernel first, then the loaders' code (the load waits for it), then the rest.
    kernels = dict(map(submit, todo[:1]))
    first_futures = [pool.submit(run_unit, u) for u in first]
    kernels.update(map(submit, todo[1:]))
    return Ahead(tech.value, pool, jobs, kernels, first_futures, markers, [pool.submit(run_unit, u) for u in later])


def _kernel_of(unit: Unit):
    return _kernel_named(*unit.args)


def _variant(unit: Unit) -> tuple:
    """(kernel, argument types): what the launcher's compile_overload looks a helper's kernel up by."""
    kernel, args = _kernel_of(unit)
    return kernel, tuple(args)


def load_for_run(load: Callable, technique, knobs=None, instrument: bool = True,
                 on_status: Callable[[str], None] | None = None, gpu: bool | None = None):
    """`load()` the graph of a coming run, saying when the loaders compile, while helper processes
    compile the run's kernels if they are not in the disk cache (`compile_ahead`); returns the
    graph once loaded: the run waits for each kernel it launches when it comes to it (the
    launcher's `compile_overload`), then loads it from the disk cache instead of compiling it."""
    say = on_status or (lambda msg: None)
    ahead = compile_ahead(technique, knobs, instrument, gpu, on_status)
    if ahead is not None:
        say(f"{ahead.describe()} ({ONCE})")
    suffix = f"; {ahead.describe()}" if ahead is not None else ""
    try:
        if ahead is not None:
            ahead.wait_first()  # the loaders' code, compiled side by side: the load then reads it
        with compile_notices(on_status, suffix):
            graph = load()
    except BaseException:
        if ahead is not None:  # the kernels already compiling land in the cache; the rest are dropped
            ahead.pool.shutdown(wait=False, cancel_futures=True)
        raise
    if ahead is not None:
        ahead.hand_over()
    return graph


__all__ = ["Ahead", "COMPILE_GROUPS", "Done", "Expected", "HELPERS_ENV", "LOADER_STEPS", "Unit",
           "WARMUP_GRAPHS", "compile_ahead", "compile_notices", "default_jobs", "expected", "helper_count",
           "kernel_units", "knob_presets", "load_for_run", "plan", "run_unit", "signatures", "todo", "warm",
           "warmup_graphs"]
