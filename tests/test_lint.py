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


def _ptxsim_imports(name: str, path: Path, mods: dict[str, Path]) -> set[str]:
    """The ``ptxsim`` modules ``name`` imports anywhere in its text (a function-level import too: a
    lazy import hides a circle from the interpreter, not from the reader).  ``from pkg import sub``
    depends on the submodule, not on the package's ``__init__``."""
    import ast

    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.update(f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in mods else node.module
                       for a in node.names)
    return {d for d in out if d in mods and d != name}


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_circles_found():
    """The circle finder itself: a -> b -> c -> a is one circle, d alone none."""
    assert _circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _circles({"a": {"b"}, "b": set()}) == []


def test_ptxsim_has_no_import_circles():
    """No ptxsim module reaches itself through its imports (docs/sim.md: the package's layout)."""
    mods = _ptxsim_modules()
    assert "ptxsim.hazards.checker" in mods, sorted(mods)
    graph = {name: _ptxsim_imports(name, path, mods) for name, path in mods.items()}
    circles = _circles(graph)
    assert not circles, "import circles among ptxsim modules: " + "; ".join(" <-> ".join(c) for c in circles)


def test_each_ptxsim_module_imports_first():
    """Each ptxsim module imports on its own in a fresh set of ptxsim modules (an import-order
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
