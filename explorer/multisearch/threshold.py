"""The warp-thread hybrid's out-degree threshold T: as the API takes it, and chosen per graph from
its out-degree histogram (the paper's stated future work, §III-B and §IV-B)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: T = infinity (every vertex to the thread queue); kernels.multisearch.T_INFINITE.
T_INFINITE = 2**31 - 1
#: The paper's T (§III-B: "T = 16 worked best overall").
T_DEFAULT = 16


def parse_T(value) -> int | str | None:
    """T as the API takes it: None (the method's own), "auto", an int >= 0, or math.inf."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
        return None if value is None else "auto"
    if isinstance(value, float) and math.isinf(value) and value > 0:
        return T_INFINITE
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"T={value!r} is invalid: an out-degree threshold >= 0 (0: warp-based), "
                         "math.inf (work-efficient) or 'auto' (chosen from the out-degree histogram)")
    return min(int(value), T_INFINITE)


def T_label(T: int | None) -> str:
    return "∞" if T == T_INFINITE else str(T)


# -------------------------------------------------------------------------- choosing T

#: Candidate thresholds: the paper's Fig. 1 sweep (1..64) with T = 0 and infinity.
T_CANDIDATES = (0, 2, 4, 8, 12, 16, 24, 32, 48, 64, 128, T_INFINITE)
#: Warp steps besides the gather: a thread-queue vertex's load of its id and offsets; a
#: warp-queue vertex's shared-counter atomic, broadcast and offsets (estimates: calibrate on a GPU).
THREAD_OVERHEAD = 1.0
WARP_OVERHEAD = 2.0


@dataclass(frozen=True)
class ThresholdChoice:
    """T chosen from the out-degree histogram, and why."""

    T: int
    costs: dict = field(default_factory=dict)  # candidate T -> estimated warp steps per vertex
    small_share: float = 0.0  # reachable vertices with out-degree < T (the thread queue)
    reason: str = ""

    @property
    def label(self) -> str:
        return T_label(self.T)

    def table(self) -> list[dict]:
        """One row per candidate: T, estimated warp steps per vertex, relative to the best."""
        best = min(self.costs.values())
        return [{"T": T_label(t), "warp_steps_per_vertex": round(c, 4), "relative": round(c / best, 3),
                 "chosen": t == self.T} for t, c in self.costs.items()]


def _expected_max(counts: np.ndarray, draws: int = 32) -> float:
    """E[max of `draws` out-degrees drawn from the histogram `counts` (counts[d] vertices of
    out-degree d)]: sum over x >= 1 of P(max >= x) = 1 - F(x - 1)^draws."""
    total = counts.sum()
    if total == 0:
        return 0.0
    cdf = np.cumsum(counts) / total
    return float(np.sum(1.0 - cdf[:-1] ** draws))


def threshold_costs(out_degrees: np.ndarray, candidates=T_CANDIDATES) -> dict:
    """Estimated warp steps per reachable vertex for each candidate T.

    The cost model behind §III-B: a warp of 32 thread-queue vertices advances in lock step, so it
    takes as many steps as the largest of their out-degrees (plus THREAD_OVERHEAD); a warp-queue
    vertex takes ceil(d / 32) steps of its warp (plus WARP_OVERHEAD). Each reachable vertex is in
    one frontier per search, so the histogram weighs every vertex once."""
    d = np.asarray(out_degrees, dtype=np.int64)
    if d.size == 0:
        return {t: 0.0 for t in candidates}
    hist = np.bincount(d)
    n = d.size
    steps_warp = np.ceil(np.arange(hist.size) / 32.0) + WARP_OVERHEAD
    cum_warp = np.cumsum((hist * steps_warp)[::-1])[::-1]  # warp cost of degrees >= x
    costs = {}
    for t in candidates:
        cut = min(t, hist.size)
        small = hist[:cut]
        n_small = int(small.sum())
        thread = n_small / 32.0 * (_expected_max(small) + THREAD_OVERHEAD) if n_small else 0.0
        warp = float(cum_warp[cut]) if cut < hist.size else 0.0
        costs[t] = (thread + warp) / n
    return costs


def choose_threshold(graph, candidates=T_CANDIDATES) -> ThresholdChoice:
    """T for the warp-thread hybrid on `graph`: the candidate of least estimated cost (threshold_costs), ties
    going to the one nearest the paper's 16. Vertices no search can reach (in-degree 0 of a
    directed graph, degree 0 of an undirected one) are left out, as they are never in a frontier."""
    out = graph.degrees()
    indeg = out if not graph.directed else np.bincount(graph.indices, minlength=graph.num_vertices)
    reach = out[indeg > 0]
    costs = threshold_costs(reach, candidates)
    best = min(costs.values())
    tied = [t for t, c in costs.items() if c <= best * (1 + 1e-9)]
    T = min(tied, key=lambda t: (abs(math.log2(t + 1) - math.log2(T_DEFAULT + 1)), t))
    n = max(reach.size, 1)
    small = float(np.count_nonzero(reach < T)) / n
    hist = np.bincount(reach[reach < T]) if small else np.zeros(1, np.int64)
    emax = _expected_max(hist)
    big = reach[reach >= T]
    parts = []
    if small:
        parts.append(f"{small:.0%} of the reachable vertices have out-degree < {T_label(T)} and go to the "
                     f"thread queue, where a warp of 32 of them takes as long as the largest (about "
                     f"{emax:.1f} steps)")
    if big.size:
        parts.append(f"{1 - small:.0%} go to the warp queue (out-degree {int(big.min())}-{int(big.max())}, "
                     f"{np.mean(np.ceil(big / 32.0)):.1f} warp steps each)")
    ref = ", ".join(f"{costs[t]:.2f} at T={T_label(t)}" for t in (T_DEFAULT, 0, T_INFINITE) if t in costs and t != T)
    reason = (f"T={T_label(T)}: " + "; ".join(parts) + f". Estimated {best:.2f} warp steps per vertex"
              + (f", against {ref}" if ref else "") + ".")
    if len(tied) > 1:
        reason += f" T = {', '.join(T_label(t) for t in tied)} cost the same here; the one nearest the paper's 16 is taken."
    return ThresholdChoice(T=T, costs=costs, small_share=small, reason=reason)
