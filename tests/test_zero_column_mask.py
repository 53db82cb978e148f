"""Zero-column mask descriptor (§9.7.16.4.3, Table 45): the four worked examples bit for bit,
an independent mask generator, round trips and invalid values."""

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.commands.cli import main
from reference.errors import SpecError
from reference.zero_column_mask import ZeroColumnMaskDescriptor, decode_zero_column_mask
from tests.spec_texts import spec_text

pytestmark = pytest.mark.reference

# The worked examples as printed (MSB left; "…" = the pattern continues towards the MSB).
# (M, start counts sc0..sc3, first spans fs0..fs3, non-zero mask, skip span, use span, shift, printed masks)
EXAMPLES = {
    "Example 1": (128, (0, 0, 0, 0), (0, 0, 0, 0), 0, 4, 3, 0, ["0x0"]),
    "Example 2": (128, (0, 0, 0, 0), (0, 0, 0, 0), 1, 2, 3, 0, ["0b … 111 0000 111 0000"]),
    "Example 3": (64, (0, 0, 0, 0), (1, 0, 0, 0), 1, 2, 3, 0,
                  ["0b … 111 0000 111 0000 111", "0b … 0000 111 0000 111 0000"]),
    "Example 4": (32, (0, 1, 2, 1), (1, 1, 0, 0), 1, 2, 3, 2,
                  ["0b … 0000 111 0000 111", "0b … 0000 111 0000 11", "0b … 111 0000 111 00", "0b … 111 0000 111 000"]),
}


def printed_low_bits(printed: str) -> tuple[int, int]:
    """(value, number of bits) of the digits shown after '0b …'."""
    if printed == "0x0":
        return 0, 64
    digits = printed.split("…")[1].replace(" ", "")
    return int(digits, 2), len(digits)


def test_examples_are_transcribed_from_the_spec():
    text = spec_text("ptx-9.7.16.4.3-zero-column-mask.plain.txt")
    for _, (*_, printed) in EXAMPLES.items():
        for p in printed:
            if p != "0x0":
                assert p in text, p
    assert "Output zero-column mask: 0x0." in text


def descriptor(ex):
    m, sc, fs, nzm, skip, use, shift, _ = EXAMPLES[ex]
    return ZeroColumnMaskDescriptor(sc, fs, bool(nzm), skip, use, shift)


@pytest.mark.parametrize("ex", sorted(EXAMPLES))
@pytest.mark.parametrize("n", [64, 128, 256])
def test_worked_examples(ex, n):
    m, *_, printed = EXAMPLES[ex]
    subs = descriptor(ex).submasks(m, n)
    assert len(subs) == {128: 1, 64: 2, 32: 4}[m]
    for sub, p in zip(subs, printed, strict=True):
        value, width = printed_low_bits(p)
        width = min(width, n // len(subs))
        assert sub % (1 << width) == value % (1 << width), (ex, p, bin(sub))


@pytest.mark.parametrize("ex", sorted(EXAMPLES))
def test_worked_examples_through_the_cli(ex, capsys):
    m, sc, fs, nzm, skip, use, shift, printed = EXAMPLES[ex]
    args = ["encode", "zcm", "--start-count", ",".join(map(str, sc)), "--first-span", ",".join(map(str, fs)),
            "--non-zero-mask", "true" if nzm else "false", "--skip-span", str(skip), "--use-span", str(use),
            "--column-shift", str(shift)]
    assert main(args) == 0
    value = capsys.readouterr().out.strip()
    assert main(["decode", "zcm", value, "--m", str(m), "--n", "128"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["start_count"] == list(sc) and out["first_span"] == list(fs) and out["column_shift"] == shift
    assert out["skip_span"] == skip and out["use_span"] == use and out["non_zero_mask"] is bool(nzm)
    width = 128 // len(out["masks"])
    full = 0
    for i, (sub_hex, p) in enumerate(zip(out["masks"], printed, strict=True)):
        sub = int(sub_hex, 16)
        low, bits = printed_low_bits(p)
        bits = min(bits, width)
        assert sub % (1 << bits) == low % (1 << bits)
        full |= sub << (i * width)
    assert int(out["mask"], 16) == full


def test_example_2_field_values_by_hand():
    # skip span 2 at bits 40-47, use span 3 at 48-55, non-zero mask bit 39
    assert descriptor("Example 2").encode() == (2 << 40) | (3 << 48) | (1 << 39)
    # Example 4: sc = {0,1,2,1} in bytes 0..3, fs = 1,1 at bits 32,33, shift 2 at 56
    assert descriptor("Example 4").encode() == 0x01020100 | (0b0011 << 32) | (1 << 39) | (2 << 40) | (3 << 48) | (2 << 56)


def reference_submask(fs, sc, skip, use, width):
    """Independent generator: concatenate runs as a string, LSB first, then drop sc chars."""
    runs = ""
    value = fs
    while len(runs) < width + sc:
        runs += str(value) * (skip + 1 if value else use + 1)
        value ^= 1
    return int(runs[sc:sc + width][::-1], 2)


@settings(max_examples=300, deadline=None)
@given(st.tuples(*[st.integers(0, 255)] * 4), st.tuples(*[st.integers(0, 1)] * 4), st.booleans(),
       st.integers(0, 255), st.integers(0, 255), st.sampled_from([32, 64, 128]), st.integers(1, 32).map(lambda x: 8 * x))
def test_mask_matches_independent_generator(sc, fs, nzm, skip, use, m, n):
    d = ZeroColumnMaskDescriptor(sc, fs, nzm, skip, use, 0)
    k = {128: 1, 64: 2, 32: 4}[m]
    if n % k:
        return
    width = n // k
    expected = [reference_submask(fs[i], sc[i], skip, use, width) if nzm else 0 for i in range(k)]
    assert d.submasks(m, n) == expected
    assert d.mask(m, n) == sum(e << (i * width) for i, e in enumerate(expected))
    assert decode_zero_column_mask(d.encode()) == d


@pytest.mark.parametrize("kwargs,rule", [
    (dict(start_count=(256, 0, 0, 0)), "bits 0-31"),
    (dict(first_span=(2, 0, 0, 0)), "bits 32-35"),
    (dict(skip_span=256), "bits 40-47"),
    (dict(use_span=-1), "bits 48-55"),
    (dict(column_shift=33), "bits 56-61"),
    (dict(non_zero_mask=1), "bit 39"),
])
def test_invalid_fields(kwargs, rule):
    with pytest.raises(SpecError, match=re.escape(rule)):
        ZeroColumnMaskDescriptor(**kwargs)


def test_shape_rules():
    d = ZeroColumnMaskDescriptor(column_shift=20)
    with pytest.raises(SpecError, match="at most 16"):
        d.submasks(32, 64)
    assert d.submasks(64, 64) == [0, 0]
    with pytest.raises(SpecError, match="128, 64 or 32"):
        d.submasks(256, 64)
    with pytest.raises(SpecError, match="multiple of 4"):
        ZeroColumnMaskDescriptor().submasks(32, 66)


@pytest.mark.parametrize("value,rule", [(1 << 36, "reserved"), (1 << 38, "reserved"), (1 << 62, "reserved"),
                                        (40 << 56, "bits 56-61"), (1 << 64, "64-bit")])
def test_decode_rejects(value, rule):
    with pytest.raises(SpecError, match=re.escape(rule)):
        decode_zero_column_mask(value)
