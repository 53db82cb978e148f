"""Simulator speed in thread-instructions per second, per kernel and in total (from the trace).

    python3 benchmarks/sim_clients.py [--ctas 32] [--repeat 1] [--features] [-k SUBSTR]
    python3 benchmarks/sim_clients.py --from-corpus [--cache DIR] [-k SUBSTR]

Kernels: by default the repository's own hand-written simulator test kernels (``tests/sim_ptx*.py``,
``tests/sim_mma_cases.py``), each launched on ``--ctas`` CTAs; with ``--from-corpus`` the real-client
corpus (``conformance.clients.corpus``: Triton- and CuTe-compiled kernels, taken from the compile cache, ``--cache``
or ``$TCGEN05_CTS_CACHE``, when present), one case each, launched as Triton's launcher would.

A thread-instruction is one instruction executed by one thread (``ptxsim.trace``); the rate is
thread-instructions over the wall time of the launches (one process, one core).  ``--features``
also records the decoded tcgen05 features (the observer's cost included in the time).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from ptxsim import SimDevice, SimError, Trace  # noqa: E402


@dataclass
class Bench:
    """One kernel launch: ``setup(device) -> params`` allocates and fills its buffers."""

    name: str
    ptx: str
    kernel: str
    setup: Callable
    grid: tuple = (1, 1, 1)
    block: tuple = (128, 1, 1)
    cluster: tuple | None = None

    def prepare(self, dev: SimDevice) -> Callable[[], None]:
        """A launcher on ``dev`` (the module loaded once)."""
        module = dev.load(self.ptx)
        return lambda: dev.run(module, self.kernel, self.setup(dev), self.grid, self.block, self.cluster)


def _out(nbytes: int):
    return lambda dev: [dev.memory.alloc(nbytes)]


def builtin_kernels(ctas: int) -> list[Bench]:
    """The repository's hand-written kernels, each on ``ctas`` CTAs (outputs sized for all)."""
    from tests import sim_mma_cases as C
    from tests.sim_ptx import ALU, BRANCHES, FLOAT, MBARRIER, MEMORY, NARROW, WARP
    from tests.sim_ptx_tcgen05 import TCGEN05_ALLOC

    g = (ctas, 1, 1)

    def narrow(dev):
        src = dev.memory.alloc(128)
        dev.memory.write(src, bytes(range(128)))
        return [src, dev.memory.alloc(4 * (64 * 8 + 16))]

    mma = C.MmaKernel("tcgen05.mma.cta_group::1.kind::f16 [%r32], %rd6, %rd7, %r22, %p7;")

    def mma_image() -> bytes:
        rng = np.random.default_rng(1)
        a, b = rng.integers(-3, 4, (128, 16)), rng.integers(-3, 4, (16, 64))
        data = np.zeros(0x40000, dtype=np.uint8)
        la, sa = C.place(data, C.f16_codes(a), 16, 0, "K")
        lb, sb = C.place(data, C.f16_codes(b.T), 16, 0x4000, "K")
        words = np.zeros(0x20, dtype=np.uint32)
        da, db = C.smem_desc(0, la, sa), C.smem_desc(0x4000, lb, sb)
        words[0:4] = [da & 0xFFFFFFFF, da >> 32, db & 0xFFFFFFFF, db >> 32]
        words[4], words[5] = C.idesc(m=128, n=64, a_type="f16", b_type="f16"), 1
        data[C.PARAMS:C.PARAMS + words.nbytes] = words.view(np.uint8)
        return data.tobytes()

    image = mma_image()

    def mma_setup(dev):
        src = dev.memory.alloc(len(image))
        dev.memory.write(src, image)
        return [src, dev.memory.alloc(4 * 128 * mma.words * ctas)]

    return [
        Bench("alu", ALU, "alu", _out(64 * 128), g, (64, 1, 1)),
        Bench("float", FLOAT, "falu", _out(32 * 40), g, (32, 1, 1)),
        Bench("branches", BRANCHES, "branches", _out(64 * 8), g, (64, 1, 1)),
        Bench("warp", WARP, "warp", _out(64 * 40), g, (64, 1, 1)),
        Bench("memory", MEMORY, "memory", _out(4 * (16 + 128)), g, (64, 1, 1)),
        Bench("narrow", NARROW, "narrow", narrow, g, (64, 1, 1)),
        Bench("mbarrier", MBARRIER, "mbar", _out(128 * 16), g, (128, 1, 1)),
        Bench("tmem_alloc", TCGEN05_ALLOC, "tmem_alloc", lambda dev: [dev.memory.alloc(128 * 12), 64], g),
        Bench("mma_f16_m128n64", mma.ptx, "mma", mma_setup, (min(ctas, 8), 1, 1)),
    ]


def corpus_runs(selected: str | None):
    """(name, prepare(device) -> launcher) for every corpus configuration (needs Triton and conformance.clients)."""
    try:
        from conformance.clients import build, corpus, launch
    except ImportError as exc:
        raise SystemExit(f"sim_clients: --from-corpus needs conformance.clients ({exc})") from None
    reasons = corpus.skip_reasons()
    if all(reasons.values()):
        raise SystemExit(f"sim_clients: --from-corpus: {'; '.join(reasons.values())}")
    for kernel in corpus.load_corpus():
        if selected and selected not in kernel.name:
            continue
        compiled = build.compile_kernel(kernel)
        case = kernel.case()

        def prepare(dev, kernel=kernel, compiled=compiled, case=case):
            module = dev.load(compiled.ptx)
            return lambda: launch.run_case(dev, kernel, compiled, case, module=module)
        yield kernel.name, prepare


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ctas", type=int, default=32, help="CTAs per launch of the built-in kernels (default 32)")
    ap.add_argument("--repeat", type=int, default=1, help="launches per kernel (default 1)")
    ap.add_argument("--no-warmup", dest="warmup", action="store_false",
                    help="count the first launch too (by default one untimed launch per kernel comes first)")
    ap.add_argument("--features", action="store_true", help="trace tcgen05 features too (observer cost included)")
    ap.add_argument("--from-corpus", action="store_true", help="the real-client corpus (conformance.clients)")
    ap.add_argument("--cache", default=None, help="compiled-client cache directory (sets $TCGEN05_CTS_CACHE)")
    ap.add_argument("-k", dest="select", default=None, help="only kernels whose name contains this")
    args = ap.parse_args(argv)
    if args.cache:
        os.environ["TCGEN05_CTS_CACHE"] = args.cache
    if args.from_corpus:
        runs = list(corpus_runs(args.select))
    else:
        runs = []
        for b in builtin_kernels(args.ctas):
            if args.select and args.select not in b.name:
                continue
            runs.append((b.name, b.prepare))
    total = Trace(features=args.features)
    print(f"{'kernel':<24} {'thread-instr':>14} {'seconds':>9} {'thread-instructions/s':>22}")
    wall = time.perf_counter()
    skipped = 0
    for name, prepare in runs:
        dev = SimDevice()
        try:
            run = prepare(dev)
            if args.warmup:
                run()                                 # first launch: lazy imports, caches (not counted)
        except SimError as exc:                       # not yet modelled: say so, measure the others
            print(f"{name:<24} skipped: {type(exc).__name__}: {str(exc).splitlines()[0][:70]}")
            skipped += 1
            continue
        dev.trace = Trace(features=args.features)
        for _ in range(max(args.repeat, 1)):
            run()
        t = dev.trace
        print(f"{name:<24} {t.thread_instructions:>14,} {t.seconds:>9.3f} {t.rate():>22,.0f}")
        total.counts.update(t.counts)
        total.seconds += t.seconds
        total.runs += t.runs
    if skipped:
        print(f"({skipped} kernel(s) skipped: they do not run on the simulator yet)")
    print(f"{'total':<24} {total.thread_instructions:>14,} {total.seconds:>9.3f} {total.rate():>22,.0f}")
    print(f"thread-instructions/s: {total.rate():,.0f} ({total.rate() / 1e6:.2f} M/s on one core; "
          f"{time.perf_counter() - wall:.1f} s wall incl. setup)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
