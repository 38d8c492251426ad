"""The classroom's step-through, as plain data: no widgets, no Bokeh (explorer/ui/classroom.py
draws it). Tested headless in tests/test_classroom.py.

    frames = replay(graph, result, impl, knobs)    # one Frame per BFS level of a finished run
    state = StepThrough(len(frames))               # Step / Back / Play / Stop as a state machine
    state.step(); frames[state.position]

Where each part of a frame comes from, and the classroom says so:
- **from the run**: the frontier and the vertices it discovered (the run's distances), the BFS
  tree (its parents) and every count (its per-level records: frontier entries read, edges
  examined, duplicates generated and removed, kernel, direction and the technique's extras). A
  multi-level launch (BFS-4K's single block, Luo's block and grid layers) logged each of its
  levels; they replay one by one.
- **by the technique's rule**: which block / warp / virtual warp / lane took which vertex and
  which edge. The kernels do not record it; `assignment` recomputes it on the host from the
  mapping the level's record names (virtual warps of its warp size, BFS-4K's edge-discover of
  Fig. 6, a thread per arc, per vertex or per frontier entry, bottom-up's thread per unvisited
  vertex), assuming the frontier queue in ascending vertex order (on a GPU it is in the order
  the claims happened). Its edges are the ones drawn as "examined"; `Frame.edges_agree` says
  whether their number equals the record's edges_examined.
- **where duplicates can be born**: a vertex reached by two or more frontier arcs in one level
  (the race of BFS-4K §6, the teaching graph's vertex 8). The record counts the duplicates that
  were generated; which of these vertices they were is not recorded.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..stats import Direction, Kernel, LevelStats

#: Largest graph the classroom draws: beyond a few hundred vertices the drawing is a hairball and
#: the assignment table too long to read (and the simulator slow).
MAX_VERTICES = 300
MAX_ARCS = 5000
NOT_APPLICABLE = "—"
WARP = 32


class ClassroomError(ValueError):
    """A graph or run the classroom cannot show, with the reason."""


def check_size(graph, max_vertices: int = MAX_VERTICES, max_arcs: int = MAX_ARCS) -> None:
    """Refuse a graph too large to draw and step through, saying why and what to pick instead."""
    if graph.num_vertices > max_vertices or graph.num_arcs > max_arcs:
        raise ClassroomError(
            f"graph {graph.name!r} has {graph.num_vertices:,} vertices and {graph.num_arcs:,} arcs; the "
            f"classroom draws at most {max_vertices:,} vertices and {max_arcs:,} arcs (a larger drawing is "
            "unreadable and its table too long): pick a small graph such as the teaching graph bfs4k_fig2 "
            "or gen:grid2d:rows=8,cols=8, or use the Explorer's plots for large ones")


def classroom_note(impl) -> str:
    """What to notice when stepping through the technique: its own `classroom_note`, else the
    first sentence of its Technique member's documentation."""
    note = getattr(impl, "classroom_note", "") or ""
    if note:
        return note
    sentences = [s.strip() for s in impl.technique.doc.replace(". ", ".\n").splitlines() if s.strip()]
    keep = sentences[:1] + [s for s in sentences[1:] if s.lower().startswith(("wins", "loses"))]
    return " ".join(keep)


# ------------------------------------------------------------------ the state machine

class StepThrough:
    """Which level the step-through shows, and whether it plays. Positions 0..levels-1.

    step/back move one level (False at the ends); play starts playing (from level 0 when at the
    end); each tick moves one level while playing and stops at the last; stop stops.
    """

    def __init__(self, levels: int = 0):
        if levels < 0:
            raise ValueError(f"levels must be >= 0, not {levels}")
        self.levels = int(levels)
        self.position = 0
        self.playing = False

    @property
    def at_start(self) -> bool:
        return self.position == 0

    @property
    def at_end(self) -> bool:
        return self.position >= self.levels - 1

    def goto(self, position: int) -> bool:
        if self.levels == 0:
            return False
        if not 0 <= position < self.levels:
            raise ValueError(f"level {position} is out of range: this run has levels 0..{self.levels - 1}")
        moved = position != self.position
        self.position = int(position)
        return moved

    def step(self) -> bool:
        return not self.at_end and self.goto(self.position + 1)

    def back(self) -> bool:
        return not self.at_start and self.goto(self.position - 1)

    def play(self) -> bool:
        """Start playing; from level 0 when at the end. False when there is nothing to play."""
        if self.levels <= 1:
            return False
        if self.at_end:
            self.position = 0
        self.playing = True
        return True

    def tick(self) -> bool:
        """One timer tick: the next level while playing; playing stops at the last level."""
        if not self.playing:
            return False
        moved = self.step()
        if self.at_end:
            self.playing = False
        return moved

    def stop(self) -> None:
        self.playing = False

    def enabled(self) -> dict:
        """Which controls make sense now."""
        return {"step": not self.at_end and not self.playing, "back": not self.at_start and not self.playing,
                "play": self.levels > 1 and not self.playing, "stop": self.playing}


# ------------------------------------------------------------------ frames

@dataclass(frozen=True)
class Assignment:
    """Which thread took which vertex and edge in one level, by the technique's rule."""

    rule: str  # the mapping, named as the paper names it
    rows: list  # dicts with ASSIGNMENT_COLUMNS
    idle: str = ""  # what the threads without a row did
    caveats: tuple = ()


#: The table's columns: where the thread sits, which pass of a one-block launch over the frontier
#: (it strides over more entries than it has threads; "—" for a grid of blocks), which round of
#: the thread's loop, the frontier vertex (for bottom-up: the unvisited vertex whose thread it
#: is), the arc u -> v, and what came of it.
ASSIGNMENT_COLUMNS = ("block", "warp", "vwarp", "lane", "thread", "pass", "round", "vertex", "edge", "outcome")


@dataclass(frozen=True)
class Frame:
    """One BFS level as the step-through shows it."""

    level: int
    record: LevelStats
    frontier: np.ndarray  # vertices at this level (the run's distances)
    discovered: np.ndarray  # vertices at the next level: found by this one
    reached: np.ndarray  # vertices at levels <= this one + 1
    examined: list  # arcs (u, v) the assignment's threads inspected
    candidates: np.ndarray  # vertices reached by >= 2 frontier arcs: where duplicates can be born
    assignment: Assignment
    tree: list = field(default_factory=list)  # (parent, v) for every v discovered so far

    @property
    def edges_agree(self) -> bool | None:
        """Whether the edges drawn are as many as the record's edges_examined (None: not measured)."""
        measured = self.record.edges_examined
        return None if measured is None else measured == len(self.examined)

    @property
    def duplicate_entries(self) -> int:
        """Frontier entries the level read beyond its vertices: repeats a racy claim enqueued."""
        return max(0, self.record.frontier_in - len(self.frontier))


def replay(graph, result, impl=None, knobs=None) -> list[Frame]:
    """The frames of a finished run (a RunResult of `graph`), one per level of its records."""
    check_size(graph)
    if len(result.distances) != graph.num_vertices:
        raise ClassroomError(f"the run is of a graph with {len(result.distances):,} vertices, not of "
                             f"{graph.name!r} ({graph.num_vertices:,})")
    dist = np.asarray(result.distances)
    parent = np.asarray(result.parents)
    race = bool(impl.creates_duplicates(knobs)) if impl is not None and knobs is not None else True
    frames = []
    for rec in result.levels:
        d = rec.level
        frontier = np.flatnonzero(dist == d)
        assignment = assignment_for(rec, graph, dist, parent, frontier, knobs, race)
        examined = [(r["_u"], r["_v"]) for r in assignment.rows if r["_u"] >= 0]
        discovered = np.flatnonzero(dist == d + 1)
        reached = np.flatnonzero((dist >= 0) & (dist <= d + 1))
        tree = [(int(parent[v]), int(v)) for v in reached if parent[v] != v]
        frames.append(Frame(d, rec, frontier, discovered, reached, examined,
                            duplicate_candidates(graph, dist, frontier, rec.direction), assignment, tree))
    return frames


def duplicate_candidates(graph, dist, frontier, direction) -> np.ndarray:
    """Vertices first reached at the next level by two or more arcs from this frontier: several
    threads may claim each of them at once (BFS-4K §6). A bottom-up level has none: only a
    vertex's own thread writes it."""
    if Direction(direction) is Direction.BOTTOM_UP or len(frontier) == 0:
        return np.empty(0, np.int64)
    d = dist[frontier[0]]
    heads = np.concatenate([graph.neighbors(u) for u in frontier])
    heads = heads[dist[heads] == d + 1]
    values, counts = np.unique(heads, return_counts=True)
    return values[counts >= 2]


# ------------------------------------------------------------------ thread assignment by rule

def block_threads(rec: LevelStats, knobs) -> tuple[int, str]:
    """The level's block size from the technique's knobs (single_block_threads for a one-block
    launch, else block_threads or BFS-4K's K6), and where it came from."""
    values = knobs.as_dict() if hasattr(knobs, "as_dict") else dict(knobs or {})
    one_block = rec.kernel in (Kernel.SINGLE_BLOCK, Kernel.CLUSTER)
    for name in (("single_block_threads",) if one_block else ()) + ("block_threads", "K6"):
        if name in values:
            return int(values[name]), f"knob {name}"
    return WARP, "not a knob of this technique: assumed one warp"


def _outcome_top_down(u, v, d, dist, parent, race) -> str:
    if dist[v] == d + 1:
        if parent[v] == u:
            return f"claims {v} (its parent)"
        tail = ": a racy claim may enqueue it again" if race else ""
        return f"{v} claimed by {parent[v]}'s thread{tail}"
    return f"{v} visited before (level {dist[v]})"


def _row(tid, block, warp, vwarp, lane, rnd, vertex, u=-1, v=-1, outcome="", pass_=NOT_APPLICABLE) -> dict:
    return {"block": block, "warp": warp, "vwarp": vwarp, "lane": lane, "thread": tid, "pass": pass_, "round": rnd,
            "vertex": int(vertex), "edge": f"{u} → {v}" if u >= 0 else "", "outcome": outcome,
            "_u": int(u), "_v": int(v)}


def _place(tid: int, B: int, one_block: bool):
    """(thread shown, block, warp in block, lane in warp, pass) of global work item `tid`: a grid
    of blocks of B threads (no pass), or one block striding over the items."""
    if one_block:
        return tid % B, 0, (tid % B) // WARP, tid % WARP, tid // B
    return tid, tid // B, (tid % B) // WARP, tid % WARP, NOT_APPLICABLE


def assignment_for(rec: LevelStats, graph, dist, parent, frontier, knobs, race: bool) -> Assignment:
    """The thread assignment of one level by the mapping its record names (see the module doc)."""
    ex = rec.extras
    n = graph.num_vertices
    B, where = block_threads(rec, knobs)
    one_block = rec.kernel in (Kernel.SINGLE_BLOCK, Kernel.CLUSTER)
    caveats = [f"block size {B} ({where})"]
    if rec.direction is Direction.BOTTOM_UP:
        return _bottom_up(rec, graph, dist, B, caveats, cpu=rec.kernel is Kernel.CPU)
    if rec.kernel is Kernel.CPU:
        return _unmodelled(rec, graph, dist, parent, frontier, race,
                           "CPU threads over chunks of the frontier (not modelled: a row per frontier arc)")
    caveats.append("frontier queue in ascending vertex order (on a GPU: the order of the claims)")
    strategy = ex.get("expand")  # the load-balancing strategy a record names (chapter §5)
    if ex.get("edge_discover") or strategy == "local-warp-search":
        return _edge_discover(rec, graph, dist, parent, frontier, B, one_block, race, caveats)
    if "arcs_inspected" in ex:
        return _per_arc(rec, graph, dist, parent, B, race, caveats)
    scans = ex.get("vertices_scanned") == n and rec.frontier_in != n or ex.get("frontier_form") == "distance"
    if ex.get("warp_size") is not None and strategy in (None, "virtual-warps", "dynamic-virtual-warps"):
        return _virtual_warps(rec, graph, dist, parent, frontier, int(ex["warp_size"]), scans, B, one_block,
                              race, caveats)
    if strategy not in (None, "work-items") or "cta_gathered" in ex:
        name = strategy or "CTA+warp+scan gathering"
        return _unmodelled(rec, graph, dist, parent, frontier, race,
                           f"{name}: the classroom does not model how it maps edges to threads (a row per frontier arc)")
    if scans:
        return _virtual_warps(rec, graph, dist, parent, frontier, 1, True, B, one_block, race, caveats)
    return _virtual_warps(rec, graph, dist, parent, frontier, 1, False, B, one_block, race, caveats)


def _virtual_warps(rec, graph, dist, parent, frontier, W, scans, B, one_block, race, caveats) -> Assignment:
    """W threads per vertex (W = 1: a thread per vertex); lane l walks edges l, l + W, ... of it.
    `scans`: a virtual warp for every vertex (Harish, Hong et al.), else one per frontier entry."""
    d, n = rec.level, graph.num_vertices
    heavy = _heavy(rec, graph, frontier)
    rows = []
    for i, u in enumerate(frontier):
        item = int(u) if scans else i
        if u in heavy:
            rows += _child_grid(u, graph, d, dist, parent, race)
            continue
        nbrs = graph.neighbors(u)
        for lane in range(W):
            tid, block, warp, wlane, outer = _place(item * W + lane, B, one_block)
            # A virtual warp's lane is its place in the virtual warp; a lone thread's, in its warp.
            vwarp, shown_lane = (item, lane) if W > 1 else (NOT_APPLICABLE, wlane)
            edges = range(lane, len(nbrs), W)
            if not len(edges):
                rows.append(_row(tid, block, warp, vwarp, shown_lane, "0", u, outcome="idle: no edge left for this lane",
                                 pass_=outer))
            for j, k in enumerate(edges):
                v = int(nbrs[k])
                rows.append(_row(tid, block, warp, vwarp, shown_lane, str(j), u, u, v,
                                 _outcome_top_down(u, v, d, dist, parent, race), pass_=outer))
    if W > 1:
        name = f"virtual warps of {W} threads (BFS-4K §5.2; Hong et al.): lane l walks edges l, l+{W}, ... of its vertex"
    else:
        name = ("a thread per vertex (Harish & Narayanan)" if scans else
                "a thread per frontier entry (the model for any top-down level whose record names no other "
                "mapping)")
        name += ": the thread walks the vertex's whole adjacency list"
    idle = ""
    if scans:
        idle = (f"the other {(n - len(frontier)) * W:,} threads read their vertex's level, found it is not "
                f"{d}, and stopped: every level scans all {n:,} vertices")
    if heavy:
        caveats = caveats + [f"the {len(heavy)} highest-degree frontier vertices taken as the record's heavy vertices"]
    return Assignment(name, rows, idle, tuple(caveats))


def _heavy(rec, graph, frontier) -> set:
    """BFS-4K §5.3: the record's heavy vertices, taken to be the frontier's highest-degree ones."""
    k = int(rec.extras.get("heavy_vertices") or 0)
    if k <= 0:
        return set()
    deg = graph.degrees()[frontier]
    return {int(u) for u in frontier[np.argsort(-deg, kind="stable")[:k]]}


def _child_grid(u, graph, d, dist, parent, race) -> list:
    return [_row(NOT_APPLICABLE, "child grid", NOT_APPLICABLE, NOT_APPLICABLE, NOT_APPLICABLE, NOT_APPLICABLE,
                 u, u, int(v), _outcome_top_down(u, int(v), d, dist, parent, race)) for v in graph.neighbors(u)]


def _edge_discover(rec, graph, dist, parent, frontier, B, one_block, race, caveats) -> Assignment:
    """BFS-4K §5.4, Fig. 6: each warp takes 32 frontier entries, a prefix sum of their degrees, and
    in each round its 32 lanes take the next 32 of their edges; lane k finds the vertex that owns
    edge k by a binary search on the prefix sums, or (EXT) without one when the round lies inside
    one vertex's edges."""
    d = rec.level
    heavy = _heavy(rec, graph, frontier)
    rows = []
    warps_per_block = max(B // WARP, 1)
    for wid in range(-(-len(frontier) // WARP)):
        group = [int(u) for u in frontier[wid * WARP:(wid + 1) * WARP]]
        for u in group:
            if u in heavy:
                rows += _child_grid(u, graph, d, dist, parent, race)
        deg = np.array([0 if u in heavy else len(graph.neighbors(u)) for u in group], np.int64)
        incl = np.cumsum(deg)
        excl = incl - deg
        total = int(incl[-1]) if len(incl) else 0
        for rnd, base in enumerate(range(0, total, WARP)):
            owner0 = int(np.searchsorted(incl, base, side="right"))
            ext = incl[owner0] >= base + WARP
            for lane in range(min(WARP, total - base)):
                k = base + lane
                owner = int(np.searchsorted(incl, k, side="right"))
                u = group[owner]
                v = int(graph.neighbors(u)[k - excl[owner]])
                if one_block:
                    tid, block, warp = (wid % warps_per_block) * WARP + lane, 0, wid % warps_per_block
                    pass_ = wid // warps_per_block
                else:
                    tid, block, warp = wid * WARP + lane, (wid * WARP) // B, wid % warps_per_block
                    pass_ = NOT_APPLICABLE
                how = " [EXT: no search]" if ext else ""
                rows.append(_row(tid, block, warp, NOT_APPLICABLE, lane, f"{rnd}{how}", u, u, v,
                                 _outcome_top_down(u, v, d, dist, parent, race), pass_=pass_))
    name = ("edge-discover (BFS-4K §5.4, Fig. 6): a warp takes 32 frontier vertices, a prefix sum of their "
            "degrees, and each round its 32 lanes take the next 32 edges; lane k owns edge k of the round "
            "by a binary search on the prefix sums (EXT: no search when the round lies in one vertex)")
    if heavy:
        caveats = caveats + [f"the {len(heavy)} highest-degree frontier vertices taken as the record's heavy vertices"]
    return Assignment(name, rows, "", tuple(caveats))


def _per_arc(rec, graph, dist, parent, B, race, caveats) -> Assignment:
    """Jia et al.: a thread per arc of the whole graph; an arc whose source is in the frontier
    claims its destination."""
    d, m = rec.level, graph.num_arcs
    src = np.repeat(np.arange(graph.num_vertices), graph.degrees())
    rows = []
    for a in np.flatnonzero(dist[src] == d):
        u, v = int(src[a]), int(graph.indices[a])
        tid, block, warp, lane, _ = _place(int(a), B, False)
        rows.append(_row(tid, block, warp, NOT_APPLICABLE, lane, 0, u, u, v,
                         _outcome_top_down(u, v, d, dist, parent, race)))
    idle = (f"the other {m - len(rows):,} threads read their arc's source level, found it is not {d}, "
            f"and stopped: every level inspects all {m:,} arcs")
    return Assignment("a thread per arc (Jia et al.): thread a takes arc a of the CSR", rows, idle, tuple(caveats))


def in_neighbours(graph):
    """v -> its in-neighbours in the order a bottom-up thread walks them (the CSR itself for an
    undirected graph, the reverse CSR by ascending source for a directed one)."""
    if not graph.directed:
        return graph.neighbors
    src = np.repeat(np.arange(graph.num_vertices), graph.degrees())
    order = np.argsort(np.asarray(graph.indices), kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(graph.indices, minlength=graph.num_vertices))])
    ins = src[order]
    return lambda v: ins[starts[v]:starts[v + 1]]


def _bottom_up(rec, graph, dist, B, caveats, cpu=False) -> Assignment:
    """Beamer et al.: a thread per vertex; an unvisited vertex walks its in-neighbours and stops at
    the first in the frontier, which becomes its parent. On the CPU (`cpu`) the vertices are split
    between host threads: not modelled."""
    d, n = rec.level, graph.num_vertices
    ins = in_neighbours(graph)
    rows = []
    unvisited = np.flatnonzero((dist > d) | (dist < 0))
    for v in unvisited:
        tid, block, warp, lane, _ = (NOT_APPLICABLE,) * 5 if cpu else _place(int(v), B, False)
        for j, u in enumerate(ins(v)):
            u = int(u)
            found = dist[u] == d
            text = f"{u} is in the frontier: parent of {v}, stop" if found else f"{u} is not in the frontier"
            rows.append(_row(tid, block, warp, NOT_APPLICABLE, lane, j, v, u, int(v), text))
            if found:
                break
        else:
            rows.append(_row(tid, block, warp, NOT_APPLICABLE, lane, 0, v, outcome="no in-neighbour in the frontier"))
    idle = f"the other {n - len(unvisited):,} threads' vertices are visited already: they stopped at once"
    rule = ("bottom-up (Beamer et al.): a thread per vertex; an unvisited vertex walks its in-neighbours and "
            "stops at the first in the frontier")
    if cpu:
        return Assignment("CPU bottom-up: unvisited vertices split between host threads (not modelled: a row per "
                          "in-edge a vertex checked, until the first in the frontier)", rows)
    return Assignment(rule, rows, idle, tuple(caveats))


def _unmodelled(rec, graph, dist, parent, frontier, race, rule: str) -> Assignment:
    """A mapping the classroom does not model (host threads, the chapter's search-based gathers):
    the frontier's arcs, with no thread named."""
    d = rec.level
    rows = [_row(NOT_APPLICABLE, NOT_APPLICABLE, NOT_APPLICABLE, NOT_APPLICABLE, NOT_APPLICABLE, j, u, int(u), int(v),
                 _outcome_top_down(int(u), int(v), d, dist, parent, race))
            for u in frontier for j, v in enumerate(graph.neighbors(u))]
    return Assignment(rule, rows)


def table_columns(assignment: Assignment) -> dict:
    """The assignment as the column dict a ColumnDataSource takes (values as text)."""
    return {c: [str(r[c]) for r in assignment.rows] for c in ASSIGNMENT_COLUMNS}


def lane_efficiency(degrees, W: int | None = None) -> float:
    """Share of the lane-steps a warp issues that walk an edge, when the vertices with these
    degrees are expanded (in order) by virtual warps of W threads, or by edge-discover (W None).

    A warp of 32 lanes takes as many rounds as its busiest virtual warp (ceil(degree / W) rounds
    each); edge-discover takes ceil(edges / 32) rounds for its 32 vertices' edges together. The
    load-balancing lesson of the classroom notebook (BFS-4K §5.2, §5.4)."""
    deg = np.asarray(degrees, dtype=np.int64)
    useful = int(deg.sum())
    if useful == 0:
        return 1.0
    if W is None:
        groups = [deg[i:i + WARP] for i in range(0, len(deg), WARP)]
        issued = WARP * sum(-(-int(gr.sum()) // WARP) for gr in groups)
    else:
        if W < 1 or WARP % W:
            raise ValueError(f"virtual warp size W={W} must divide {WARP}")
        per_warp = WARP // W
        rounds = -(-deg // W)
        issued = WARP * sum(int(rounds[i:i + per_warp].max()) for i in range(0, len(deg), per_warp))
    return useful / issued


# ------------------------------------------------------------------ the drawing's layout

#: The layered drawing puts at most ROW_VERTICES vertices side by side (a wider level takes
#: staggered rows) in at most MAX_ROWS rows; a deeper BFS (a long grid) is drawn force-directed.
ROW_VERTICES = 18
MAX_ROWS = 12
UNREACHED_ROW = "not reached"


@dataclass(frozen=True)
class Layout:
    """Where the classroom draws each vertex: x and y in [0, 1] (y = 1 at the top)."""

    x: np.ndarray
    y: np.ndarray
    kind: str  # "levels" (a row per BFS level from `source`, the source on top) or "force-directed"
    source: int | None = None
    rows: tuple = ()  # (y, text) of each level's row label: "level 2", "not reached"


def drawing_layout(graph, source: int | None = None, seed: int = 7) -> Layout:
    """A row per BFS level from `source` (its vertices under their BFS parents, a level wider
    than ROW_VERTICES staggered over several rows, the unreached vertices last): the frontier
    moves down the drawing level by level. Without a source, or deeper than MAX_ROWS rows, a
    force-directed layout stretched to fill the square."""
    n = graph.num_vertices
    if n and source is not None:
        from ..reference import cpu_bfs

        dist, parent = cpu_bfs(graph, source)
        rows, labels = _level_rows(dist, parent)
        if len(rows) <= MAX_ROWS:
            x, y = np.zeros(n), np.zeros(n)
            top = max(len(rows) - 1, 1)
            for r, (level_vs, sub, of) in enumerate(rows):
                for i, v in enumerate(level_vs):
                    if i % of == sub:
                        x[v] = (i + 0.5) / len(level_vs)
                        y[v] = 1 - r / top if len(rows) > 1 else 0.5
            return Layout(x, y, "levels", int(source),
                          tuple((1 - r / top if len(rows) > 1 else 0.5, text) for r, text in labels))
    return _force_layout(graph, seed)


def _level_rows(dist, parent):
    """[(the level's vertices in drawing order, which of its rows, how many rows)] per drawn row,
    and [(row, label)] of each level's first row."""
    rows, labels, rank = [], [], {}
    deepest = int(dist.max(initial=-1))
    groups = [(f"level {d}", np.flatnonzero(dist == d)) for d in range(deepest + 1)]
    groups.append((UNREACHED_ROW, np.flatnonzero(dist < 0)))
    for text, vs in groups:
        if not len(vs):
            continue
        # Under the parents, in the parents' order: the BFS tree's edges cross as little as can be.
        order = sorted((int(v) for v in vs), key=lambda v: (rank.get(int(parent[v]), -1) if parent[v] >= 0 else -1, v))
        rank.update({v: i for i, v in enumerate(order)})
        of = -(-len(order) // ROW_VERTICES)
        labels.append((len(rows), text))
        rows += [(order, sub, of) for sub in range(of)]
    return rows, labels


def _force_layout(graph, seed: int) -> Layout:
    import networkx as nx

    n = graph.num_vertices
    if n == 0:
        return Layout(np.zeros(0), np.zeros(0), "force-directed")
    pos = nx.spring_layout(graph.to_networkx(), seed=seed)
    xy = np.array([pos[v] for v in range(n)], dtype=float).reshape(n, 2)
    span = xy.max(axis=0) - xy.min(axis=0)
    # Each axis stretched to [0, 1] on its own: a long, thin graph fills the square, not a strip.
    xy = np.where(span > 0, (xy - xy.min(axis=0)) / np.where(span > 0, span, 1), 0.5)
    return Layout(xy[:, 0], xy[:, 1], "force-directed")


def drawn_edges(graph) -> list[tuple[int, int]]:
    """The edges to draw: each arc of a directed graph, each pair {u, v} once of an undirected
    one (no self-loops, no repeats)."""
    src = np.repeat(np.arange(graph.num_vertices), graph.degrees())
    dst = np.asarray(graph.indices, dtype=np.int64)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    if not graph.directed:
        src, dst = np.minimum(src, dst), np.maximum(src, dst)
    pairs = np.unique(np.stack([src, dst], axis=1), axis=0) if len(src) else np.zeros((0, 2), np.int64)
    return [(int(u), int(v)) for u, v in pairs]


def edge_path(layout: Layout, u: int, v: int, points: int = 12) -> tuple[list, list]:
    """The line of edge (u, v): straight, or an arc above the row when both ends share a row
    (a straight line there would run through the vertices between them)."""
    x0, y0, x1, y1 = float(layout.x[u]), float(layout.y[u]), float(layout.x[v]), float(layout.y[v])
    if layout.kind != "levels" or abs(y0 - y1) > 1e-9:
        return [x0, x1], [y0, y1]
    t = np.linspace(0, 1, points)
    lift = 0.06 + 0.25 * abs(x1 - x0)  # a quadratic Bézier through a point above the midpoint
    xs = (1 - t) ** 2 * x0 + 2 * t * (1 - t) * (x0 + x1) / 2 + t ** 2 * x1
    ys = (1 - t) ** 2 * y0 + 2 * t * (1 - t) * (y0 + lift) + t ** 2 * y1
    return xs.tolist(), ys.tolist()


def min_spacing(layout: Layout, width: float = 1.0, height: float = 1.0) -> float:
    """The smallest distance between two vertices drawn `width` x `height` (inf for fewer than two)."""
    if len(layout.x) < 2:
        return float("inf")
    xy = np.stack([layout.x * width, layout.y * height], axis=1)
    d = np.sqrt(((xy[:, None, :] - xy[None, :, :]) ** 2).sum(axis=2))
    d[np.diag_indices_from(d)] = np.inf
    return float(d.min())
