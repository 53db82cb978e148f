"""Sparse A: metadata values, expansion, compression, word packing, selector (§9.7.16.10.8, §9.7.14.6.1).

Expected layouts are written out by hand from the spec text (which element a nibble names), not
derived from reference.sparsity.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import sparsity as SP
from reference.errors import SpecError
from tests.spec_texts import spec_text

pytestmark = pytest.mark.reference

# §9.7.16.10.8.2 / .3: "The only meaningful values of the index are" (seven values, tcgen05)
TCGEN05_LISTED = {0b0100, 0b1000, 0b1100, 0b1001, 0b1101, 0b0110, 0b1110}
# §9.7.14.6.1, mma.sp::ordered_metadata: six values
ORDERED_LISTED = {0b0100, 0b1000, 0b1001, 0b1100, 0b1101, 0b1110}


def test_listed_values_match_the_spec_texts():
    text = spec_text("ptx-9.7.16-tcgen05.md")
    section = text[text.index("9.7.16.10.8.2. [Sparse"):text.index("9.7.16.10.8.4. [Sparsity selector")]
    listed = {int(v, 2) for v in __import__("re").findall(r"`0b([01]{4})`", section)}
    assert listed == TCGEN05_LISTED
    warp = spec_text("ptx-9.7.14.6.1-warp-sparse-mma-storage.md")
    assert "`0b0100`, `0b1000`, `0b1001`, `0b1100`, `0b1101`, `0b1110` are the meaningful" in warp


@pytest.mark.parametrize("nibble", range(16))
def test_nibble_status_per_context(nibble):
    st_tc = SP.nibble_status(SP.PATTERN_2_4, nibble, "tcgen05")
    st_ord = SP.nibble_status(SP.PATTERN_2_4, nibble, "mma.sp::ordered_metadata")
    st_any = SP.nibble_status(SP.PATTERN_2_4, nibble, "mma.sp")
    if nibble == 0b0110:
        assert st_tc == SP.AMBIGUOUS                       # NOTES.md item 4
    else:
        assert (st_tc == SP.VALID) == (nibble in TCGEN05_LISTED)
    assert (st_ord == SP.VALID) == (nibble in ORDERED_LISTED)
    # §9.7.14.6.1: 0b0000, 0b0101, 0b1010, 0b1111 are invalid for mma.sp
    assert (st_any == SP.UNDEFINED) == (nibble in (0b0000, 0b0101, 0b1010, 0b1111))
    tf32 = SP.nibble_status(SP.PATTERN_1_2, nibble, "tcgen05")
    assert (tf32 == SP.VALID) == (nibble in (0b1110, 0b0100))     # §9.7.16.10.8.1


def test_expand_2_4_by_hand():
    # row 0: chunk 0 nibble 0b1000 -> kept at positions 0 and 2; chunk 1 0b1101 -> 1 and 3
    # row 1: chunk 0 0b1110 -> 2 and 3; chunk 1 0b0110 (ambiguous) -> first at 2, second at 1
    comp = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    meta = np.array([[0b1000, 0b1101], [0b1110, 0b0110]])
    want = np.array([[1, 0, 2, 0, 0, 3, 0, 4], [0, 0, 5, 6, 0, 8, 7, 0]])
    np.testing.assert_array_equal(SP.expand(SP.PATTERN_2_4, comp, meta), want)


def test_expand_4_8_pairs_by_hand():
    # nibble 0b1100: pairs 0 and 3 -> elements 0,1 and 6,7; 0b1001: pairs 1 and 2 -> 2,3 and 4,5
    comp = np.array([[1, 2, 3, 4, 5, 6, 7, 8]])
    meta = np.array([[0b1100, 0b1001]])
    want = np.array([[1, 2, 0, 0, 0, 0, 3, 4, 0, 0, 5, 6, 7, 8, 0, 0]])
    np.testing.assert_array_equal(SP.expand(SP.PATTERN_4_8, comp, meta), want)


def test_expand_1_2_tf32_by_hand():
    comp = np.array([[9, 8, 7]])
    meta = np.array([[0b0100, 0b1110, 0b1110]])
    np.testing.assert_array_equal(SP.expand(SP.PATTERN_1_2, comp, meta), [[9, 0, 0, 8, 0, 7]])


@pytest.mark.parametrize("nibble", [0b0000, 0b0101, 0b1010, 0b1111])
def test_expand_rejects_equal_indices(nibble):
    with pytest.raises(SpecError, match="two distinct indices"):
        SP.expand(SP.PATTERN_2_4, np.array([[1, 2]]), np.array([[nibble]]))


def test_check_metadata_rejects_undefined_for_tcgen05():
    with pytest.raises(SpecError, match="0b0001"):
        SP.check_metadata(SP.PATTERN_2_4, np.array([[0b0100, 0b0001]]))
    status = SP.check_metadata(SP.PATTERN_2_4, np.array([[0b0100, 0b0110]]))
    assert status.tolist() == [[SP.VALID, SP.AMBIGUOUS]]
    SP.check_metadata(SP.PATTERN_2_4, np.array([[0b0001]]), "mma.sp")   # distinct indices: fine


def _sparse_rows(draw, pattern, rows, chunks):
    out = np.zeros((rows, chunks * pattern.chunk), dtype=np.int64)
    slots = pattern.chunk // pattern.unit
    for r in range(rows):
        for c in range(chunks):
            chosen = draw(st.lists(st.integers(0, slots - 1), max_size=pattern.kept // pattern.unit, unique=True))
            for s in chosen:
                for u in range(pattern.unit):
                    out[r, c * pattern.chunk + s * pattern.unit + u] = draw(st.integers(1, 99))
    return out


@settings(max_examples=60, deadline=None)
@given(st.data(), st.sampled_from([SP.PATTERN_1_2, SP.PATTERN_2_4, SP.PATTERN_4_8]))
def test_compress_then_expand_is_identity(data, pattern):
    dense = _sparse_rows(data.draw, pattern, 3, 4)
    comp, meta = SP.compress(pattern, dense)
    assert comp.shape == (3, 4 * pattern.kept)
    assert np.all(SP.nibble_status(pattern, meta, "mma.sp::ordered_metadata") == SP.VALID)
    np.testing.assert_array_equal(SP.expand(pattern, comp, meta), dense)


def test_compress_rejects_too_many_nonzeros():
    with pytest.raises(SpecError, match="at most 2"):
        SP.compress(SP.PATTERN_2_4, np.array([[1, 1, 1, 0]]))
    with pytest.raises(SpecError, match="at most 2"):       # 4:8: nonzeros in three pairs
        SP.compress(SP.PATTERN_4_8, np.array([[1, 0, 1, 0, 1, 0, 0, 0]]))


def test_compress_uses_value_mask_for_negative_zero():
    codes = np.array([[0x80, 0x38, 0x80, 0x38]], dtype=np.uint8)     # e4m3: -0, 1, -0, 1
    comp, meta = SP.compress(SP.PATTERN_2_4, codes, nonzero=np.array([[False, True, False, True]]))
    assert meta.tolist() == [[0b1101]] and comp.tolist() == [[0x38, 0x38]]


def test_word_packing_matches_the_public_example():
    # MLIR sparse-mma-2-4-f16.mlir: four chunks with indices 0 and 2 -> 0x8888 (chunk 0 lowest)
    assert SP.pack_metadata_words(np.array([[0b1000] * 4])).tolist() == [[0x8888]]
    meta = np.arange(12, dtype=np.uint8).reshape(1, 12) % 16
    words = SP.pack_metadata_words(meta)
    assert words.tolist() == [[0x76543210, 0xBA98]]
    np.testing.assert_array_equal(SP.unpack_metadata_words(words, 12), meta)


@pytest.mark.parametrize("kind,pattern", [("tf32", "1:2"), ("f16", "2:4"), ("f8f6f4", "2:4"), ("mxf8f6f4", "2:4"),
                                          ("i8", "2:4"), ("mxf4", "4:8"), ("mxf4nvf4", "4:8")])
def test_granularity_table(kind, pattern):
    assert SP.pattern_for_kind(kind).name == pattern


def test_sparsity_selector_rules():
    for kind in ("i8", "f8f6f4"):
        assert SP.check_sparsity_selector(kind, 0) == 0
        with pytest.raises(SpecError, match="must|expects 0"):
            SP.check_sparsity_selector(kind, 1)
    for kind in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
        assert SP.check_sparsity_selector(kind, 3) == 0          # "assumed to be 0"
    assert SP.check_sparsity_selector("f16", 2) == 2
    with pytest.raises(SpecError):
        SP.check_sparsity_selector("tf32", 4)


@pytest.mark.parametrize("reading", ["as-listed", "as-ordered"])
def test_expand_places_every_nibble_as_kept_positions_says(reading):
    """``expand`` (nibbles looked up in a per-pattern table) puts each kept element where
    ``kept_positions`` names it, for every nibble that names a layout, under both readings of
    Q-META-0110; a nibble naming none is refused as before."""
    from reference.spec_questions import following

    for pattern in (SP.PATTERN_1_2, SP.PATTERN_2_4, SP.PATTERN_4_8):
        for nibble in range(16):
            meta = np.array([[nibble, 0b0100 if pattern.kept == 1 else 0b1000]])
            comp = np.arange(1, 2 * pattern.kept + 1).reshape(1, -1) * 11
            with following({"Q-META-0110": reading}):
                try:
                    pos = SP.kept_positions(pattern, meta, reading=reading)
                except SpecError:
                    with pytest.raises(SpecError):
                        SP.expand(pattern, comp, meta)
                    continue
                got = SP.expand(pattern, comp, meta)
            want = np.zeros((1, 2 * pattern.chunk), dtype=comp.dtype)
            for j in range(2):
                want[0, j * pattern.chunk + pos[0, j]] = comp[0, j * pattern.kept:(j + 1) * pattern.kept]
            np.testing.assert_array_equal(got, want)
