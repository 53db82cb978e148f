"""The FlashInfer client family without the package or a GPU: the exact-by-construction attention
case (checked against a generic float64 softmax attention of its own inputs), the launcher's tensor maps,
the skip reason, and the corpus registration."""

from __future__ import annotations

import importlib.metadata

import numpy as np
import pytest

from conformance.clients import flashinfer_build as FB
from conformance.clients import kernels_flashinfer as KF
from conformance.clients.model import In, Out, Scalar, TensorMap

pytestmark = pytest.mark.reference


def _bf16(codes) -> np.ndarray:
    return (np.asarray(codes, dtype=np.uint32) << 16).view(np.float32).astype(np.float64)


def _attention(case, heads: int, blocks: int) -> np.ndarray:
    """float64 block-sparse softmax(Q K^T * scale_log2 * ln 2) V over each row's selected kv blocks, from the
    case's arguments alone (the tensors' codes, q2k_indices/q2k_num, the scale)."""
    q, k, v = (_bf16(a.data) for a in case.args[:3])
    indices, counts = case.args[5].data, case.args[6].data
    scale_log2 = case.args[14].value
    m = q.shape[0]
    out = np.zeros_like(q)
    for h in range(heads):
        for qb in range(m // KF.BLOCK):
            chosen = indices[h, qb, :counts[h * (m // KF.BLOCK) + qb]]
            kv = (chosen[:, None] * KF.BLOCK + np.arange(KF.BLOCK)).ravel()
            rows = slice(qb * KF.BLOCK, (qb + 1) * KF.BLOCK)
            s = q[rows, h] @ k[kv, h].T * scale_log2
            p = np.exp2(s - s.max(axis=1, keepdims=True))
            out[rows, h] = (p / p.sum(axis=1, keepdims=True)) @ v[kv, h]
    return out


def test_vsa_case_is_exact_attention():
    shape = KF.VsaCase(heads=2, query_blocks=2, kv_blocks=16, counts=(8, 16, 16, 8), ctas=2)
    case = shape.make_case(np.random.default_rng(7))
    want = _attention(case, 2, 16)
    got = _bf16(case.expected["out"])
    # the mean of 8 or 16 small integers: float64 differs only by the 2^-160-and-below weights f32 flushes to 0
    assert np.abs(got - want).max() < 2.0 ** -100
    assert np.array_equal(_bf16(KF.bf16_round(got)), got)
    q = _bf16(case.args[0].data)
    k = _bf16(case.args[1].data)
    s = q[:, 0] @ k[:, 0].T
    assert set(np.unique(s)) <= {0.0} | {16.0 * h for h in range(10, 17)}     # scores 0 or >= 160


def test_vsa_arguments_follow_the_launcher():
    case = KF.configs()[0].case()
    qmap, kmap, _, omap, lse = case.args[:5]
    assert isinstance(qmap, TensorMap) and qmap.box == (64, 1, 64, 2) and qmap.swizzle == "128B"
    assert qmap.dims == (64, 2, 128, 2) and qmap.strides == (128 * 2, 2 * 128 * 2, 128)
    assert kmap.dims == (64, 16 * 64, 2, 2) and kmap.box == (64, 64, 1, 1)
    assert omap.out is not None and omap.box == (32, 64, 1) and isinstance(lse, Out)
    assert [type(a) for a in case.args[5:8]] == [In, In, In]
    scalars = [a.value for a in case.args[8:]]
    assert scalars == [16, 128, 2, 4, 2, 2, 1.0, 0]          # tiles_per_cta = ceil(4 tiles / 2 CTAs)
    assert all(isinstance(a, Scalar) for a in case.args[8:])
    assert case.grid == (2, 1, 1)


def test_vsa_rejects_counts_without_a_power_of_two_sum():
    with pytest.raises(ValueError, match="8 or 16"):
        KF.VsaCase(heads=1, query_blocks=1, kv_blocks=12, counts=(12,), ctas=1).make_case(np.random.default_rng(0))


def test_skip_reason_names_the_install_command(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    FB._csrc.cache_clear()
    try:
        reason = FB.flashinfer_or_skip_reason()
        assert reason.startswith("NotSupported:") and "pip install --no-deps flashinfer-python==0.7.2.post1" in reason
        with pytest.raises(FB.FlashInferMissing, match="no-deps"):
            FB.source("cake_vsa/cake_vsa_blk64_persistent_ws_m64n256.cu")
    finally:
        FB._csrc.cache_clear()


def test_corpus_registers_the_family():
    from conformance.clients import corpus

    assert corpus.MODULES["kernels_flashinfer"] == "flashinfer" and "flashinfer" in corpus.CLIENTS
    kernel = KF.configs()[0]
    assert kernel.client == "flashinfer" and kernel.families[0] == "mma_ws" and kernel.num_warps == 16
    assert kernel.fn.shared == 232448 and kernel.fn.source.endswith("_ws_m64n256.cu")
