"""``tcgen05-cts clients``: the real-client corpus outside pytest.

    tcgen05-cts clients list                         names, languages, families, targets
    tcgen05-cts clients crossref [-o FILE.md] [--json FILE] [-k SUBSTR]

``crossref`` compiles (cached) and runs every corpus kernel on the simulator as an outside user
would (``SimDevice()`` with its defaults, hazard checker on; a kernel with a documented race with
that rule waived, and its status says so) with the execution trace on, and writes the cross-reference tables (``conformance.clients.crossref``): per kernel the
tcgen05 spellings, MMA shapes, layouts and TMEM shapes it executed; per suite feature the clients
that exercised it.  ``--json`` keeps the per-kernel digests.  Needs the ``clients`` extra.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

from conformance.commands.cli import CliError


def _corpus(pattern: str | None):
    from conformance.clients.corpus import load_corpus, skip_reasons

    reasons = skip_reasons()
    if all(reasons.values()):
        raise CliError("; ".join(reasons.values()))
    kernels = [k for k in load_corpus() if not pattern or pattern in k.name]
    if not kernels:
        raise CliError(f"-k expects a substring of a corpus name, but got {pattern!r} (no match)")
    return kernels


def run_list(args) -> int:
    for k in _corpus(args.k):
        print(f"{k.name}\t{k.language}\t{k.target}\t{','.join(k.families)}" + (f"\tinexact: {k.inexact}" if k.inexact else ""))
    return 0


def trace_kernel(kernel):
    """``(status, trace summary)`` of one corpus kernel on a fresh traced simulator."""
    from conformance.clients.build import compile_kernel
    from conformance.clients.corpus import TRIAGED_RACES
    from conformance.clients.launch import compare, run_case
    from ptxsim import SimDevice, SimError

    race = TRIAGED_RACES.get(kernel.name)
    device = SimDevice(trace=True, waive_hazards=(race,) if race else ())
    try:
        compiled = compile_kernel(kernel)
        case = kernel.case()
        result = run_case(device, kernel, compiled, case)
        problems = compare(kernel, case, result.outputs)
        status = "pass" if not problems else "MISMATCH"
        if race:
            status += f" (documented race: hazard {race} waived, docs/sim.md)"
    except SimError as exc:
        status = f"{type(exc).__name__}: {str(exc).splitlines()[0][:80]}"
    return status, device.trace.summary()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def run_crossref(args) -> int:
    from conformance.clients.crossref import digest, markdown

    digests, status = {}, {}
    for kernel in _corpus(args.k):
        status[kernel.name], summary = trace_kernel(kernel)
        digests[kernel.name] = digest(summary)
        print(f"{kernel.name}: {status[kernel.name]}", file=sys.stderr)
    text = markdown(digests, status)
    if args.json:
        _write(Path(args.json), json.dumps({"status": status, "digests": digests}, indent=1, default=list))
    if args.output:
        _write(Path(args.output), text)
    else:
        sys.stdout.write(text)
    return 0


def register(subparsers) -> None:
    top = subparsers.add_parser("clients", help="the real-client corpus (Triton/Gluon and CuTe kernels): list, crossref")
    sub = top.add_subparsers(dest="clients_command", metavar="SUBCOMMAND", required=True)
    ls = sub.add_parser("list", help="corpus configurations")
    ls.add_argument("-k", default=None, metavar="SUBSTR", help="only names containing SUBSTR")
    ls.set_defaults(func=run_list)
    cr = sub.add_parser("crossref", help="run the corpus traced on the simulator; write the cross-reference tables")
    cr.add_argument("-o", "--output", default=None, metavar="FILE.md", help="Markdown output (default: stdout)")
    cr.add_argument("--json", default=None, metavar="FILE", help="also write the per-kernel digests as JSON")
    cr.add_argument("-k", default=None, metavar="SUBSTR", help="only names containing SUBSTR")
    cr.set_defaults(func=run_crossref)
