"""How many searches fit on the device at once: the batch size from free device memory.

A search-per-block method holds, per block ("slot"), the search's levels and BFS order (8 bytes a
vertex) and the application's per-slot arrays, and per search its statistics and per-search arrays
(a distance row is 4 bytes a vertex). MS-BFS holds three words per vertex for every 32 or 64
searches (frontier, next, seen) besides the per-search arrays. A request larger than what fits is
split into batches run one after another; a request of which not even one search fits is refused
with the memory it needs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .methods import Method, implementation

#: Share of the free memory a plan may use: the rest is left to the driver and Numba.
USABLE_SHARE = 0.9
#: Bytes of statistics and source id per search (kernels.multisearch.NUM_STATS int64 + int32).
SEARCH_OVERHEAD = 4 * 8 + 4
#: The simulator's pretend device memory (it allocates host memory), at most.
SIMULATOR_MEMORY = 2 << 30


class MultiSearchMemoryError(MemoryError):
    """Not even one search fits in the free device memory; the message names what it needs."""


def format_bytes(b: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if b < 1024 or unit == "TB":
            return f"{b:,.0f} {unit}" if unit == "bytes" else f"{b:,.1f} {unit}"
        b /= 1024
    return ""


def free_device_memory(runtime) -> tuple[int, str]:
    """(free bytes, where the figure comes from) on the runtime's device."""
    if runtime.kind == "simulator":
        from ..graphs.memory import available_bytes

        host = available_bytes()
        free = SIMULATOR_MEMORY if host is None else min(host, SIMULATOR_MEMORY)
        return free, "simulator: host memory, at most 2 GB"
    from numba import cuda

    free, total = cuda.current_context().get_memory_info()
    return int(free), f"{format_bytes(free)} free of {format_bytes(total)} on the GPU"


def words_for(searches: int, word_bits: int) -> int:
    """MS-BFS words per vertex for `searches`: a power of two up to 32, else a multiple of 32."""
    w = -(-searches // word_bits)
    if w <= 32:
        return 1 << max(0, (w - 1).bit_length())
    return -(-w // 32) * 32


@dataclass(frozen=True)
class BatchPlan:
    """What fits: `per_batch` searches at a time, `slots` of them side by side (a block each;
    MS-BFS: `words` words per vertex), in len(batches) batches of [lo, hi) rows."""

    method: Method
    total: int
    per_batch: int
    slots: int
    words: int
    free_bytes: int
    usable_bytes: int
    fixed_bytes: int
    per_slot_bytes: int
    per_search_bytes: int
    batches: tuple
    memory_note: str = ""
    parts: str = ""

    @property
    def batch_bytes(self) -> int:
        return self.fixed_bytes + self.slots * self.per_slot_bytes + self.per_batch * self.per_search_bytes

    def describe(self) -> str:
        nb = len(self.batches)
        head = (f"{self.total:,} searches in {nb} batch{'es' if nb > 1 else ''} of up to {self.per_batch:,}: "
                f"{format_bytes(self.batch_bytes)} a batch ({self.parts}); {self.memory_note}")
        if self.words:
            return head + f"; {self.words} word(s) per vertex"
        return head + f"; {self.slots:,} searches side by side, a block each"


def _batches(total: int, per_batch: int) -> tuple:
    """Even batches: 1,025 searches by 1,024 at most are 513 and 512, not 1,024 and 1."""
    count = -(-total // per_batch)
    base, extra = divmod(total, count)
    bounds = np.cumsum([0] + [base + (i < extra) for i in range(count)])
    return tuple((int(lo), int(hi)) for lo, hi in zip(bounds, bounds[1:]))


def plan_batches(graph, total: int, app, method: Method, *, resident_slots: int, free: int,
                 memory_note: str = "", k: int | None = None, word_bits: int = 64,
                 slots: int | None = None) -> BatchPlan:
    """The batches for `total` searches of `app` by `method` with `free` bytes of device memory.

    resident_slots: blocks the device runs at once (a search-per-block method wants that many
    slots); slots: the caller's choice instead; k: the most searches in one batch."""
    return implementation(method).plan(graph, total, app, resident_slots=resident_slots, free=free,
                                       memory_note=memory_note, k=k, word_bits=word_bits, slots=slots)


def plan_words(graph, total: int, app, method: Method, *, fixed: int, free: int, memory_note: str,
               k: int | None, word_bits: int) -> BatchPlan:
    """MS-BFS's plan: three words (frontier, next, seen) a vertex for every `word_bits` searches,
    as many words as fit besides `fixed` bytes for the whole run and the per-search arrays."""
    n = graph.num_vertices
    usable = int(free * USABLE_SHARE)
    cap = min(total, k) if k else total
    fixed += app.bytes(n, "run")
    per_word = 3 * n * (word_bits // 8)
    per_search = app.bytes(n, "search") + 8 + 4
    w = words_for(cap, word_bits)
    while True:
        per_batch = min(cap, w * word_bits)
        need = fixed + w * per_word + per_batch * per_search
        if need <= usable or w == 1:
            break
        w = w - 32 if w > 32 else w // 2
    if need > usable:
        _refuse(graph, app, method, need, usable, free,
                f"{format_bytes(w * per_word)} of frontier, next and seen words for {word_bits} searches, "
                f"{format_bytes(per_search)} per search, {format_bytes(fixed)} for the whole run")
    parts = (f"{w} x {n:,} x 3 words of {word_bits} bits = {format_bytes(w * per_word)}, "
             f"{format_bytes(per_batch * per_search)} of per-search arrays")
    return BatchPlan(method, total, per_batch, w, w, free, usable, fixed, per_word, per_search,
                     _batches(total, per_batch), memory_note, parts)


def plan_slots(graph, total: int, app, method: Method, *, slot_bytes: int, fixed: int, resident_slots: int,
               free: int, memory_note: str, k: int | None, slots: int | None) -> BatchPlan:
    """A search per block: `slots` blocks (the device's resident blocks unless the caller chose)
    each with `slot_bytes` of working state and the application's per-slot arrays, as many
    searches' statistics and per-search arrays as then fit, and `fixed` bytes for the whole run;
    fewer blocks where not even one search would fit."""
    n = graph.num_vertices
    usable = int(free * USABLE_SHARE)
    cap = min(total, k) if k else total
    per_slot = slot_bytes + app.bytes(n, "slot") + app.bytes(n, "slot-sum")
    per_search = SEARCH_OVERHEAD + app.bytes(n, "search")
    fixed += app.bytes(n, "run")
    want = max(1, min(slots or resident_slots, cap))
    s = want
    while True:
        room = usable - fixed - s * per_slot
        per_batch = min(cap, room // per_search) if room > 0 else 0
        if per_batch >= 1 or s == 1:
            break
        s = max(1, s // 2)
    if per_batch < 1:
        _refuse(graph, app, method, fixed + per_slot + per_search, usable, free,
                f"{format_bytes(per_slot)} of working state for its block (levels and BFS order of "
                f"{n:,} vertices{', ' + app.name + ' arrays' if app.bytes(n, 'slot') + app.bytes(n, 'slot-sum') else ''}), "
                f"{format_bytes(per_search)} for the search, {format_bytes(fixed)} for the whole run")
    s = min(s, per_batch)
    if slots and s < slots:
        memory_note += f"; {slots:,} slots asked, {s:,} fit"
    parts = (f"{s:,} blocks x {format_bytes(per_slot)} of working state, {per_batch:,} searches x "
             f"{format_bytes(per_search)}" + (f", {format_bytes(fixed)} for the run" if fixed else ""))
    return BatchPlan(method, total, per_batch, s, 0, free, usable, fixed, per_slot, per_search,
                     _batches(total, per_batch), memory_note, parts)


def _refuse(graph, app, method, need: int, usable: int, free: int, parts: str):
    raise MultiSearchMemoryError(
        f"one {app.name} search of {graph.name} ({graph.num_vertices:,} vertices, {graph.num_arcs:,} arcs) by "
        f"{method.value} needs {format_bytes(need)} of device memory ({parts}), but {format_bytes(usable)} "
        f"of the {format_bytes(free)} free is usable: free device memory (close other sessions) or use a "
        "smaller graph")


def per_search_rows(plan: BatchPlan) -> int:
    """Rows to allocate for per-search arrays (the largest batch)."""
    return max(hi - lo for lo, hi in plan.batches)


__all__ = ["BatchPlan", "MultiSearchMemoryError", "plan_batches", "plan_slots", "plan_words",
           "free_device_memory", "format_bytes", "words_for", "per_search_rows"]
