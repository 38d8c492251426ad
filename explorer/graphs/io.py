"""Graph files: SNAP edge lists, Matrix Market and METIS, each read into a CSRGraph (through the
on-disk cache), and `load_graph`, which picks the reader by extension.

Every reader accepts `\\n`, `\\r\\n` and `\\r` line ends, a UTF-8 byte-order mark and gzip, and
raises GraphError naming the file (and the 1-based line, where there is one). What "the file's
own vertex ids" are differs by format (see explorer.graphs): SNAP ids are labels, remapped to
0..n-1 with the labels kept in `original_ids`; Matrix Market rows and METIS lines are numbered
1..n by the format, and vertex v is row/line v+1, so their ids need no map.
"""
from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Callable

import numba
import numpy as np

from . import cache as _cache
from .build import bar_for, build, build_bytes, check_vertex_count, remap_ids
from .csr import CSRGraph, GraphError
from .memory import check_memory
from .text import check_readable, nth_line, read_bytes, stem, tokens

__all__ = ["load_snap", "load_matrix_market", "load_metis", "load_graph"]


def _file_key(path: Path, fmt: str, options: dict) -> dict:
    # The file's bytes are not in the key: the entry keeps their digest and the cache compares it
    # (a file's size and modification time can stay while its bytes change).
    return {"file": str(path.resolve()), "format": fmt, "options": options}


def _cached_file(path, fmt: str, options: dict, make: Callable[[Path], CSRGraph],
                 name: str | None, cache: bool | None) -> CSRGraph:
    path = Path(path)
    check_readable(path)
    try:
        g = _cache.cached(f"file-{_cache.slug(path.name)}", _file_key(path, fmt, options),
                          lambda: make(path), cache, source=path)
    except OSError as e:  # reading the file for its digest (the cache's own errors are warnings)
        raise GraphError(f"{path}: cannot read: {e.strerror or e}") from e
    if name:
        g.name = name
    return g


def load_snap(path, directed: bool = True, symmetrize: bool = False,
              drop_self_loops: bool = True, merge_multi_edges: bool = True, remap: bool = True,
              name: str | None = None, cache: bool | None = None,
              progress: bool | None = None, weighted: bool = True) -> CSRGraph:
    """Load a SNAP edge list (.txt, .txt.gz, .el, .edges): `#` comment lines, one
    whitespace-separated `from to [weight]` per line, further columns ignored.

    SNAP files do not say whether they are directed: pass directed=False for an undirected file
    (each edge once or both ways round) or symmetrize=True to make a directed one undirected.
    remap=True (default): the file's ids are labels; they become 0..n-1 in increasing order and
    the labels are kept in `graph.original_ids` (None when they already are 0..n-1), so
    `graph.to_dense(file_id)` and `graph.to_original(v)` translate. remap=False keeps the id
    space (n = largest id + 1, gaps become isolated vertices).
    weighted: a third column that is a number on every edge line becomes the weights (a line
    without one leaves the graph unweighted, and notes['weights'] names it); False ignores it.
    Malformed lines raise GraphError naming the file and the 1-based line.
    cache: None stores the parsed CSR on disk when it has over 2**20 arcs, True always,
    False neither reads nor writes the cache.
    """
    options = dict(directed=directed, symmetrize=symmetrize, drop_self_loops=drop_self_loops,
                   merge_multi_edges=merge_multi_edges, remap=remap, weighted=weighted)

    def make(p: Path) -> CSRGraph:
        data = read_bytes(p)
        values, reals, starts, line_no = tokens(data, p, "#", 3 if weighted else 2, False,
                                                "edge line", 2 if weighted else -1)
        if line_no.size == 0:
            raise GraphError(f"{p}: no edges (only comments or blank lines)")
        counts = np.diff(starts)
        if (counts < 2).any():
            k = int(np.argmax(counts < 2))
            raise GraphError(f"{p}: line {int(line_no[k])}: malformed edge line "
                             f"{nth_line(data, int(line_no[k]))!r}: expected 'from to'")
        src = values[starts[:-1]]
        dst = values[starts[:-1] + 1]
        for arr in (src, dst):
            if arr.min() < 0:
                k = int(np.argmax(arr < 0))
                line = int(line_no[k])
                raise GraphError(f"{p}: line {line}: vertex id {int(arr[k])} is out of range "
                                 f"(ids must be >= 0) in {nth_line(data, line)!r}")
        notes = {"source": f"SNAP edge list {p.name}"}
        w = None
        if weighted:
            has = counts >= 3
            if has.all():
                w = reals[starts[:-1] + 2]
            elif has.any():
                k = int(np.argmax(~has))
                notes["weights"] = (f"third column ignored: line {int(line_no[k])} has no "
                                    "number there")
        ids = None
        if remap:
            ids, src, dst = remap_ids(src, dst)
        n = int(ids.size) if ids is not None else int(max(src.max(), dst.max())) + 1
        check_vertex_count(n, str(p), "; try remap=True")
        src = np.ascontiguousarray(src, dtype=np.int32)
        dst = np.ascontiguousarray(dst, dtype=np.int32)
        notes["ids_remapped"] = ids is not None
        with bar_for(src.size, f"CSR {p.name}", progress) as bar:
            return build(src, dst, n, directed=directed, symmetrize=symmetrize,
                         drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                         name=stem(p), ids=ids, notes=notes, bar=bar, weights=w)

    return _cached_file(path, "snap", options, make, name, cache)


def load_matrix_market(path, directed: bool | None = None, symmetrize: bool = False,
                       drop_self_loops: bool = True, merge_multi_edges: bool = True,
                       name: str | None = None, cache: bool | None = None,
                       progress: bool | None = None, weighted: bool = True) -> CSRGraph:
    """Load a Matrix Market coordinate file (.mtx, .mtx.gz) with scipy.io.mmread: entry (i, j)
    is the arc i -> j (rows and columns are 1..n in the file; vertex v is row v+1, as every
    0-based reader numbers them, so there is no id map). Real and integer values become the
    weights (weighted=False drops them; pattern and complex files have none); a value of an
    integer field that is not a whole number is a GraphError naming its line.

    directed=None follows the header: symmetric / skew-symmetric / hermitian -> undirected graph
    with both arcs of each stored edge, general -> directed. scipy's errors become GraphError
    naming the file; the size line is checked (int32 vertex ids, memory) before reading on.
    """
    options = dict(directed=directed, symmetrize=symmetrize, drop_self_loops=drop_self_loops,
                   merge_multi_edges=merge_multi_edges, weighted=weighted)

    def make(p: Path) -> CSRGraph:
        import scipy.io
        import scipy.sparse as sp

        data = read_bytes(p)
        try:
            rows, cols, entries, fmt, fld, symmetry = scipy.io.mminfo(io.BytesIO(data))
        except Exception as e:  # scipy raises ValueError, IndexError, RuntimeError, ...
            raise GraphError(f"{p}: not a readable Matrix Market file: {e}") from e
        if fmt != "coordinate":
            raise GraphError(f"{p}: Matrix Market '{fmt}' (dense) format is not a graph; "
                             "expected 'coordinate'")
        if rows != cols:
            raise GraphError(f"{p}: matrix is {rows} x {cols}; an adjacency matrix must be square")
        check_vertex_count(rows, f"{p}: size line says {rows:,} x {cols:,}")
        sym = symmetry != "general"
        keep_w = weighted and fld in ("real", "double", "integer")
        read = entries * (2 if sym else 1)  # mmread mirrors the stored triangle
        check_memory(40 * read + build_bytes(rows, entries, sym or symmetrize, keep_w),
                     f"{p}: reading {rows:,} vertices and {entries:,} entries")
        try:
            # An integer field is read as real: mmread would truncate a value such as 0.5 to 0.
            m = scipy.io.mmread(io.BytesIO(_field_as_real(data) if fld == "integer" else data))
        except Exception as e:
            raise GraphError(f"{p}: not a readable Matrix Market file: {e}") from e
        coo = sp.coo_array(m)
        row = coo.row.astype(np.int64)
        col = coo.col.astype(np.int64)
        if fld in ("real", "double", "integer"):
            _check_entries(p, data, row, col, coo.data, ~np.isfinite(coo.data),
                           "which no float64 holds (a weight must be finite, at most about 1.8e308)")
        if fld == "integer":
            _check_entries(p, data, row, col, coo.data, coo.data != np.floor(coo.data),
                           "but the header says the values are integers")
        w = coo.data.astype(np.float64) if keep_w else None
        if sym:
            # mmread mirrored the stored triangle; read each stored entry once.
            keep = row >= col
            row, col = row[keep], col[keep]
            w = None if w is None else w[keep]
        undirected = sym if directed is None else not directed
        notes = {"source": f"Matrix Market {p.name} ({fld} {symmetry})"}
        if weighted and fld == "complex":
            notes["weights"] = "complex values ignored"
        with bar_for(row.size, f"CSR {p.name}", progress) as bar:
            return build(row.astype(np.int32), col.astype(np.int32), int(rows),
                         directed=not undirected, symmetrize=symmetrize and not undirected,
                         drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                         name=stem(p), notes=notes, bar=bar, weights=w)

    return _cached_file(path, "mtx", options, make, name, cache)


def _field_as_real(data: bytes) -> bytes:
    """The file with its header's field `integer` read as `real`."""
    end = data.find(b"\n")
    end = len(data) if end < 0 else end
    return re.sub(rb"(?i)\binteger\b", b"real", data[:end], count=1) + data[end:]


def _check_entries(p: Path, data: bytes, row, col, values, bad, why: str) -> None:
    """GraphError naming the first entry marked `bad` (its line, its value, `why`)."""
    if not bad.any():
        return
    k = int(np.argmax(bad))
    i, j = int(row[k]) + 1, int(col[k]) + 1
    line = _entry_line(data, i, j)
    where = f"line {line}: " if line else ""
    raise GraphError(f"{p}: {where}entry ({i}, {j}) holds {float(values[k])!r}, {why}")


def _entry_line(data: bytes, i: int, j: int) -> int | None:
    """The 1-based line of the entry (i, j) (or (j, i), as a symmetric file may store it)."""
    seen_size = False
    for lineno, line in enumerate(data.split(b"\n"), 1):
        words = line.split()
        if not words or words[0].startswith(b"%"):
            continue
        if not seen_size:
            seen_size = True
            continue
        try:
            a, b = int(words[0]), int(words[1])
        except (ValueError, IndexError):
            continue
        if (a, b) in ((i, j), (j, i)):
            return lineno
    return None


@numba.njit(cache=True)
def _metis_arcs(values, starts, skip, step, n):
    """Arcs of METIS vertex lines 0..n-1 and, with step 2, their weights; returns (src, dst,
    weights, bad_line_index or -1, bad_value)."""
    total = 0
    for v in range(n):
        k = starts[v + 1] - starts[v] - skip
        if k < 0 or k % step != 0:
            return (np.empty(0, np.int32), np.empty(0, np.int32), np.empty(0, np.float64), v,
                    np.int64(-1))
        total += k // step
    src = np.empty(total, np.int32)
    dst = np.empty(total, np.int32)
    wgt = np.empty(total if step == 2 else 0, np.float64)
    e = 0
    for v in range(n):
        for k in range(starts[v] + skip, starts[v + 1], step):
            u = values[k]
            if u < 1 or u > n:
                return src, dst, wgt, v, u
            src[e] = v
            dst[e] = u - 1
            if step == 2:
                wgt[e] = values[k + 1]
            e += 1
    return src, dst, wgt, -1, np.int64(0)


def load_metis(path, drop_self_loops: bool = True, merge_multi_edges: bool = True,
               name: str | None = None, cache: bool | None = None,
               progress: bool | None = None, directed: bool | None = None,
               symmetrize: bool = False, weighted: bool = True) -> CSRGraph:
    """Load a METIS/Chaco .graph file: `%` comments, header `n m [fmt [ncon]]`, then line v (1..n)
    lists v's 1-based neighbours (vertex v is line v+1: no id map). fmt 0, 1 (edge weights),
    10 (ncon vertex weights), 11, and the vertex-size variants 100/101/110/111 are read; edge
    weights become the graph's weights (weighted=False drops them; an edge whose two ends list
    different weights is a GraphError naming both lines), vertex weights and sizes are skipped. METIS graphs are undirected by format: directed=False or None (and symmetrize,
    which changes nothing) are accepted, directed=True is a GraphError. The lists are
    symmetrized, and notes['reverse_arcs_added'] says how many arcs a non-symmetric file
    lacked (0 for a correct file).
    """
    if directed:
        raise GraphError(f"{path}: METIS graphs are undirected by format, so directed=True "
                         "cannot be honoured; leave directed unset or pass directed=False")
    options = dict(drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                   weighted=weighted)

    def make(p: Path) -> CSRGraph:
        data = read_bytes(p)
        values, _, starts, line_no = tokens(data, p, "%", 0, True, "line")
        counts = np.diff(starts)
        nonempty = np.flatnonzero(counts > 0)
        if nonempty.size == 0:
            raise GraphError(f"{p}: no header line 'n m [fmt]'")
        h = int(nonempty[0])
        header = values[starts[h]:starts[h + 1]].tolist()
        hline = int(line_no[h])
        if not 2 <= len(header) <= 4 or min(header) < 0:
            raise GraphError(f"{p}: line {hline}: header must be 'n m [fmt [ncon]]' with "
                             f"non-negative integers, got {header}")
        n, m = header[0], header[1]
        check_vertex_count(n, f"{p}: line {hline}: header says {n:,} vertices")
        fmt = header[2] if len(header) > 2 else 0
        digits = f"{fmt:03d}"
        if fmt > 111 or any(c not in "01" for c in digits):
            raise GraphError(f"{p}: line {hline}: unsupported METIS fmt {fmt} "
                             "(expected 0, 1, 10, 11, 100, 101, 110 or 111)")
        has_size, has_vwgt, has_ewgt = (c == "1" for c in digits)
        ncon = header[3] if len(header) > 3 else 1
        skip = int(has_size) + (ncon if has_vwgt else 0)
        step = 2 if has_ewgt else 1
        body_starts = starts[h + 1:]
        body_lines = line_no[h + 1:]
        nlines = body_lines.size
        if nlines < n:
            raise GraphError(f"{p}: header says {n} vertices but only {nlines} vertex lines follow "
                             f"(last line {int(line_no[-1])})")
        if nlines > n and counts[h + 1 + n:].any():
            k = h + 1 + n + int(np.argmax(counts[h + 1 + n:] > 0))
            raise GraphError(f"{p}: line {int(line_no[k])}: more vertex lines than the {n} "
                             "vertices the header declares")
        src, dst, wgt, bad, val = _metis_arcs(values, body_starts, skip, step, n)
        if bad >= 0:
            line = int(body_lines[bad])
            if val < 0:
                raise GraphError(f"{p}: line {line}: vertex {bad + 1} has a malformed entry list "
                                 f"for fmt {fmt} (ncon={ncon}): {nth_line(data, line)!r}")
            raise GraphError(f"{p}: line {line}: neighbour id {int(val)} of vertex {bad + 1} is "
                             f"out of range: ids must be in 1..{n}")
        if src.size != 2 * m:
            raise GraphError(f"{p}: header says {m} edges, so the lists should hold {2 * m} "
                             f"entries, but they hold {src.size}")
        if has_ewgt and weighted:
            _check_both_ends_agree(p, src, dst, wgt, body_lines)
        notes = {"source": f"METIS {p.name} (fmt {fmt})"}
        with bar_for(src.size, f"CSR {p.name}", progress) as bar:
            return build(src, dst, int(n), directed=True, symmetrize=True,
                         drop_self_loops=drop_self_loops, merge_multi_edges=merge_multi_edges,
                         name=stem(p), notes=notes, bar=bar,
                         weights=wgt if has_ewgt and weighted else None)

    return _cached_file(path, "metis", options, make, name, cache)


def _check_both_ends_agree(p: Path, src, dst, wgt, lines) -> None:
    """GraphError naming the first edge whose two ends give it different weights (METIS lists each
    edge at both ends; a repeated edge is compared by its smallest weight at each end, which is
    the weight its merged arcs keep)."""
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    up = src < dst  # which end lists it: the smaller vertex's line, or the larger's
    order = np.lexsort((wgt, up, hi, lo))
    lo, hi, up, w = lo[order], hi[order], up[order], wgt[order]
    head = np.ones(lo.size, bool)  # the first (smallest weight) of each edge's listings at one end
    head[1:] = (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1]) | (up[1:] != up[:-1])
    lo, hi, w = lo[head], hi[head], w[head]
    bad = (lo[1:] == lo[:-1]) & (hi[1:] == hi[:-1]) & (w[1:] != w[:-1])
    if bad.any():
        k = int(np.argmax(bad))
        u, v = int(lo[k]), int(hi[k])
        raise GraphError(f"{p}: line {int(lines[v])}: edge {u + 1}-{v + 1} weighs {w[k]:g} here but "
                         f"{w[k + 1]:g} at line {int(lines[u])} (vertex {u + 1}); an edge has one weight "
                         "(weighted=False reads the graph without them)")


_LOADERS = {
    ".txt": load_snap, ".el": load_snap, ".edges": load_snap,
    ".mtx": load_matrix_market,
    ".graph": load_metis, ".metis": load_metis,
}


def load_graph(path, **opts) -> CSRGraph:
    """Load a graph file, choosing the reader by extension (an extra .gz is allowed):
    .txt/.el/.edges -> load_snap, .mtx -> load_matrix_market, .graph/.metis -> load_metis.
    `opts` go to that reader."""
    p = Path(path)
    name = p.name.lower()
    base = name[:-3] if name.endswith(".gz") else name
    ext = os.path.splitext(base)[1]
    loader = _LOADERS.get(ext)
    if loader is None:
        raise GraphError(f"{p}: unknown graph file extension {ext or '(none)'!r}; expected one of "
                         f"{', '.join(sorted(_LOADERS))} (optionally .gz)")
    return loader(p, **opts)
