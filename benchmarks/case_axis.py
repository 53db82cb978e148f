"""Would stacking cases on a case axis cut the host cost? How many cases of a launch batch share a configuration.

    python3 benchmarks/case_axis.py [--level default] [--limit N] [--batch 64] [--calls 300]

Issue 26 item 2 proposed running the host side (synthesis, both numerics models, sections) over a
leading case axis: cases of one kernel and one shape drawn and computed as (cases, M, N) arrays, so
that per-call overhead is paid once per group instead of once per case. That only pays if a launch
batch holds many cases of one configuration. For the MMA cases of the level (tcgen05 families; the
warp-level ones are a few percent of the cost) this prints, per grouping key, how many groups the
batches split into (cases per group, and how many cases are alone in theirs):

* ``numerics``: every field the numerics models and the D placement read (kind, cta_group, sparse,
  ws, M, N, K, the types, enable-input-d, negation, scale-input-d, saturate, scale vector, disable
  output lane, zero-column mask, ashift, selector) -- what one stacked oracle call would need equal;
* ``shape+types``: kind, M, N, K, the four types, sparse -- the least a stacked model needs equal;
* ``m,n``: M and N alone (padding everything else would still be per case).

With ``--calls N`` it also profiles synthesis + expected values of N cases (``cProfile``) and
prints Python-level calls per case and CPU microseconds per call: a cost of many small calls,
not of passes over data.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from execute import FAMILIES, select_cases  # noqa: E402

KEYS = {
    "numerics": ("kind", "cta_group", "sparse", "ws", "m", "n", "k", "d_type", "a_type", "b_type", "scale_type",
                 "enable_input_d", "negate", "scale_input_d", "saturate", "scale_vec", "dol", "zcm", "ashift",
                 "selector"),
    "shape+types": ("kind", "m", "n", "k", "d_type", "a_type", "b_type", "scale_type", "sparse"),
    "m,n": ("m", "n"),
}


TCGEN05_MMA = ("mma", "mma.sp", "mma.ws", "mma.ws.sp")


def _tcgen05_mma(xc) -> bool:
    return xc.case.family in TCGEN05_MMA


def grouping(xcases, batch: int, keys: tuple[str, ...]) -> tuple[int, int, int]:
    """(cases, groups, cases alone in their group) when each launch batch of a kernel is split by ``keys``."""
    by_kernel: dict[str, list] = defaultdict(list)
    for xc in xcases:
        by_kernel[xc.case.kernel.name].append(xc)
    cases = groups = alone = 0
    for members in by_kernel.values():
        for i in range(0, len(members), batch):
            part = members[i:i + batch]
            sizes = Counter((xc.mode,) + tuple(repr(dict(xc.case.params.items_).get(k)) for k in keys) for xc in part)
            cases += len(part)
            groups += len(sizes)
            alone += sum(1 for v in sizes.values() if v == 1)
    return cases, groups, alone


def call_profile(xcases) -> tuple[int, int, float]:
    """(cases, Python-level calls, CPU seconds) of synthesis + expected values of ``xcases`` (warm caches)."""
    from conformance.harness.oracles import expected
    from generators.inputs import Untestable, synthesize

    def run() -> int:
        done = 0
        for xc in xcases:
            try:
                inputs = synthesize(xc.case, xc.mode)
            except Untestable:
                continue
            expected(xc.case, inputs, mode=xc.mode)
            done += 1
        return done

    run()                                           # caches warm, as in a long run
    t0 = time.process_time()
    run()
    seconds = time.process_time() - t0
    prof = cProfile.Profile()
    prof.enable()
    done = run()
    prof.disable()
    return done, pstats.Stats(prof).total_calls, seconds


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--level", default="default", choices=("smoke", "default", "exhaustive"))
    ap.add_argument("--limit", type=int, default=0, help="evenly spread sample of about N cases (0: all)")
    ap.add_argument("--batch", type=int, default=64, help="cases per launch (64: the simulator's; 4096 a GPU's)")
    ap.add_argument("--calls", type=int, default=0, help="also profile synthesis + expected values of N MMA cases")
    args = ap.parse_args(argv)
    xcases = [xc for xc in select_cases(args.level, FAMILIES, args.limit) if _tcgen05_mma(xc)]
    print(f"{len(xcases)} tcgen05 MMA cases at {args.level}, launch batches of up to {args.batch}")
    for label, keys in KEYS.items():
        cases, groups, alone = grouping(xcases, args.batch, keys)
        print(f"by {label:12s}: {groups:6d} groups, {cases / max(groups, 1):5.2f} cases/group, "
              f"{alone} cases ({100 * alone / max(cases, 1):.0f}%) alone in theirs")
    if args.calls:
        step = max(1, len(xcases) // args.calls)
        done, calls, seconds = call_profile(xcases[::step][:args.calls])
        print(f"synthesis + expected values of {done} cases: {1e3 * seconds / max(done, 1):.2f} ms/case CPU, "
              f"{calls / max(done, 1):.0f} Python-level calls/case, {1e6 * seconds / max(calls, 1):.2f} us/call")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
