"""``tcgen05-cts``: the command-line front end.

Sub-commands live in :mod:`conformance.commands` (one module each, discovered here).
Bad input never ends in a traceback: a :class:`reference.errors.SpecError`,
:class:`CliError` or ``ValueError`` is printed as one line on stderr and the exit code is 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

from reference.errors import SpecError


class CliError(Exception):
    """Bad command-line input; the message names the argument."""


def parse_int(text: str) -> int:
    """Parse a decimal or ``0x``-hex integer (argparse ``type=``)."""
    try:
        return int(text, 0)
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(f"expects a decimal or 0x-hex integer, but got {text!r}") from None


def parse_bool(text: str) -> bool:
    """Parse ``true``/``false`` (argparse ``type=``)."""
    low = str(text).lower()
    if low in ("true", "1", "yes"):
        return True
    if low in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expects true or false, but got {text!r}")


def parse_int_list(text: str) -> list[int]:
    """Parse a comma-separated list of integers, index 0 first (argparse ``type=``)."""
    return [parse_int(part.strip()) for part in text.split(",")]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="tcgen05-cts", description="tcgen05 conformance test suite")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    import conformance.commands as commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # output piped into `head` and closed: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (SpecError, CliError, ValueError, KeyError, OSError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"tcgen05-cts {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    # ``python -m conformance.commands.cli``: run the importable module's main, so that the CliError the
    # commands raise (conformance.commands.cli.CliError) is the one caught, not a __main__ twin.
    from conformance.commands.cli import main as _main

    sys.exit(_main())
