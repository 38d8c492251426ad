"""The warm-up's ledger: which of its units Numba's disk cache already holds, and what each unit
cost, so that a second `python3 -m explorer warmup` compiles nothing and the first one says how
long it will take on this machine.

A unit that compiles one kernel is checked directly: its variant's entry in Numba's index file
(`in_disk_cache`). Any other unit (a loader step, a CPU technique's runs, a preset's runs) compiles
whatever its code calls, so the worker that runs it notes the functions and argument types it used
(compiled or loaded: the dispatchers' overloads before and after it), each as the index file, the
source file's locator and the key Numba files it under; the unit is ready while every one of those
keys is in its index for the source file as it is now (Numba's stamp of it: an index whose source
changed is dropped). The ledger is kept per Numba cache location (`$NUMBA_CACHE_DIR`, else
`__pycache__` beside the sources), in the graph cache's folder ($BFS4K_CACHE_DIR, else
~/.cache/bfs4k).

Costs: the seconds each unit took when it last ran here, with the process count it ran among.
A unit never run here is costed from `COSTS_FILE` (warmup_costs.json beside this module: per-unit
seconds measured on the machine it names); a unit in neither, from the median of its kind.
`expected_seconds` schedules the costs over the processes as `warm` does (longest first, waiting
units after what they wait for) and adds a process start per process.
"""
from __future__ import annotations

import gc
import json
import os
import pickle
import statistics
import tempfile
from pathlib import Path

#: Seconds to start a worker process (spawn, import Numba and the explorer), added per process.
PROCESS_START_S = 2.0
#: Shipped per-unit costs (seconds a unit took in a warm-up), by the unit's label.
COSTS_FILE = Path(__file__).with_name("warmup_costs.json")


def unit_key(unit) -> str:
    """What identifies a unit between warm-ups: its kind and arguments."""
    return repr((unit.kind, unit.args))


def _location() -> str:
    from numba.core import config

    return os.path.abspath(config.CACHE_DIR) if config.CACHE_DIR else "__pycache__"


def ledger_path() -> Path:
    from .graphs.cache import cache_dir

    return cache_dir() / "warmup-ledger.pickle"


def load() -> dict:
    """{"entries": {unit key: [entries]}, "costs": {unit key: (seconds, processes)}} for this Numba
    cache location (empty if none was kept, or unreadable: then every unit runs)."""
    try:
        with open(ledger_path(), "rb") as f:
            everything = pickle.load(f)
        mine = everything.get(_location(), {})
        return {"entries": dict(mine.get("entries", {})), "costs": dict(mine.get("costs", {}))}
    except Exception:  # a ledger another version wrote, or none: nothing is known
        return {"entries": {}, "costs": {}}


def save(done: list, processes: int) -> None:
    """Add the finished units (`Done`s) to the ledger: the cache entries of those that succeeded,
    every unit's seconds. Written whole to a temporary file, then renamed."""
    path = ledger_path()
    try:
        with open(path, "rb") as f:
            everything = pickle.load(f)
    except Exception:  # none yet, or unreadable: start afresh
        everything = {}
    mine = everything.setdefault(_location(), {"entries": {}, "costs": {}})
    for d in done:
        key = unit_key(d.unit)
        if d.error is None and d.entries is not None:
            mine["entries"][key] = d.entries
        if d.error is None:
            mine["costs"][key] = (round(d.seconds, 2), processes)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".warmup-ledger-")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(everything, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except OSError:  # an unwritable cache folder: the next warm-up checks every unit again
        pass


# ============================================================================================
# What a unit used, and whether it is still in the disk cache

def _dispatchers() -> list:
    """Every Numba dispatcher (CPU or CUDA) alive in this process that keeps a disk cache."""
    import sys

    from numba.core.dispatcher import Dispatcher

    kinds = (Dispatcher,)
    if "numba.cuda.dispatcher" in sys.modules:  # never imported here for this: a backend picks it
        kinds += (sys.modules["numba.cuda.dispatcher"].CUDADispatcher,)
    # type(), not isinstance(): a dead weakref proxy among gc's objects raises on __class__
    return [obj for obj in gc.get_objects() if issubclass(type(obj), kinds)
            and getattr(getattr(obj, "_cache", None), "_cache_file", None) is not None]


def overloads_now() -> set:
    """(dispatcher id, argument types) of every compiled overload in this process."""
    return {(id(d), sig) for d in _dispatchers() for sig in list(d.overloads)}


def entries_since(before: set) -> list:
    """The cache entries of the overloads compiled or loaded since `before` (overloads_now())."""
    out = []
    for d in _dispatchers():
        for sig in list(d.overloads):
            if (id(d), sig) not in before:
                out.append(_entry(d, sig))
    return out


def _entry(dispatcher, sig) -> tuple:
    cache = dispatcher._cache
    f = cache._cache_file
    key = cache._index_key(sig, dispatcher.targetctx.codegen())
    # The locator says how Numba stamps the source file (a hash of it, its time and size).
    return (type(f).__module__, type(f).__name__, f._index_path, cache._impl.locator, key)


def entry_present(entry) -> bool:
    """Whether Numba's index file holds this entry's key for its source file as it is now."""
    module, cls, index_path, locator, key = entry
    try:
        import importlib

        index_file = getattr(importlib.import_module(module), cls)(
            os.path.dirname(index_path), os.path.basename(index_path)[:-len(".nbi")], locator.get_source_stamp())
        name = index_file._load_index().get(key)
        return name is not None and os.path.exists(os.path.join(os.path.dirname(index_path), name))
    except Exception:  # Numba's internals, or a file gone: when in doubt, compile again
        return False


def in_disk_cache(kernel, argtypes) -> bool:
    """Whether Numba's disk cache holds this kernel (or CPU function) variant (True also when it
    has no disk cache: nothing could be kept for it)."""
    cache = getattr(kernel, "_cache", None)
    if getattr(cache, "_cache_file", None) is None:
        return True
    try:
        key = cache._index_key(tuple(argtypes), kernel.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # the index is Numba's internals: when in doubt, compile ahead
        return False


def units_ready(units, ledger: dict, kernel_of) -> set:
    """Names of the units whose compiled code is all in the disk cache: a kernel unit's variant
    (kernel_of(unit) -> (kernel, argument types)), any other unit's noted entries."""
    ready = set()
    for u in units:
        if u.kind == "kernel":
            try:
                ok = in_disk_cache(*kernel_of(u))
            except Exception:  # the variant cannot be built here: let its unit report why
                ok = False
        else:
            entries = ledger["entries"].get(unit_key(u))
            ok = entries is not None and all(entry_present(e) for e in entries)
        if ok:
            ready.add(u.name)
    return ready


# ============================================================================================
# Expected duration

def shipped_costs() -> dict:
    """{"measured_on": text, "units": {label: seconds}} from warmup_costs.json (empty if none)."""
    try:
        data = json.loads(COSTS_FILE.read_text())
        return {"measured_on": str(data.get("measured_on", "")), "units": dict(data.get("units", {}))}
    except (OSError, ValueError):
        return {"measured_on": "", "units": {}}


def unit_costs(units, ledger: dict) -> tuple[dict, dict]:
    """(seconds per unit name, how many were costed from: "here", "shipped", "kind")."""
    shipped = shipped_costs()["units"]
    known = {}
    sources = {"here": 0, "shipped": 0, "kind": 0}
    for u in units:
        here = ledger["costs"].get(unit_key(u))
        if here is not None:
            known[u.name] = float(here[0])
            sources["here"] += 1
        elif u.label in shipped:
            known[u.name] = float(shipped[u.label])
            sources["shipped"] += 1
    by_kind: dict = {}
    for u in units:
        if u.name in known:
            by_kind.setdefault(u.kind, []).append(known[u.name])
    default = {"loaders": 3.0, "kernel": 3.0, "technique": 10.0, "functions": 2.0}
    for u in units:
        if u.name not in known:
            costs = by_kind.get(u.kind)
            known[u.name] = statistics.median(costs) if costs else default.get(u.kind, 3.0)
            sources["kind"] += 1
    return known, sources


def schedule(units, costs: dict, jobs: int) -> float:
    """Seconds until the last unit ends when `jobs` processes, each started in PROCESS_START_S,
    take the units as `warm` does: as a process frees up, the first unit in list order whose
    waits (`after`, among these units) have ended."""
    names = {u.name for u in units}
    waits = {u.name: [a for a in u.after if a in names] for u in units}
    free = [PROCESS_START_S] * max(1, jobs)
    ends: dict = {}
    pending = list(units)
    while pending:
        free.sort()
        t = free[0]
        pick = next((u for u in pending if all(a in ends and ends[a] <= t for a in waits[u.name])), None)
        if pick is None:  # every unit left waits for one still running: the process idles until it ends
            free[0] = min(max(ends[a] for a in waits[u.name]) for u in pending
                          if all(a in ends for a in waits[u.name]))
            continue
        pending.remove(pick)
        ends[pick.name] = free[0] = t + costs[pick.name]
    return max(ends.values(), default=0.0)


def by_priority(units, costs: dict) -> list:
    """The units in the order `warm` should offer them: by the longest chain of costs they start
    (their own and that of the units waiting for them), longest first, so that a unit others wait
    for and the costliest kernels start at once (a unit always comes after those it waits for)."""
    names = {u.name for u in units}
    waiting_for = {u.name: [] for u in units}
    for u in units:
        for a in u.after:
            if a in names:
                waiting_for[a].append(u.name)
    rank: dict = {}

    def chain(name):
        if name not in rank:
            rank[name] = costs[name] + max((chain(w) for w in waiting_for[name]), default=0.0)
        return rank[name]

    return sorted(units, key=lambda u: -chain(u.name))
