"""FlashInfer kernels (flashinfer-python 0.7.2.post1, the third real client): `.ws` MMA at M = 64.

``vsa.blk64_ws_m64n256`` is the block-sparse attention kernel FlashInfer's ``BlockSparseAttentionWrapper``
(backend ``cake``) runs for 64-token blocks when every row selects whole groups of 4 KV blocks
(``flashinfer/cake_vsa.py``, profile ``blk64_persistent_ws_m64n256``), compiled unmodified from
``flashinfer/data/csrc/cake_vsa/cake_vsa_blk64_persistent_ws_m64n256.cu``.  Per (head, 64-query block)
tile it issues ``tcgen05.mma.ws.cta_group::1.kind::f16`` M = 64, N = 256 twice over: S = Q K^T (A and B
in shared memory, D in Layout E) and O += P V with P (bf16) in Tensor Memory, written by the softmax
warps over S (``[ta]``: A from Tensor Memory).  The parameters, grid and tensor maps are those of its
launcher (``cake_vsa_binding.cu``, ``CAKE_VSA_ABI == 2``; ``_run_blk64`` in ``flashinfer/cake_vsa.py``).

Exact by construction (the corpus compares bit for bit): ``softmax_scale_log2 = 1`` and integer scores
``S = Q K^T`` in {0, T} with T >= 160, so every exponent the kernel takes (``ex2.approx.ftz.f32``) is of
an integer: 2^0 = 1 for the T scores, 2^(-T) or less (0 in f32) for the others, and the kernel's
polynomial ``ex2`` emulation is exact at integers too (its ``c0 = 1``).  Each kv block gives the 64 key
ids 0..63 a random order (K row = 16 * e_id on dims 0..63), query row i picks an id and a height
(Q row = a_i * e_id / 16 ...; score 16 * a_i on that id's row of every block, 0 elsewhere), so a row's
softmax is uniform over exactly one row per selected block: 8 or 16 rows, O = their mean (V small
integers: k/8 or k/16, exact in bf16), the row sum a power of two (``rcp.approx`` of 8 or 16 is exact).
Dims 64..127 carry small random integers on disjoint dims of Q (96..127) and K (64..95), so they add
nothing to S but every byte of both tiles takes part in the MMA.  ``ex2.approx`` bound (PTX ISA
``ex2``: max relative error 2^-22 for f32): an ulp-level error in P's f32 value would change neither
P's bf16 value (1.0) nor, through the row sum, an output that is exactly representable in bf16
(a few f32 ulps from k/4 rounds back to it); the simulator computes these exponents exactly.
``return_lse = 0``: the LSE (``lg2.approx`` and a float fma chain) is not written.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from conformance.clients.flashinfer_build import FlashInferEntry
from conformance.clients.model import Case, ClientKernel, In, Out, Scalar, TensorMap

BLOCK = 64           # tokens per query / kv block (the profile's R = C = 64)
HEAD_DIM = 128       # the profile's only head dim (the binding checks out.size(-1) == 128)
WS_ENTRY = FlashInferEntry("cake_vsa/cake_vsa_blk64_persistent_ws_m64n256.cu",
                           "kernel_flashinfer_vsa_blk64_persistent_per_head_m64n256_ws_sm100", 232448)
#: parameter types in the kernel's order (after its four CUtensorMap parameters)
SIGNATURE = {"q": "tensormap", "k": "tensormap", "v": "tensormap", "out": "tensormap", "lse": "*fp32",
             "q2k_indices": "*i32", "q2k_num": "*i32", "kv_block_lens": "*i32", "max_kv_blocks": "i32",
             "sequence_q": "i32", "query_blocks": "i32", "total_tiles": "i32", "tiles_per_cta": "i32",
             "num_heads": "i32", "softmax_scale_log2": "fp32", "return_lse": "i32"}


def bf16_codes(x: np.ndarray) -> np.ndarray:
    """bf16 codes of values bf16 holds exactly (checked)."""
    f = np.asarray(x, dtype=np.float32)
    codes = (f.view(np.uint32) >> 16).astype(np.uint16)
    if not np.array_equal((codes.astype(np.uint32) << 16).view(np.float32), f):
        raise ValueError("bf16_codes expects values bf16 holds exactly")
    return codes


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float64 -> bf16 codes, round to nearest even (cvt.rn.bf16x2.f32 of an exact f32 value)."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def tokens_view(rows: int, heads: int, box_rows: int, heads_first: bool = False, box=None) -> dict:
    """The launcher's 4D 64-column-split view of a ``[rows, heads, 128]`` bf16 tensor, innermost first:
    ``EncodeQHeadMajorSplit`` (heads_first: (64, heads, rows, 2), box (64, 1, 64, 2)) or ``EncodeKvSplit``
    ((64, rows, 2, heads), box (64, 64, 1, 1)); 128-byte swizzle."""
    row, head, split = heads * HEAD_DIM * 2, HEAD_DIM * 2, 64 * 2
    if heads_first:
        return dict(dims=(64, heads, rows, HEAD_DIM // 64), strides=(head, row, split), box=(64, 1, box_rows, 2))
    return dict(dims=(64, rows, HEAD_DIM // 64, heads), strides=(row, split, head), box=(64, box_rows, 1, 1))


@dataclass(frozen=True)
class VsaCase:
    """One launch: ``heads`` heads, ``query_blocks`` 64-token query blocks, ``kv_blocks`` kv blocks;
    each (head, query block) row selects ``counts[row]`` blocks (8 or 16: the sum of a row's P must be a power of two) in a random order;
    ``ctas`` persistent CTAs (the launcher's ``min(total_tiles, SMs)``, fewer here)."""

    heads: int
    query_blocks: int
    kv_blocks: int
    counts: tuple[int, ...]
    ctas: int

    def make_case(self, rng: np.random.Generator) -> Case:
        h, mb, nb = self.heads, self.query_blocks, self.kv_blocks
        m, n = mb * BLOCK, nb * BLOCK
        rows = h * mb
        counts = np.asarray(self.counts, dtype=np.int32)
        if counts.shape != (rows,) or not set(counts.tolist()) <= {8, 16} or counts.max() > nb:
            raise ValueError(f"counts expects {rows} of 8 or 16 (at most {nb}), but got {self.counts}")
        # key ids: each kv block orders the ids 0..63 at random (id -> row within the block)
        key_rows = np.stack([np.stack([rng.permutation(BLOCK) for _ in range(nb)]) for _ in range(h)])   # [h, nb, id]
        k = np.zeros((n, h, HEAD_DIM))
        v = rng.integers(-8, 9, (n, h, HEAD_DIM)).astype(np.float64)
        q = np.zeros((m, h, HEAD_DIM))
        for hh in range(h):
            for b in range(nb):
                k[b * BLOCK + key_rows[hh, b], hh, np.arange(BLOCK)] = 16.0
        k[:, :, 64:96] = rng.integers(-3, 4, (n, h, 32))
        q[:, :, 96:128] = rng.integers(-3, 4, (m, h, 32))
        ids = rng.integers(0, BLOCK, (m, h))
        heights = rng.integers(10, 17, (m, h))                       # score 16 * height >= 160
        for hh in range(h):
            q[np.arange(m), hh, ids[:, hh]] = heights[:, hh]
        indices = np.stack([rng.permutation(nb) for _ in range(rows)]).astype(np.int32).reshape(h, mb, nb)
        want = np.zeros((m, h, HEAD_DIM))
        for hh in range(h):
            for qb in range(mb):
                chosen = indices[hh, qb, :counts[hh * mb + qb]]
                for r in range(BLOCK):
                    i = qb * BLOCK + r
                    hot = chosen * BLOCK + key_rows[hh, chosen, ids[i, hh]]
                    want[i, hh] = v[hot, hh].mean(axis=0)
        out = Out("out", (m, h, HEAD_DIM), np.uint16)
        args = (TensorMap(**tokens_view(m, h, BLOCK, heads_first=True), dtype="bfloat16", swizzle="128B",
                          data=bf16_codes(q)),
                TensorMap(**tokens_view(n, h, BLOCK), dtype="bfloat16", swizzle="128B", data=bf16_codes(k)),
                TensorMap(**tokens_view(n, h, BLOCK), dtype="bfloat16", swizzle="128B", data=bf16_codes(v)),
                TensorMap(dims=(HEAD_DIM, m, h), strides=(h * HEAD_DIM * 2, HEAD_DIM * 2), box=(32, BLOCK, 1),
                          dtype="bfloat16", swizzle="128B", out=out),
                Out("lse", (m, h), np.float32), In(indices), In(counts), In(np.full(nb, BLOCK, dtype=np.int32)),
                Scalar(nb), Scalar(m), Scalar(mb), Scalar(rows), Scalar(-(-rows // self.ctas)), Scalar(h),
                Scalar(1.0), Scalar(0))
        return Case(args, (self.ctas, 1, 1), {"out": bf16_round(want)},
                    note="exact: uniform softmax over one row per selected block")


def configs() -> list[ClientKernel]:
    shapes = {
        # 2 heads x 2 query blocks = 4 tiles on 2 persistent CTAs; rows of 2 and 4 groups of 4 blocks (the
        # kernel's two S/O stages alternate groups; a row of 1 group never arrives on stage 1's corr_sig
        # barrier, which the epilogue waits for: FlashInfer routes rows averaging > 24 blocks here)
        "vsa.blk64_ws_m64n256": VsaCase(heads=2, query_blocks=2, kv_blocks=16, counts=(8, 16, 16, 8), ctas=2),
    }
    return [ClientKernel(name, "cuda", WS_ENTRY, SIGNATURE, {}, shape.make_case,
                         ("mma_ws", "mma", "tmem", "tma", "pipeline"), num_warps=16, num_stages=1)
            for name, shape in shapes.items()]
