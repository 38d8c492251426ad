"""The dynamic mappings of the chapter's §5.3-5.6: work-units (the frontier's edges) mapped to
threads by binary searches in the exclusive prefix sum of the frontier's degrees: direct search,
block search, two-phase search and multi-phase search (coalesced expansion, iterated searches);
and the passes they need before the level: the prefix sum over the whole frontier (three small
kernels: tiles, their sums, the sums added back) and the partition into balanced chunks.

`prefix` holds fsize + 1 entries: prefix[i] = the degrees of entries 0..i-1, prefix[fsize] = the
frontier's degree sum (the work-units). Bodies as in kernels.load_balance.gather.
"""
from numba import cuda, int32, int64

from ..args import I64, V32, V64
from ..primitives import block_exclusive_scan
from ..common import clear_next_row
from .device import A_SEARCH, finish, owner, step
from .layout import NUM_COUNTERS, SEARCHES, TOTAL


# ------------------------------------------------------------------------------ passes
@cuda.jit(cache=True)
def lb_prefix_tiles(offsets: V64, frontier: V32, fsize: I64, prefix: V64, sums: V64, counters: V64, row: I64):
    """Pass 1 of the global prefix sum, a thread per entry: each block scans its tile of degrees
    into prefix and writes the tile's sum. The level's first kernel: it clears the other row."""
    clear_next_row(counters, row, NUM_COUNTERS)
    scratch = cuda.shared.array(32, int64)
    i = cuda.grid(1)
    d = int64(0)
    if i < fsize:
        u = frontier[i]
        d = offsets[u + 1] - offsets[u]
    excl, total = block_exclusive_scan(d, scratch)
    if i < fsize:
        prefix[i] = excl
    if cuda.threadIdx.x == 0:
        sums[cuda.blockIdx.x] = total


@cuda.jit(cache=True)
def lb_prefix_sums(sums: V64, tiles: I64, prefix: V64, fsize: I64, counters: V64, row: I64):
    """Pass 2, one block: the exclusive scan of the tiles' sums, chunk after chunk with a carry;
    the degree sum goes to prefix[fsize] and to the level's TOTAL counter."""
    scratch = cuda.shared.array(32, int64)
    tid = cuda.threadIdx.x
    carry = int64(0)
    for b0 in range(0, tiles, cuda.blockDim.x):
        v = int64(0)
        if b0 + tid < tiles:
            v = sums[b0 + tid]
        excl, total = block_exclusive_scan(v, scratch)
        if b0 + tid < tiles:
            sums[b0 + tid] = carry + excl
        carry += total
    if tid == 0:
        prefix[fsize] = carry
        counters[row * NUM_COUNTERS + TOTAL] = carry


@cuda.jit(cache=True)
def lb_prefix_add(prefix: V64, fsize: I64, sums: V64):
    """Pass 3, launched as pass 1: each tile's offset added to its entries."""
    i = cuda.grid(1)
    if i < fsize:
        prefix[i] += sums[cuda.blockIdx.x]


@cuda.jit(cache=True)
def lb_partition(prefix: V64, fsize: I64, chunk: I64, parts: V64, counters: V64, row: I64):
    """§5.3.4's partitioning: chunk c of `chunk` work-units starts in entry parts[c] (a binary
    search of the whole prefix sum in global memory per chunk: one thread each)."""
    total = prefix[fsize]
    chunks = (total + chunk - 1) // chunk
    c = cuda.grid(1)
    if c == 0:
        cuda.atomic.add(counters, row * NUM_COUNTERS + SEARCHES, chunks)
    while c < chunks:
        parts[c] = owner(prefix, 0, 0, fsize, c * chunk)
        c += cuda.gridsize(1)


# ------------------------------------------------------------------------------ expansion bodies
@cuda.jit(device=True)
def direct_search(lv, ops, hist, q, acc, sh, p1, p2):
    """§5.3.1: thread x takes work-unit x (grid-stride) and finds its entry by a binary search of
    the whole prefix sum in global memory: perfect balance, scattered probes."""
    offsets, indices, frontier, fsize, prefix = lv[0], lv[1], lv[2], lv[3], lv[4]
    instrument = ops[3][0]
    lane = cuda.laneid
    total = prefix[fsize]
    x = int64(cuda.grid(1))
    stride = cuda.gridsize(1)
    qn = int32(0)
    rounds = int32(0)
    while x - lane < total:  # uniform over the warp
        has = x < total
        v = int32(0)
        u = int32(0)
        if has:
            s = owner(prefix, 0, 0, fsize, x)
            u = frontier[s]
            v = indices[offsets[u] + (x - prefix[s])]
            if instrument:
                acc[A_SEARCH] += 1
        qn, rounds = step(has, v, u, ops, hist, q, qn, rounds, acc)
        x += stride
    finish(q, qn, ops, acc)


@cuda.jit(device=True)
def block_search(lv, ops, hist, q, acc, sh, K, p2):
    """§5.3.3 (Davidson et al.): a block loads a maxi chunk of B x K prefix-sum entries (the same
    number of entries for every block, so blocks get different amounts of work) into shared
    memory; its units are split evenly over the block's threads, each finding its first unit by
    one search in shared memory and walking its units in order (not coalesced)."""
    offsets, indices, frontier, fsize, prefix = lv[0], lv[1], lv[2], lv[3], lv[4]
    sh64 = sh[0]
    instrument = ops[3][0]
    tid = cuda.threadIdx.x
    B = cuda.blockDim.x
    C = B * K
    qn = int32(0)
    rounds = int32(0)
    first = int64(cuda.blockIdx.x) * C
    while first < fsize:  # uniform over the block
        cnt = min(C, fsize - first)
        for i in range(tid, cnt + 1, B):
            sh64[i] = prefix[first + i]
        cuda.syncthreads()
        base = sh64[0]
        units = sh64[cnt] - base
        k = (units + B - 1) // B
        x = tid * k
        x1 = min(x + k, units)
        s = int64(0)
        s_end = int64(0)
        u = int32(0)
        row = int64(0)
        if x < x1:
            s = owner(sh64, 0, 0, cnt, base + x)
            if instrument:
                acc[A_SEARCH] += 1
            s_end = sh64[s + 1]
            u = frontier[first + s]
            row = offsets[u] - sh64[s]
        for _ in range(k):  # uniform over the block
            has = x < x1
            v = int32(0)
            if has:
                gx = base + x
                while gx >= s_end:
                    s += 1
                    s_end = sh64[s + 1]
                    u = frontier[first + s]
                    row = offsets[u] - sh64[s]
                v = indices[row + gx]
                x += 1
            qn, rounds = step(has, v, u, ops, hist, q, qn, rounds, acc)
        cuda.syncthreads()  # everyone is done with sh64 before the next chunk loads it
        first += int64(cuda.gridDim.x) * C
    finish(q, qn, ops, acc)


@cuda.jit(device=True)
def _pref(sh64, prefix, in_sh, first, i):
    """prefix[i] from the block's shared slice (entries first.. loaded at sh64[0..]) if it fits."""
    if in_sh:
        return sh64[i - first]
    return prefix[i]


@cuda.jit(device=True)
def _entry(lv, sh64, in_sh, first, s):
    """Frontier entry s as a walk over work-units needs it: (the end of its units, its vertex, and
    what turns a unit x of it into its edge: row + x)."""
    offsets, frontier, prefix = lv[0], lv[2], lv[4]
    u = frontier[s]
    return _pref(sh64, prefix, in_sh, first, s + 1), u, offsets[u] - _pref(sh64, prefix, in_sh, first, s)


@cuda.jit(device=True)
def _owner_slice(sh64, prefix, in_sh, first, last, x):
    """owner() over entries first..last, in the shared slice when it fits, else in global memory."""
    if in_sh:
        return first + owner(sh64, 0, 0, last - first + 1, x)
    return owner(prefix, 0, first, last + 1, x)


@cuda.jit(device=True)
def _load_slice(lv, sh64, cap, c, chunks):
    """Entries parts[c]..parts[c + 1] (the last chunk: ..fsize - 1) and the prefix sum at their ends
    into sh64[0..] when they fit in `cap` words (entries of degree 0 can make a slice longer than
    its chunk of units: then the searches read global memory). Collective; ends with a barrier."""
    fsize, prefix, parts = lv[3], lv[4], lv[5]
    first = parts[c]
    last = fsize - 1
    if c + 1 < chunks:
        last = parts[c + 1]
    in_sh = last - first + 2 <= cap
    if in_sh:
        for i in range(cuda.threadIdx.x, last - first + 2, cuda.blockDim.x):
            sh64[i] = prefix[first + i]
    cuda.syncthreads()
    return first, last, in_sh


@cuda.jit(device=True)
def two_phase(lv, ops, hist, q, acc, sh, K, p2):
    """§5.3.4 (Davidson et al., Green et al., Baxter): chunk c holds work-units [c B K, (c+1) B K)
    whatever their entries (balanced across blocks); its slice of the prefix sum is loaded into
    shared memory, thread t finds unit c B K + t K by one search there and walks K units in
    order (scattered accesses, the chapter's Fig. 10)."""
    indices, fsize, prefix = lv[1], lv[3], lv[4]
    sh64, n64 = sh[0], sh[3]
    instrument = ops[3][0]
    tid = cuda.threadIdx.x
    CH = cuda.blockDim.x * K
    total = prefix[fsize]
    chunks = (total + CH - 1) // CH
    qn = int32(0)
    rounds = int32(0)
    c = int64(cuda.blockIdx.x)
    while c < chunks:  # uniform over the block
        first, last, in_sh = _load_slice(lv, sh64, n64, c, chunks)
        x = c * CH + tid * K
        x1 = min(x + K, total)
        s = int64(0)
        s_end = int64(0)
        u = int32(0)
        row = int64(0)
        if x < x1:
            s = _owner_slice(sh64, prefix, in_sh, first, last, x)
            if instrument:
                acc[A_SEARCH] += 1
            s_end, u, row = _entry(lv, sh64, in_sh, first, s)
        for _ in range(K):
            has = x < x1
            v = int32(0)
            if has:
                while x >= s_end:
                    s += 1
                    s_end, u, row = _entry(lv, sh64, in_sh, first, s)
                v = indices[row + x]
                x += 1
            qn, rounds = step(has, v, u, ops, hist, q, qn, rounds, acc)
        cuda.syncthreads()
        c += cuda.gridDim.x
    finish(q, qn, ops, acc)


@cuda.jit(device=True)
def multi_phase(lv, ops, hist, q, acc, sh, K, IS):
    """§5.4-5.6 (Busato & Bombieri, MCSoC 2015): two-phase's balanced chunks, IS times larger
    (iterated searches: one slice load and one partition search per B K IS units), each thread
    making IS searches; and the coalesced expansion: for each of the IS sub-chunks a thread writes
    its K units' edge indices (and vertices) in order into shared memory, then the block reads
    them back transposed, unit j B + t by thread t, so consecutive lanes load consecutive edges.
    The paper stages the units in registers first; Numba keeps arrays indexed at run time in
    local memory, not registers, so they go to shared memory directly."""
    indices, fsize, prefix = lv[1], lv[3], lv[4]
    sh64, sh32, off_g32 = sh[0], sh[1], sh[4]
    instrument = ops[3][0]
    tid = cuda.threadIdx.x
    B = cuda.blockDim.x
    BK = B * K
    CH = BK * IS
    slice_cap = CH + 1
    total = prefix[fsize]
    chunks = (total + CH - 1) // CH
    qn = int32(0)
    rounds = int32(0)
    c = int64(cuda.blockIdx.x)
    while c < chunks:  # uniform over the block
        first, last, in_sh = _load_slice(lv, sh64, slice_cap, c, chunks)
        for r in range(IS):
            sub = c * CH + r * BK
            if sub >= total:  # uniform over the block
                break
            x = sub + tid * K
            x1 = min(x + K, total)
            if x < x1:
                s = _owner_slice(sh64, prefix, in_sh, first, last, x)
                if instrument:
                    acc[A_SEARCH] += 1
                s_end, u, row = _entry(lv, sh64, in_sh, first, s)
                slot = tid * K
                while x < x1:
                    while x >= s_end:
                        s += 1
                        s_end, u, row = _entry(lv, sh64, in_sh, first, s)
                    sh64[slice_cap + slot] = row + x
                    sh32[off_g32 + slot] = u
                    slot += 1
                    x += 1
            cuda.syncthreads()
            n = min(BK, total - sub)
            for j in range(K):
                idx = j * B + tid
                has = idx < n
                v = int32(0)
                pu = int32(0)
                if has:
                    v = indices[sh64[slice_cap + idx]]
                    pu = sh32[off_g32 + idx]
                qn, rounds = step(has, v, pu, ops, hist, q, qn, rounds, acc)
            cuda.syncthreads()
        c += cuda.gridDim.x
    finish(q, qn, ops, acc)
