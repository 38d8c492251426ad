"""run_many's method "auto": the methods that can run the application timed on a sample of the
sources on this GPU, and the fastest per search chosen.

Many searches take seconds to minutes, so timing every method on a device-filling sample (the
searches one GPU runs side by side, at most a quarter of the sources) costs a small share of the
run and measures what a model would guess. Where that costs little (the next round, on twice the
sources, would take at most GROW_MS of GPU time), the methods are timed again on twice as many
sources, up to all of them: a method whose time grows slower than its sources is judged at the
run's own size, not by a per-search time taken from fewer (on an H100, bit-parallel ran 256 or
1,024 sources of facebook_combined in about the same passes, and the quarter's per-search times
chose warp-based, 1.6x slower at 1,024). The choice is kept with the graph for the application,
so a second run of it times nothing. Under the simulator the times would be the simulator's: the
default method, warp-thread, which runs every application, and the choice says so."""
from __future__ import annotations

import dataclasses
import time
import weakref
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..auto import AUTO, is_auto  # noqa: F401  (one spelling of "auto" for techniques and methods)
from .methods import Method, implementation

#: The method chosen without timing: under the simulator, or with too few sources to time on. The
#: paper's fastest on 10 of its 12 graphs, and it runs every application.
DEFAULT = Method.WARP_THREAD
#: Fewest sources a sample may have: below it, per-search times are launch costs.
FEWEST = 32
#: GPU time (ms) the next round of trials, on twice the sources, may take for the methods to be
#: timed again on them (rounds stop at all the sources).
GROW_MS = 200.0
#: Above this many arcs edge-parallel is not timed: it scans every arc at every level of every
#: search, and was its paper's slowest method on every graph (10-100x on long ones).
EDGE_PARALLEL_ARCS = 1 << 22


@dataclass(frozen=True)
class MethodChoice:
    """What method "auto" chose for an application on a graph, and why."""

    method: str
    application: str
    measured: dict  # method -> GPU ms a search in its last trial, fastest first (empty: not timed)
    excluded: dict  # method -> why it was not timed
    sample: int  # the sources each method was last timed on (0: none)
    sources: int  # the run's sources
    trial_s: float = 0.0  # host seconds the trials took (kernels compiled on first use included)
    notes: tuple = field(default=())

    def reason(self) -> str:
        text = f"auto: {self.method}"
        if self.measured:
            times = ", ".join(f"{m} {ms:.3g} ms" for m, ms in self.measured.items())
            text += (f" (timed on {self.sample:,} of the {self.sources:,} sources: GPU time a search {times}; "
                     f"the trials took {self.trial_s:.2f} s)")
        return text + "".join(f"; {n}" for n in self.notes)

    def as_dict(self) -> dict:
        return {"method": self.method, "reason": self.reason(), "measured_ms": {k: round(v, 6) for k, v in
                                                                                  self.measured.items()},
                "excluded": dict(self.excluded), "sample": self.sample, "sources": self.sources,
                "trial_s": round(self.trial_s, 3)}


#: Each graph's choices while the graph lives: {application name: MethodChoice}.
_CHOICES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def sample_of(sources: np.ndarray, resident: int) -> np.ndarray:
    """The sources a first trial times: `resident` of them (what fills the device), at most a
    quarter (none below FEWEST)."""
    m = min(int(resident), len(sources) // 4)
    return spread(sources, m) if m >= FEWEST else sources[:0]


def spread(sources: np.ndarray, m: int) -> np.ndarray:
    """m of the sources, evenly spaced through the list (sources "all" are in vertex order)."""
    if m >= len(sources):
        return sources
    return sources[np.linspace(0, len(sources) - 1, m).round().astype(np.int64)]


def choose_method(graph, sources: np.ndarray, app, *, simulator: bool, resident: int,
                  run: Callable[[Method, np.ndarray], object]) -> MethodChoice:
    """The method for `app` on `graph`: each method that can run it timed by `run(method, sample)`
    (a finished MultiSearchResult; its batches' GPU time), on a sample and then, while cheap, on
    twice as many sources up to all of them; the fastest per search in the last round kept with
    the graph. `sources`: the run's vertices 0..n-1; `resident`: the searches the device runs at
    once."""
    kept = _CHOICES.get(graph, {}).get(app.name)
    if kept is not None:  # its numbers are that run's
        return dataclasses.replace(kept, notes=kept.notes + ("chosen at an earlier run of it on this graph",))
    excluded, able = {}, []
    for m in Method:
        try:
            implementation(m).check(app)
        except ValueError as err:
            excluded[m.value] = str(err)
            continue
        if m is Method.EDGE_PARALLEL and graph.num_arcs > EDGE_PARALLEL_ARCS:
            excluded[m.value] = (f"not timed above {EDGE_PARALLEL_ARCS:,} arcs: it scans every arc at every level "
                                 "of every search")
            continue
        able.append(m)
    sample = sample_of(sources, resident)
    untimed = ("simulator: its times are not a GPU's, so the default method" if simulator else
               f"fewer than {4 * FEWEST} sources to time the methods on: the default method" if len(sample) == 0
               else None)
    if untimed is not None:
        return MethodChoice(DEFAULT.value, app.name, {}, excluded, 0, len(sources), 0.0, (untimed,))
    t0 = time.perf_counter()
    while True:  # rounds on twice the sources while they are cheap, up to all of them
        measured, gpu_ms = {}, 0.0
        for m in able:
            try:
                result = run(m, sample)
            except ValueError as err:  # a setting this method refuses (slots=, word_bits=, ...)
                excluded[m.value] = str(err)
                continue
            measured[m.value] = result.time_ms / len(sample)
            gpu_ms += result.time_ms
        able = [m for m in able if m.value in measured]
        if not measured or len(sample) == len(sources) or 2 * gpu_ms > GROW_MS:
            break
        sample = spread(sources, 2 * len(sample))
    if not measured:
        raise ValueError("method='auto': no method can run this: "
                         + "; ".join(f"{k}: {v}" for k, v in excluded.items()))
    measured = dict(sorted(measured.items(), key=lambda kv: kv[1]))
    choice = MethodChoice(next(iter(measured)), app.name, measured, excluded, len(sample), len(sources),
                          time.perf_counter() - t0)
    _CHOICES.setdefault(graph, {})[app.name] = choice
    return choice


__all__ = ["AUTO", "DEFAULT", "MethodChoice", "choose_method", "is_auto", "sample_of", "spread"]
