"""Reading graph text files: bytes (gzip or not, any line ends, an optional UTF-8 byte-order
mark) and a Numba tokenizer that turns them into numbers line by line, with errors that name the
file, the 1-based line and the text."""
from __future__ import annotations

import gzip
import re
import stat
import zlib
from pathlib import Path

import numba
import numpy as np

from .csr import GraphError
from .memory import check_memory

_BOM = b"\xef\xbb\xbf"


def check_readable(path: Path) -> None:
    """GraphError unless `path` names something that is not a folder (a folder that cannot be
    searched, on the way, is a GraphError too)."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise GraphError(f"{path}: no such file") from None
    except OSError as e:  # permission denied on the way, a name too long, a loop of links
        raise GraphError(f"{path}: cannot read: {e.strerror or e}") from e
    if stat.S_ISDIR(st.st_mode):
        raise GraphError(f"{path}: is a directory, not a graph file")


def is_gzip(path: Path) -> bool:
    """Whether the name ends in .gz, in any case (Windows tools write .GZ)."""
    return path.name.lower().endswith(".gz")


def read_bytes(path: Path) -> bytes:
    """The file's bytes, decompressed if .gz, with a UTF-8 byte-order mark dropped and `\\r\\n`
    and lone `\\r` line ends turned into `\\n` (files from Windows and from old Macs)."""
    check_readable(path)
    try:
        if is_gzip(path):
            with gzip.open(path, "rb") as f:
                data = f.read()
        else:
            data = path.read_bytes()
    except (OSError, EOFError, zlib.error) as e:
        raise GraphError(f"{path}: cannot read: {e}") from e
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    if b"\r" in data:  # a memchr: free for the usual \n-only file
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if not data or data.isspace():  # isspace stops at the first other byte; strip copies it all
        raise GraphError(f"{path}: empty file")
    return data


def stem(path: Path) -> str:
    name = path.name
    for ext in (".gz", ".txt", ".el", ".edges", ".mtx", ".graph", ".metis"):
        if name.lower().endswith(ext):
            name = name[: -len(ext)]
    return name


# ============================================================================================
# The tokenizer (Numba)

_ERR_CHAR = 1  # a character that cannot be part of an integer
_ERR_BIG = 2  # an integer over _LIMIT
#: The largest integer a graph file may hold (vertex ids, counts). The tokenizer checks it digit by
#: digit, and below 2**58 the next digit (x * 10 + 9) cannot overflow int64 before it is checked.
_LIMIT = 1 << 58

# 10**k is exact in float64 for k <= 22, so mantissa (< 2**53) times or over it is one correctly
# rounded operation: the value strtod gives (Clinger's fast path). Other numbers are parsed by
# Python's float().
_POW10 = np.array([10.0**k for k in range(23)])


@numba.njit(cache=True)
def _is_blank(c):
    return c == 32 or c == 9 or c == 11 or c == 12 or c == 13


@numba.njit(cache=True)
def _parse_real(buf, i, comment):
    """A real number starting at buf[i]: (end, value, status), status 0 ok, 1 ok but needs
    Python's float() for an exact value, 2 not a number."""
    nb = buf.shape[0]
    neg = False
    if i < nb and (buf[i] == 45 or buf[i] == 43):
        neg = buf[i] == 45
        i += 1
    mant = np.int64(0)
    exp10 = 0
    digits = 0
    slow = False
    while i < nb and 48 <= buf[i] <= 57:
        digits += 1
        if mant < 10**17:
            mant = mant * 10 + (buf[i] - 48)
        else:
            exp10 += 1
            slow = True
        i += 1
    if i < nb and buf[i] == 46:  # '.'
        i += 1
        while i < nb and 48 <= buf[i] <= 57:
            digits += 1
            if mant < 10**17:
                mant = mant * 10 + (buf[i] - 48)
                exp10 -= 1
            else:
                slow = True
            i += 1
    if digits == 0:
        return i, 0.0, 2
    if i < nb and (buf[i] == 101 or buf[i] == 69):  # 'e' 'E'
        i += 1
        eneg = False
        if i < nb and (buf[i] == 45 or buf[i] == 43):
            eneg = buf[i] == 45
            i += 1
        e = 0
        start = i
        while i < nb and 48 <= buf[i] <= 57:
            if e < 100000:
                e = e * 10 + (buf[i] - 48)
            i += 1
        if i == start:
            return i, 0.0, 2
        exp10 += -e if eneg else e
    if i < nb and not (_is_blank(buf[i]) or buf[i] == 10 or buf[i] == comment):
        return i, 0.0, 2
    if mant == 0:
        return i, -0.0 if neg else 0.0, 0
    if slow or mant >= (np.int64(1) << 53) or exp10 > 22 or exp10 < -22:
        return i, 0.0, 1
    v = float(mant)
    v = v * _POW10[exp10] if exp10 >= 0 else v / _POW10[-exp10]
    return i, -v if neg else v, 0


@numba.njit(cache=True)
def _tokenize(buf, comment, max_tokens, keep_empty, real_col):
    """Integers of a text, line by line (lines end with \\n: read_bytes made them so).

    Lines whose first non-blank byte is `comment` are skipped (a comment may also end a line);
    empty lines are kept only with keep_empty (METIS: a vertex without neighbours). After
    max_tokens numbers (>0) the rest of the line is ignored unread (SNAP's extra columns).
    Column real_col (>= 0) holds a real number (a weight): reals[k] is its value and values[k]
    is 0, or reals[k] is NaN and values[k] the byte where a number that needs Python's float()
    starts; a line whose real column is not a number ends before it, the rest unread.
    Returns (values, reals, line_start[k+1], line_no[k], err, err_line, err_byte): line i's
    numbers are values[line_start[i]:line_start[i+1]]; line numbers are 1-based.
    """
    nb = buf.shape[0]
    nlines = 1
    for i in range(nb):
        if buf[i] == 10:
            nlines += 1
    cap = nb // 2 + 1  # one number takes at least a digit and a separator
    if max_tokens > 0:
        cap = min(cap, max_tokens * nlines)
    values = np.empty(cap, np.int64)
    reals = np.empty(cap if real_col >= 0 else 0, np.float64)
    line_start = np.empty(nlines + 1, np.int64)
    line_no = np.empty(nlines, np.int64)
    nv = 0
    nl = 0
    i = 0
    lineno = 0
    limit = np.int64(_LIMIT)
    while i < nb:
        lineno += 1
        first = nv
        ntok = 0
        is_comment = False
        while i < nb and _is_blank(buf[i]):
            i += 1
        if i < nb and buf[i] == comment:
            is_comment = True
        while i < nb and buf[i] != 10:
            c = buf[i]
            if _is_blank(c):
                i += 1
                continue
            if is_comment or c == comment or (max_tokens > 0 and ntok >= max_tokens):
                while i < nb and buf[i] != 10:
                    i += 1
                break
            if ntok == real_col:
                start = i
                i, v, status = _parse_real(buf, i, comment)
                if status == 2:  # not a number: this line has no weight
                    while i < nb and buf[i] != 10:
                        i += 1
                    break
                values[nv] = start if status == 1 else 0
                reals[nv] = np.nan if status == 1 else v
                nv += 1
                ntok += 1
                continue
            neg = False
            if c == 45 or c == 43:  # '-' '+'
                neg = c == 45
                i += 1
            start = i
            x = np.int64(0)
            while i < nb and 48 <= buf[i] <= 57:
                x = x * 10 + (buf[i] - 48)
                if x > limit:
                    return (values[:nv], reals[:nv], line_start[:nl + 1], line_no[:nl], _ERR_BIG,
                            lineno, start)
                i += 1
            if i == start or (i < nb and not (_is_blank(buf[i]) or buf[i] == 10
                                               or buf[i] == comment)):
                return (values[:nv], reals[:nv], line_start[:nl + 1], line_no[:nl], _ERR_CHAR,
                        lineno, i)
            values[nv] = -x if neg else x
            if real_col >= 0:
                reals[nv] = 0.0  # only the real column's slots may hold NaN
            nv += 1
            ntok += 1
        if not is_comment and (ntok > 0 or keep_empty):
            line_start[nl] = first
            line_no[nl] = lineno
            nl += 1
        i += 1  # the newline
    line_start[nl] = nv
    return values[:nv], reals[:nv], line_start[:nl + 1], line_no[:nl], 0, 0, 0


def line_text(buf: bytes, pos: int) -> str:
    lo = buf.rfind(b"\n", 0, pos) + 1
    hi = buf.find(b"\n", pos)
    line = buf[lo:hi if hi >= 0 else len(buf)].decode("utf-8", "replace")
    return line if len(line) <= 80 else line[:77] + "..."


def nth_line(data: bytes, lineno: int) -> str:
    pos = 0
    for _ in range(lineno - 1):
        pos = data.find(b"\n", pos) + 1
    return line_text(data, pos)


_NUMBER = re.compile(rb"[^\s#%]+")


def tokens(data: bytes, path: Path, comment: str, max_tokens: int, keep_empty: bool, what: str,
           real_col: int = -1):
    """(values, reals, line_start, line_no) of `_tokenize`, with every real exact (the few the
    fast path left are parsed by float()); a malformed integer raises GraphError naming the
    file, the line and the text."""
    if len(data) > 1 << 24:
        lines = data.count(b"\n") + 1
        cap = min(len(data) // 2 + 1, max_tokens * lines) if max_tokens > 0 else len(data) // 2
        check_memory(cap * (16 if real_col >= 0 else 8) + 16 * lines,
                     f"{path}: reading {len(data):,} bytes of text")
    buf = np.frombuffer(data, dtype=np.uint8)
    values, reals, starts, line_no, err, err_line, err_pos = _tokenize(
        buf, ord(comment), max_tokens, keep_empty, real_col)
    if err:
        if err == _ERR_BIG:
            reason = f"integer too large: numbers here must be at most 2**58 = {_LIMIT:,}"
        elif err_pos > 0 and data[err_pos - 1] in b"+-" and (
                err_pos == len(data) or not data[err_pos:err_pos + 1].isdigit()):
            reason = "a sign without digits"
        else:
            reason = f"unexpected character {chr(data[err_pos])!r}"
        raise GraphError(f"{path}: line {err_line}: malformed {what} "
                         f"{line_text(data, err_pos)!r}: {reason}")
    if real_col >= 0:
        for k in np.flatnonzero(np.isnan(reals)).tolist():
            text = _NUMBER.match(data, int(values[k])).group()
            reals[k] = float(text)
            if np.isinf(reals[k]):  # 1e400: no float64 holds it
                line = int(line_no[np.searchsorted(starts, k, side="right") - 1])
                raise GraphError(f"{path}: line {line}: malformed {what} {nth_line(data, line)!r}: the "
                                 f"number {text.decode(errors='replace')} is beyond the largest float64 "
                                 "(about 1.8e308)")
            values[k] = 0
    return values, reals, starts, line_no
