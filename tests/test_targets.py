"""reference.targets: the Target ISA table against the spec's own bullet lists, and the predicate."""

import re

import pytest

from reference.errors import SpecError
from reference.targets import (
    FEATURES,
    TCGEN05_TARGETS,
    legal_targets,
    parse_target,
    ptx_version,
    supports,
)
from tests.spec_texts import spec_text

pytestmark = pytest.mark.reference

RENAMES = {"sm_101a": "sm_110a", "sm_101f": "sm_110f"}


def _section(text: str, number: str) -> str:
    start = re.search(rf"^#+ {re.escape(number)}\. ", text, re.M).start()
    nxt = re.search(r"^#{3,6} 9\.7\.16\.[\d.]+ ", text[start + 10:], re.M)
    return text[start: start + 10 + nxt.start()] if nxt else text[start:]


def _bullet_targets(block: str) -> tuple[set[str], set[str]]:
    """(arch-specific targets, family rows) named by a bullet list, renames applied."""
    arch, fam = set(), set()
    for line in block.splitlines():
        m = re.match(r"\s*[*+] `(sm_\d+[af])`(.*)", line)
        if not m:
            continue
        name = RENAMES.get(m.group(1), m.group(1))
        (fam if name.endswith("f") else arch).add(name)
    return arch, fam


def _notes(section: str) -> str:
    return section[section.index("Target ISA Notes"):section.index("Examples")]


@pytest.mark.parametrize("feature,section", [
    ("tcgen05.alloc", "9.7.16.7.1"), ("tcgen05.ld", "9.7.16.8.3"), ("tcgen05.st", "9.7.16.8.4"),
    ("tcgen05.wait", "9.7.16.8.5"), ("tcgen05.cp", "9.7.16.9.2"), ("tcgen05.fence", "9.7.16.11.1"),
    ("tcgen05.commit", "9.7.16.12.1"), ("tcgen05.mma", "9.7.16.10.9.1"), ("tcgen05.mma.sp", "9.7.16.10.9.2"),
    ("tcgen05.mma.ws", "9.7.16.10.9.3"), ("tcgen05.mma.ws.sp", "9.7.16.10.9.4"), ("tcgen05.shift", "9.7.16.9.3"),
])
def test_first_target_list_matches_spec(feature, section):
    notes = _notes(_section(spec_text("ptx-9.7.16-tcgen05.md"), section))
    first = notes.split("Supported on following architectures:")[1]
    first = re.split(r"\n\n[A-Z`]", first)[0]          # up to the next paragraph
    arch, fam = _bullet_targets(first)
    f = FEATURES[feature]
    assert arch == set(f.arch)
    assert fam == set(f.family)


def test_second_lists_match_spec():
    text = spec_text("ptx-9.7.16-tcgen05.md")
    ld = _notes(_section(text, "9.7.16.8.3")).split("`tcgen05.ld.red` is supported on following architectures:")[1]
    assert _bullet_targets(ld) == (set(FEATURES["tcgen05.ld.red"].arch), set(FEATURES["tcgen05.ld.red"].family))
    for section in ("9.7.16.10.9.1", "9.7.16.10.9.2", "9.7.16.10.9.3", "9.7.16.10.9.4"):
        i8 = _notes(_section(text, section)).split("Qualifier `.kind::i8` is supported on following architectures:")[1]
        i8 = re.split(r"\n\n[A-Z]", i8)[0]
        assert _bullet_targets(i8) == (set(FEATURES["kind::i8"].arch), set())
    mx = _notes(_section(text, "9.7.16.10.9.2")).split("`.kind::mxf4` are supported on following architectures:")[1]
    mx = re.split(r"\n\n[A-Z]", mx)[0]
    assert _bullet_targets(mx) == (set(FEATURES["sparse kind::mxf4"].arch), set())


def test_quotes_name_the_section_facts():
    text = spec_text("ptx-9.7.16-tcgen05.md")
    assert "K = 96 is only supported for target architecture `sm_103a`" in text
    assert FEATURES["K=96"].arch == ("sm_103a",)
    assert "requires `sm_100a` and is supported on `sm_100f`" in text
    assert "Introduced in PTX ISA version 8.6." in text and "introduced in PTX ISA version 8.8" in text


@pytest.mark.parametrize("target,features,expected", [
    ("sm_100a", ("tcgen05.mma",), True),
    ("sm_103a", ("tcgen05.mma",), True),       # sm_100f "or higher in the same family"
    ("sm_110f", ("tcgen05.mma",), True),
    ("sm_90a", ("tcgen05.mma",), False),
    ("sm_100f", ("kind::i8",), False),
    ("sm_103a", ("kind::i8",), False),
    ("sm_110a", ("kind::i8",), True),
    ("sm_100a", ("tcgen05.ld.red",), False),
    ("sm_103a", ("tcgen05.ld.red",), True),    # sm_103f or higher in the same family
    ("sm_100f", ("tcgen05.shift",), False),
    ("sm_103a", ("scale-input-d",), True),
    ("sm_110a", ("scale-input-d",), False),
    ("sm_103a", ("scale_vec::NX",), False),    # literal reading of "requires sm_100a"
    ("sm_100a", ("block16/block32",), True),
    ("sm_100a", ("K=96",), False),
    ("sm_90", ("mma.sp",), True),
    ("sm_80", ("mma.sp e4m3/e5m2",), False),
    ("sm_100a", ("mma.sp kind::f8f6f4",), False),
    ("sm_120a", ("mma.sp kind::f8f6f4",), True),
])
def test_supports(target, features, expected):
    assert supports(target, features) is expected


def test_legal_targets_and_versions():
    assert legal_targets(("tcgen05.mma", "kind::i8")) == ("sm_100a", "sm_110a")
    assert legal_targets(("tcgen05.mma", "K=96")) == ("sm_103a",)
    assert legal_targets(("tcgen05.mma",)) == TCGEN05_TARGETS
    assert ptx_version("sm_100a", ("tcgen05.mma",)) == (8, 6)
    assert ptx_version("sm_100a", ("kind::mxf4nvf4",)) == (8, 7)
    assert ptx_version("sm_100a", ("block16/block32",)) == (8, 8)
    assert ptx_version("sm_110f", ("tcgen05.mma",)) == (9, 0)


def test_bad_inputs():
    with pytest.raises(SpecError):
        parse_target("gfx90a")
    with pytest.raises(SpecError):
        supports("sm_100a", ("no such feature",))
    with pytest.raises(SpecError):
        ptx_version("sm_999", ())
