"""The on-disk cache of built graphs (parsed files and generated graphs), one .npz per graph.

An entry's name holds a hash of what made it (the file's path and the loader's options; or the
generator and its parameters) and the code version, a hash of this package's source: any edit of
the package invalidates old entries, since the builder or a generator may have changed and a stale
graph would silently disagree with the code that claims to make it. An entry is bound to what it
was built from: it stores its key whole and, for a file, a digest of the file's bytes, and both are
compared on every load, so an entry copied over another's, or a file whose bytes changed while its
size and modification time stayed (`cp -p`, `rsync -t`, `touch -r`), is never served. Each entry
stores a checksum of its arrays and metadata, verified on every load, and the CSR it holds is
checked again when it becomes a CSRGraph. An entry that fails any of these is built again, with a
RuntimeWarning saying why. Writes are atomic (temporary file, then rename); temporaries left by
killed processes are removed. A cache folder that cannot be read or written is left aside (with
one RuntimeWarning) and graphs are built without it.
"""
from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
import tempfile
import time
import warnings
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np
from numba import prange

from ._splitmix import GOLDEN, mix64
from .._twoform import two_forms
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


def key_text(key: dict) -> str:
    """The key as stored in its entry and hashed into the entry's name."""
    return json.dumps(key, sort_keys=True, default=str)


def cache_path(prefix: str, key: dict) -> Path:
    """<prefix>-<hash of the key>-<code version>.npz: the code version is in the name, so
    storing can drop the same key's entries from older code (they would never be read)."""
    digest = hashlib.sha256(key_text(key).encode()).hexdigest()
    return cache_dir() / f"{prefix}-{digest[:20]}-{CODE_VERSION}.npz"


def cached(prefix: str, key: dict, make: Callable[[], CSRGraph], cache: bool | None,
           source: Path | None = None) -> CSRGraph:
    """The graph of `key` from the cache, else make() (stored when cache=True, or with
    cache=None when it has over AUTO_CACHE_ARCS arcs). cache=False neither reads nor writes.
    source: the file the graph is read from; its entry is bound to a digest of its bytes."""
    if cache is False:
        return make()
    path = cache_path(prefix, key)
    # Digest first, then build: if the file changes while it is read, the entry holds a newer
    # graph under an older digest, which the next load refuses (never the other way round).
    before = _file_state(source) if source is not None else None
    content = file_digest(source) if source is not None else None
    g = load(path, key, content)
    if g is not None:
        return g
    g = make()
    if cache or g.num_arcs >= AUTO_CACHE_ARCS:
        if source is not None and _file_state(source) != before:
            _warn(f"{source} changed while it was read; its graph is not cached")
        else:
            store(path, g, key, content)
    return g


def _file_state(path: Path) -> tuple | None:
    """What a write to the file changes, whatever it does to the modification time (the status
    change time cannot be set back)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


# ============================================================================================
# Checksum


@two_forms
def _mix_sum(words, base, salt):
    """Sum over i of mix64(words[i] + (base + i) * golden + salt), mod 2**64: mix64 is a
    bijection, so changing any one word changes the sum; the order of the terms does not matter,
    so the parallel sum is the same whatever the thread count (and a file's chunks add up)."""
    total = np.uint64(0)
    for i in prange(words.shape[0]):
        total += mix64(np.uint64(words[i]) + (np.uint64(base) + np.uint64(i)) * GOLDEN + salt)
    return total


def _words(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    return a.view(np.uint64) if a.dtype.itemsize == 8 else a.view(np.uint32)


def checksum(arrays: dict, meta: dict) -> str:
    """Hex digest of the arrays (by name) and of the metadata without its checksum."""
    h = hashlib.sha256(json.dumps(meta, sort_keys=True, default=str).encode())
    for salt, name in enumerate(sorted(arrays)):
        a = arrays[name]
        word = _mix_sum.at(a.size)(_words(a), 0, np.uint64((salt + 1) * 0xD6E8FEB86659FD93 % 2**64))
        h.update(f"{name}:{a.dtype.str}:{a.shape}:{int(word):016x};".encode())
    return h.hexdigest()[:32]


_CHUNK_WORDS = 1 << 23  # 64 MiB read at a time
_FILE_SALT = np.uint64(0x5851F42D4C957F2D)


def file_digest(path: Path) -> str:
    """A digest of the file's bytes (its length and a mixed sum of its 8-byte words, the last one
    zero-padded), read in chunks: a few times faster than parsing the file, so binding an entry to
    the bytes it was built from costs a fraction of what the entry saves. Raises OSError."""
    total = 0
    length = 0
    buf = np.empty(_CHUNK_WORDS, np.uint64)
    raw = memoryview(buf).cast("B")
    with open(path, "rb") as f:
        while True:
            got = 0
            while got < raw.nbytes:  # a full chunk, or the end of the file
                k = f.readinto(raw[got:])
                if not k:
                    break
                got += k
            if got == 0:
                break
            words = (got + 7) // 8
            raw[got:words * 8] = bytes(words * 8 - got)
            total = (total + int(_mix_sum.at(words)(buf[:words], length // 8, _FILE_SALT))) % 2**64
            length += got
            if got < raw.nbytes:
                break
    return f"{length}:{total:016x}"


# ============================================================================================
# Reading and writing


def _graph_arrays(graph: CSRGraph) -> dict:
    out = {"offsets": graph.offsets, "indices": graph.indices}
    if graph.original_ids is not None:
        out["original_ids"] = graph.original_ids
    if graph.weights is not None:
        out["weights"] = graph.weights
    return out


def load(path: Path, key: dict | None = None, content: str | None = None) -> CSRGraph | None:
    """The cached graph, or None when absent or from other code. An entry that is not what
    `key` (and, for a file, the bytes whose digest is `content`) would build, or that is damaged
    (truncated, checksum mismatch, broken CSR), also gives None, after a RuntimeWarning that
    says which, and is removed."""
    try:
        if not path.exists():
            return None
        arrays = read_npz(path)
    except FileNotFoundError:  # removed by another process since: simply absent
        return None
    except PermissionError as e:
        _folder_unusable(path.parent, e)
        return None
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:
        return _refuse(path, f"is damaged ({str(e)[:200]})")
    try:
        meta = json.loads(str(arrays.pop("meta")[()]))
        if meta.get("code") != CODE_VERSION:
            return None
        stored = meta.pop("checksum", None)
        if stored != checksum(arrays, meta):
            raise ValueError("checksum mismatch")
        if key is not None and meta.get("key") != key_text(key):
            return _refuse(path, f"was stored for another graph ({str(meta.get('key'))[:200]})")
        if content is not None and meta.get("content") != content:
            return _refuse(path, f"was built from other contents of {key.get('file', 'its file')} (the "
                                 "file changed since, whatever its size and modification time say)")
        return CSRGraph(arrays["offsets"], arrays["indices"], bool(meta["directed"]),
                        meta["name"], arrays.get("original_ids"), meta["notes"],
                        arrays.get("weights"))
    except (ValueError, KeyError, TypeError, GraphError) as e:  # corrupt or foreign
        return _refuse(path, f"is damaged ({str(e)[:200]})")


def _refuse(path: Path, why: str) -> None:
    """Say why an entry is not served, and remove it: what is built instead replaces it, or, when
    that graph is too small to keep, nothing stale is left to warn about again."""
    _warn(f"graph cache entry {path} {why}; building the graph again")
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass
    return None


_UNUSABLE: set = set()


def _folder_unusable(folder: Path, err: OSError) -> None:
    """Once a process per folder: the cache folder cannot be used, so graphs are built without it."""
    if folder not in _UNUSABLE:
        _UNUSABLE.add(folder)
        _warn(f"the graph cache folder {folder} cannot be used ({err.strerror or err}); graphs are "
              "built without it (set BFS4K_CACHE_DIR to a folder you can write)")


_PACKAGE = str(Path(__file__).resolve().parent)


def _warn(message: str) -> None:
    """A RuntimeWarning attributed to the first caller outside this package (the user's line)."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, RuntimeWarning, stacklevel=level)


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


def store(path: Path, graph: CSRGraph, key: dict | None = None, content: str | None = None) -> None:
    """Write atomically: a temp file in the same folder, then os.replace, so an interrupted
    write leaves the old entry or nothing, never half a file under the final name. The entry
    keeps its key and, for a file, the digest of the bytes it was built from."""
    arrays = _graph_arrays(graph)
    meta = {"code": CODE_VERSION, "key": key_text(key), "content": content,
            "directed": graph.directed, "name": graph.name, "notes": graph.notes}
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
    except PermissionError as e:
        _folder_unusable(path.parent, e)
    except OSError as e:  # a read-only or full disk must not stop the caller from getting its graph
        _warn(f"could not write graph cache {path}: {e}")
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
