"""Every instruction example printed in §9.7.16, wrapped in a kernel for ptxas.

:func:`examples` reads the "Examples" code blocks of the spec text (statement by statement,
joining continuation lines) and :func:`example_ptx` wraps one statement, verbatim, in an entry
that declares each operand the examples use. :data:`ERRATA` lists the examples a correct
assembler must refuse (NOTES.md item 6 and the ones found the same way), each with its reason;
:data:`PSEUDOCODE` marks statements that are not instructions (``...`` placeholders).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

SPEC_FILE = "ptx-9.7.16-tcgen05.md"
ROOT = Path(__file__).resolve().parent.parent

# substring of the statement -> why a conforming ptxas rejects it
ERRATA: dict[str, str] = {
    ".collector::a:fill": "spec erratum (NOTES.md item 6): '.collector::a:fill' has a single colon",
    ".collector::b2:use": "spec erratum (NOTES.md item 6): '.collector::b2:use' has a single colon",
    "kind::mxf8f6f4 [taddr2]": "spec erratum: the §9.7.16.10.9.1 example omits .block_scale, which syntax 2 requires",
    "mxf8f6f4.collector::a:fill": "spec erratum: the §9.7.16.10.9.2 example omits .block_scale (and has NOTES item 6 typo)",
    "a-desc, b-desc": "spec erratum: the §9.7.16.8.5 examples use the syntax placeholders a-desc/b-desc as operands",
    "tcgen05.mma.cta_group.kind ": "spec erratum: the §9.7.16.11.1 example keeps the placeholders .cta_group.kind",
    "st.relaxed.b32 [flag]": "spec erratum: the §9.7.16.11.1 example writes st.relaxed without a scope (ptxas: "
                             "'.relaxed' requires scope)",
    "ld.relaxed.b32 r, [flag]": "spec erratum: the §9.7.16.11.1 example writes ld.relaxed without a scope",
}
PSEUDOCODE = "..."


@dataclass(frozen=True)
class Example:
    section: str
    line: int
    statement: str

    @property
    def example_id(self) -> str:
        return f"example.{self.section}.L{self.line}"

    @property
    def entry(self) -> str:
        return "example_" + self.section.replace(".", "_") + f"_L{self.line}"

    @property
    def target(self) -> str:
        return "sm_103a" if ".red" in self.statement else "sm_100a"

    def expected_error(self) -> str | None:
        for key, why in ERRATA.items():
            if key in self.statement:
                return why
        return None


def spec_path() -> Path | None:
    for cand in (os.environ.get("TCGEN05_CTS_SPEC"), ROOT / "shared" / "spec", ROOT.parent / "shared" / "spec",
                 ROOT.parent.parent / "shared" / "spec"):
        if cand and (Path(cand) / SPEC_FILE).is_file():
            return Path(cand) / SPEC_FILE
    return None


_HEADING = re.compile(r"^#+ (9\.7\.16[\d.]*?)\.? ")


def examples(text: str) -> list[Example]:
    """Statements of the code blocks that follow an "Example(s)" line, with section and line."""
    out: list[Example] = []
    section, in_examples, in_code, buf, start = "9.7.16", False, False, "", 0
    for number, raw in enumerate(text.split("\n"), start=1):
        heading = _HEADING.match(raw)
        if heading:
            section, in_examples = heading.group(1), False
        stripped = raw.strip()
        if stripped.startswith("Example"):
            in_examples = True
        if stripped.startswith("```"):
            in_code, buf = not in_code, ""
            continue
        if not (in_code and in_examples):
            continue
        if not stripped or stripped.startswith("//") or re.match(r"^(Example \d+:|\w+:)$", stripped):
            continue
        if not buf:
            start = number
        buf = f"{buf} {stripped}".strip()
        if buf.endswith(";"):
            out.append(Example(section, start, re.sub(r"\s+", " ", buf)))
            buf = ""
    return out


_B64 = ("adesc", "bdesc", "sdesc0", "sdesc1", "sdesc2")
_SHARED = ("mbarObj0", "mbarObj1", "mbarObj2", "sMemAddr1", "sMemAddr2", "flag")
_PRED = ("p",)


def example_ptx(ex: Example, version: str = "9.0") -> str:
    """A one-statement kernel: every identifier the examples use declared with a fitting type."""
    names = set(re.findall(r"(?<![.\w%:])([A-Za-z_]\w*)", ex.statement.split(" ", 1)[1] if " " in ex.statement else ""))
    names -= {"loop"}
    b32 = sorted(n for n in names if n not in _B64 + _SHARED + _PRED)
    lines = [f".version {version}", f".target {ex.target}", ".address_size 64", "", f".visible .entry {ex.entry}()", "{"]
    if b32:
        lines.append("    .reg .b32 " + ", ".join(b32) + ";")
    b64 = sorted(n for n in names if n in _B64)
    if b64:
        lines.append("    .reg .b64 " + ", ".join(b64) + ";")
    lines.append("    .reg .pred p;")
    lines += [f"    .shared .align 8 .b64 {n};" for n in sorted(n for n in names if n in _SHARED)]
    lines += ["loop:", "    " + ex.statement, "    ret;", "}"]
    return "\n".join(lines) + "\n"
