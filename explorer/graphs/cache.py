"""The on-disk cache of built graphs (parsed files and generated graphs), one .npz per graph.

An entry's name holds a hash of what made it (file, size, mtime and options; or generator and
parameters) and the code version, a hash of this package's source: any edit of the package
invalidates old entries, since the builder or a generator may have changed and a stale graph
would silently disagree with the code that claims to make it. Each entry stores a checksum of its
arrays and metadata, verified on every load, and the CSR it holds is checked again when it
becomes a CSRGraph; a damaged entry is built again, with a RuntimeWarning saying so. Writes are
atomic (temporary file, then rename); temporaries left by killed processes are removed.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import tempfile
import time
import warnings
import zipfile
from pathlib import Path
from typing import Callable

import numba
import numpy as np
from numba import prange

from ._splitmix import GOLDEN, mix64
from .csr import CSRGraph, GraphError

# cache=None stores graphs from this size on; smaller ones rebuild in a blink and would only
# litter the cache folder.
AUTO_CACHE_ARCS = 1 << 20


def code_version(package: Path) -> str:
    """A hash of every module of the package (names and contents)."""
    h = hashlib.sha256()
    for f in sorted(package.glob("*.py")):
        h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


CODE_VERSION = code_version(Path(__file__).resolve().parent)
_savez = np.savez  # module attribute so tests can simulate an interrupted write

# A temporary file is stale when its writer is gone (the pid in its name) and it is older than
# this, or when nobody has written to it for STALE_AFTER_S (a live writer keeps touching it).
_DEAD_WRITER_AFTER_S = 30
STALE_AFTER_S = 600


def cache_dir() -> Path:
    """$BFS4K_CACHE_DIR, else ~/.cache/bfs4k."""
    d = os.environ.get("BFS4K_CACHE_DIR")
    return Path(d).expanduser() if d else Path.home() / ".cache" / "bfs4k"


def slug(s: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in s)[:40]


def cache_path(prefix: str, key: dict) -> Path:
    """<prefix>-<hash of the key>-<code version>.npz: the code version is in the name, so
    storing can drop the same key's entries from older code (they would never be read)."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
    return cache_dir() / f"{prefix}-{digest[:20]}-{CODE_VERSION}.npz"


def cached(prefix: str, key: dict, make: Callable[[], CSRGraph], cache: bool | None) -> CSRGraph:
    """The graph of `key` from the cache, else make() (stored when cache=True, or with
    cache=None when it has over AUTO_CACHE_ARCS arcs). cache=False neither reads nor writes."""
    path = None
    if cache is not False:
        path = cache_path(prefix, key)
        g = load(path)
        if g is not None:
            return g
    g = make()
    if path is not None and (cache or g.num_arcs >= AUTO_CACHE_ARCS):
        store(path, g)
    return g


# ============================================================================================
# Checksum


@numba.njit(cache=True, parallel=True)
def _mix_sum(words, salt):
    """Sum over i of mix64(words[i] + i * golden + salt), mod 2**64: mix64 is a bijection, so
    changing any one word changes the sum; the order of the terms does not matter, so the
    parallel sum is the same whatever the thread count."""
    total = np.uint64(0)
    for i in prange(words.shape[0]):
        total += mix64(np.uint64(words[i]) + np.uint64(i) * GOLDEN + salt)
    return total


def _words(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.uint64) if a.dtype.itemsize == 8 else a.view(np.uint32)


def checksum(arrays: dict, meta: dict) -> str:
    """Hex digest of the arrays (by name) and of the metadata without its checksum."""
    h = hashlib.sha256(json.dumps(meta, sort_keys=True, default=str).encode())
    for salt, name in enumerate(sorted(arrays)):
        a = arrays[name]
        word = _mix_sum(_words(a), np.uint64((salt + 1) * 0xD6E8FEB86659FD93 % 2**64))
        h.update(f"{name}:{a.dtype.str}:{a.shape}:{int(word):016x};".encode())
    return h.hexdigest()[:32]


# ============================================================================================
# Reading and writing


def _graph_arrays(graph: CSRGraph) -> dict:
    out = {"offsets": graph.offsets, "indices": graph.indices}
    if graph.original_ids is not None:
        out["original_ids"] = graph.original_ids
    if graph.weights is not None:
        out["weights"] = graph.weights
    return out


def load(path: Path) -> CSRGraph | None:
    """The cached graph, or None when absent or from other code; a damaged entry (truncated,
    checksum mismatch, broken CSR) also gives None, after a RuntimeWarning."""
    if not path.exists():
        return None
    try:
        arrays = read_npz(path)
        meta = json.loads(str(arrays.pop("meta")[()]))
        if meta.get("code") != CODE_VERSION:
            return None
        stored = meta.pop("checksum", None)
        if stored != checksum(arrays, meta):
            raise ValueError("checksum mismatch")
        return CSRGraph(arrays["offsets"], arrays["indices"], bool(meta["directed"]),
                        meta["name"], arrays.get("original_ids"), meta["notes"],
                        arrays.get("weights"))
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile,
            GraphError) as e:  # truncated, corrupt or foreign: build again rather than fail
        warnings.warn(f"graph cache entry {path} is damaged ({str(e)[:200]}); building the "
                      "graph again", RuntimeWarning, stacklevel=3)
        return None


def read_npz(path: Path) -> dict:
    """The arrays of an uncompressed .npz (what np.savez writes), read straight from their
    offsets: np.load streams every member through zipfile's CRC check, which alone took half a
    second on a scale-22 Kronecker graph (the entry's own checksum is much faster). Anything
    unexpected falls back to np.load."""
    out = {}
    with zipfile.ZipFile(path) as zf, open(path, "rb") as f:
        for info in zf.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if info.compress_type != zipfile.ZIP_STORED:
                with np.load(path, allow_pickle=False) as z:
                    return {k: z[k] for k in z.files}
            f.seek(info.header_offset)
            local = f.read(30)
            if local[:4] != b"PK\x03\x04":
                raise ValueError(f"{path}: bad zip member header for {info.filename}")
            name_len, extra_len = struct.unpack("<HH", local[26:30])
            f.seek(info.header_offset + 30 + name_len + extra_len)
            version = np.lib.format.read_magic(f)
            shape, fortran, dtype = (np.lib.format.read_array_header_1_0(f) if version == (1, 0)
                                     else np.lib.format.read_array_header_2_0(f))
            if dtype.hasobject or fortran:
                raise ValueError(f"{path}: unexpected array layout in {info.filename}")
            count = int(np.prod(shape))
            arr = np.fromfile(f, dtype=dtype, count=count)
            if arr.size != count:
                raise ValueError(f"{path}: {info.filename} is truncated")
            out[name] = arr.reshape(shape)
    return out


def store(path: Path, graph: CSRGraph) -> None:
    """Write atomically: a temp file in the same folder, then os.replace, so an interrupted
    write leaves the old entry or nothing, never half a file under the final name."""
    arrays = _graph_arrays(graph)
    meta = {"code": CODE_VERSION, "directed": graph.directed, "name": graph.name,
            "notes": graph.notes}
    meta = json.loads(json.dumps(meta, default=str))  # as it will read back
    meta["checksum"] = checksum(arrays, meta)
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        remove_stale_temporaries(path.parent)
        # The writer's pid in the name tells a later process whether the writer is still alive.
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp",
                                   dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            _savez(f, meta=np.array(json.dumps(meta)), **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        tmp = None
        stem = path.name[: -len(CODE_VERSION) - 4]  # "<prefix>-<key hash>-"
        for old in path.parent.glob(f"{stem}*.npz"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as e:  # a read-only or full disk must not stop the caller from getting its graph
        warnings.warn(f"could not write graph cache {path}: {e}", RuntimeWarning, stacklevel=3)
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _writer_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, OverflowError):
        return True  # someone else's process, or a pid we cannot judge: assume alive
    return True


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete the temporary files of writes that will never finish (their process was killed):
    those whose writer pid is gone and that are over half a minute old, and any not written to
    for STALE_AFTER_S. Returns what was deleted."""
    removed = []
    now = time.time()
    for p in folder.glob(".*.tmp"):
        try:
            age = now - p.stat().st_mtime
            parts = p.name.split(".")
            pid = int(parts[-3]) if len(parts) >= 4 and parts[-3].isdigit() else None
            dead = pid is not None and pid > 0 and not _writer_alive(pid)
            if age > STALE_AFTER_S or (dead and age > _DEAD_WRITER_AFTER_S):
                p.unlink()
                removed.append(p)
        except OSError:  # gone already, or not ours to delete
            continue
    return removed
