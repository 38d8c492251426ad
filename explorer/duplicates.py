"""Where duplicates come from: a BFS-4K run with the provenance log, read as per-level tables.

    prov = run_with_provenance(graph, "max-degree", {"K1": 4, "K4": 0})
    prov.levels()            # per level: duplicates, by scope (one warp / one block / several
                             # blocks), caught by the run's filter, by hash64 and by warp culling
    prov.duplicates(3)       # level 3's duplicated vertices: copies, blocks, warps, caught each
    prov.filters()           # hash64 vs warp culling on the same claims, whole run

A duplicate is a copy of a vertex claimed again in the same level: BFS-4K's benign race
(claim='race') lets every thread that reads the vertex unvisited before any writes enqueue it.
The provenance kernels (kernels.bfs4k.provenance) log each claim with the thread that made it
and both filters' verdicts, so hash64 (one table per block) and warp culling (one per warp) are
compared on exactly the same claims; only the `dedup` knob's filter drops copies. The log covers
the multi-block kernel, so the run uses it on every level (K5 = 0; said in `notes`).

Under the simulator the blocks of a launch run one after another, so a block always sees the
claims of the blocks before it: duplicates from different blocks need a GPU (README, "GPU or not").
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import backend
from .api import resolve_source
from .engine import BFSRun, DeviceLimits, Session
from .graphs import CSRGraph
from .knobs import KnobError
from .reference import CheckReport, check_result
from .stats import RunResult
from .techniques import make_knobs
from .techniques.bfs4k import BFS4KProvenance, ProvenanceLog

#: Rows of the log by default: 16 MB of int32 rows on a GPU; the simulator's graphs are small.
MAX_RECORDS = 400_000
SIMULATOR_MAX_RECORDS = 50_000

#: Scopes of a duplicated vertex: where its copies were made.
SCOPES = ("warp", "block", "grid")
SCOPE_WORDS = {"warp": "one warp", "block": "one block, several warps", "grid": "several blocks"}


def _log_columns():
    from kernels.bfs4k import layout as L

    return L


@dataclass
class Provenance:
    """A run with the provenance log: the result (checked against the CPU reference), the log's
    claims as columns, and what was changed or lost."""

    result: RunResult
    check: CheckReport
    claims: dict  # column -> np.ndarray, one entry per logged claim (see CLAIM_COLUMNS)
    sample_every: int  # one vertex in this many was logged (all its copies)
    lost: int  # claims of sampled vertices past the log's end (not in `claims`)
    filter: str  # the run's dedup knob: the filter that dropped copies
    notes: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ per level
    def levels(self) -> list[dict]:
        """One row per level that claimed something: logged claims, duplicated vertices,
        duplicates (copies beyond a vertex's first) split by scope, what the run's filter caught,
        what hash64 and warp culling each judged a duplicate, and the best a per-block filter and
        a per-warp filter could do (copies beyond one per block, per warp). With the whole sample
        logged (sample_every 1, nothing lost) `duplicates` equals the record's dup_generated."""
        c = self.claims
        out = []
        for lev in np.unique(c["level"]):
            sel = c["level"] == lev
            groups = _groups(c, sel)
            row = {"level": int(lev), "claims": int(sel.sum()), "duplicated_vertices": len(groups),
                   "duplicates": 0, **{f"dup_{s}": 0 for s in SCOPES}, "caught": 0, "left": 0,
                   "hash64_caught": 0, "cull_caught": 0, "hash64_conflicts": 0, "cull_conflicts": 0,
                   "per_block_bound": 0, "per_warp_bound": 0}
            for g in groups:
                extra = g["copies"] - 1
                row["duplicates"] += extra
                row[f"dup_{g['scope']}"] += extra
                row["caught"] += g["copies"] - g["kept"]
                row["left"] += max(g["kept"] - 1, 0)
                row["hash64_caught"] += g["hash64"].count(1)
                row["cull_caught"] += g["cull"].count(1)
                row["per_block_bound"] += g["copies"] - len(set(g["blocks"]))
                row["per_warp_bound"] += g["copies"] - len(set(zip(g["blocks"], g["warps"])))
            row["hash64_conflicts"] = int(np.count_nonzero(c["hash64"][sel] == 2))
            row["cull_conflicts"] = int(np.count_nonzero(c["cull"][sel] == 2))
            lv = self.result.levels[int(lev)]
            row["dup_generated"] = lv.dup_generated  # the run's own count, for comparison
            out.append(row)
        return out

    def duplicates(self, level: int, limit: int | None = 25, seed: int = 0) -> list[dict]:
        """Level `level`'s duplicated vertices, one row each: copies, the blocks and warps
        ('block.warp') that made them and per copy whether the run's filter caught it ('x': caught,
        '-': kept), in the order the log reserved them. At most `limit` rows (a seeded sample,
        sorted by vertex; `duplicate_count` says how many there are); None for all. Vertices and
        parents are in the graph's own ids (a file's), as the user gave the source."""
        c = self.claims
        groups = _groups(c, c["level"] == level)
        if limit is not None and len(groups) > limit:
            pick = np.random.default_rng(seed).choice(len(groups), size=limit, replace=False)
            groups = [groups[i] for i in sorted(pick)]
        ids = self.result.original_ids  # the way out: the log holds vertices 0..n-1
        own = (lambda vs: list(vs)) if ids is None else (lambda vs: ids[vs].tolist())
        return [{"vertex": own([g["vertex"]])[0], "copies": g["copies"], "scope": SCOPE_WORDS[g["scope"]],
                 "blocks": sorted(set(g["blocks"])),
                 "threads": [f"{b}.{w}" for b, w in zip(g["blocks"], g["warps"])],
                 "caught": "".join("-" if k else "x" for k in g["kept_each"]),
                 "hash64": "".join(_VERDICT[r] for r in g["hash64"]),
                 "cull": "".join(_VERDICT[r] for r in g["cull"]),
                 "parents": own(g["parents"])} for g in groups]

    def duplicate_count(self, level: int) -> int:
        c = self.claims
        return len(_groups(c, c["level"] == level))

    def filters(self) -> dict:
        """The whole run: duplicates by scope, and for hash64 and warp culling how many copies each
        judged duplicates and conflicts, on the same claims (the run's filter dropped its own)."""
        rows = self.levels()
        keys = ["duplicates", *(f"dup_{s}" for s in SCOPES), "caught", "left", "hash64_caught", "cull_caught",
                "hash64_conflicts", "cull_conflicts", "per_block_bound", "per_warp_bound"]
        return {k: sum(r[k] for r in rows) for k in keys}


_VERDICT = {0: "-", 1: "x", 2: "?"}  # keep, duplicate, conflict


def _groups(c: dict, sel: np.ndarray) -> list[dict]:
    """The duplicated vertices among the claims `sel` (two copies or more), each with its copies'
    threads and verdicts in log order."""
    idx = np.flatnonzero(sel)
    if len(idx) == 0:
        return []
    order = idx[np.argsort(c["vertex"][idx], kind="stable")]  # stable: log order within a vertex
    verts = c["vertex"][order]
    cuts = np.flatnonzero(np.diff(verts)) + 1
    out = []
    for part in np.split(order, cuts):
        if len(part) < 2:
            continue
        blocks, warps = c["block"][part].tolist(), c["warp"][part].tolist()
        if len(set(blocks)) > 1:
            scope = "grid"
        elif len(set(warps)) > 1:
            scope = "block"
        else:
            scope = "warp"
        kept = c["kept"][part].tolist()
        out.append({"vertex": int(c["vertex"][part[0]]), "copies": len(part), "scope": scope,
                    "blocks": blocks, "warps": warps, "kept_each": kept, "kept": sum(kept),
                    "hash64": c["hash64"][part].tolist(), "cull": c["cull"][part].tolist(),
                    "parents": c["parent"][part].tolist()})
    return out


#: Columns of Provenance.claims, from the log's P_* fields.
CLAIM_COLUMNS = ("level", "vertex", "parent", "block", "warp", "lane", "hash64", "cull", "kept", "kernel")


def claims_of(log: ProvenanceLog) -> dict:
    L = _log_columns()
    fields = (L.P_LEVEL, L.P_VERTEX, L.P_PARENT, L.P_BLOCK, L.P_WARP, L.P_LANE, L.P_HASH, L.P_CULL, L.P_KEPT,
              L.P_KERNEL)
    rows = log.rows
    return {name: rows[:, f].astype(np.int64) for name, f in zip(CLAIM_COLUMNS, fields)}


def run_with_provenance(graph: CSRGraph, source="max-degree", knobs=None, *, sample_every: int = 1,
                        max_records: int | None = None, seed: int = 0, limits: DeviceLimits | None = None,
                        session: Session | None = None, on_status=None) -> Provenance:
    """Run BFS-4K with the provenance log on `graph` from `source` and check the result.

    knobs: BFS-4K's (dict or BFS4KKnobs); claim must be 'race' (compare-and-swap makes no
    duplicates); K5 is set to 0 (the log covers the multi-block kernel). sample_every: log one
    vertex in this many (a power of two; every copy of a logged vertex is logged). max_records:
    the log's rows (claims beyond are counted in `lost`). limits: device limits for the policy
    (a small #ResThreads gives small virtual warps on a small graph, as in BFS-4K Fig. 12).
    """
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"graph must be a CSRGraph, not {type(graph).__name__}")
    if session is not None and session.graph is not graph:
        raise ValueError(f"the session holds graph {session.graph.name!r}, not {graph.name!r}")
    if isinstance(sample_every, bool) or not isinstance(sample_every, (int, np.integer)) or sample_every < 1 \
            or sample_every & (sample_every - 1):
        raise ValueError(f"sample_every={sample_every!r} must be a power of two >= 1 (one vertex in that many)")
    values = make_knobs("bfs4k", knobs).as_dict()
    if values["claim"] != "race":
        raise KnobError("knob claim='atomic' claims by compare-and-swap, which makes no duplicates: "
                        "the duplicate analysis needs claim='race' (the paper's benign race)")
    notes = []
    if values["K5"] != 0:
        notes.append(f"K5={values['K5']} -> 0: the provenance log covers the multi-block kernel, "
                     "so every level ran it")
        values["K5"] = 0
    knobs = make_knobs("bfs4k", values)
    info = backend.current()
    if max_records is None:
        max_records = SIMULATOR_MAX_RECORDS if info.is_simulator else MAX_RECORDS
    src = resolve_source(graph, source, seed)
    backend.check_graph_size(graph.num_arcs)
    impl = BFS4KProvenance(max_records, sample_every - 1)
    run = BFSRun(impl, graph, src, knobs, True, on_status, limits, session)
    impl.check(graph, knobs, run.runtime.limits)
    result = run.complete()
    check = check_result(graph, result)
    result.validation = "ok" if check.ok else check.rule
    log = impl.log
    if log.lost:
        notes.append(f"the log held {len(log.rows):,} of {log.claims:,} claims: the last {log.lost:,} are not in "
                     "the tables (raise max_records or sample_every)")
    if info.is_simulator:
        notes.append("simulator: the blocks of a launch run one after another, so no duplicate comes from "
                     "two blocks here; on a GPU they run together")
    return Provenance(result, check, claims_of(log), int(sample_every), log.lost, knobs.dedup, notes)
