"""The code base stays lint-clean (ruff, configured in pyproject.toml)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff not installed (pip install -e '.[dev]')")
    proc = subprocess.run([ruff, "check", "--no-cache", str(ROOT)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_package_imports_without_cuda():
    """The executable spec and generators import on a machine with no GPU stack at all."""
    code = "import reference.formats, reference.tables, reference.instr_descriptor, conformance.commands.cli; print('ok')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr


def _ptxsim_modules() -> dict[str, Path]:
    """Every module of the ``ptxsim`` package, dotted name -> file."""
    mods = {}
    for path in sorted((ROOT / "ptxsim").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        mods[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return mods


def test_each_ptxsim_module_imports_first():
    """(Import circles anywhere in the project: tests/test_import_graph.py.)  Each ptxsim module imports on its own in a fresh set of ptxsim modules (an import-order
    circle shows as an ImportError of a partially initialized module)."""
    names = sorted(_ptxsim_modules())
    code = ("import importlib, sys\nbad = []\nfor name in %r:\n"
            "    for m in [m for m in sys.modules if m == 'ptxsim' or m.startswith('ptxsim.')]:\n"
            "        del sys.modules[m]\n"
            "    try:\n        importlib.import_module(name)\n"
            "    except Exception as exc:\n        bad.append(f'{name}: {type(exc).__name__}: {exc}')\n"
            "print('\\n'.join(bad) or 'ok')\n") % names
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout[-4000:] + proc.stderr[-2000:]
