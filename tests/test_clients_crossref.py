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
