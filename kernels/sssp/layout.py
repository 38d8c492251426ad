"""The SSSP kernels' counter slots, step flags and vertex classes: plain numbers, shared by the
kernels (kernels.sssp.relax, steps) and the host (explorer.sssp), which imports them without
importing numba.cuda (the backend is chosen after the technique is)."""

# The step's counters (int64), read back after it.
NEXT_SIZE = 0  # entries written to the next frontier
RELAXED = 1  # arcs relaxed (d(u) + w compared with d(v))
IMPROVED = 2  # relaxations that lowered d(v)
DUPLICATES = 3  # improvements of a vertex already queued this iteration
PLAIN = 4  # relaxations of an arc into a vertex of in-degree 1: a plain store (CLASSIFY)
SINKS = 5  # improved vertices without out-arcs, not queued (CLASSIFY)
SELF_LOOPS = 6  # self loops skipped (CLASSIFY)
FAR_MARKED = 7  # improvements beyond the bucket being settled, marked far (FAR)
NEGATIVE_LOOP = 8  # negative self loops on reached vertices: a negative cycle
BELOW_FLOOR = 9  # distances below the floor: a negative cycle
ATOMICS = 10  # relaxations that ran an atomic min (TEST_FIRST: only those that passed the plain read)
NEXT_HEAVY = 11  # entries of the next frontier of degree >= the heavy degree (> 0): its step runs on the grid
LAST_COUNT = NEXT_HEAVY  # the threads' counts are the slots RELAXED .. LAST_COUNT
OVERFLOW = 12  # positions past the next frontier's capacity (never written; the host raises)
HEAVY_COUNTER = 13  # the heavy list's count << 40 | degree sum (kernels.args.Heavy.counter)
NUM_COUNTERS = 14
# What a single-block launch (kernels.sssp.single) leaves after the step's own slots.
SB_DONE = 14  # iterations it ran
SB_IN_A = 15  # 1: the frontier it leaves is in qa
SB_SIZE = 16  # that frontier's size
SB_START = 17  # the SM's cycle counter as it began
SB_COUNTERS = 18
# A single-block log row: the step's counters NEXT_SIZE .. LAST_COUNT as the iteration left them, then
LOG_SIZE = 12  # the iteration's frontier
LOG_W = 13  # its virtual warp
LOG_CLOCK = 14  # the SM's cycle counter as it ended
LOG_FIELDS = 15

PACKED, CLASSIFY, DEDUP, FAR, TEST_FIRST = 1, 2, 4, 8, 16
#: vclass bits: the arcs into v come from one vertex only; v has no out-arcs but self loops.
IN_DEGREE_1, SINK = 1, 2
#: The 32-bit distance of an unreached vertex in the packed word (its parent bits are all ones).
PACKED_INF = 0x7FFFFFFF
PARENT_BITS = 0xFFFFFFFF

# A bucket advance's counters, in the same array (zeroed before either step).
GATHERED = NEXT_SIZE  # vertices moved from far into the frontier
FAR_LEFT = 1  # vertices still far after the advance
STALE = 2  # far marks dropped: their vertex was relaxed in an earlier bucket
NEXT_BUCKET = 3  # bucketing: NO_BUCKET - the next non-empty bucket (0: none)
NO_BUCKET = 1 << 62
