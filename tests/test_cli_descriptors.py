"""The decode/encode CLI contract of issue 2 (§9.7.16.4): JSON fields, hex output, one-line errors."""

import json
import subprocess
import sys

import pytest

from conformance.commands.cli import main

pytestmark = pytest.mark.reference


def run(capsys, *args):
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_decode_smem_fields(capsys):
    code, out, _ = run(capsys, "decode", "smem", "0x4000404000100040")
    assert code == 0
    assert json.loads(out) == {"start_address": 1024, "leading_byte_offset": 256, "stride_byte_offset": 1024,
                               "base_offset": 0, "lbo_mode": "relative", "swizzle": "128B"}


def test_decode_accepts_decimal(capsys):
    code, out, _ = run(capsys, "decode", "smem", str(0x4000404000100040))
    assert code == 0 and json.loads(out)["swizzle"] == "128B"


@pytest.mark.parametrize("fields", [
    dict(start_address=0x3FFF0, leading_byte_offset=16, stride_byte_offset=1024, base_offset=3, lbo_mode="relative", swizzle="64B"),
    dict(start_address=0, leading_byte_offset=0x3FFF0, stride_byte_offset=0, base_offset=0, lbo_mode="absolute", swizzle="128B"),
    dict(start_address=256, leading_byte_offset=32, stride_byte_offset=512, base_offset=0, lbo_mode="relative", swizzle="128B_base32B"),
])
def test_smem_encode_decode_round_trip(capsys, fields):
    args = ["encode", "smem"]
    for k, v in fields.items():
        args += [f"--{k.replace('_', '-')}", str(v)]
    code, out, _ = run(capsys, *args)
    assert code == 0 and out.strip().startswith("0x")
    code, out2, _ = run(capsys, "decode", "smem", out.strip())
    assert json.loads(out2) == fields


@pytest.mark.parametrize("kind,flags,expect", [
    ("f16", ["--m", "128", "--n", "256", "--a-type", "bf16", "--b-type", "bf16"],
     dict(kind="f16", m=128, n=256, d_type="f32", a_type="bf16", b_type="bf16", sparse=False, sparsity_selector=0,
          saturate=False, negate_a=False, negate_b=False, transpose_a=False, transpose_b=False, max_shift=0)),
    ("i8", ["--m", "64", "--n", "64", "--a-type", "u8", "--b-type", "s8", "--saturate", "true", "--max-shift", "16",
            "--sparse", "--transpose-a", "true"],
     dict(kind="i8", m=64, n=64, d_type="s32", a_type="u8", b_type="s8", sparse=True, sparsity_selector=0,
          saturate=True, negate_a=False, negate_b=False, transpose_a=True, transpose_b=False, max_shift=16)),
    ("mxf4nvf4", ["--m", "256", "--n", "32", "--scale-type", "ue4m3", "--a-scale-id", "2", "--k96", "true", "--negate-a"],
     dict(kind="mxf4nvf4", m=256, n=32, a_type="e2m1", b_type="e2m1", sparse=False, negate_a=True, negate_b=False,
          transpose_a=False, transpose_b=False, scale_type="ue4m3", a_scale_id=2, b_scale_id=0, k96=True)),
    ("mxf8f6f4", ["--m", "128", "--n", "8", "--a-type", "e3m2", "--b-type", "e2m3", "--b-scale-id", "3"],
     dict(kind="mxf8f6f4", m=128, n=8, a_type="e3m2", b_type="e2m3", sparse=False, negate_a=False, negate_b=False,
          transpose_a=False, transpose_b=False, scale_type="ue8m0", a_scale_id=0, b_scale_id=3)),
])
def test_idesc_encode_decode(capsys, kind, flags, expect):
    code, out, err = run(capsys, "encode", "idesc", "--kind", kind, *flags)
    assert code == 0, err
    code, out2, err = run(capsys, "decode", "idesc", out.strip(), "--kind", kind)
    assert code == 0, err
    assert json.loads(out2) == expect


@pytest.mark.parametrize("args,needle", [
    (["decode", "smem", "0x3"], "Table 40"),
    (["decode", "smem", "0x6000400000000000"], "bits 61-63"),
    (["decode", "idesc", "0x1", "--kind", "f16"], "Table 42"),
    (["decode", "idesc", "0x08400490", "--kind", "f16", "--cta-group", "2", "--ws", "true"], "Table 39"),
    (["encode", "smem", "--start-address", "8"], "16-byte alignment"),
    (["encode", "idesc", "--kind", "i8", "--m", "128", "--n", "64", "--a-type", "s8", "--b-type", "s8", "--negate-a"], "Table 49"),
    (["encode", "idesc", "--kind", "f16", "--m", "128", "--n", "64"], "--a-type and --b-type"),
    (["encode", "idesc", "--kind", "f16", "--m", "128", "--n", "64", "--a-type", "f16", "--b-type", "f16", "--scale-type", "ue8m0"], "not a field"),
    (["encode", "zcm", "--first-span", "2"], "bits 32-35"),
    (["encode", "zcm", "--start-count", "1,2,3,4,5"], "at most 4"),
    (["decode", "zcm", "0x0", "--m", "32"], "--m and --n go together"),
    (["decode", "zcm", "0x0", "--m", "256", "--n", "64"], "128, 64 or 32"),
])
def test_invalid_input_is_one_line_naming_the_rule(capsys, args, needle):
    code, out, err = run(capsys, *args)
    assert code != 0 and out == ""
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("args", [["decode", "smem", "zz"], ["decode", "idesc", "1", "--kind", "f64"],
                                  ["encode", "idesc", "--kind", "f16", "--m", "x", "--n", "8"], ["frobnicate"]])
def test_argument_errors_exit_2(capsys, args):
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err


def test_console_script_subprocess():
    proc = subprocess.run([sys.executable, "-m", "conformance.commands.cli", "decode", "idesc", "0x08400490", "--kind", "f16"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["a_type"] == "bf16"
    bad = subprocess.run([sys.executable, "-m", "conformance.commands.cli", "decode", "smem", "0x3"], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and bad.stderr.count("\n") == 1


def test_idesc_major_spelling_and_fields_only(capsys):
    """CuTe's UMMA::Major spelling (--b-major MN = --transpose-b) and --fields-only (docs/clients-cute.md)."""
    code, out, _ = run(capsys, "encode", "idesc", "--kind", "f16", "--m", "128", "--n", "256", "--a-type", "f16",
                       "--b-type", "f16", "--d-type", "f32", "--b-major", "MN")
    assert code == 0 and int(out, 16) == 138477584           # CuTe make_instr_desc<half,half,float,128,256,K,MN>
    code, _, err = run(capsys, "encode", "idesc", "--kind", "f16", "--m", "128", "--n", "256", "--a-type", "f16",
                       "--b-type", "f16", "--b-major", "K", "--transpose-b")
    assert code == 2 and "expects MN" in err
    k96_m128 = (1 << 31) | (8 << 24) | (16 << 17) | (1 << 23) | (1 << 10) | (1 << 7)   # CuTe SM103 cta_group::1 atom
    code, out, _ = run(capsys, "decode", "idesc", "--kind", "mxf4nvf4", hex(k96_m128))
    assert code == 0 and json.loads(out)["m"] == 128          # legal under the pick Q-K96-M128 = cute-m128 (example 89)
    k96_n8 = (k96_m128 & ~(0x3F << 17)) | (1 << 17)              # N = 8: the K = 96 M = 128 rows step N by 16
    code, _, err = run(capsys, "decode", "idesc", "--kind", "mxf4nvf4", hex(k96_n8))
    assert code == 2 and "Table 39" in err
    code, out, _ = run(capsys, "decode", "idesc", "--kind", "mxf4nvf4", "--fields-only", hex(k96_m128))
    assert code == 0 and json.loads(out)["k96"] is True and json.loads(out)["m"] == 128
