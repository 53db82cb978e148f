"""The battery's building blocks: the manifest builder (:class:`Battery`), buffer and parameter
records, and the constants every kernel shares (PTX header, bounded waits).

Manifest (version 1): {"version", "seed", "cases": [case, ...]}; a case is one launch:
  name, ptx (file), kernel, grid, block (3 ints each), shared_bytes (dynamic; always 0 here),
  buffers: [{name, file (.npy in the folder, raw bytes are uploaded) | bytes (zero-filled), save}],
  params: in .param order, each {"ptype": "u64"|"u32"|"s32"|"tmap", and one of
          "buffer": NAME (its device address), "value": INT (a scalar),
          "tmap": {buffer, dtype, rank, dims, strides, box, estrides, interleave, swizzle, l2, oob}},
  outputs: the saved buffers, concatenated in buffers order = the case's output bytes,
  sections: [{name, offset, bytes, dtype, shape?, kind, ...}] over those output bytes,
  ops: names of the `// @op K NAME` ... `// @end K` blocks in the PTX (a device that refuses a
       block drops it; the block's output slot then stays as initialised),
  expect: optional {section: value} that must hold on a correct device (timeout flags 0, ...),
  note: what the case checks.
A tensor map's `buffer` is the global tensor (its base address); `dims`, `strides` (bytes, dims
1..rank-1), `box`, `estrides` are innermost first, exactly cuTensorMapEncodeTiled's arguments.
Every wait loop of every kernel is bounded (WAIT_BOUND tries of WAIT_HINT ns) and sets a timeout
flag instead of hanging.
"""

from __future__ import annotations

import os

import numpy as np

HEADER = ".version 8.7\n.target sm_90a\n.address_size 64\n"
WAIT_BOUND = 4096          # try_wait iterations before a kernel gives up and sets its timeout flag
WAIT_HINT = 20000          # try_wait suspendTimeHint (ns): bounds each try on the GPU
ELEM_BYTES = {"uint8": 1, "uint16": 2, "uint32": 4, "int32": 4, "uint64": 8, "int64": 8, "float16": 2,
              "float32": 4, "float64": 8, "bfloat16": 2}


class Battery:
    def __init__(self, seed: int, out: str) -> None:
        self.seed, self.out = seed, out
        self.rng = np.random.default_rng(seed)
        self.cases: list[dict] = []
        self.files: set[str] = set()

    def ptx(self, fname: str, text: str) -> str:
        with open(os.path.join(self.out, fname), "w") as f:
            f.write(text)
        self.files.add(fname)
        return fname

    def npy(self, fname: str, arr: np.ndarray) -> str:
        np.save(os.path.join(self.out, fname), np.ascontiguousarray(arr))
        self.files.add(fname)
        return fname

    def case(self, **kw) -> dict:
        kw.setdefault("grid", [1, 1, 1])
        kw.setdefault("shared_bytes", 0)
        kw.setdefault("ops", [])
        kw.setdefault("expect", {})
        kw["grid"] = list(kw["grid"]) + [1] * (3 - len(kw["grid"]))
        kw["block"] = list(kw["block"]) + [1] * (3 - len(kw["block"]))
        names = [c["name"] for c in self.cases]
        assert kw["name"] not in names, kw["name"]
        self.cases.append(kw)
        return kw


def buf_in(name, fname, save=False):
    return {"name": name, "file": fname, "save": save}


def buf_out(name, nbytes):
    return {"name": name, "bytes": int(nbytes), "save": True}


def p_buf(name):
    return {"ptype": "u64", "buffer": name}


def p_val(ptype, value):
    return {"ptype": ptype, "value": int(value)}


def rup(x, m):
    return (x + m - 1) // m * m

