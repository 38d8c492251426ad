"""`python3 -m explorer calibrate`: every candidate of `auto` timed on a ladder of generated graphs on
this GPU, stored in the cache directory under the GPU's name (model.user_path), where `auto` finds it.

Each candidate runs once to warm up (its kernels compiled, its result checked in full against the
CPU reference), then `repeats` times uninstrumented, each result's distances compared with the
reference's; its time is the median elapsed ms (first launch to the last level's completion). A
candidate whose first timed run is `slow` times the fastest so far on that graph is stopped there,
its one time kept: it will not be chosen there, and the model needs only its order. A candidate that
cannot run on this device is kept as null, with the reason printed."""
from __future__ import annotations

import math
import statistics
from dataclasses import asdict
from typing import Callable

import numpy as np

from ..knobs import KnobError
from .candidates import CANDIDATES, Candidate, knob_values
from .model import Calibration, CalibrationError

#: (name, generator, its parameters): the families whose best techniques differ (skewed, uniform,
#: small-world, long thin rings, 2-D and 3-D grids, hubs), each at sizes from a launch's cost to a
#: few tens of millions of arcs, in steps of 4x in vertices (a step of 16x left graphs in between
#: to the model's extrapolation, and the best candidate changes there).
LADDER: tuple[tuple[str, str, dict], ...] = (
    *((f"kron{s}", "kronecker", {"scale": s, "edge_factor": 16, "seed": 1}) for s in (10, 12, 14, 16, 18, 20)),
    *((f"uniform{s}", "uniform_random", {"n": 1 << s, "m": 1 << (s + d), "seed": 1})
      for s, d in ((10, 3), (12, 4), (14, 4), (16, 4), (18, 4), (20, 5))),
    *((f"smallworld{s}", "watts_strogatz", {"n": 1 << s, "k": 10, "p": 0.3, "seed": 1})
      for s in (10, 12, 14, 16, 18, 20)),
    *((f"ring{s}", "watts_strogatz", {"n": 1 << s, "k": 2, "p": p, "seed": 1})
      for s, p in ((12, 0.02), (14, 0.01), (16, 0.005))),
    *((f"grid{r}", "grid2d", {"rows": r, "cols": r}) for r in (32, 64, 128, 256, 512, 1000)),
    *((f"grid3d{r}", "grid3d", {"nx": r, "ny": r, "nz": r}) for r in (10, 16, 32, 40, 64, 100)),
    *((f"hubs{s}", "luo_scale_free", {"n": 1 << s, "seed": 1}) for s in (14, 16, 18)),
)
#: Graphs of tens of vertices, for the simulator (the command's own test, not a GPU's calibration).
SMOKE_LADDER: tuple[tuple[str, str, dict], ...] = (
    ("kron5", "kronecker", {"scale": 5, "edge_factor": 4, "seed": 1}),
    ("ring6", "watts_strogatz", {"n": 64, "k": 2, "p": 0.05, "seed": 1}),
    ("grid6", "grid2d", {"rows": 6, "cols": 6}),
)


def calibrate(ladder=LADDER, candidates: tuple[Candidate, ...] = CANDIDATES, repeats: int = 5, slow: float = 20.0,
              progress: bool = True, say: Callable[[str], None] = print,
              after_graph: Callable[[Calibration], None] | None = None,
              resume: Calibration | None = None) -> Calibration:
    """Time `candidates` on the `ladder`'s graphs on the selected backend; the Calibration (not saved).
    `after_graph` gets the calibration of the graphs done so far after each one (the CLI saves it).
    `resume`: an interrupted calibration of the same candidates on this device, of the ladder's first
    graphs (what `after_graph` was given): its graphs are kept and the rest are measured."""
    from tqdm.auto import tqdm

    from .. import api, backend
    from ..engine import Session
    from ..graphs import generate, search_features
    from ..reference import bfs_distances

    if repeats < 1:
        raise ValueError(f"repeats={repeats}: at least 1")
    info = backend.current()
    device = info.as_dict()
    times: dict[str, list] = {c.name: [] for c in candidates}
    runs: dict[str, list] = {c.name: [] for c in candidates}
    graphs = []
    if resume is not None:
        _check_resumable(resume, ladder, candidates, info.device_name)
        graphs = list(resume.graphs)
        times = {n: list(resume.times[n]) for n in times}
        runs = {n: list(resume.runs.get(n) or [0] * len(graphs)) for n in runs}
        # when its first graphs were measured (the first start, however often it was resumed)
        device["resumed_from"] = resume.device.get("resumed_from") or resume.device.get("date", "")
    ladder = ladder[len(graphs):]
    bar = tqdm(total=len(ladder) * len(candidates), desc="calibrating", unit="run set", disable=not progress)
    for name, kind, params in ladder:
        g = generate(kind, **params)
        g.name = name
        source = api.Vertex(int(np.argmax(g.degrees())))
        expected = bfs_distances(g, source.vertex)
        graphs.append({"name": name, "generator": kind, "params": params, "features": asdict(search_features(g))})
        best = math.inf
        with Session(g) as session:
            for cand in candidates:
                bar.set_postfix_str(f"{name}: {cand.name}")
                try:
                    ms = _time(cand, g, source, expected, session, repeats, best * slow, info.is_simulator)
                except KnobError as err:
                    say(f"{name}: {cand.name} cannot run here: {err}")
                    ms = None
                times[cand.name].append(None if ms is None else round(statistics.median(ms), 5))
                runs[cand.name].append(0 if ms is None else len(ms))
                if ms:
                    best = min(best, statistics.median(ms))
                bar.update()
        if after_graph is not None:
            after_graph(Calibration(device=dict(device), graphs=list(graphs), times=times, runs=runs))
    bar.close()
    return Calibration(device=device, graphs=graphs, times=times, runs=runs)


def _check_resumable(cal: Calibration, ladder, candidates, device_name: str) -> None:
    """Raise CalibrationError unless `cal` is this device's, by these candidates, of the ladder's first graphs."""
    where = cal.origin or "the calibration to resume"
    if cal.gpu != device_name:
        raise CalibrationError(f"{where}: measured on {cal.gpu}, not on {device_name}: nothing to resume here")
    names = {c.name for c in candidates}
    extra, missing = sorted(set(cal.times) - names), sorted(names - set(cal.times))
    if extra or missing:
        differ = [f"it has {extra}"] * bool(extra) + [f"it lacks {missing}"] * bool(missing)
        raise CalibrationError(f"{where}: its candidates differ from these ({'; '.join(differ)})")
    for i, g in enumerate(cal.graphs):
        if i >= len(ladder) or (g.get("name"), g.get("params")) != (ladder[i][0], ladder[i][2]):
            want = f"{ladder[i][0]} {ladder[i][2]}" if i < len(ladder) else "none (the ladder has ended)"
            raise CalibrationError(f"{where}: graph {i + 1} is {g.get('name')} {g.get('params')}, "
                                   f"the ladder's is {want}")


def _time(cand: Candidate, g, source, expected, session, repeats: int, cap: float, simulator: bool) -> list[float]:
    """Elapsed ms of `repeats` runs of `cand` (one when the first passes `cap`), after a checked warm-up."""
    from .. import api
    from ..reference import check_result
    from ..techniques import implementation

    impl = implementation(cand.technique)
    cpu = impl.runtimes == frozenset({"cpu"})
    knobs = knob_values(cand, impl, simulator and not cpu)

    def once():
        return api.run_bfs(g, source, cand.technique, knobs, instrument=False,
                           session=None if cpu else session).complete()

    report = check_result(g, once(), expected=expected)
    if not report.ok:
        raise RuntimeError(f"calibration: {cand.name} gave a wrong result on {g.name}: [{report.rule}] {report.message}")
    out = []
    for _ in range(repeats):
        res = once()
        if not np.array_equal(res.distances, expected):
            raise RuntimeError(f"calibration: {cand.name} gave wrong distances on {g.name}")
        out.append(res.elapsed_ms)
        if out[0] > cap:
            break
    return out
