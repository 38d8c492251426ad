"""Many searches and knob sweeps over several GPUs, through Dask (dask.distributed).

    from explorer.scale_out import GPUCluster
    with GPUCluster() as cluster:                       # a worker process per GPU of this machine
        result = run_many(g, "all", "betweenness", client=cluster.client).complete()
        sweep = run_sweep(g, source, plan, client=cluster.client)

`GPUCluster` starts one worker process per GPU (dask-cuda's LocalCUDACluster where it is installed,
else Dask's own processes with CUDA_VISIBLE_DEVICES set per worker), one thread each, so a worker
runs one task at a time on its GPU: a timed run never shares its GPU with another. Under the
simulator (NUMBA_ENABLE_CUDASIM=1) the workers are CPU processes running the simulator. Any
`distributed.Client` works in its place (several machines: the user's own scheduler), as long
as each of its workers sees one GPU and runs one task at a time.

run_many: the sources are split into chunks (`chunks` equal parts, or by default `default_chunks`:
decreasing sizes, so the run ends on small chunks, or for MS-BFS one part a worker), each run on one
worker as run_many would run it there; the graph is sent once per client (a task's result, which
Dask recomputes if its worker dies, published under a name as a dataset), and each worker fetches
its own copy the first time a task names it and keeps it on its GPU (a Session) for the chunks that
follow. Not as a task's dependency: Dask's memory manager drops the extra replicas of a key that no
task is waiting for, and the scheduler then sends every task needing it to the one worker left
holding it (both chunks of a 2-GPU run on one GPU). A worker runs one task on its GPU at a time.
Each chunk returns the application's raw arrays (per-search rows, and the run/slot-sum
accumulators), and they are merged as one GPU's batches are (rows in source order, accumulators
summed), then finished by the application once. Integer results (distances, hop counts, closeness
sums, eccentricity, reachability) are identical to one process's; betweenness is a float sum, whose
last bits depend on the order of additions on one GPU too. A chunk whose worker dies is run again by
Dask on another worker; each chunk's result is merged once, by its index. Progress: one record per
finished chunk (its searches, its GPU time), in the order chunks finish.

Sweeps (explorer.sweep.run_sweep(client=...)): each point runs on one worker, all its repeats
there, so its times are one GPU's; points spread over the workers.
"""
from __future__ import annotations

import functools
import logging
import os
import threading
from typing import Callable, Iterator

import numpy as np

EXTRA = "pip install 'bfs4k-explorer[dask]' (dask.distributed)"


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ImportError(f"spreading work over GPUs needs Dask's distributed scheduler: {EXTRA}") from None
    return distributed


def check_client(client):
    """`client` as a distributed.Client, or a TypeError naming what it is."""
    dist = _distributed()
    if isinstance(client, GPUCluster):
        return client.client
    if not isinstance(client, dist.Client):
        raise TypeError(f"client must be a distributed.Client or an explorer.scale_out.GPUCluster, not "
                        f"{type(client).__name__}")
    return client


def _gpu_ids(gpus) -> list[str]:
    """The CUDA device ids the workers take: `gpus` an int (the first that many), a list of ids,
    or None (every GPU this process may use: CUDA_VISIBLE_DEVICES, else every device)."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = [v.strip() for v in visible.split(",") if v.strip()]
    else:
        from numba import cuda

        ids = [str(i) for i in range(len(cuda.gpus))] if cuda.is_available() else []
    if gpus is None:
        chosen = ids
    elif isinstance(gpus, (int, np.integer)) and not isinstance(gpus, bool):
        if not 1 <= gpus <= len(ids):
            raise ValueError(f"gpus={gpus} is invalid: this machine has {len(ids)} GPU(s) visible")
        chosen = ids[:gpus]
    else:
        chosen = [str(g) for g in gpus]
        unknown = [g for g in chosen if g not in ids]
        if unknown or not chosen:
            raise ValueError(f"gpus={list(gpus)!r} is invalid: the visible GPUs are {ids}")
    if not chosen:
        raise ValueError("no GPU is visible: select the simulator (NUMBA_ENABLE_CUDASIM=1) to run the "
                         "workers as CPU processes, or start them where GPUs are")
    return chosen


def worker_addresses(client) -> list[str]:
    """The addresses of `client`'s scheduler's workers now, asked of the scheduler. Not
    `scheduler_info()["workers"]`: that is a cached identity which the client's periodic refresh
    replaces with one listing no workers (distributed 2026.8), so it can come back empty."""
    return sorted(client.nthreads())


def worker_count(client) -> int:
    """How many workers `client`'s scheduler has now."""
    return len(worker_addresses(client))


def dask_workers(client) -> str:
    """'N Dask workers' of `client`'s scheduler, as a status line says it."""
    n = worker_count(client)
    return f"{n} Dask worker{'s' * (n != 1)}"


#: Dask starts its workers with MALLOC_TRIM_THRESHOLD_=65536, so that glibc hands freed memory back
#: to the system at once. Set at all, it also stops glibc from raising its mmap threshold, and every
#: array of more than 128 KB is then mapped afresh and faulted in page by page: a BFS run's distances
#: and parents read back into new 4 MB arrays took a direction-optimizing run on Kronecker 20 from
#: 6 to 10 ms on an H100 worker. Left unset, as in any other process. (A Nanny reads it when made.)
NO_MALLOC_TRIM = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


def _keep_lost_workers(cluster) -> None:
    """Leave a lost worker to its nanny, which starts another. A SpecCluster (LocalCUDACluster is one)
    closes the nanny of a worker not back within distributed.deploy.lost-worker-timeout (15 s; meant
    for a batch job whose machine went away), and a new worker process on a busy machine (Numba
    imported, a GPU's context made) can take longer: the cluster lost that worker for good. These
    nannies live in this process, beside the cluster, so none is lost without it."""
    from distributed.deploy.cluster import Cluster

    cluster._update_worker_status = functools.partial(Cluster._update_worker_status, cluster)


class GPUCluster:
    """Dask workers on this machine, one per GPU (or `workers` CPU processes under the simulator),
    listening on 127.0.0.1 only; `client` is their distributed.Client. Close it (or use `with`)."""

    def __init__(self, gpus=None, *, workers: int = 2, simulator: bool | None = None):
        _distributed()  # before anything else: the error names the extra to install
        from . import backend

        self.simulator = backend.simulator_requested() if simulator is None else bool(simulator)
        if self.simulator:
            if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
                raise ValueError(f"workers={workers!r} is invalid: the simulator's worker processes, an int >= 1")
            envs = {f"sim-{i}": {"NUMBA_ENABLE_CUDASIM": "1"} for i in range(workers)}
        else:
            self.gpus = _gpu_ids(gpus)
            envs = {f"gpu-{g}": {"CUDA_VISIBLE_DEVICES": g} for g in self.gpus}
        self._start(envs)

    def _start(self, envs: dict) -> None:
        dist = _distributed()
        import dask
        from distributed import Nanny, Scheduler, SpecCluster

        if not self.simulator:
            try:
                from dask_cuda import LocalCUDACluster
            except ImportError:
                LocalCUDACluster = None
            if LocalCUDACluster is not None:
                with dask.config.set(NO_MALLOC_TRIM):
                    self.cluster = LocalCUDACluster(CUDA_VISIBLE_DEVICES=",".join(self.gpus), threads_per_worker=1,
                                                    host="127.0.0.1", dashboard_address=None,
                                                    silence_logs=logging.ERROR)
                _keep_lost_workers(self.cluster)
                self.client = dist.Client(self.cluster)
                return
        # Dask's profiler reads every thread's stack 100 times a second (sys._current_frames), and
        # Python 3.11 deadlocks when a garbage collection runs inside that read while a thread
        # starts: a simulated kernel starts a thread per CUDA thread, and its worker hangs for good.
        # Nobody sees these workers' profiles (they have no dashboard). Given to each worker (a
        # restarted one too), not set around their start: that would last only as long as the block.
        config = {"distributed.worker.profile.enabled": False}
        if not self.simulator:  # the cores shared out: each worker's process, and its CPU threads, on its own
            envs = {name: {CPUS_ENV: ",".join(map(str, cpus)), THREADS_ENV: str(len(cpus)), **env}
                    for (name, env), cpus in zip(envs.items(), cpu_shares(_usable_cpus(), len(envs)))}
        specs = {name: {"cls": Nanny, "options": {"nthreads": 1, "env": env, "host": "127.0.0.1", "dashboard": False,
                                                  "silence_logs": logging.ERROR, "config": config}}
                 for name, env in envs.items()}
        # A simulated kernel holds its worker's GIL for seconds: its heartbeats stop, and the
        # scheduler would take the busy worker for dead (and re-run its task) after worker-ttl.
        ttl = {"distributed.scheduler.worker-ttl": None} if self.simulator else {}
        with dask.config.set({**ttl, **NO_MALLOC_TRIM}):
            self.cluster = SpecCluster(workers=specs, scheduler={"cls": Scheduler, "options": {
                "host": "127.0.0.1", "dashboard": False, "dashboard_address": "127.0.0.1:0"}}, silence_logs=logging.ERROR)
        _keep_lost_workers(self.cluster)
        self.client = dist.Client(self.cluster)
        self.client.wait_for_workers(len(specs), timeout=120)  # chunks spread over all of them from the first run

    @property
    def size(self) -> int:
        return worker_count(self.client)

    def close(self) -> None:
        forget(self.client)
        self.client.close()
        self.cluster.close()

    def __enter__(self) -> "GPUCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# ------------------------------------------------------------------ on a worker

_HELD: dict = {}  # this worker's graph and Session: (graph, session), the last graph only
_COPY: dict = {}  # this worker's copy of the last graph a task named: {"name": GraphRef.name, "graph": ...}
#: One task at a time on this worker's GPU: a task fetching its graph leaves Dask's thread count
#: (secede) while it waits on the network, and Dask may start another meanwhile.
_GPU = threading.Lock()


class GraphRef:
    """A graph as the tasks name it: the dataset `name` on the scheduler, which each worker
    fetches once into its own copy (`_fetched`)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"GraphRef({self.name!r})"


def _fetched(graph):
    """The graph a task was given: a GraphRef's, this worker's copy (fetched the first time), or
    the graph itself (a call in this process)."""
    if not isinstance(graph, GraphRef):
        return graph
    if _COPY.get("name") == graph.name:
        return _COPY["graph"]
    from distributed import get_client, rejoin, secede

    client = get_client()
    secede()  # the worker's thread free meanwhile: the graph may first have to be recomputed here
    try:
        g = client.get_dataset(graph.name).result()
    finally:
        rejoin()
    _COPY.update(name=graph.name, graph=g)
    return g


def _session(graph):
    import gc

    from .engine import Session

    held = _HELD.get("graph")
    if held is not None and held[0] is graph:
        return held[1]
    if held is not None:
        held[1].close()  # another graph: free the GPU memory of the last one
    session = Session(graph)
    _HELD["graph"] = (graph, session)
    # A worker holds hundreds of thousands of long-lived objects (Dask's, Numba's, the graph's), and
    # Python's full collections walked them all: 0.1 s each, about one every other closeness chunk
    # of Kronecker 22 on an H100, a third of the chunk's time. Frozen, they are left out of every
    # collection (they are still freed when nothing refers to them; a cycle among them would stay).
    gc.collect()
    gc.freeze()
    return session


def _on_worker() -> None:
    """A task's start on a worker: the backend its environment asks for, the process on its share
    of the cores (CPUS_ENV, once), and Numba's CPU threads (a sweep point's check) at that share's
    size (THREADS_ENV): each of 4 workers on a 64-core host ran its checks on all 64, and a sweep
    point took 0.21 s instead of 0.08. Not through NUMBA_NUM_THREADS: Numba reads it when imported,
    which in a worker comes before the Nanny sets the worker's environment, and refuses a later
    change once its threads run. The count is the calling thread's own, hence at every task."""
    import numba

    from . import backend

    backend.select("simulator" if backend.simulator_requested() else "gpu")
    cpus = os.environ.get(CPUS_ENV)
    if cpus and not _PINNED:
        pin_process({int(c) for c in cpus.split(",")})
        _PINNED.append(cpus)
    share = os.environ.get(THREADS_ENV)
    if share and share.isdigit():
        numba.set_num_threads(max(1, min(int(share), numba.config.NUMBA_NUM_THREADS)))


#: A GPU worker's share of the host's cores, for Numba's parallel CPU code (GPUCluster sets it).
THREADS_ENV = "BFS4K_WORKER_THREADS"
#: The cores a GPU worker's process runs on, "0,1,2,..." (GPUCluster sets it).
CPUS_ENV = "BFS4K_WORKER_CPUS"
_PINNED: list = []  # this worker's CPUS_ENV once applied


def _usable_cpus() -> list[int]:
    return sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else list(range(os.cpu_count() or 1))


def cpu_shares(cpus: list[int], workers: int) -> list[list[int]]:
    """`cpus` in `workers` runs of consecutive ones, as even as they go (a core each, shared in
    turn, where there are fewer cores than workers).

    Why a worker keeps to its own: four processes driving one GPU each on a 64-core host, left to
    the kernel's scheduler, took a Kronecker 22 sweep point in 7.0-7.8 ms against 5.1 alone; each
    on 16 cores of its own, 5.6-5.8 (three of four; the fourth 7.7). dask-cuda pins its workers the
    same way, to the cores nearest each GPU."""
    if len(cpus) < workers:
        return [[cpus[k % len(cpus)]] for k in range(workers)]
    return [list(map(int, part)) for part in np.array_split(np.asarray(cpus), workers)]


def pin_process(cpus: set[int]) -> None:
    """Every thread of this process on `cpus` (Linux: an affinity is a thread's own; the threads
    started later inherit their starter's). Nothing where the system has no affinities."""
    if not hasattr(os, "sched_setaffinity"):
        return
    try:
        threads = [int(t) for t in os.listdir("/proc/self/task")]
    except OSError:
        threads = [0]
    for tid in threads:
        try:
            os.sched_setaffinity(tid, cpus)
        except (ProcessLookupError, PermissionError):  # a thread that has ended, or one not ours to move
            pass


def _run_chunk(run_many, graph, rows: np.ndarray, application, options: dict, chunk: int, lo: int = 0,
               hook=None) -> dict:
    """One chunk of a run_many on this worker, its rows from `lo` on in the whole run: the
    application's raw arrays and its records (each search's row and batch as the whole run's)."""
    from .graphs import Vertices

    graph = _fetched(graph)
    with _GPU:
        _on_worker()
        if hook is not None:
            hook(chunk)
        run = run_many(graph, Vertices(rows), application, session=_session(graph), **options)
        res = run.complete()
    searches = res.searches.replace(row=res.searches.column("row") + lo)  # rows as the whole run numbers them
    return {"chunk": chunk, "raw": run.raw, "searches": searches, "batches": res.batches, "device": res.device,
            "T": res.T, "threshold": res.threshold, "plan": res.plan, "energy_note": res.energy_note}


# ------------------------------------------------------------------ on the caller

_SENT: dict = {}  # (client id, id(graph)) -> (graph, its future, its GraphRef): sent once per client


def _held(value):
    return value


def sent(client, value):
    """`value` on the workers as the result of a task, not scattered data: Dask recomputes a task's
    result when the worker holding it dies, while scattered data would be lost with it (and every
    chunk needing it cancelled). Workers fetch it from each other as they need it."""
    import warnings

    with warnings.catch_warnings():  # a graph is large by nature; it travels once
        warnings.filterwarnings("ignore", message=".*[Ll]arge.*")
        return client.submit(_held, value, pure=False)


def on_workers(client, graph) -> GraphRef:
    """The graph for the workers, sent once per client and published as a dataset: later runs name
    the same copy, so each worker's own copy and its Session (the graph on its GPU) outlive a run
    instead of fetching and uploading it again. The cluster holds it until `forget(client)` (a
    GPUCluster forgets when it closes)."""
    import uuid

    key = (client.id, id(graph))
    held = _SENT.get(key)
    if not _still_sent(held, graph):
        if held is not None:
            _unpublish(client, held[2])
        ref = GraphRef(f"bfs4k-graph-{uuid.uuid4().hex}")
        fut = sent(client, graph)
        client.publish_dataset(fut, name=ref.name)
        held = (graph, fut, ref)
        _SENT[key] = held
    return held[2]


def _still_sent(held: tuple | None, obj) -> bool:
    """Whether `held` ((object, its future on the cluster, ...) or None) still holds `obj` there."""
    return held is not None and held[0] is obj and held[1].status not in ("cancelled", "error", "lost")


def _unpublish(client, ref: GraphRef) -> None:
    try:
        client.unpublish_dataset(ref.name)
    except KeyError:  # gone already
        pass


def forget(client) -> None:
    """The graphs this process sent to `client`'s cluster, unpublished, and its sweep reference
    released: its workers' copies stay until a task names another graph."""
    for key in [k for k in _SENT if k[0] == client.id]:
        if client.status == "running":
            _unpublish(client, _SENT[key][2])
        del _SENT[key]
    _SENT_REFERENCE.pop(client.id, None)


def split(sources: np.ndarray, chunks: int, multiple: int = 1) -> list[tuple[int, int]]:
    """[lo, hi) row ranges of about equal size, `chunks` of them at most, each a multiple of
    `multiple` rows but the last."""
    k = len(sources)
    size = max(1, -(-k // max(1, chunks)))
    size = -(-size // multiple) * multiple
    return [(lo, min(k, lo + size)) for lo in range(0, k, size)]


#: The fewest sources in a chunk of the default split: about the search blocks a large GPU runs at
#: once (an H100's 132 SMs x 8 blocks of 256 threads = 1,056), so that a chunk still fills its device.
FEWEST = 1024


def guided(sources: np.ndarray, workers: int, multiple: int = 1, fewest: int = FEWEST) -> list[tuple[int, int]]:
    """[lo, hi) row ranges in decreasing size (guided self-scheduling): each chunk is 1/(2 x
    workers) of the sources not yet in a chunk, down to `fewest` (or 1/(8 x workers) of all, for
    few sources), each a multiple of `multiple` rows but the last.

    Why: Dask hands the chunks out in this order as workers free up. Equal chunks leave the last
    wave's workers idle for up to a whole chunk (with four a worker, a sixteenth of a 4-GPU run);
    here the first chunks carry most of the work and the last ones are small, so no worker waits
    for more than about one small chunk at the end, while the chunks stay few (about 2 x workers x
    ln(sources / (2 x workers x fewest)) + 2 x workers: 34 for 262,144 sources on 4 workers), each
    paying a task's scheduling, a run's set-up and its last searches' drain once."""
    k = len(sources)
    step = 2 * max(1, workers)
    floor = max(1, min(fewest, -(-k // (4 * step))))
    floor = -(-floor // multiple) * multiple
    out, lo = [], 0
    while lo < k:
        size = -(-max(floor, -(-(k - lo) // step)) // multiple) * multiple
        out.append((lo, min(k, lo + size)))
        lo += size
    return out


def _row_multiple(method) -> int:
    return 64 if str(method).startswith("bit") else 1  # MS-BFS: whole 64-bit words


def default_chunks(sources: np.ndarray, workers: int, method) -> list[tuple[int, int]]:
    """run_many's chunks when the caller names none. A search per block (every method but MS-BFS):
    `guided`, since its searches are independent and a smaller chunk costs only its scheduling and
    its last searches' drain. MS-BFS (bit-parallel): one equal part a worker, since its words share
    every pass over the graph (a batch of 4,096 searches reads the arcs as often as one of 64):
    smaller chunks would multiply the passes, and equal batches take equal times."""
    if _row_multiple(method) > 1:
        return split(sources, workers, _row_multiple(method))
    return guided(sources, workers)


class DistributedManyRun:
    """run_many over a Dask cluster: iterate for Progress records (one per finished chunk), then
    read `result` (a MultiSearchResult, as one GPU's); complete() does both."""

    _started = False
    _result = None

    def __init__(self, client, graph, sources: np.ndarray, app, options: dict, chunks: int | None,
                 on_progress: Callable | None, hook=None, *, run_many: Callable, concat: Callable):
        self.client, self.graph, self.sources, self.app, self.options = client, graph, sources, app, options
        workers = max(1, worker_count(client))
        if chunks is not None and (isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)) or chunks < 1):
            raise ValueError(f"chunks={chunks!r} is invalid: how many parts the sources are split into, an int >= 1")
        self.ranges = default_chunks(sources, workers, options.get("method")) if chunks is None else \
            split(sources, int(chunks), _row_multiple(options.get("method")))
        self._progress = on_progress or (lambda p: None)
        self._hook = hook
        self._run_many, self._concat = run_many, concat  # multisearch.run's: it imports this module

    def describe(self) -> str:
        """What a run will do, before it runs (each chunk's batches are planned on its worker's GPU)."""
        return (f"{len(self.sources):,} searches in {len(self.ranges)} chunks over {dask_workers(self.client)}; "
                "each chunk planned and run on one worker's GPU")

    @property
    def result(self):
        if self._result is None:
            raise RuntimeError("the multi-search has not finished: iterate over the run (or call complete()) first")
        return self._result

    def complete(self):
        for _ in self:
            pass
        return self.result

    def __iter__(self) -> Iterator:
        if self._started:
            raise RuntimeError("a DistributedManyRun can be iterated once; call run_many again for another run")
        self._started = True
        return self._walk()

    def _walk(self):
        from distributed import as_completed

        from .multisearch.records import Progress

        g = on_workers(self.client, self.graph)
        app = self.app.name if _by_name(self.app) else self.app
        futures = [self.client.submit(_run_chunk, self._run_many, g, self.sources[lo:hi], app, self.options, i, lo,
                                      self._hook, pure=False, key=f"bfs4k-many-{id(self)}-{i}")
                   for i, (lo, hi) in enumerate(self.ranges)]
        parts: dict = {}
        done = visited = edges = 0
        elapsed = 0.0
        try:
            # with_results: each chunk's result is fetched as it finishes, not one after another here
            for step, (_, part) in enumerate(as_completed(futures, with_results=True)):
                i = part["chunk"]
                if i in parts:  # merged once, whatever Dask retried
                    continue
                parts[i] = part
                ms = sum(b.time_ms for b in part["batches"])
                elapsed += ms
                found = part["searches"]
                done += len(found)
                visited += int(found.column("visited").sum())
                examined = found.column("edges_examined")  # None: the method counts none (MS-BFS)
                edges += 0 if examined is None else int(examined.sum())
                rec = Progress(step=step, batch=i, batches=len(self.ranges), searches_done=done,
                               searches_total=len(self.sources), visited=visited, edges_examined=edges,
                               time_ms=ms, elapsed_ms=elapsed, searches=found.replace(batch=i))
                self._progress(rec)
                yield rec
        finally:
            for fut in futures:
                fut.release()
        self._result = merge(self.graph, self.sources, self.app, [parts[i] for i in range(len(self.ranges))],
                             self._concat)


def on_every_worker(client, fn: Callable, *args) -> list:
    """fn(*args) once on each worker of `client`, pinned there (an ordinary task goes wherever Dask
    puts it, which need not be every worker); the results in the workers' order. A future among
    `args` is its value there."""
    client = check_client(client)
    workers = worker_addresses(client)
    return client.gather([client.submit(fn, *args, pure=False, workers=[w], allow_other_workers=False)
                          for w in workers])


def warm(client, graph, run_many: Callable, rows: np.ndarray, application, **options) -> int:
    """run_many of a few sources (`rows`: vertices 0..n-1) on every worker of `client`: its kernels
    compiled and the graph on its GPU before a timed run. Returns how many workers ran it."""
    g = on_workers(check_client(client), graph)
    return len(on_every_worker(client, _run_chunk, run_many, g, np.asarray(rows), application, options, 0))


def warm_sweep(client, graph, source: int, plan, *, run_point: Callable) -> int:
    """`plan`'s first point run once on every worker of `client` (`source`: a vertex 0..n-1; each
    worker checks it against a reference of its own): the kernels of a sweep whose knobs are
    run-time values compiled, and the graph on each GPU, before a timed sweep. Returns how many
    workers ran it."""
    g = on_workers(check_client(client), graph)
    points = on_every_worker(client, _sweep_point, run_point, g, source, plan, 0, None, 1, 0, None)
    failed = [p.error or p.check for p, _ in points if not p.ok]
    if failed:
        raise RuntimeError(f"the sweep's first point failed on a worker: {failed[0]}")
    return len(points)


def _by_name(app) -> bool:
    from .multisearch.apps import APPLICATIONS

    return type(app) is APPLICATIONS.get(app.name)


def merge(graph, sources: np.ndarray, app, parts: list[dict], concat: Callable):
    """The chunks' raw arrays as one GPU's batches leave them (rows in source order, accumulators
    summed, run.MultiSearchRun), finished by the application once."""
    import dataclasses

    from .multisearch.apps import FinishContext
    from .multisearch.records import MultiSearchResult, SearchTable

    values = {}
    for a in app.arrays:
        if a.scope == "search":
            values[a.name] = concat([p["raw"][a.name] for p in parts])
        elif a.scope in ("run", "slot-sum"):
            values[a.name] = sum(p["raw"][a.name] for p in parts)
    batches, tables = [], []
    for p in parts:  # each part's batches numbered after the earlier parts'
        found = p["searches"]
        tables.append(found.replace(batch=found.column("batch") + len(batches)))
        batches += [dataclasses.replace(bs, batch=len(batches) + j) for j, bs in enumerate(p["batches"])]
    searches = SearchTable.concat(tables)
    n = graph.num_vertices
    levels = searches.column("levels")
    all_sources = len(sources) == n and np.array_equal(np.sort(sources), np.arange(n))
    fctx = FinishContext(graph=graph, sources=sources, levels=levels, all_sources=bool(all_sources))
    first = parts[0]
    return MultiSearchResult(
        graph=graph.name, application=app.name, method=first["plan"].method.value, sources=sources,
        values=app.finish(values, fctx), searches=searches, batches=batches, plan=first["plan"], T=first["T"],
        threshold=first["threshold"], device=first["device"], energy_note=first["energy_note"],
        per_vertex=app.per_vertex, per_search=app.per_search, original_ids=graph.original_ids)


def run_sweep_points(client, graph, source: int, plan, expected: np.ndarray, *, repeats: int, warmup: int,
                     limits, on_point: Callable, run_point: Callable, stop: Callable | None = None) -> bool:
    """Each sweep point on one worker (explorer.sweep.run_sweep with client=): `on_point(i,
    SweepPoint, device)` as points finish. `stop()` True (asked every POLL_S) cancels the points not
    yet finished; returns whether it did.

    The points go out in chunks (`sweep_chunks`: guided sizes over a spread order of the points),
    AHEAD a worker at a time: a worker that ends a chunk gets the next, so one whose points cost
    more (a plan's neighbours share knob values, and so costs) gets fewer, and the last chunks,
    of one point, even out the end. Each chunk may still go to another worker (one that dies). A
    task a point cost each point a task's scheduling and set-up, about 2-4 ms on a GPU host beside a
    Kronecker 22 point's 5 ms; a chunk pays it once, and its points are reported together when it
    ends."""
    import time
    from collections import deque

    from distributed import as_completed

    g, exp = on_workers(client, graph), _reference_sent(client, expected)
    workers = worker_addresses(client)
    if not workers:
        raise RuntimeError(f"the sweep's cluster has no workers ({client.scheduler.address}): start some, or wait "
                           "for them to join")
    pending = deque(sweep_chunks(len(plan.points), len(workers)))
    out: dict = {}  # future -> (its points, the worker it was sent to)
    ready = as_completed(with_results=True)  # each chunk's points fetched as it finishes

    def send(worker) -> None:
        points = pending.popleft()
        fut = client.submit(_sweep_points, run_point, g, source, plan, points, exp, repeats, warmup, limits,
                            pure=False, workers=[worker], allow_other_workers=True)
        out[fut] = (points, worker)
        ready.add(fut)

    for worker in workers * AHEAD:
        if pending:
            send(worker)
    while out:
        if stop is not None and stop():
            pending.clear()
            client.cancel(list(out))
            return True
        if not ready.has_ready():
            time.sleep(POLL_S)
            continue
        for fut, results in ready.next_batch(block=False):
            points, worker = out.pop(fut)
            for i, result in zip(points, results):
                on_point(i, *result)
            fut.release()
            if pending:
                send(worker)
    return False


def sweep_chunks(points: int, workers: int) -> list[list[int]]:
    """A sweep's points (0..points-1) in chunks: `guided` sizes over the points in a spread order (a
    fixed shuffle), so that a chunk does not hold one row of the plan's grid, whose points share a
    knob value and often a cost."""
    order = np.random.default_rng(0).permutation(points)
    return [order[lo:hi].tolist() for lo, hi in guided(order, workers)]


#: Chunks a sweep keeps on each worker at once: one running, one waiting behind it, so that a worker
#: never idles for the round trip that brings its next chunk.
AHEAD = 2

#: How often a sweep over workers looks for finished points and asks its stop(): a point of a large
#: graph takes about 0.08 s, and the sweep's last one is not waited for longer than this.
POLL_S = 0.005


def _reference_sent(client, expected):
    """The sweep's reference answer on the workers, sent once for as long as the caller keeps it
    (explorer.sweep keeps a graph's last): each worker's device check of it is made once too."""
    held = _SENT_REFERENCE.get(client.id)
    if not _still_sent(held, expected):
        held = _SENT_REFERENCE[client.id] = (expected, sent(client, expected))
    return held[1]


_SENT_REFERENCE: dict = {}  # client id -> (the last sweep reference sent to it, its future)


def _sweep_points(run_point, graph, source: int, plan, points: list, expected, repeats: int, warmup: int,
                  limits) -> list:
    graph = _fetched(graph)
    with _GPU:
        _on_worker()
        session = _session(graph)
        return [run_point(graph, source, plan, plan.points[i], repeats=repeats, warmup=warmup, limits=limits,
                          session=session, expected=expected) for i in points]


def _sweep_point(run_point, graph, source: int, plan, i: int, expected, repeats: int, warmup: int, limits):
    return _sweep_points(run_point, graph, source, plan, [i], expected, repeats, warmup, limits)[0]


__all__ = ["GPUCluster", "DistributedManyRun", "GraphRef", "check_client", "cpu_shares", "default_chunks",
           "forget", "guided", "merge", "on_every_worker", "pin_process", "split", "sweep_chunks", "warm",
           "warm_sweep", "worker_addresses", "worker_count"]
