"""The section index (reference.sections) matches the headings of the spec texts."""

import re

import pytest

from reference.sections import SECTIONS, section_title
from tests.spec_texts import spec_dir

pytestmark = pytest.mark.reference


def _headings() -> dict[str, str]:
    folder = spec_dir()
    if folder is None:
        pytest.skip("spec texts not found beside the checkout")
    found: dict[str, str] = {}
    for path in sorted(folder.glob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            m = re.match(r"^#+\s+(9\.7\.[0-9.]+?)\.?\s+(.*)$", line)
            if m:
                found.setdefault(m.group(1).rstrip("."), m.group(2))
    return found


def test_every_heading_is_indexed():
    headings = _headings()
    assert set(headings) == set(SECTIONS)


@pytest.mark.parametrize("sid", ["9.7.16.4.1", "9.7.16.10.9.2", "9.7.14.6.1"])
def test_titles_are_words_of_the_heading(sid):
    heading = _headings()[sid]
    for word in section_title(sid).replace("`", "").split():
        assert word in heading.replace("\\_", "_")


def test_unknown_section_names_the_index():
    with pytest.raises(KeyError, match="unknown PTX ISA section"):
        section_title("9.9.9")
