"""merrill: Merrill, Garland & Grimshaw's GPU BFS (PPoPP 2012; the chapter's §2.1 and §5.2.2,
BFS-4K's Table 2 "Garland" column): CTA + warp + scan gathering (Algorithm 9) with a benign-race
claim and their duplicate culls, warp culling and history culling.

Its own technique rather than a value of load-balance's `expand`, because it is a whole system
with its own knobs and record: Table 2 compares it as one column beside BFS-4K, with its claim
(visited status tested and set without atomics, as Merrill et al. do, so duplicates are born) and
its culls, whereas the catalogue compares mappings alone under one compare-and-swap claim. The
code is the load-balancing catalogue's, as the load-balance technique runs it: the same level
kernel (kernels/load_balance, expand='cta-warp-scan', the culls compiled in) and the same level
operator (operators/expand.py, ExpandLoop); only the knobs and the record's extras are here.

The culls run on claimed candidates, in Merrill et al.'s order after the status lookup: history
culling first (the block's table of the vertices it claimed this level: a copy another warp or an
earlier round claimed is dropped), then warp culling (the warp's own table: copies held by lanes
of one warp at once). The record says what each dropped.
"""
from __future__ import annotations

from dataclasses import dataclass

from kernels.load_balance import layout as LBL

from ..knobs import POW2_BLOCKS, KnobSet, KnobSpec, knob
from ..stats import Extra
from . import Technique
from .base import BFSTechnique, LevelLoop, RunContext
from .operators.expand import CTA_THRESHOLD, WARP_THRESHOLD, ExpandLoop, check_shared, expand_signatures


@dataclass(frozen=True)
class MerrillKnobs(KnobSet):
    owner = "merrill"
    block_threads: int = knob(KnobSpec(
        "block_threads", "threads per CTA: the tile of frontier vertices a block gathers at a time and the strip "
        "width of its CTA phase", 256, choices=POW2_BLOCKS, section="chapter §5.2.2"))
    cta_threshold: int = knob(CTA_THRESHOLD)
    warp_threshold: int = knob(WARP_THRESHOLD)
    claim: str = knob(KnobSpec(
        "claim", "how a thread claims an unvisited neighbour: 'race' tests and sets its status without atomics, as "
        "Merrill et al. (threads that read it unvisited together all enqueue it: duplicates, which the culls "
        "thin out); 'atomic' is compare-and-swap (no duplicates: the culls find nothing)", "race",
        choices=("race", "atomic"), kind=str, section="Merrill et al.; chapter §2.1"))
    culling: str = knob(KnobSpec(
        "culling", "Merrill et al.'s duplicate culls: 'warp' (each warp's 128-entry table: copies held by lanes of "
        "one warp at once), 'history' (the block's table of the vertices it claimed this level: copies claimed "
        "by another warp or an earlier round), both, or none", "warp+history",
        choices=("warp+history", "warp", "history", "none"), kind=str, section="Merrill et al.; BFS-4K §6"))
    history_entries: int = knob(KnobSpec(
        "history_entries", "entries of the block's history table in shared memory (a vertex v hashes to slot "
        "v mod entries)", 1024, choices=(128, 256, 512, 1024, 2048, 4096, 8192), section="Merrill et al."))

    @property
    def culling_code(self) -> int:
        return LBL.CULLING_NAMES[self.culling]


class Merrill(BFSTechnique):
    technique = Technique.MERRILL
    Knobs = MerrillKnobs
    extras = (
        Extra("cta_gathered", "frontier vertices whose lists the whole block gathered (lists > cta_threshold)",
              "vertices"),
        Extra("warp_gathered", "frontier vertices whose lists a warp gathered (warp_threshold < lists <= "
              "cta_threshold); the rest went through the block prefix sum", "vertices"),
        Extra("warp_culled", "claimed copies warp culling dropped (held by another lane of the warp at once)",
              "entries"),
        Extra("history_culled", "claimed copies history culling dropped (claimed earlier in the level by the block)",
              "entries"),
        Extra("cull_conflicts", "warp culling: the candidate's slot held another vertex, so it was kept", "entries"),
        Extra("blocks", "thread blocks of the level's kernel", "blocks"),
    )
    simulator_knobs = {"block_threads": 32}
    classroom_note = ("Long lists are walked by the whole block, medium ones by a warp, short ones through a prefix "
                      "sum. The claim is a race: where two frontier arcs meet (magenta rings) a vertex may be "
                      "claimed twice, and the record says how many copies warp and history culling dropped.")
    test_knobs = (
        {"claim": "atomic"},
        {"culling": "warp"},
        {"culling": "history"},
        {"culling": "none"},
        {"cta_threshold": 2, "warp_threshold": 1},  # every phase on small lists
    )

    def creates_duplicates(self, knobs) -> bool:
        return knobs.claim == "race"

    def check(self, graph, knobs, limits) -> None:
        culling = knobs.culling_code
        history = knobs.history_entries if culling & LBL.CULL_HISTORY else 0
        check_shared(LBL.CTA_WARP_SCAN, knobs, limits, culling, history)

    def kernel_signatures(self, knobs, instrument: bool) -> list:
        return expand_signatures(LBL.CTA_WARP_SCAN, instrument, knobs.claim == "atomic", knobs.culling_code)

    def start(self, ctx: RunContext) -> LevelLoop:
        k = ctx.knobs
        culling = k.culling_code
        history = k.history_entries if culling & LBL.CULL_HISTORY else 0
        return ExpandLoop(ctx, LBL.CTA_WARP_SCAN, k.cta_threshold or k.block_threads, k.warp_threshold,
                          atomic=k.claim == "atomic", culling=culling, history=history, extras=_extras)


def _extras(loop: ExpandLoop, c: list) -> dict:
    return dict(cta_gathered=int(c[LBL.CTA_GATHERED]), warp_gathered=int(c[LBL.WARP_GATHERED]),
                warp_culled=int(c[LBL.WARP_CULLED]), history_culled=int(c[LBL.HISTORY_CULLED]),
                cull_conflicts=int(c[LBL.CULL_CONFLICTS]), blocks=loop.blocks)
