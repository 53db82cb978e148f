"""Normative statements of §9.7.16 and §9.7.14.6.1 (issue 15): the data file and its text side.

``statements.json`` (beside this module) holds one entry per normative statement of the spec
texts: a stable ``id``, its ``section``, where it is (``file``, ``line`` and ``anchors``: hashes of
the normalized sentences or table rows it stands for, see :func:`sentence_hash`), the statement
in our own words (``paraphrase``), its ``kind`` and either ``checks`` (selectors of the cases that
check it, evaluated by :func:`generators.sections.statements_of`) or ``untestable`` (why no case
can). The spec's own sentence is never stored: :func:`statement_sentences` reads it from the spec
texts when they are beside the checkout.

A *candidate* is a sentence or table row of the texts that a keyword rule marks as possibly
normative (:func:`candidates`); ``tests/test_statements.py`` asserts every candidate is the
anchor of some statement or listed in ``not_normative`` with a reason.

A selector (``Check``) matches a case when one of the case's section references
(:class:`reference.sections.SectionRef`) is in ``section`` and its detail contains ``detail``,
the case's legality equals ``legal`` (when given), every ``where`` parameter of the case has
one of the listed values, and (with ``own``) the case's own section is one of ``section``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from reference.sections import SECTIONS

DATA_FILE = "statements.json"
SPEC_FILES = ("ptx-9.7.16-tcgen05.md", "ptx-9.7.16.4-matrix-descriptors.md",
              "ptx-9.7.16.4.3-zero-column-mask.md", "ptx-9.7.14.6.1-warp-sparse-mma-storage.md")
KINDS = ("must", "undefined", "only", "unsupported", "alignment", "range", "table-row", "other")

# Words that make a sentence a candidate normative statement (case-insensitive).
NORMATIVE = re.compile(
    r"\bmust\b|\bshould\b|\bundefined\b|\bonly\b|\bnot supported\b|\bunsupported\b|\bsupported\b|\billegal\b"
    r"|\bvalid\b|\binvalid\b|\brequire[sd]?\b|\bcannot\b|\bcan not\b|\bat least\b|\bat most\b"
    r"|\baligned\b|\balignment\b|\brange\b|\breserved\b|\bnot allowed\b|\ballowed\b|\bmultiple of\b",
    re.IGNORECASE)
_HEADING = re.compile(r"^#+\s+(9\.7\.[0-9.]+?)\.?\s")
_TABLE_CAPTION = re.compile(r"^Table (\d+) ")


@dataclass(frozen=True)
class Check:
    """Selector of the cases that check a statement (see the module docstring)."""

    section: tuple[str, ...]
    detail: str = ""
    legal: bool | None = None
    where: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    own: bool = False          # only cases whose own section is one of ``section``

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Check:
        unknown = set(data) - {"section", "detail", "legal", "where", "own"}
        if unknown:
            raise ValueError(f"a check expects keys section, detail, legal, where, own, but got {sorted(unknown)}")
        sections = data.get("section")
        sections = (sections,) if isinstance(sections, str) else tuple(sections or ())
        for s in sections:
            if s not in SECTIONS:
                raise ValueError(f"check section expects an id of reference.sections.SECTIONS, but got {s!r}")
        if not sections:
            raise ValueError(f"a check expects a section, but got {data!r}")
        where = tuple((str(k), tuple(v) if isinstance(v, list) else (v,)) for k, v in (data.get("where") or {}).items())
        return cls(sections, str(data.get("detail") or ""), data.get("legal"), where, bool(data.get("own")))


@dataclass(frozen=True)
class Statement:
    id: str
    section: str
    file: str
    line: int
    paraphrase: str
    kind: str
    anchors: tuple[str, ...] = ()
    checks: tuple[Check, ...] = ()
    untestable: str = ""
    also: tuple[str, ...] = ()      # other sections repeating the same sentence (e.g. mma and mma.sp)

    @property
    def sections(self) -> tuple[str, ...]:
        return (self.section,) + self.also

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Statement:
        sid = data.get("id")
        if not isinstance(sid, str) or not sid:
            raise ValueError(f"statement id expects a non-empty string, but got {sid!r}")
        section = data.get("section")
        if section not in SECTIONS:
            raise ValueError(f"statement {sid}: section expects an id of reference.sections.SECTIONS, but got {section!r}")
        kind = data.get("kind", "other")
        if kind not in KINDS:
            raise ValueError(f"statement {sid}: kind expects one of {', '.join(KINDS)}, but got {kind!r}")
        checks = tuple(Check.from_json(c) for c in data.get("checks") or ())
        untestable = str(data.get("untestable") or "")
        if bool(checks) == bool(untestable):
            raise ValueError(f"statement {sid}: expects either checks or untestable (with a reason), but got "
                             f"{'both' if checks else 'neither'}")
        also = tuple(data.get("also") or ())
        for other in also:
            if other not in SECTIONS:
                raise ValueError(f"statement {sid}: also expects ids of reference.sections.SECTIONS, but got {other!r}")
        return cls(sid, section, str(data.get("file") or ""), int(data.get("line") or 0),
                   str(data.get("paraphrase") or ""), kind, tuple(data.get("anchors") or ()), checks, untestable, also)


@dataclass(frozen=True)
class StatementData:
    statements: tuple[Statement, ...]
    not_normative: dict[str, str] = field(default_factory=dict)   # anchor -> why it is no statement

    def by_section(self) -> dict[str, list[Statement]]:
        """section -> the statements it holds (a statement repeated in ``also`` sections counts in each)."""
        out: dict[str, list[Statement]] = {}
        for s in self.statements:
            for section in s.sections:
                out.setdefault(section, []).append(s)
        return out

    def uncovered(self, found: list[Candidate]) -> list[Candidate]:
        """Candidates that no statement of their section anchors and that are not marked not normative."""
        anchored = {(sec, a) for s in self.statements for sec in s.sections for a in s.anchors}
        return [c for c in found if (c.section, c.anchor) not in anchored and c.anchor not in self.not_normative]


def parse_statements(data: dict[str, Any]) -> StatementData:
    items = tuple(Statement.from_json(d) for d in data.get("statements") or ())
    ids = [s.id for s in items]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"statement ids expect to be unique, but got duplicates {dupes}")
    return StatementData(items, dict(data.get("not_normative") or {}))


@lru_cache(maxsize=1)
def load_statements() -> StatementData:
    """The statements of ``reference/statements.json``."""
    text = resources.files("reference").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return parse_statements(json.loads(text))


# --- the spec texts ------------------------------------------------------------------------------

def spec_dir() -> Path | None:
    """The folder of the spec texts (``TCGEN05_CTS_SPEC``, else ``shared/spec`` in or beside the
    checkout), or None when absent."""
    root = Path(__file__).resolve().parent.parent
    for cand in (os.environ.get("TCGEN05_CTS_SPEC"), root / "shared" / "spec", root.parent / "shared" / "spec"):
        if cand and (Path(cand) / SPEC_FILES[0]).is_file():
            return Path(cand)
    return None


def normalize(text: str) -> str:
    """Sentence text without markdown links, emphasis, escapes and extra blanks."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)        # [words](#anchor) -> words
    text = re.sub(r"\[\]\([^)]*\)", "", text)
    text = text.replace("\\_", "_").replace("\\*", "*").replace("`", "").replace("**", "").replace("*", "")
    text = re.sub(r"^\s*(?:>\s*)*", "", text)
    return re.sub(r"\s+", " ", text).strip()


def sentence_hash(text: str) -> str:
    """Stable 12-hex-digit anchor of one normalized sentence or table row."""
    return hashlib.sha1(normalize(text).lower().encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class Candidate:
    file: str
    line: int
    section: str
    text: str          # normalized
    table: int | None = None

    @property
    def anchor(self) -> str:
        return sentence_hash(self.text)


def _units(lines: list[str]) -> Iterable[tuple[int, str, str]]:
    """(line number, kind, text) of each heading, table caption, paragraph, list item and table
    row; kind is ``heading`` (text: the section id), ``caption`` (the table number), ``para`` or ``row``."""
    block: list[str] = []
    start = 0
    in_code = False

    def flush():
        nonlocal block
        if block:
            yield start, "para", " ".join(block)
        block = []

    for number, raw in enumerate(lines, start=1):
        stripped = re.sub(r"^(?:>\s?)+", "", raw.rstrip()).strip()
        if stripped.startswith("```"):
            yield from flush()
            in_code = not in_code
            continue
        if in_code:
            continue
        heading = _HEADING.match(stripped)
        caption = _TABLE_CAPTION.match(stripped)
        if heading or caption:
            yield from flush()
            yield (number, "heading", heading.group(1).rstrip(".")) if heading else (number, "caption", caption.group(1))
            continue
        if not stripped or stripped.startswith(("#", "![", "Figure ")):
            yield from flush()
            continue
        if stripped.startswith("|"):
            yield from flush()
            if not re.fullmatch(r"\|[\s|:-]*", stripped):
                yield number, "row", stripped
            continue
        if re.match(r"^(?:[*+-]|\d+\.)\s", stripped):
            yield from flush()
            stripped = re.sub(r"^(?:[*+-]|\d+\.)\s+", "", stripped)
        if not block:
            start = number
        block.append(stripped)
    yield from flush()


def split_sentences(paragraph: str) -> list[str]:
    """Sentences of a normalized paragraph (split after '.', '?' or '!' followed by a capital)."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z(])", paragraph)
    return [p.strip() for p in parts if p.strip()]


def candidates(text: str, file: str) -> list[Candidate]:
    """Candidate normative sentences and table rows of one spec text (see the module docstring):
    sentences with a normative keyword, every body row of a numbered table, and rows of unnumbered
    tables with a normative keyword."""
    out: list[Candidate] = []
    section, table, previous = "", None, ""
    for number, kind, unit in _units(text.splitlines()):
        if kind == "heading":
            section, table = unit, None
        elif kind == "caption":
            table = int(unit)
        elif kind == "row":
            header = previous != "row"
            if not header and section:
                row = " | ".join(normalize(c) for c in unit.strip("|").split("|"))
                if table is not None or NORMATIVE.search(row):
                    out.append(Candidate(file, number, section, row, table))
        else:
            if previous == "row":
                table = None
            if section:
                out += [Candidate(file, number, section, s) for s in split_sentences(normalize(unit))
                        if NORMATIVE.search(s)]
        previous = kind
    return out


def spec_candidates(folder: Path | None = None) -> list[Candidate]:
    """Candidates of every spec text (empty when the texts are absent)."""
    folder = folder or spec_dir()
    if folder is None:
        return []
    out: list[Candidate] = []
    for name in SPEC_FILES:
        path = folder / name
        if path.is_file():
            out.extend(candidates(path.read_text(encoding="utf-8"), name))
    return out


def statement_sentences(statement: Statement, folder: Path | None = None) -> list[str]:
    """The spec's own sentences (or table rows) a statement stands for, read from the texts beside
    the checkout; empty when they are absent."""
    by_anchor = {c.anchor: c.text for c in _cached_candidates(str(folder or spec_dir() or ""))}
    return [by_anchor[a] for a in statement.anchors if a in by_anchor]


@lru_cache(maxsize=4)
def _cached_candidates(folder: str) -> tuple[Candidate, ...]:
    return tuple(spec_candidates(Path(folder))) if folder else ()
