"""Digests of the host side of the execution tier: a check that a host-cost change keeps every verdict.

    python3 benchmarks/host_digests.py [--level default] [--limit N] > digests.txt

For every execution case of the level (as ``benchmarks/execute.py`` selects them) one line: the case
ID, mode, sha256 of the synthesized inputs (packed record + in blocks + out_words) and sha256 of the
expected sections (name, index, expected, mask, nan_any) under each numerics model ("spec",
"hardware"). Run before and after a change and ``diff`` the outputs: they must be identical.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from execute import FAMILIES, select_cases  # noqa: E402

from conformance.harness.oracles import expected  # noqa: E402
from generators.inputs import Untestable, case_record, synthesize  # noqa: E402


def inputs_digest(case, inputs) -> str:
    h = hashlib.sha256(case_record(case, inputs))
    for block in inputs.in_blocks:
        h.update(block)
    h.update(str(inputs.out_words).encode())
    return h.hexdigest()[:16]


def expected_digest(exp) -> str:
    h = hashlib.sha256()
    for s in exp.sections:
        h.update(s.name.encode())
        for a in (s.index, s.expected, s.mask) + (() if s.nan_any is None else (s.nan_any,)):
            h.update(str(a.shape).encode() + a.tobytes())
    return h.hexdigest()[:16]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default="default")
    ap.add_argument("--limit", type=int, default=0)
    args = ap.parse_args(argv)
    for xc in select_cases(args.level, FAMILIES, args.limit):
        try:
            inp = synthesize(xc.case, xc.mode)
        except Untestable as e:
            print(xc.case_id, xc.mode, "untestable", str(e)[:60])
            continue
        parts = [inputs_digest(xc.case, inp)]
        for numerics in ("spec", "hardware"):
            try:
                parts.append(expected_digest(expected(xc.case, inp, numerics=numerics, mode=xc.mode)))
            except Exception as e:  # the oracle's refusal is part of the digest
                parts.append(f"{type(e).__name__}")
        print(xc.case_id, xc.mode, *parts)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
