"""The ``// @op K NAME`` ... ``// @end K`` blocks of an op-block kernel: find them, and blank the
ones a device refuses (line numbers unchanged, so errors still name the original PTX lines)."""

from __future__ import annotations

import re

LINE = re.compile(r"line (\d+):")


def op_blocks(text: str) -> dict[int, tuple[int, int, str]]:
    """{op index: (first line, last line, name)} of the ``// @op`` blocks (1-based line numbers)."""
    blocks, open_ = {}, {}
    for i, line in enumerate(text.split("\n"), 1):
        s = line.strip()
        if s.startswith("// @op "):
            _, _, k, name = s.split(" ", 3)
            open_[int(k)] = (i, name)
        elif s.startswith("// @end "):
            k = int(s.split()[2])
            first, name = open_.pop(k)
            blocks[k] = (first, i, name)
    return blocks


def drop_blocks(text: str, blocks: dict, drop) -> str:
    """``text`` with the dropped blocks' lines replaced by empty lines."""
    lines = text.split("\n")
    for k in drop:
        first, last, _ = blocks[k]
        for i in range(first - 1, last):
            lines[i] = ""
    return "\n".join(lines)


def block_of_line(blocks: dict, message: str) -> int | None:
    """The op block containing the PTX line a message names (``line N:``), or None."""
    m = LINE.search(message)
    if not m:
        return None
    line = int(m.group(1))
    hit = [k for k, (a, b, _) in blocks.items() if a <= line <= b]
    return hit[0] if hit else None
