"""`choose`: the candidate the cost model predicts fastest among those that can run here, and why."""
from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field
from typing import Callable

from ..graphs.stats import SearchFeatures, search_features
from ..knobs import KnobError
from .candidates import CANDIDATES, by_name, knob_values
from .model import DEFAULT_GPU, Calibration, CalibrationError, CostModel, find

AUTO = "auto"
#: Why knobs beside "auto" are refused.
TAKES_NO_KNOBS = "technique 'auto' chooses its own knobs: name a technique to set knobs"
#: On a GPU, the candidates predicted within WITHIN times the fastest (at most CONTENDERS of them)
#: are timed on the graph itself at its first search, TRIAL_RUNS runs each, and the fastest is kept
#: for the graph: the model sees sizes and shapes, not everything (on facebook_combined it ranked
#: the grid form first and one cluster of 8 fourth, 1.11x slower, which is 1.3x faster there; on
#: the ladder's kron12 they are even). A lone contender runs once: what a GPU can hold (a cluster
#: with the shared memory this graph's levels need) is known only when its kernel is set up.
WITHIN, CONTENDERS, TRIAL_RUNS = 1.25, 4, 3


def is_auto(technique) -> bool:
    return isinstance(technique, str) and technique.strip().lower() == AUTO


@dataclass(frozen=True)
class Choice:
    """What `auto` chose for a graph, and why."""

    candidate: str  # the candidate's name (candidates.py)
    technique: str
    knobs: dict  # the knobs it runs with (the simulator's where it runs there)
    predicted: dict  # candidate -> predicted ms, those that can run here, fastest first
    excluded: dict  # candidate -> why it cannot run here
    features: SearchFeatures
    calibration: str  # whose measurements: the GPU and the date
    notes: tuple = field(default=())  # what else the user should know (another GPU's calibration, ...)
    measured: dict = field(default_factory=dict)  # contender -> its fastest trial run on this graph (ms)

    @property
    def predicted_ms(self) -> float:
        return self.predicted[self.candidate]

    def runner_up(self) -> tuple[str, float] | None:
        """The next candidate of another technique, and how many times slower it is predicted (below 1
        where the trials on the graph chose a candidate the model did not rank first)."""
        tech = {c.name: c.technique for c in CANDIDATES}
        for name, ms in self.predicted.items():
            if tech.get(name) != self.technique:
                return name, ms / self.predicted_ms
        return None

    def reason(self) -> str:
        """One line: what was chosen, the graph features that decided it, the runner-up."""
        f = self.features
        text = (f"auto: {self.candidate} ({f.levels:,} levels expected, mean degree {f.avg_degree:.3g}, "
                f"degree skew {f.skew:.3g}; predicted {self.predicted_ms:.3g} ms")
        ru = self.runner_up()
        if ru is not None:
            name, times = ru
            text += f"; {name} predicted " + (f"{times:.2g}x slower" if times >= 1 else f"{1 / times:.2g}x faster")
        if self.measured:
            text += "; timed on this graph: " + ", ".join(f"{name} {ms:.3g} ms" for name, ms in self.measured.items())
        return text + f"; calibrated on {self.calibration})" + "".join(f"; {n}" for n in self.notes)

    def as_dict(self) -> dict:
        return {"candidate": self.candidate, "technique": self.technique, "knobs": dict(self.knobs),
                "reason": self.reason(), "predicted_ms": {k: round(v, 5) for k, v in self.predicted.items()},
                "excluded": dict(self.excluded), "features": self.features.as_dict(),
                "calibration": self.calibration, "measured_ms": {k: round(v, 5) for k, v in self.measured.items()}}


@functools.lru_cache(maxsize=8)
def _model(path: str, mtime: float) -> CostModel:
    return CostModel(Calibration.load(path))


def model_for(gpu: str) -> CostModel:
    """The cost model of `gpu`'s calibration (model.find), fitted once while its file is unchanged."""
    path = find(gpu)
    return _model(str(path), path.stat().st_mtime)


@functools.lru_cache(maxsize=None)
def _prepared(name: str, simulator: bool):
    """(its implementation, its KnobSet, or the KnobError its knobs' own rules raise) of candidate
    `name`, under the simulator or not: the same for every graph, so built once."""
    from ..techniques import implementation, make_knobs

    cand = by_name(name)
    impl = implementation(cand.technique)
    try:
        return impl, make_knobs(cand.technique, knob_values(cand, impl, simulator and "cpu" not in impl.runtimes))
    except KnobError as err:
        return impl, err


#: Each graph's trials while the graph lives: {(calibration file, limits): {contender: ms, or why it
#: cannot set up}}.
_TRIALS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def choose(graph, limits, backend_kind: str | None, model: CostModel | None = None,
           timer: Callable[[str, object], float] | None = None) -> Choice:
    """The candidate predicted fastest on `graph` among those that can run on `backend_kind` ("gpu",
    "simulator", or None: no GPU and no simulator, the CPU techniques only) with `limits` (the
    device's DeviceLimits): its knobs pass their rules and the technique's check of this device.
    Under the simulator a candidate runs with its technique's simulator knobs (candidates.knob_values).
    `timer(technique, knobs)`: the ms of a search of `graph` with them (run_bfs gives one on a GPU);
    with it, the contenders (WITHIN) are timed once per graph and the fastest is chosen, and one that
    cannot set up here is left out (_trials). Without it, deterministic for a given calibration.
    Raises KnobError when no candidate can run."""
    notes = []
    if model is None:
        gpu = limits.name if backend_kind == "gpu" else None
        model = model_for(gpu or DEFAULT_GPU)
        if gpu and model.calibration.gpu != gpu:
            notes.append(f"this GPU ({gpu}) has no calibration of its own: python3 -m explorer calibrate")
    if backend_kind is None:
        notes.append("no GPU and no simulator: the CPU techniques")
    if backend_kind == "simulator":
        notes.append("simulator: the GPU's choice, with the simulator's block sizes and clusters of 2")
    features = search_features(graph)
    predicted = model.predict(features)
    runnable, excluded = {}, {}
    for cand in CANDIDATES:
        if cand.name not in predicted:
            excluded[cand.name] = "not in the calibration"
            continue
        impl, knobs = _prepared(cand.name, backend_kind == "simulator")
        where = "cpu" if impl.runtimes == frozenset({"cpu"}) else backend_kind
        if where is None or where not in impl.runtimes:
            excluded[cand.name] = f"runs on {', '.join(sorted(impl.runtimes))}, not available here"
            continue
        try:
            if isinstance(knobs, KnobError):
                raise knobs
            if where != "cpu":
                impl.check(graph, knobs, limits)
        except KnobError as err:
            excluded[cand.name] = str(err)
            continue
        runnable[cand.name] = (cand, knobs, predicted[cand.name])
    if not runnable:
        raise _none_runs(excluded)
    order = sorted(runnable, key=lambda name: (runnable[name][2], name))
    measured = {}
    if timer is not None:
        measured, failed = _trials(graph, (model.calibration.origin, limits), runnable, order, timer)
        excluded.update(failed)
        order = [name for name in order if name not in failed]
        if not order:
            raise _none_runs(excluded)
    pick = min(measured, key=measured.get) if measured else order[0]
    cand, knobs, _ = runnable[pick]
    cal = model.calibration
    first, last = cal.device.get("resumed_from", "")[:10], cal.device.get("date", "?")[:10]
    when = f"{first} to {last}" if first and first != last else last  # a resumed calibration's days
    return Choice(candidate=cand.name, technique=cand.technique, knobs=knobs.as_dict(),
                  predicted={name: runnable[name][2] for name in order}, excluded=excluded, features=features,
                  calibration=f"{cal.gpu}, {when}", notes=tuple(notes), measured=measured)


def _none_runs(excluded: dict) -> KnobError:
    return KnobError("auto: no technique can run here: " + "; ".join(f"{k}: {v}" for k, v in excluded.items()))


def share_trials(graph, like) -> None:
    """Let `graph` and `like` (a graph built from it, e.g. with a super-source) keep one record of
    trials: the contenders timed on either are not timed again on the other."""
    _TRIALS[graph] = _TRIALS.setdefault(like, {})


def _trials(graph, key, runnable: dict, order: list, timer) -> tuple[dict, dict]:
    """({contender: its fastest timed search}, {candidate: why it failed to set up here}): the
    contenders (WITHIN, CONTENDERS) run TRIAL_RUNS times each, a lone one once, at the graph's first
    choice under `key`, and kept with the graph. A contender that cannot set up on this GPU (a
    KnobError: a cluster it cannot place) is left out with its reason, and the contenders of the
    candidates left are run in its place: auto never stays on a technique that cannot run."""
    kept = _TRIALS.setdefault(graph, {}).setdefault(key, {})  # candidate -> ms, or why it failed
    contenders = []
    while True:
        live = [n for n in order if not isinstance(kept.get(n), str)]
        if not live:
            break
        contenders = [n for n in live[:CONTENDERS] if runnable[n][2] <= runnable[live[0]][2] * WITHIN]
        runs = TRIAL_RUNS if len(contenders) > 1 else 1
        for n in contenders:
            if n not in kept:
                kept[n] = _timed(timer, runnable[n], runs)
        if not any(isinstance(kept[n], str) for n in contenders):
            break
    failed = {n: why for n, why in kept.items() if isinstance(why, str) and n in runnable}
    return {n: kept[n] for n in contenders if not isinstance(kept[n], str)}, failed


def _timed(timer, entry, runs: int) -> float | str:
    """The fastest of `runs` searches of candidate `entry` (candidate, knobs, predicted), or why it
    cannot set up here."""
    cand, knobs, _ = entry
    try:
        return min(timer(cand.technique, knobs) for _ in range(runs))
    except KnobError as err:
        return str(err)


__all__ = ["AUTO", "CONTENDERS", "TAKES_NO_KNOBS", "TRIAL_RUNS", "WITHIN", "CalibrationError", "Choice", "choose",
           "is_auto", "model_for", "share_trials"]
