"""The techniques the explorer can run, and the knobs that tune them.

`Technique` is the one list of BFS strategies, each member documented with its paper and when it
wins. `Knobs` is the one declaration of every tunable: BFS-4K's K1..K7 with the paper's meaning,
valid range and default, plus the claim mode, the duplicate filter and the sizes the paper derives
by formula. Widgets, the CLI and the policy all read these declarations; nothing restates them.
"""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any


class TechniqueNotImplemented(NotImplementedError):
    """The technique is declared (so users can see it is planned) but has no kernel yet."""


class Technique(str, enum.Enum):
    """BFS strategies. Values are the names used in records, files, the CLI and the UI."""

    #: Top-down, one thread per frontier vertex, frontier kept as a queue; a vertex is claimed by
    #: atomic compare-and-swap on its distance, so no duplicates enter the next frontier. The
    #: "frontier-based" GPU BFS of the CS406 report (Sevilmis et al.). Wins on low, even degrees;
    #: loses on skewed degrees (one thread walks a hub's whole adjacency list).
    TOPDOWN_QUEUE = "topdown-queue"

    #: BFS-4K (Busato & Bombieri, TPDS 2015): per level, dynamic virtual warps or edge-discover,
    #: heavy-vertex child grids, single- or multi-block kernel, coalesced writes and hash64
    #: duplicate detection, all decided by the knobs K1..K7. Numba has no dynamic parallelism:
    #: the child grids are launched by the host right after the level's kernel, sized by the
    #: paper's rule, and a frontier with a heavy vertex leaves the single-block kernel for that.
    BFS4K = "bfs4k"

    #: Luo, Wong & Hwu (DAC 2010): hierarchical warp/block/grid frontier queues and kernels.
    LUO_HIERARCHICAL = "luo-hierarchical"

    #: Bottom-up: every unvisited vertex looks for a parent in the frontier (Beamer et al.), as
    #: studied in the CS406 report. Wins when the frontier holds most of the graph.
    BOTTOM_UP = "bottom-up"

    #: Direction-optimising hybrid: top-down while the frontier is small, bottom-up once it
    #: exceeds |V|/32 (the CS406 report's switch rule).
    HYBRID = "hybrid"

    @property
    def implemented(self) -> bool:
        return self in _IMPLEMENTED

    @property
    def doc(self) -> str:
        return _DOCS.get(self, "")

    @classmethod
    def parse(cls, value: "Technique | str") -> "Technique":
        """Accept a member or its value; reject unknown names and techniques with no kernel yet."""
        if isinstance(value, Technique):
            tech = value
        else:
            try:
                tech = cls(str(value).strip().lower())
            except ValueError:
                names = ", ".join(t.value for t in cls)
                raise ValueError(f"unknown technique {value!r}; known techniques: {names}") from None
        if not tech.implemented:
            raise TechniqueNotImplemented(
                f"technique {tech.value!r} is declared but not implemented yet; "
                f"implemented: {', '.join(t.value for t in implemented_techniques())}; "
                f"missing: {', '.join(t.value for t in missing_techniques())}"
            )
        return tech


_IMPLEMENTED = frozenset({Technique.TOPDOWN_QUEUE, Technique.BFS4K})


def implemented_techniques() -> list[Technique]:
    return [t for t in Technique if t.implemented]


def missing_techniques() -> list[Technique]:
    return [t for t in Technique if not t.implemented]


def _member_docs() -> dict[Technique, str]:
    """The `#:` comment above each member, so the UI shows the same text as the source."""
    import inspect
    import re

    docs: dict[Technique, str] = {}
    lines: list[str] = []
    for line in inspect.getsource(Technique).splitlines():
        stripped = line.strip()
        if stripped.startswith("#:"):
            lines.append(stripped[2:].strip())
            continue
        m = re.match(r"([A-Z_0-9]+)\s*=", stripped)
        if m and lines:
            docs[Technique[m.group(1)]] = " ".join(lines)
        lines = []
    return docs


_DOCS = _member_docs()


class KnobError(ValueError):
    """A knob value is outside its declared range; the message names the knob and the range."""


@dataclass(frozen=True)
class KnobSpec:
    """One tunable: its name, the paper's meaning, the valid values and the paper's default."""

    name: str
    meaning: str
    default: Any
    low: float | None = None  # inclusive numeric range ...
    high: float | None = None
    choices: tuple | None = None  # ... or an explicit set of values
    kind: type = int
    section: str = ""  # where the paper defines it

    def describe_range(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return f"{self.kind.__name__} in [{self.low}, {self.high}]"

    def check(self, value: Any) -> Any:
        if self.choices is not None:
            if value not in self.choices:
                raise KnobError(f"knob {self.name}={value!r} is invalid: {self.describe_range()}")
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise KnobError(f"knob {self.name}={value!r} is invalid: expected {self.describe_range()}")
        if self.kind is int and int(value) != value:
            raise KnobError(f"knob {self.name}={value!r} is invalid: expected an integer in [{self.low}, {self.high}]")
        if not (self.low <= value <= self.high):
            raise KnobError(f"knob {self.name}={value!r} is out of range: {self.describe_range()}")
        return self.kind(value)


def _knob(spec: KnobSpec):
    return field(default=spec.default, metadata={"spec": spec})


_POW2_BLOCKS = (32, 64, 128, 256, 512, 1024)


@dataclass(frozen=True)
class Knobs:
    """Every tunable of every technique, validated at construction.

    Techniques read the knobs they use and ignore the rest, so one `Knobs` can be carried
    between runs of different techniques for comparison.
    """

    K1: int = _knob(KnobSpec(
        "K1", "minimum dynamic virtual warp size: WarpSize_i = pow2_floor(#ResThreads/|F_i|) clamped to [K1, 32]",
        4, choices=(1, 2, 4, 8, 16, 32), section="BFS-4K §5.2"))
    K2: float = _knob(KnobSpec(
        "K2", "heavy vertices: % of |V| of the highest-degree frontier vertices (degree far above the average) "
        "handled by a child grid (launched by the host: Numba has no dynamic parallelism); 0 disables", 0.15, low=0.0, high=10.0, kind=float, section="BFS-4K §5.3"))
    K3: int = _knob(KnobSpec(
        "K3", "child-grid sizing: #Blocks = degree / (K3 x block size), i.e. neighbours walked per child thread",
        16, low=1, high=1024, section="BFS-4K §5.3"))
    K4: int = _knob(KnobSpec(
        "K4", "edge-discover instead of virtual warps when |F| < #ResThreads / K4; 0 disables edge-discover",
        2, choices=(0, 1, 2, 4), section="BFS-4K §5.4"))
    K5: int = _knob(KnobSpec(
        "K5", "single-block kernel while |F| < F_Threshold = MaxThreadsPerBlock x K5; 0 disables it",
        1, low=0, high=16, section="BFS-4K §5.5"))
    K6: int = _knob(KnobSpec(
        "K6", "threads per block of the multi-block kernel (also sizes its per-block hash table)",
        128, choices=_POW2_BLOCKS, section="BFS-4K §5.5"))
    K7: int = _knob(KnobSpec(
        "K7", "coalesced writes when the warp's minimum local-queue length reaches K7; 0 disables them",
        10, low=0, high=1024, section="BFS-4K §5.6"))
    claim: str = _knob(KnobSpec(
        "claim", "how a thread claims an unvisited vertex: 'race' is the paper's benign race (several threads "
        "may see it unvisited in one level, creating duplicates); 'atomic' is compare-and-swap (no duplicates)",
        "race", choices=("race", "atomic"), kind=str, section="BFS-4K §4, §6"))
    dedup: str = _knob(KnobSpec(
        "dedup", "duplicate filter on the next frontier: BFS-4K's shared-memory hash64, Merrill et al.'s "
        "warp culling, or none", "hash64", choices=("hash64", "warp-culling", "none"), kind=str,
        section="BFS-4K §6, Fig. 13"))
    warp_size_rule: str = _knob(KnobSpec(
        "warp_size_rule", "how a multi-block level's virtual warp size is chosen: 'resident-threads' is §5.2's "
        "pow2_floor(#ResThreads/|F_i|) clamped to [K1, 32]; 'frontier-degree' also raises it to the degree bin of the "
        "frontier's median vertex (a power of two, at most 32), from the histogram the host plans with, so a frontier "
        "of high-degree vertices gets whole warps and one of low-degree vertices keeps small ones. Not in the paper; "
        "the single block keeps §5.2's rule (it plans on the device, without the histogram)",
        "resident-threads", choices=("resident-threads", "frontier-degree"), kind=str,
        section="extension of BFS-4K §5.2"))
    visited: str = _knob(KnobSpec(
        "visited", "where the single-block kernel keeps the visited flags: 'global' (the distance array, as in the "
        "paper) or 'shared' (a bitmap of |V| bits in the block's shared memory beside F_d and F_d_new: a claim is a "
        "shared-memory atomic, not a global compare-and-swap, and the block logs its claims so that a grid over "
        "all SMs writes distances and parents after it; needs claim='atomic' and |V|/8 bytes of shared memory). "
        "Not in the paper: §5.5 keeps F_d, F_d_new and the hash table there, this keeps the flags too",
        "global", choices=("global", "shared"), kind=str, section="extension of BFS-4K §5.5"))
    cluster: int = _knob(KnobSpec(
        "cluster", "blocks the single-block kernel runs on: 1 is the paper's one block; C > 1 spreads it over a "
        "thread-block cluster of C SMs (compute capability 9.0+, e.g. H100) that share a hardware barrier and each "
        "other's shared memory: F_Threshold and #ResThreads grow C-fold, the visited bitmap is split over the blocks "
        "and a level costs one cluster barrier (needs visited='shared'). Not in the paper, whose GPUs had no clusters",
        1, choices=(1, 2, 4, 8, 16), section="extension of BFS-4K §5.5"))
    single_block_threads: int = _knob(KnobSpec(
        "single_block_threads", "MaxThreadsPerBlock of the single-block kernel", 1024,
        choices=_POW2_BLOCKS, section="BFS-4K §5.5"))
    hash_entries: int = _knob(KnobSpec(
        "hash_entries", "hash64 table entries per block (64-bit words); 0 = the paper's formula from shared memory",
        0, low=0, high=1 << 13, section="BFS-4K §5.5"))
    block_threads: int = _knob(KnobSpec(
        "block_threads", "threads per block of the simple (non-BFS-4K) kernels", 256,
        choices=_POW2_BLOCKS))

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = f.metadata["spec"].check(getattr(self, f.name))
            object.__setattr__(self, f.name, value)
        if self.cluster > 1 and self.visited != "shared":
            raise KnobError(f"knob cluster={self.cluster} splits the visited bitmap over the cluster's blocks: "
                            "it needs visited='shared' (or use cluster=1)")
        if self.hash_entries and self.hash_entries & (self.hash_entries - 1):
            raise KnobError(f"knob hash_entries={self.hash_entries} must be 0 or a power of two "
                            "(the paper's tables are powers of two)")

    @classmethod
    def specs(cls) -> list[KnobSpec]:
        return [f.metadata["spec"] for f in dataclasses.fields(cls)]

    @classmethod
    def spec(cls, name: str) -> KnobSpec:
        for s in cls.specs():
            if s.name == name:
                return s
        raise KnobError(f"unknown knob {name!r}; knobs: {', '.join(s.name for s in cls.specs())}")

    @classmethod
    def from_dict(cls, values: dict | None) -> "Knobs":
        values = dict(values or {})
        for name in values:
            cls.spec(name)  # unknown names fail here, with the list of knobs
        return cls(**values)

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    def replace(self, **changes) -> "Knobs":
        return self.from_dict({**self.as_dict(), **changes})


def recommend_knobs(graph_or_stats, base: "Knobs | None" = None) -> "tuple[Knobs, dict]":
    """BFS-4K §7's rules of thumb: knobs for a graph, with the reason for each.

    Takes a CSRGraph or its graphs.graph_stats() dict ("avg_degree", "std_degree", "max_degree";
    the paper's Table 1 calls the maximum degree "mode").
    """
    stats = graph_or_stats
    if not isinstance(stats, dict):
        from .graphs import graph_stats

        stats = graph_stats(graph_or_stats)
    avg, std, top = float(stats["avg_degree"]), float(stats["std_degree"]), int(stats["max_degree"])
    why = {}
    if avg >= 48 or std >= 48:
        k1, why["K1"] = 32, "high average degree or deviation: the largest minimum warp (§7)"
    elif avg >= 16 or std >= 24:
        k1, why["K1"] = 16, "medium-high average degree or deviation (§7: K1 grows with both)"
    elif avg >= 8 or std >= 12:
        k1, why["K1"] = 8, "medium average degree or deviation (§7: K1 grows with both)"
    else:
        k1, why["K1"] = 4, "low average degree and deviation, as road networks (§7)"
    if top > 2048:
        k2 = round(0.15 * min(1.0, 8 / k1), 4)
        why["K2"] = f"maximum degree {top} > 2048: heavy vertices pay; at most 0.15 %, smaller for larger K1 (§7)"
    else:
        k2, why["K2"] = 0.0, f"maximum degree {top} <= 2048: child grids would not pay (§7)"
    why["K3"] = "16 neighbours per child thread, the paper's device-tuned value (§7)"
    if avg >= 32 and std >= 32:
        k4, why["K4"] = 0, "high average and deviation: large virtual warps beat edge-discover (§7)"
    elif std >= 24 and avg < 16:
        k4, why["K4"] = 2, "low average, high deviation, as com-youtube (§7)"
    else:
        k4, why["K4"] = 1, "medium deviation, as kkt_power and web-Google (§7)"
    if avg >= 32:
        k5, why["K5"] = 0, "high average degree: enough parallelism for the multi-block kernel (§7)"
    else:
        k5, why["K5"] = 1, "the paper's usual trade-off between parallelism and synchronisation (§7)"
    why["K6"] = "128 threads per block, the paper's device-tuned value (§7)"
    why["K7"] = "10, the paper's device-tuned write-mode threshold (§7)"
    knobs = (base or Knobs()).replace(K1=k1, K2=k2, K3=16, K4=k4, K5=k5, K6=128, K7=10)
    return knobs, why
