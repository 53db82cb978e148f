"""A parsed-PTX cache on disk: :func:`parse_ptx` once per PTX text, not once per process.

Every pytest worker loads each kernel of the run, and parsing is most of a load (the tokenizer
and the parser build ~10,000 small objects per kernel).  The parse tree is plain data
(:mod:`ptxsim.ptx.syntax`), so it is pickled into ``directory/<key>.pickle``; ``key`` is the
SHA-256 of the PTX text and :data:`PARSER_FINGERPRINT` (the parser's and the syntax classes'
source, and the Python version), so editing the parser makes every old entry a miss.

Entries are written to a temporary file and renamed over the name (``os.replace``), so processes
sharing the directory never see half an entry.  An entry that cannot be read, does not unpickle,
or holds another key or another type is ignored and rewritten; a directory that cannot be written
only costs the parse.  The cache holds what this process would have parsed itself: it trusts its
directory (the user's cache, as the assembler's cubin cache does).

The compiled form (:class:`ptxsim.ptx.compiler.KernelProgram`) is not cached: it is closures over
the device's global-symbol addresses.
"""

from __future__ import annotations

import gc
import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

from ptxsim.ptx import parser, syntax
from ptxsim.ptx.syntax import Module

#: entry format (the tuple written below); bump when it changes
FORMAT = 1


def _fingerprint() -> str:
    """What a parse tree depends on besides the PTX text: the parser and syntax sources, Python."""
    h = hashlib.sha256(f"format {FORMAT} python {sys.version_info[:2]}".encode())
    for module in (parser, syntax):
        h.update(Path(module.__file__).read_bytes())
    return h.hexdigest()


PARSER_FINGERPRINT = _fingerprint()


def entry_key(text: str) -> str:
    """The cache key of a PTX text (hex SHA-256 of the parser fingerprint and the text)."""
    return hashlib.sha256(f"{PARSER_FINGERPRINT}\0{text}".encode()).hexdigest()


def entry_path(directory: str | os.PathLike, text: str) -> Path:
    return Path(directory) / f"{entry_key(text)}.pickle"


def _read_entry(path: Path, key: str) -> Module | None:
    """The module stored at ``path`` under ``key``; None when missing, unreadable or not ours."""
    try:
        blob = path.read_bytes()
    except OSError:
        return None
    enabled = gc.isenabled()
    gc.disable()       # unpickling builds only acyclic plain data; collections during it are all cost
    try:
        entry = pickle.loads(blob)
    except Exception:  # noqa: BLE001  (a corrupt or foreign entry of any kind is a miss, never an error)
        return None
    finally:
        if enabled:
            gc.enable()
    if (isinstance(entry, tuple) and len(entry) == 3 and entry[0] == FORMAT and entry[1] == key
            and isinstance(entry[2], Module)):
        return entry[2]
    return None


def _write_entry(path: Path, key: str, module: Module) -> None:
    """Store ``module`` atomically (temporary file, then ``os.replace``); failures are ignored."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem[:16], suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump((FORMAT, key, module), f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
        tmp = None
    except (OSError, pickle.PicklingError):
        pass
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def cached_parse(text: str, directory: str | os.PathLike | None) -> Module:
    """``parse_ptx(text)``, from ``directory``'s entry when it has a good one (None: no cache).

    A text that does not parse raises :class:`ptxsim.errors.PtxSyntaxError` as ``parse_ptx`` does
    and stores nothing."""
    if directory is None:
        return parser.parse_ptx(text)
    key = entry_key(text)
    path = Path(directory) / f"{key}.pickle"
    module = _read_entry(path, key)
    if module is None:
        module = parser.parse_ptx(text)
        _write_entry(path, key, module)
    return module
