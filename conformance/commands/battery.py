"""``tcgen05-cts sim battery``: the instruction battery (:mod:`conformance.battery`).

    tcgen05-cts sim battery --seed N -o DIR [--device sim|cuda] [--only SUBSTRING]...
    tcgen05-cts sim battery --rerun -o DIR [--device sim|cuda] [--only SUBSTRING]...
    tcgen05-cts sim battery compare DIR_A DIR_B [--max N]

The first form generates the battery of seed N into DIR (PTX kernels, inputs, manifest.json), runs
every case on the device and writes DIR/outputs.npz; the second runs the battery already in DIR
(a recorded one, e.g. a copy of tests/data/hardware/h100-battery/seed1); the third lists every word
in which two result folders differ (DIR_B may also be a recorded .npz file of DIR_A's battery) and
exits 1 when any does.  Bad input: one line on stderr naming the argument, exit 2; so is ``--device cuda`` on a
machine without a usable GPU.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from conformance.commands.cli import CliError, parse_int

PROG = "tcgen05-cts sim battery"
DEVICES = ("sim", "cuda")


def add_parser(sub) -> None:
    p = sub.add_parser("battery", help="generate, run and compare the instruction battery (sim or GPU)",
                       description=__doc__.split("\n\n", 1)[1],
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("compare", nargs="*", metavar="compare DIR_A DIR_B",
                   help="compare two result folders instead of running")
    p.add_argument("--seed", type=parse_int, default=None, help="the battery's random seed (inputs)")
    p.add_argument("-o", "--output", metavar="DIR", default=None, help="the result folder to write")
    p.add_argument("--rerun", action="store_true", help="run the battery already in DIR instead of generating one")
    p.add_argument("--device", default="sim", help="sim (ptxsim, default) or cuda (the GPU through the CUDA driver)")
    p.add_argument("--only", action="append", metavar="SUBSTRING", help="run only the cases whose name contains it")
    p.add_argument("--max", type=parse_int, default=None, help="compare: at most N differing words listed per unit")
    p.set_defaults(func=handler)


def handler(args: argparse.Namespace) -> int:
    try:
        if args.compare:
            return _compare(args)
        return _run(args)
    except (CliError, ValueError, OSError) as exc:
        print(f"{PROG}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


def _compare(args: argparse.Namespace) -> int:
    from conformance.battery.results import compare, open_results, same_battery

    words = args.compare
    if words[0] != "compare" or len(words) != 3:
        raise CliError(f"positional arguments expect `compare DIR_A DIR_B`, but got {' '.join(words)!r}")
    if args.seed is not None or args.output is not None or args.rerun:
        raise CliError("compare expects no --seed, -o or --rerun (it reads two result folders)")
    if args.max is not None and args.max < 1:
        raise CliError(f"--max expects a positive count, but got {args.max}")
    a = _open(open_results, words[1], None, "DIR_A")
    b = _open(open_results, words[2], a.folder, "DIR_B")
    why = same_battery(a, b)
    if why:
        raise CliError(f"DIR_B {why}")
    lines, bad = compare(a, b, args.max)
    print("\n".join(lines))
    print(f"{'identical' if bad == 0 else f'{bad} unit(s) differ'}: {a.label} vs {b.label}")
    return 1 if bad else 0


def _open(opener, path: str, manifest_folder, name: str):
    try:
        return opener(path, manifest_folder)
    except (ValueError, OSError) as exc:
        raise CliError(f"{name} {exc}") from None


def _run(args: argparse.Namespace) -> int:
    if args.rerun:
        if args.seed is not None:
            raise CliError("--rerun expects no --seed (the battery in DIR has its own)")
        if args.output is None or not os.path.isfile(os.path.join(args.output, "manifest.json")):
            raise CliError(f"--rerun expects -o DIR holding a battery's manifest.json, but got {args.output}")
    elif args.seed is None or args.output is None:
        raise CliError("expects --seed N and -o DIR (or --rerun -o DIR, or `compare DIR_A DIR_B`)")
    elif args.seed < 0 or args.seed >= 2**32:
        raise CliError(f"--seed expects 0 <= N < 2^32, but got {args.seed}")
    if args.device not in DEVICES:
        raise CliError(f"--device expects sim or cuda, but got {args.device!r}")
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        raise CliError(f"-o expects a folder, but {args.output} is a file")
    runner, meta = _runner(args.device)
    from conformance.battery.generate import generate, load_manifest
    from conformance.battery.results import save

    manifest = load_manifest(args.output) if args.rerun else generate(args.seed, args.output)
    meta.update(seed=manifest.get("seed"), cases={})
    outputs = {}
    start = time.perf_counter()
    for case in manifest["cases"]:
        if args.only and not any(s in case["name"] for s in args.only):
            continue
        out, rec = runner(case, args.output)
        meta["cases"][case["name"]] = rec
        if out is not None:
            outputs[case["name"]] = out
        note = f" ({len(rec['dropped_ops'])} op blocks not run)" if rec.get("dropped_ops") else ""
        print(f"{case['name']:40s} {rec['status']}{note}" + (f": {rec['error'][:160]}" if rec["error"] else ""))
    path = save(args.output, meta, outputs)
    counts: dict[str, int] = {}
    for rec in meta["cases"].values():
        counts[rec["status"]] = counts.get(rec["status"], 0) + 1
    print(f"{len(meta['cases'])} cases on {meta['device']} in {time.perf_counter() - start:.1f} s ("
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + f"): {path}")
    return 0


def _runner(device: str):
    """(run(case, folder) -> (outputs | None, record), meta) for ``device``."""
    if device == "sim":
        from conformance.battery.run_sim import run_case
        return run_case, {"device": "ptxsim"}
    from conformance.harness.device_cuda import open_cuda_device

    backend, why = open_cuda_device()
    if backend is None:
        raise CliError(f"--device cuda: {why}")
    from conformance.battery.run_cuda import CudaRunner

    runner = CudaRunner(backend)
    return runner.run_case, runner.describe()
