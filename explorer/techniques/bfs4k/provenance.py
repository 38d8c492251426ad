"""BFS-4K with the provenance log (kernels.bfs4k.provenance): the technique explorer.duplicates
runs to see which thread made each duplicate. Not registered: it is BFS-4K, instrumented, with
the multi-block kernel on every level (K5 = 0) and its two level kernels swapped for their
logging variants; everything else (plan, launches, records) is BFS-4K's level operator's
(explorer.techniques.operators.bfs4k.levels)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...knobs import KnobError
from ..base import RunContext
from ..operators.bfs4k.levels import BFS4KLevels
from ..operators.bfs4k.policy import SharedLayout, multi_block_layout
from . import BFS4K


@dataclass
class ProvenanceLog:
    """What the log held after the run: its rows (int32 [n, PROV_FIELDS], kernels.bfs4k.layout's
    P_* columns), how many claims of sampled vertices the kernels saw (rows past the buffer's
    end are counted, not kept) and the sample (mask: one vertex in mask + 1)."""

    rows: np.ndarray
    claims: int
    mask: int

    @property
    def lost(self) -> int:
        return self.claims - len(self.rows)


class BFS4KProvenance(BFS4K):
    """BFS-4K whose multi-block levels log each claim of a sampled vertex into a buffer of
    `max_records` rows; after the run, `log` holds it (a ProvenanceLog)."""

    def __init__(self, max_records: int, mask: int = 0):
        if max_records < 1:
            raise ValueError(f"max_records={max_records} must be >= 1")
        if mask < 0 or mask & (mask + 1):
            raise ValueError(f"sample mask {mask} must be 2^k - 1 (one vertex in 2^k)")
        self.max_records, self.mask = int(max_records), int(mask)
        self.log: ProvenanceLog | None = None

    def check(self, graph, knobs, limits) -> None:
        if knobs.K5 != 0:
            raise KnobError(f"knob K5={knobs.K5}: the provenance log has only the multi-block kernel's "
                            "variant; use K5=0 (explorer.duplicates sets it)")
        super().check(graph, knobs, limits)
        need = provenance_layout(knobs, limits).dynamic_bytes
        if need > limits.shared_room:
            raise KnobError(f"knob K6={knobs.K6}: the provenance kernels keep both filters' tables, "
                            f"{need:,} bytes of shared memory a block; this GPU gives at most "
                            f"{limits.shared_room:,}: use a smaller K6")

    def start(self, ctx: RunContext):
        return ProvenanceLoop(ctx, self)


def provenance_layout(knobs, limits) -> SharedLayout:
    """The multi-block layout with the hash64 table the paper's formula gives (whatever the dedup
    knob) and the warps' culling tables after it: both filters judge every claim."""
    from kernels.bfs4k.provenance import shared_bytes

    entries = multi_block_layout(knobs.replace(dedup="hash64"), limits).hash_entries
    return SharedLayout(entries, 0, 2 * entries, shared_bytes(entries, knobs.K6))


class _LoggingLauncher:
    """The run's launcher with BFS-4K's two level kernels replaced by their logging variants,
    which take the log (a ProvLog group) after the normal groups; every other call goes through."""

    def __init__(self, go, swap: dict, extra: tuple):
        self._go, self._swap, self._extra = go, swap, extra

    def __call__(self, kernel, blocks, threads, shared, *args) -> None:
        if kernel in self._swap:
            self._go(self._swap[kernel], blocks, threads, shared, *args, *self._extra)
        else:
            self._go(kernel, blocks, threads, shared, *args)

    def __getattr__(self, name):  # zero, record, read, cluster, cooperative
        return getattr(self._go, name)


class ProvenanceLoop(BFS4KLevels):
    def __init__(self, ctx: RunContext, impl: BFS4KProvenance):
        from kernels import common
        from kernels.bfs4k.layout import PROV_FIELDS
        from kernels.bfs4k.provenance import provenance_kernels
        from kernels.rules import DEDUP_CODES

        self.impl = impl
        knobs = ctx.knobs
        self.prov_kernels = provenance_kernels(knobs.claim == "atomic", DEDUP_CODES[knobs.dedup])
        self.prov_log = ctx.buffer("prov_log", (impl.max_records, PROV_FIELDS), np.int32)
        self.prov_ctr = ctx.buffer("prov_ctr", 1, np.int64)
        ctx.launch_now(common.zero_int64, 1, 32, 0, self.prov_ctr)
        super().__init__(ctx)
        # The hash table and the culling tables side by side (the launches take hmask and the
        # shared memory from this layout).
        self.multi_layout = provenance_layout(knobs, ctx.limits)

    def _multi(self, go, plan, size, stats_blocks) -> None:
        from kernels.bfs4k.args import ProvLog

        swap = {self.kern.multi: self.prov_kernels[0], self.kern.heavy: self.prov_kernels[1]}
        super()._multi(_LoggingLauncher(go, swap, (ProvLog(self.prov_log, self.prov_ctr, self.impl.mask),)),
                       plan, size, stats_blocks)

    def result(self):
        rt = self.ctx.runtime
        claims = int(rt.to_host(self.prov_ctr)[0])
        rows = rt.to_host(self.prov_log)[:min(claims, self.impl.max_records)].copy()
        self.impl.log = ProvenanceLog(rows, claims, self.impl.mask)
        return super().result()
