"""Every section, table row and rule a case exercises, derived from its parameters (issue 15).

``sections_of(case)`` -> ``tuple[SectionRef, ...]``, the case's own section first (it decides the
JUnit file); the others feed the coverage matrix and the dashboard. Nothing is written per case:

* the instructions its kernel executes (alloc, ld, wait, commit, fence, mbarrier, ...), read from
  the rendered kernel (§9.7.16.6-.12: the instruction sections and their completion mechanisms);
* MMA: Table 39 row, descriptors (§9.7.16.4.x, Tables 40-45), strides and canonical layout of each
  shared-memory operand (§9.7.16.3.x, Table 52 row, Table 53 atom), transpose/negate (Tables 49,
  50), packing (§9.7.16.10.4.x), data-path layout letter (§9.7.16.10.5.x), block scaling (Tables
  54/55, §9.7.16.10.7.2-3 scale-factor layouts), sparsity (§9.7.16.10.8.x), qualifiers;
* ld/st: Table 47/48 row, fragment shape (§9.7.16.2.3.1.x), packing; cp: shape, decompression,
  source descriptor; alloc, commit, fence, shift, wait, sync patterns and warp-level mma.sp alike;
* negative cases: only their own section and the sections and tables their rule names (they
  check that the spelling is refused, not what the rest of the kernel does).
"""

from __future__ import annotations

import re
from functools import lru_cache

from generators.params import Case
from generators.variants.common import TYPE_BITS, parse_layout
from reference import tables as T
from reference.datapath_layouts import layout_for
from reference.errors import SpecError
from reference.sections import SectionRef, refs_named_in, section_ids

__all__ = ["SectionRef", "sections_of", "section_ids_of", "kernel_refs", "statements_of", "check_matches", "matched_checks"]

R = SectionRef

# opcode prefix in a rendered kernel -> the sections executing it exercises
_OPCODE_SECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tcgen05.alloc", ("9.7.16.7.1", "9.7.16.7", "9.7.16.1", "9.7.16.1.1", "9.7.16.1.2")),
    ("tcgen05.dealloc", ("9.7.16.7.1", "9.7.16.1.2")),
    ("tcgen05.relinquish_alloc_permit", ("9.7.16.7.1",)),
    ("tcgen05.ld", ("9.7.16.8.3", "9.7.16.8", "9.7.16.8.1", "9.7.16.6.1")),
    ("tcgen05.st", ("9.7.16.8.4", "9.7.16.8", "9.7.16.8.1", "9.7.16.6.1")),
    ("tcgen05.wait", ("9.7.16.8.5", "9.7.16.6.2", "9.7.16.6.2.1", "9.7.16.6.2.1.2")),
    ("tcgen05.mma", ("9.7.16.10.9.1", "9.7.16.10", "9.7.16.6.1")),
    ("tcgen05.cp", ("9.7.16.9.2", "9.7.16.9", "9.7.16.6.1", "9.7.16.6.5")),
    ("tcgen05.shift", ("9.7.16.9.3", "9.7.16.9", "9.7.16.6.1")),
    ("tcgen05.commit", ("9.7.16.12.1", "9.7.16.12", "9.7.16.6.2", "9.7.16.6.2.1", "9.7.16.6.2.1.1")),
    ("tcgen05.fence", ("9.7.16.11.1", "9.7.16.11", "9.7.16.6.3")),
    ("fence.proxy.async", ("9.7.16.6.5",)),
)
_OPCODE = re.compile(r"\b(tcgen05\.[a-z_]+|fence\.proxy\.async)")
_MMA_FAMILIES = ("mma", "mma.sp", "mma.ws", "mma.ws.sp")
_SUB_BYTE = ("e2m3", "e3m2", "e2m1", "s4", "u4")


@lru_cache(maxsize=None)
def _opcodes(kernel) -> tuple[str, ...]:
    from generators.ptx.kernel import render

    try:
        text = render(kernel, "sm_100a", (8, 8))
    except Exception:           # a kernel that does not render says nothing beyond its own section
        return ()
    return tuple(dict.fromkeys(_OPCODE.findall(text)))


_KERNELS: dict[tuple[int, bool], tuple[object, tuple[SectionRef, ...]]] = {}


def kernel_refs(case: Case) -> tuple[SectionRef, ...]:
    """Sections of the instructions the case's kernel executes (and how tcgen05 orders them)."""
    key = (id(case.kernel), case.family in _MMA_FAMILIES)
    hit = _KERNELS.get(key)
    if hit is None or hit[0] is not case.kernel:       # kernels are shared by many cases: cache by identity
        hit = _KERNELS[key] = (case.kernel, _kernel_refs(case.kernel, key[1]))
    return hit[1]


@lru_cache(maxsize=None)
def _kernel_refs(kernel, mma_family: bool) -> tuple[SectionRef, ...]:
    out: list[SectionRef] = []
    opcodes = _opcodes(kernel)
    for opcode in opcodes:
        if opcode == "tcgen05.mma" and mma_family:
            continue                # the case's own MMA section says which form it is
        for prefix, sections in _OPCODE_SECTIONS:
            if opcode == prefix:
                out += [R(s) for s in sections]
    if kernel.cta_group is not None and any(o.startswith("tcgen05.") for o in opcodes):
        out.append(R("9.7.16.5", "Table 46"))
        if kernel.cta_group == 2:
            out += [R("9.7.16.5.1", "cta_group::2"), R("9.7.16.5.2", "cta_group::2")]
    return tuple(dict.fromkeys(out))


# --- MMA ------------------------------------------------------------------------------------------

def _operand_layouts(p) -> list[tuple[str, str, str]]:
    """(operand, shared-memory layout name, element type) of the operands read through a descriptor."""
    out = []
    if p["a_operand"] != "tmem":
        out.append(("A", p["a_operand"], p["a_type"]))
    out.append(("B", p["b_layout"], p["b_type"]))
    return out


def _slot_bits(kind: str, type_word: str) -> int:
    """Bits an element takes in shared memory (4-bit mxf4 elements packed two per byte; the
    4/6-bit types of f8f6f4/mxf8f6f4 in 8-bit slots, §9.7.16.10.4.4)."""
    bits = TYPE_BITS[type_word]
    if bits == 4 and kind in ("mxf4", "mxf4nvf4"):
        return 4
    return max(bits, 8) if kind in ("f8f6f4", "mxf8f6f4") else bits


def _layout_refs(p) -> list[SectionRef]:
    return list(_layout_refs_of(p["kind"], p["a_operand"], p["a_type"], p["b_layout"], p["b_type"],
                                p.get("lbo_mode", "relative")))


@lru_cache(maxsize=None)
def _layout_refs_of(kind, a_operand, a_type, b_layout, b_type, lbo) -> tuple[SectionRef, ...]:
    p = {"kind": kind, "a_operand": a_operand, "a_type": a_type, "b_layout": b_layout, "b_type": b_type}
    out = [R("9.7.16.4", "shared memory descriptor"), R("9.7.16.4.1", "Table 40"), R("9.7.16.3"),
           R("9.7.16.3.1"), R("9.7.16.3.2"), R("9.7.16.10.2", "Table 51"), R("9.7.16.10.6")]
    if lbo == "absolute":
        out += [R("9.7.16.3.1.2", "absolute leading-dimension address"), R("9.7.16.3.1.2.1"),
                R("9.7.16.4.1.1", "byte address mode (sm_103a)")]
    else:
        out.append(R("9.7.16.3.1.1", "relative offset" + (", LBO set on K-major swizzled B" if lbo == "relative_lbo_set" else "")))
    for operand, layout, dtype in _operand_layouts(p):
        swizzle, major = parse_layout(layout)
        bits = _slot_bits(p["kind"], dtype)
        out.append(R("9.7.16.3.3", f"{operand} {layout}"))
        out.append(R("9.7.16.10.3", f"Table 52: {bits}-bit {major}-major {swizzle}"))
        out.append(R("9.7.16.10.6", f"Table 53: {swizzle} {major}"))
        if swizzle != "none":
            out.append(R("9.7.16.4.1", f"Table 41: {swizzle}"))
        if major == "MN":
            out.append(R("9.7.16.10.1", f"Table 49: transpose {operand}"))
            if operand == "B" and TYPE_BITS[dtype] == 8:
                out.append(R("9.7.16.10.1", "Table 50: 8-bit transposed B"))
    return tuple(out)


def _packing_refs(p) -> list[SectionRef]:
    return list(_packing_refs_of(p["kind"], p["a_type"], p["b_type"], p["d_type"], p["a_operand"] == "tmem"))


@lru_cache(maxsize=None)
def _packing_refs_of(kind, a_type, b_type, d_type, a_tmem) -> tuple[SectionRef, ...]:
    p = {"a_type": a_type, "b_type": b_type, "d_type": d_type}
    out = [R("9.7.16.10.4"), R("9.7.16.10.4.1", f"D {p['d_type']}")]
    sub = [t for t in (p["a_type"], p["b_type"]) if t in _SUB_BYTE]
    if sub:
        out.append(R("9.7.16.10.4.2", "/".join(dict.fromkeys(sub))))
    if kind == "mxf8f6f4" and sub:
        if a_tmem and p["a_type"] in _SUB_BYTE:
            out.append(R("9.7.16.10.4.3", p["a_type"]))
        out.append(R("9.7.16.10.4.4", "/".join(dict.fromkeys(sub))))
    if kind in ("mxf4", "mxf4nvf4"):
        if a_tmem:
            out.append(R("9.7.16.10.4.5"))
        out.append(R("9.7.16.10.4.6"))
    return tuple(out)


def _scale_layout_index(qualifier: str, k: int) -> int:
    """Which §9.7.16.10.7.2.x / .3.x figure applies (1X, 2X, 4X, block32 K=96, block16 K=96)."""
    if k == 96:
        return 4 if qualifier == "block32" else 5
    if qualifier in ("scale_vec::1X",) or (qualifier == "block32" and k in (32,)):
        return 1
    return {"scale_vec::2X": 2, "block32": 2, "scale_vec::4X": 3, "block16": 3}[qualifier]


def _block_scale_refs(p) -> list[SectionRef]:
    from reference.block_scaling import resolve_scale_vec

    kind = p["kind"]
    try:
        qualifier, sf = resolve_scale_vec(kind, p["scale_vec"], p["k"], p["scale_type"])
    except SpecError:
        return [R("9.7.16.10.7")]
    index = 1 if kind == "mxf8f6f4" else _scale_layout_index(qualifier, p["k"])
    a_id, b_id = p["scale_ids"]
    spelled = p["scale_vec"] or f"default {qualifier}"
    return [R("9.7.16.10.7", f"{p['scale_type']} scales"),
            R("9.7.16.10.7.1", f"Table 54: .{qualifier} K={p['k']} SF={sf}"),
            R("9.7.16.10.7.1", f"Table 55: kind::{kind} {p['scale_type']} .{spelled}"),
            R("9.7.16.10.7.2", f"SFA_ID {a_id}"), R(f"9.7.16.10.7.2.{index}"),
            R("9.7.16.10.7.3", f"SFB_ID {b_id}"), R(f"9.7.16.10.7.3.{index}")]


_SPARSE_KIND = {"tf32": "9.7.16.10.8.1", "f16": "9.7.16.10.8.2", "f8f6f4": "9.7.16.10.8.2",
                "mxf8f6f4": "9.7.16.10.8.2", "i8": "9.7.16.10.8.2", "mxf4": "9.7.16.10.8.3", "mxf4nvf4": "9.7.16.10.8.3"}


def _sparse_refs(p, layout_letter: str | None) -> list[SectionRef]:
    kind, m = p["kind"], p["m"]
    out = [R("9.7.16.10.8", f"kind::{kind}"), R(_SPARSE_KIND[kind]),
           R("9.7.16.10.8.4", f"selector {p['selector']}")]
    group = {"f16": 1, "tf32": 3}.get(kind, 5)
    if m == 64:
        out.append(R(f"9.7.16.10.8.4.{group}", "M=64"))
    elif m in (128, 256):
        out.append(R(f"9.7.16.10.8.4.{group + 1}", f"M={m}"))
    if layout_letter in ("C", "F"):
        out.append(R("9.7.16.10.8.5", f"layout {layout_letter}"))
    return out


def _qualifier_refs(case: Case, p: dict) -> list[SectionRef]:
    sec = case.section
    words = [f"cta_group::{p['cta_group']}", f"kind::{p['kind']}"]
    if p["collector"]:
        words.append(f".collector::{p['collector']}")
    if p["ashift"]:
        words.append(".ashift")
    if p["dol"]:
        words.append(f"disable-output-lane {p['dol']}")
    if p["scale_input_d"] is not None:
        words.append(f"scale-input-d {p['scale_input_d']}")
    if p["enable_input_d"]:
        words.append("enable-input-d")
    if p["saturate"]:
        words.append(".satfinite (idesc)")
    if p["max_shift"]:
        words.append(f"max shift {p['max_shift']} (idesc)")
    if p["a_operand"] == "tmem":
        words.append("A in Tensor Memory")
    if p["negate"] != "none":
        words.append(f"negate {p['negate']}")
    out = [R(sec, w) for w in words]
    if p["negate"] != "none":
        out.append(R("9.7.16.10.1", f"Table 49: negate {p['negate']}"))
    return out


def _mma_refs(case: Case, p: dict) -> list[SectionRef]:
    kind = p["kind"]
    idesc_table = {"mxf8f6f4": "Table 43"}.get(kind, "Table 44" if kind in ("mxf4", "mxf4nvf4") else "Table 42")
    out = [R("9.7.16.10.9"), R("9.7.16.10"), R("9.7.16.2"), R("9.7.16.2.1", case.rule.split(": ", 1)[-1] if case.rule.startswith("Table 39") else "Table 39"),
           R("9.7.16.2.2", f"M={p['m']} N={p['n']} in idesc"), R("9.7.16.4.2", f"{idesc_table}: kind::{kind}")]
    if p["k"] == 96:
        out.append(R("9.7.16.2.1.1", "K=96 (sm_103a)"))
    out += _layout_refs(p)
    out += _packing_refs(p)
    try:
        layout = layout_for(p["m"], p["cta_group"], sparse=p["sparse"], ws=p["ws"])
        out += [R("9.7.16.10.5", f"layout {layout.layout_id}"), R(layout.section, f"M={p['m']} N={p['n']}")]
        letter = layout.layout_id
    except SpecError:
        letter = None
    if kind in T.BLOCK_SCALED_KINDS:
        out += _block_scale_refs(p)
    if p["sparse"]:
        out += _sparse_refs(p, letter)
    if p["zcm"] is not None:
        out.append(R("9.7.16.4.3", f"zero-column mask {p['zcm']}"))
    out += _qualifier_refs(case, p)
    return out


# --- other families -------------------------------------------------------------------------------

_FRAGMENT = {"32x32b": "9.7.16.2.3.1.1", "16x64b": "9.7.16.2.3.1.2", "16x128b": "9.7.16.2.3.1.3",
             "16x256b": "9.7.16.2.3.1.4", "16x32bx2": "9.7.16.2.3.1.5"}


def _ldst_refs(case: Case, p: dict) -> list[SectionRef]:
    out = [R("9.7.16.2", "data movement"), R("9.7.16.2.3", f".{p['shape']}"), R("9.7.16.2.3.1"),
           R(_FRAGMENT[p["shape"]], f".x{p['num']}"), R("9.7.16.1.1", f"column {p['column']} lane {p['lane_offset']}")]
    if p.get("pack") or p.get("unpack"):
        out.append(R("9.7.16.8.2", ".pack::16b" if p.get("pack") else ".unpack::16b"))
    if p.get("imm") is not None:
        out.append(R(case.section, f"immHalfSplitoff {p['imm']}"))
    if case.family == "ld.red":
        out.append(R(case.section, f".red .{p['redop']} .{p['type']}" + (" .abs" if p["abs"] else "") + (" .NaN" if p["nan"] else "")))
    return out


def _cp_refs(case: Case, p: dict) -> list[SectionRef]:
    out = [R("9.7.16.2.3", f".{p['shape']}"), R("9.7.16.4", "shared memory descriptor"), R("9.7.16.4.1", "Table 40"),
           R("9.7.16.1.1", f"column {p['column']}"), R(case.section, f"cta_group::{p['cta_group']}")]
    if p["src_swizzle"] != "none":
        out += [R("9.7.16.4.1", f"Table 41: {p['src_swizzle']}"), R("9.7.16.10.6", f"source swizzle {p['src_swizzle']}")]
    if p["multicast"]:
        out.append(R(case.section, f".{p['multicast']}"))
    if p["decompress"]:
        out += [R("9.7.16.9.1", p["decompress"]),
                R("9.7.16.9.1.1" if p["decompress"].startswith("b4") else "9.7.16.9.1.2", p["decompress"])]
    return out


def _family_refs(case: Case) -> list[SectionRef]:
    p, fam, sec = dict(case.params.items_), case.family, case.section
    if fam in _MMA_FAMILIES:
        return _mma_refs(case, p)
    if fam in ("ld", "ld.red", "st"):
        return _ldst_refs(case, p)
    if fam == "cp":
        return _cp_refs(case, p)
    if fam == "alloc":
        return [R("9.7.16.1.2", f"{p['op']} nCols={p['ncols']}"), R(sec, f"cta_group::{p['cta_group']}")]
    if fam == "shift":
        return [R("9.7.16.2.3", ".31x256b (implicit)"), R(sec, f"cta_group::{p['cta_group']}")]
    if fam == "commit":
        out = [R(sec, f"cta_group::{p['cta_group']}")]
        return out + ([R(sec, ".multicast::cluster")] if p["multicast"] else [])
    if fam == "fence":
        return [R("9.7.16.6.3", f"fence::{p['fence']}")]
    if fam == "wait":
        return [R("9.7.16.6.2.1.2", f"wait::{p['wait']}")]
    if fam == "sync":
        return [R("9.7.16.6", "canonical pattern"), R("9.7.16.6.4", p["pattern"])]
    if fam == "warp.mma.sp":
        detail = f"{p['shape']} {p['a_type']}" + (f" kind::{p['kind']}" if p["kind"] else "")
        return [R(sec, detail), R(sec, f"selector {p['selector']}"),
                R(sec, "ordered_metadata" if p["ordered_metadata"] else "metadata (unordered)")]
    return []


_RECENT: dict[int, tuple[Case, tuple[SectionRef, ...]]] = {}


def sections_of(case: Case) -> tuple[SectionRef, ...]:
    """Every section (with table row / rule / qualifier detail) the case exercises, its own
    section first; each (section, detail) once. See the module docstring for what is derived."""
    hit = _RECENT.get(id(case))
    if hit is not None and hit[0] is case:
        return hit[1]
    if len(_RECENT) > 100_000:
        _RECENT.clear()
    refs = _sections_of(case)
    _RECENT[id(case)] = (case, refs)
    return refs


def _sections_of(case: Case) -> tuple[SectionRef, ...]:
    own = [R(case.section, _own_detail(case))]
    named = list(refs_named_in(case.rule))
    if not case.legal:
        return tuple(dict.fromkeys(own + [r for r in named if r.section != case.section]))
    top = [R("9.7.16")] if case.section.startswith("9.7.16") else []
    refs = own + top + _family_refs(case)
    seen = {r.section for r in refs}
    refs += [r for r in named if r.section not in seen] + list(kernel_refs(case))
    return tuple(dict.fromkeys(refs))


def _own_detail(case: Case) -> str:
    """The case's rule without a leading mention of its own section."""
    rule = case.rule.strip()
    for prefix in (f"§{case.section}:", f"§{case.section}"):
        if rule.startswith(prefix):
            return rule[len(prefix):].strip()
    return rule


def section_ids_of(case: Case) -> tuple[str, ...]:
    """Section ids of :func:`sections_of`, own section first, each once (what the outcome log records)."""
    return section_ids(sections_of(case))


# --- normative statements ------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _checks_by_section():
    from reference.statements import load_statements

    index: dict[str, list] = {}
    for statement in load_statements().statements:
        for number, check in enumerate(statement.checks):
            for section in check.section:
                index.setdefault(section, []).append((statement.id, number, check))
    return index


def _details_by_section(refs: tuple[SectionRef, ...]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in refs:
        out.setdefault(r.section, []).append(r.detail)
    return out


def check_matches(check, case: Case, details: dict[str, list[str]] | None = None, params: dict | None = None) -> bool:
    """Whether ``case`` is one the selector ``check`` (reference.statements.Check) names: some
    reference of the case is in one of its sections with ``check.detail`` in its detail, the
    legality agrees and every ``where`` parameter has an allowed value."""
    if check.legal is not None and case.legal != check.legal:
        return False
    if check.own and case.section not in check.section:
        return False
    params = dict(case.params.items_) if params is None else params
    for name, allowed in check.where:
        if params.get(name) not in allowed:
            return False
    details = _details_by_section(sections_of(case)) if details is None else details
    return any(check.detail in d for sec in check.section for d in details.get(sec, ()))


_MATCHED: dict[int, tuple[Case, tuple[tuple[str, int], ...]]] = {}


def matched_checks(case: Case) -> tuple[tuple[str, int], ...]:
    """(statement id, check index) of every selector of reference/statements.json that names
    ``case`` (what :func:`check_matches` says, computed once per case object)."""
    hit = _MATCHED.get(id(case))
    if hit is not None and hit[0] is case:
        return hit[1]
    if len(_MATCHED) > 100_000:
        _MATCHED.clear()
    joined = {sec: "\0".join(ds) for sec, ds in _details_by_section(sections_of(case)).items()}
    params = dict(case.params.items_)
    index = _checks_by_section()
    found: dict[tuple[str, int], None] = {}
    for section, text in joined.items():
        for sid, number, check in index.get(section, ()):
            key = (sid, number)
            if key in found or (check.legal is not None and case.legal != check.legal):
                continue
            if check.own and case.section not in check.section:
                continue
            if check.detail not in text or any(params.get(n) not in allowed for n, allowed in check.where):
                continue
            found[key] = None
    result = tuple(found)
    _MATCHED[id(case)] = (case, result)
    return result


def statements_of(case: Case) -> tuple[str, ...]:
    """Ids of the normative statements (reference/statements.json) the case checks."""
    return tuple(dict.fromkeys(sid for sid, _ in matched_checks(case)))
