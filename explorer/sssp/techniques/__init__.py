"""The single-source shortest-path techniques: one documented enum member each, and the registry.

`SSSPTechnique` is the one list of weighted strategies, each member documented with its paper
and when it wins (the `#:` comment above it is what the UI and the CLI show); `_REGISTRY` maps a
member to the class that implements it (`base.ShortestPathTechnique`), one line each, imported
only when used. Adding a technique is its own module plus one member and one registry line here,
as for the BFS techniques (ARCHITECTURE.md).
"""
from __future__ import annotations

import enum

from ...knobs import KnobSet
from ...registry import instantiate, knobs_from, member_docs


class SSSPTechnique(str, enum.Enum):
    """Shortest-path strategies. Values are the names used in records, files, the CLI and the UI."""

    #: Frontier-based Bellman-Ford (the chapter's §3.2, Algorithm 5): a thread per frontier vertex
    #: relaxes its arcs (d(u) + w < d(v): a 64-bit atomic min on d(v)) and queues every vertex it
    #: improves, as often as it improves it (duplicates kept unless dedup='stamp'). Work O(|V||E|)
    #: at worst, but every iteration is parallel. Handles negative weights and detects a negative
    #: cycle reachable from the source. Wins on small, even-degree graphs; loses on skewed degrees
    #: (one thread walks a hub's arcs) and where the duplicates snowball.
    BELLMAN_FORD = "bellman-ford"

    #: H-BF (Busato & Bombieri, TPDS 2015; the chapter's §3.2): frontier Bellman-Ford with BFS-4K's
    #: load balancing underneath (dynamic virtual warps sized to the frontier, at least BFS-4K §7's
    #: K1 for the graph's degrees, heavy vertices' arcs walked by a grid of their own), distance and
    #: parent updated together by one 64-bit atomic min on a packed word (only for an arc whose
    #: d(u) + w beats a plain read of it), every vertex queued once an iteration (duplicate removal), and
    #: edge classification (no atomic into in-degree-1 vertices, self loops skipped, sinks never
    #: queued). Handles negative weights and detects negative cycles. Wins on irregular graphs
    #: (scale-free, Kronecker) and small-diameter ones, where duplicates would pile up.
    HBF = "h-bf"

    #: Δ-stepping (Meyer & Sanders 2003; Davidson et al.'s GPU forms, IPDPS 2014; the chapter's §3.1):
    #: distances settled bucket by bucket, [bΔ, (b+1)Δ); inside a bucket its vertices relax until it
    #: empties, improvements beyond it wait as far vertices; near-far advances one bucket at a time,
    #: bucketing jumps to the next non-empty one. Δ = 1 is nearly Dijkstra, Δ = inf Bellman-Ford;
    #: the default is Davidson's cw/d (warp width x mean weight / mean degree). Needs non-negative
    #: weights. Wins on graphs with wide weight ranges and large diameters (road networks), where
    #: Bellman-Ford re-relaxes the same vertices many times.
    DELTA_STEPPING = "delta-stepping"

    @property
    def implemented(self) -> bool:
        return self in _REGISTRY

    @property
    def doc(self) -> str:
        return _DOCS.get(self, "")

    @classmethod
    def parse(cls, value: "SSSPTechnique | str") -> "SSSPTechnique":
        if isinstance(value, SSSPTechnique):
            return value
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            names = ", ".join(t.value for t in cls)
            raise ValueError(f"unknown shortest-path technique {value!r}; techniques: {names}") from None


#: Member -> "module:Class" of its implementation, relative to this package. One line a technique.
_REGISTRY = {
    SSSPTechnique.BELLMAN_FORD: "bellman_ford:BellmanFord",
    SSSPTechnique.HBF: "hbf:HBF",
    SSSPTechnique.DELTA_STEPPING: "delta_stepping:DeltaStepping",
}


def sssp_techniques() -> list[SSSPTechnique]:
    return [t for t in SSSPTechnique if t.implemented]


def implementation(technique: "SSSPTechnique | str"):
    """The technique's implementation (a base.ShortestPathTechnique)."""
    tech = SSSPTechnique.parse(technique)
    return instantiate(__name__, _REGISTRY[tech])


def knobs_of(technique) -> type[KnobSet]:
    return implementation(technique).Knobs


def make_knobs(technique, values: "KnobSet | dict | None" = None) -> KnobSet:
    """Knobs for `technique` from a dict (unknown names and bad values raise KnobError)."""
    return knobs_from(knobs_of(technique), values, SSSPTechnique.parse(technique).value)


_DOCS = member_docs(SSSPTechnique)
