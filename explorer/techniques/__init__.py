"""The techniques the explorer can run: one documented enum member each, and the registry.

`Technique` is the one list of BFS strategies, each member documented with its paper and when it
wins (the `#:` comment above it is what the UI and the CLI show). `_REGISTRY` maps a member to the
class that implements it (`base.BFSTechnique`), one line each, imported only when used. Adding a
technique is its own module plus one member and one registry line here (ARCHITECTURE.md).
"""
from __future__ import annotations

import enum

from ..knobs import KnobError, KnobSet, KnobSpec  # noqa: F401  (re-exported: the knobs' home for users)
from ..registry import instantiate, knobs_from, member_docs


class TechniqueNotImplemented(NotImplementedError):
    """The technique is declared (so users can see it is planned) but has no implementation yet."""


class Technique(str, enum.Enum):
    """BFS strategies. Values are the names used in records, files, the CLI and the UI."""

    #: Top-down, one thread per frontier vertex, frontier kept as a queue; a vertex is claimed by
    #: atomic compare-and-swap on its distance, so no duplicates enter the next frontier. The
    #: "frontier-based" top-down GPU BFS of the CS406 report (Sevilmis et al., §5.2; the report
    #: checks and writes distances without an atomic, so its queue may repeat a vertex; its
    #: layer-based top-down, §5.1, is `harish`). Wins on low, even degrees;
    #: loses on skewed degrees (one thread walks a hub's whole adjacency list).
    TOPDOWN_QUEUE = "topdown-queue"

    #: BFS-4K (Busato & Bombieri, TPDS 2015): per level, dynamic virtual warps or edge-discover,
    #: heavy-vertex child grids, single- or multi-block kernel, coalesced writes and hash64
    #: duplicate detection, all decided by the knobs K1..K7. Numba has no dynamic parallelism:
    #: the child grids are launched by the host right after the level's kernel, sized by the
    #: paper's rule, and a frontier with a heavy vertex leaves the single-block kernel for that.
    BFS4K = "bfs4k"

    #: Harish & Narayanan (IIIT-BFS, HiPC 2007; chapter §2.1, BFS-4K §3): no frontier queue; each
    #: level a thread per vertex reads its level and expands the vertices of the current one, until a
    #: level reaches nothing. Work O(V·D + E): every level scans all |V| vertices. It is also the
    #: CS406 report's layer-based top-down (§5.1), which differs only in how it is written: a
    #: distance == layer test instead of Harish's frontier flags, a grid-stride loop (its launch
    #: gives a thread per vertex anyway) and a count of the layer instead of a "changed" flag.
    #: Here a vertex is claimed by compare-and-swap (both write without atomics), so each level's
    #: count, and the parent tree, are exact. Wins when the search has few levels and big
    #: frontiers (dense graphs, small diameter); loses badly on long, narrow searches (road
    #: networks, meshes: O(V²) when D = O(V)).
    HARISH = "harish"

    #: Edge-parallel (Jia et al.; chapter §1.3 and §2.1, multi-search paper §IV, BFS-4K §3): each
    #: level a thread per arc of the whole graph (COO: source and destination arrays) claims the
    #: destination of every arc whose source is at the current level. Work O(E·D). Perfect load
    #: balance and coalescing whatever the degrees: wins when the frontier holds much of the graph
    #: and degrees are skewed (Kronecker, social graphs); loses on long searches and high |E|/|V|.
    EDGE_PARALLEL = "edge-parallel"

    #: Static virtual warps (Hong, Kim, Oguntebi & Olukotun, PPoPP 2011; chapter §5.1.2, BFS-4K §3
    #: and Table 2): a fixed group of W threads per vertex strides over its adjacency list; W = 1..32
    #: for the whole search (BFS-4K makes it dynamic). As Hong et al., the virtual warps scan every
    #: vertex each level (work O(V·D + E); W = 1 is Harish), or with frontier='queue' they take a
    #: frontier queue's entries. Wins when W fits the degrees (Table 2's best: W1 on roads and
    #: meshes, W2-W4 on social graphs, W16 on uniform random, W32 on Kronecker); loses when the
    #: degrees vary too much for one W (idle lanes, or a hub walked by few threads).
    VIRTUAL_WARP = "virtual-warp"

    #: Luo, Wong & Hwu (UIUC-BFS, DAC 2010, §3): a thread per frontier vertex, compare-and-swap
    #: claims, hierarchical frontier queues (each warp's W-queue in shared memory written without
    #: collisions by ballot, the block's B-queue as their union, its place in the grid's G-queue by
    #: one atomic a block, coalesced copies) and three kernel layers by frontier size: one block
    #: running levels with block barriers while the frontier fits it, a grid-synchronised
    #: (cooperative) kernel of co-resident blocks with one grid barrier a level, one launch a level
    #: beyond. Wins on long searches with small, even-degree frontiers (grids, meshes, road
    #: networks): no host round trip a level; loses on skewed degrees (a thread walks a hub's list).
    LUO_HIERARCHICAL = "luo-hierarchical"

    #: Merrill, Garland & Grimshaw (PPoPP 2012; chapter §2.1, §5.2.2; BFS-4K Table 2's "Garland"):
    #: CTA + warp + scan gathering (Algorithm 9: lists longer than CTA_TH walked by the whole block,
    #: longer than WARP_TH by a warp, the rest through a block prefix sum), visited status set
    #: without atomics, and the duplicates that race makes thinned by warp culling and history
    #: culling (the record says what each dropped). Work O(V + E). Wins on very irregular degrees
    #: where the CTA and warp phases fire (Kronecker, social graphs); loses on regular graphs, where
    #: they never fire but their checks and block barriers cost (roads, meshes).
    MERRILL = "merrill"

    #: The load-balancing catalogue of the chapter's §5 as the values of one `expand` knob of a
    #: top-down BFS: work-items to threads, static and dynamic virtual warps (+ heavy vertices, their
    #: child grids launched by the host: Numba has no dynamic parallelism), CTA+warp+scan, direct,
    #: local warp, block, two-phase and multi-phase search; one compare-and-swap claim and one warp
    #: flush for all, so only the mapping differs. Each value's knob doc says when it wins: work-items
    #: on even, low degrees (roads, meshes), multi-phase on uneven degrees below a warp (web, social,
    #: circuits), CTA+warp+scan and large virtual warps on Kronecker graphs (the chapter's Figs. 12-15).
    LOAD_BALANCE = "load-balance"

    #: Bottom-up (Beamer et al., SC'12; CS406 report §3.1.2): every level a thread per vertex; an
    #: unvisited vertex walks its in-edges (a reverse CSR on a directed graph) and stops at the first
    #: neighbour in the frontier, read as a bitmap or as dist == level. No claims, no duplicates.
    #: Wins when the frontier holds much of the graph; loses on small frontiers and long searches
    #: (every level checks every unvisited vertex).
    BOTTOM_UP = "bottom-up"

    #: The CS406 report's hybrid (§3.1.3, §5): top-down while the frontier holds fewer than |V|/32
    #: vertices (the divisor is a knob), bottom-up otherwise, in the report's layer-based or
    #: frontier-based form. Wins on low-diameter graphs whose middle levels hold much of the graph.
    HYBRID = "hybrid"

    #: Direction-optimizing BFS (Beamer, Asanović & Patterson, SC'12): top-down until the frontier's
    #: edges m_f exceed m_u/α (the unvisited vertices' edges), bottom-up until the shrinking frontier
    #: holds fewer than n/β vertices; queue and bitmap frontiers converted on the device. Small
    #: frontiers run in BFS-4K's single block (or cluster), the others in one persistent grid that
    #: decides each level's direction on the device: a launch and a read-back per step of many
    #: levels. Wins on low-diameter graphs with skewed degrees (Kronecker, social); on long searches
    #: it runs top-down in BFS-4K's single block.
    DIRECTION_OPTIMIZING = "direction-optimizing"

    #: Direction-optimizing BFS on bitmaps, the whole search in one cooperative launch (Beamer et
    #: al., SC'12, as GAP decides; run as BLEST runs it: Elbek & Kaya 2025): the in-adjacency
    #: bit-packed once a graph (a 32-bit mask for each word of 32 in-neighbours), so a bottom-up
    #: step tests 32 candidate parents with one AND; a vertex order prepared first (degree, reverse
    #: Cuthill-McKee; timed apart); narrow top-down levels in one block. Every level decided on the
    #: device and logged to host memory while the kernel runs. Wins on low-diameter graphs, where a
    #: launch or a read-back a level would cost more than the level; on long thin searches it runs
    #: in one block (BFS-4K's single block does as well).
    BITMAP_DIRECTION = "bitmap-direction"

    #: CPU multicore top-down (CS406 report §4, Numba parallel=True): the frontier split into chunks
    #: of equal edges, each with its own local frontier, merged by prefix sums; claims by
    #: compare-and-swap. Wins where there is no GPU, and on small graphs where a launch costs more
    #: than a level.
    CPU_TOPDOWN = "cpu-topdown"

    #: CPU multicore bottom-up (CS406 report §4.2.2): the frontier as a bit-set, each chunk of
    #: vertices writing its own words of the next one. Wins on the CPU when frontiers are large.
    CPU_BOTTOM_UP = "cpu-bottom-up"

    #: CPU multicore hybrid (CS406 report §3.1.3, §4): cpu-topdown below |V|/32 frontier vertices,
    #: cpu-bottom-up above. The report's best CPU form on low-diameter graphs.
    CPU_HYBRID = "cpu-hybrid"

    @property
    def implemented(self) -> bool:
        return self in _REGISTRY

    @property
    def doc(self) -> str:
        return _DOCS.get(self, "")

    @classmethod
    def parse(cls, value: "Technique | str") -> "Technique":
        """Accept a member or its value; reject unknown names and techniques not implemented yet."""
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


#: Member -> "module:Class" of its implementation, relative to this package. One line a technique.
_REGISTRY = {
    Technique.TOPDOWN_QUEUE: "topdown_queue:TopdownQueue",
    Technique.BFS4K: "bfs4k:BFS4K",
    Technique.LUO_HIERARCHICAL: "luo:LuoHierarchical",
    Technique.HARISH: "harish:Harish",
    Technique.EDGE_PARALLEL: "edge_parallel:EdgeParallel",
    Technique.VIRTUAL_WARP: "virtual_warp:VirtualWarp",
    Technique.MERRILL: "merrill:Merrill",
    Technique.LOAD_BALANCE: "load_balance:LoadBalance",
    Technique.BOTTOM_UP: "bottom_up:BottomUp",
    Technique.HYBRID: "hybrid:Hybrid",
    Technique.DIRECTION_OPTIMIZING: "direction_optimizing:DirectionOptimizing",
    Technique.BITMAP_DIRECTION: "bitmap_direction:BitmapDirection",
    Technique.CPU_TOPDOWN: "cpu_multicore:CPUTopdown",
    Technique.CPU_BOTTOM_UP: "cpu_multicore:CPUBottomUp",
    Technique.CPU_HYBRID: "cpu_multicore:CPUHybrid",
}


def implemented_techniques() -> list[Technique]:
    return [t for t in Technique if t.implemented]


def missing_techniques() -> list[Technique]:
    return [t for t in Technique if not t.implemented]


def implementation(technique: "Technique | str"):
    """The technique's implementation (an instance of base.BFSTechnique); missing ones raise."""
    tech = Technique.parse(technique)
    return instantiate(__name__, _REGISTRY[tech])


def knobs_of(technique: "Technique | str") -> type[KnobSet]:
    """The technique's KnobSet class: its knobs' declarations."""
    return implementation(technique).Knobs


def make_knobs(technique: "Technique | str", values: "KnobSet | dict | None" = None) -> KnobSet:
    """Knobs for `technique` from a dict (unknown names and bad values raise KnobError)."""
    return knobs_from(knobs_of(technique), values, Technique.parse(technique).value)


_DOCS = member_docs(Technique)
