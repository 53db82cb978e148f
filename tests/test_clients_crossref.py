"""The real-client cross-reference's verdicts: which client confirmed a feature (issue 17)."""

from __future__ import annotations

from conformance.clients.crossref import client_of, confirmed_by, open_risk


def test_client_of_names_cute_kernels_cutlass():
    assert client_of("cute.f16_ss_m128n64k64_k_sw128") == "cutlass"
    assert client_of("gluon.mma_ss_m128n64") == "triton" and client_of("dot.f16_ptr") == "triton"


def test_confirmed_by_each_combination():
    assert confirmed_by([]) == "neither"
    assert confirmed_by(["dot.a", "gluon.b"]) == "Triton"
    assert confirmed_by(["cute.a"]) == "CUTLASS"
    assert confirmed_by(["cute.a", "dot.b"]) == "both"
    assert confirmed_by(["vsa.a"]) == "FlashInfer" and client_of("vsa.blk64_ws_m64n256") == "flashinfer"
    assert confirmed_by(["vsa.a", "cute.b"]) == "CUTLASS+FlashInfer"


def test_open_risk_lists_features_no_client_exercised():
    digest = {"mma": [("f16", 1, False, False, 128, 64)], "layouts": [("a", "K", "128B")], "ldst": [], "cp": [],
              "scale": [], "sync": []}
    risk = open_risk({"cute.x": digest})
    features = [f for _g, f in risk]
    assert not any(f.startswith("kind::f16 cta_group::1 (") for f in features)
    assert any(f.startswith("kind::f16 cta_group::1 .ws") for f in features)
    assert "K-major 128B" not in features and "MN-major 128B" in features


def test_digest_marks_ws_mma():
    from conformance.clients.crossref import digest

    summary = {"instructions": {"tcgen05.mma.ws.cta_group::1.kind::f16": 1}, "thread_instructions": 1, "seconds": 0.0,
               "features": {"instr_desc": [{"kind": "f16", "m": 64, "n": 256}]}}
    assert digest(summary)["mma"] == [("f16", 1, True, False, 64, 256)]


def test_k96_rows_follow_the_shape_table():
    """K = 96 features: every (kind, cta_group, M) of the shape rows in force (CuTe's M = 128 rows under the pick
    Q-K96-M128 = cute-m128), the scale-vector spellings, and the absolute leading-dimension mode."""
    digest = {"mma": [("mxf4nvf4", 1, False, False, 128, 128)], "layouts": [("a", "K", "128B")], "ldst": [], "cp": [],
              "scale": [], "sync": [], "k96": [("mxf4nvf4", 1, 128)], "k96_forms": [("mxf4nvf4", "block16")],
              "lbo_absolute": ["a", "b"]}
    features = {f for _g, f in open_risk({"cute.x": digest})}
    assert "kind::mxf4nvf4 cta_group::1 M=128 K=96" not in features
    assert {"kind::mxf4 cta_group::1 M=128 K=96", "kind::mxf4nvf4 cta_group::2 M=256 K=96",
            "kind::mxf4.block_scale.block32 with K = 96"} <= features
    assert "kind::mxf4nvf4.block_scale.block16 with K = 96" not in features
    assert not any("absolute leading-dimension" in f for f in features)
