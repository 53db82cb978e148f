"""Cross-reference: what the real clients (Triton, CUTLASS) executed, from the simulator's own trace, against the
suite's feature universe (Table 39 row groups, shared-memory layout modes, TMEM ld/st shapes,
tcgen05.cp shapes, block-scaling forms, K = 96 shapes and spellings, §9.7.16.6.4 sync patterns).

:func:`digest` reduces one kernel's ``ptxsim`` trace summary to the facts the tables need;
:func:`feature_table` marks each feature of the universe with the clients (by name) that
exercised it; :func:`confirmed_by` says which real client that is (Triton, CUTLASS, both,
neither), :func:`open_risk` lists the features neither exercised; :func:`markdown` renders it all
(``tcgen05-cts clients crossref``).
"""

from __future__ import annotations

import re
from collections import defaultdict

from reference.smem_descriptor import SWIZZLE_CODES
from reference.tables import LDST_SHAPES, TABLE_39, ldst_registers, shape_table
from reference.tmem_cp import CP_SHAPES

#: instruction families whose spellings the per-kernel table lists (the tcgen05 and async traffic)
LISTED = ("tcgen05.", "mbarrier.", "cp.async", "ldmatrix", "stmatrix", "fence.proxy", "barrier.cluster",
          "elect.sync")
SOURCE = "measured by the simulator's trace (ptxsim.trace): instruction spellings and decoded operands"


def digest(summary: dict) -> dict:
    """The facts of one kernel's trace: ``spellings`` (listed families), ``mma`` rows (kind,
    cta_group, ws, sparse, M, N, block_scale), ``layouts`` (operand, major, swizzle), ``ldst``
    (op, shape, num, pack), ``cp`` shapes, ``scale`` forms, ``sync`` (base ops)."""
    spellings = sorted(s for s in summary["instructions"] if s.startswith(LISTED))
    feats = summary["features"]
    mma = set()
    mma_spellings = [s for s in spellings if s.startswith("tcgen05.mma")]
    group = {int(m.group(1)) for s in mma_spellings if (m := re.search(r"cta_group::(\d)", s))} or {1}
    ws = any("ws" in s.split(".") for s in mma_spellings)         # tcgen05.mma.ws... (was ".ws": never true)
    for d in feats.get("instr_desc", []):
        mma.add((d["kind"], max(group), ws, bool(d.get("sparse")), d["m"], d["n"]))
    layouts = {(r["operand"], r["major"], r["swizzle"]) for r in feats.get("smem_desc", []) if r.get("operand") in "ab"}
    ldst = {("ld", r["shape"], r["num"], bool(r.get("pack"))) for r in feats.get("tmem_ld_map", [])}
    ldst |= {("st", r["shape"], r["num"], bool(r.get("unpack"))) for r in feats.get("tmem_st_map", [])}
    cp = {m.group(1) for s in spellings if s.startswith("tcgen05.cp") and (m := re.search(r"\.(\d+x\d+b)", s))}
    scale = {(s.split("kind::")[1].split(".")[0], (re.search(r"scale_vec::(\w+)", s) or [None, "default"])[1])
             for s in mma_spellings if ".block_scale" in s}
    sync = sorted({_base(s) for s in spellings})
    # K = 96 (sm_103a): (kind, cta_group, M) of every descriptor with the K bit, and the scale-vector spellings
    # (block16 / block32 / default) of the block-scaled MMAs of a kernel that issued one
    k96 = {(d["kind"], max(group), d["m"]) for d in feats.get("instr_desc", []) if d.get("k96")}
    k96_forms = {(s.split("kind::")[1].split(".")[0], _scale_vec(s)) for s in mma_spellings if ".block_scale" in s} if k96 else set()
    lbo_abs = {r["operand"] for r in feats.get("smem_desc", []) if r.get("operand") in "ab" and r.get("lbo_mode") == "absolute"}
    return {"spellings": spellings, "mma": sorted(mma), "layouts": sorted(layouts), "ldst": sorted(ldst),
            "cp": sorted(cp), "scale": sorted(scale), "sync": sync, "k96": sorted(k96), "k96_forms": sorted(k96_forms),
            "lbo_absolute": sorted(lbo_abs),
            "thread_instructions": summary["thread_instructions"], "seconds": summary["seconds"]}


def _scale_vec(spelling: str) -> str:
    """The scale-vector qualifier of a block-scaled MMA spelling: ``block16``, ``block32``, ``scale_vec::NX`` or
    ``default`` (none written)."""
    m = re.search(r"\.(block16|block32|scale_vec::\w+)", spelling)
    return m.group(1) if m else "default"


def _base(spelling: str) -> str:
    """``tcgen05.wait::ld.sync.aligned`` -> ``tcgen05.wait::ld``; ``mbarrier.try_wait.parity...`` ->
    ``mbarrier.try_wait``."""
    parts = spelling.split()[0].rstrip(";").split(".")
    return ".".join(parts[:2])


def _patterns():
    from generators.ptx.patterns import PATTERNS

    return PATTERNS


def feature_table(digests: dict[str, dict]) -> list[tuple[str, str, list[str]]]:
    """``(group, feature, [client names])`` for every feature of the suite's universe."""
    rows: list[tuple[str, str, list[str]]] = []
    hit: dict[tuple, set[str]] = defaultdict(set)
    for name, d in digests.items():
        for kind, group, ws, sparse, m, _n in d["mma"]:
            hit[("t39", kind, group, ws, sparse)].add(name)
            hit[("t39m", kind, group, ws, sparse, m)].add(name)
        for _operand, major, swizzle in d["layouts"]:
            hit[("layout", major, swizzle)].add(name)
        for op, shape, num, _pack in d["ldst"]:
            hit[("ldst", op, shape)].add(name)
            hit[("ldstn", op, shape, num)].add(name)
        for shape in d["cp"]:
            hit[("cp", shape)].add(name)
        for kind, _vec in d["scale"]:
            hit[("scale", kind)].add(name)
        for base in d["sync"]:
            hit[("sync", base)].add(name)
        for kind, group, m in d.get("k96", ()):
            hit[("k96", kind, group, m)].add(name)
        for kind, vec in d.get("k96_forms", ()):
            hit[("k96form", kind, vec)].add(name)
        if d.get("lbo_absolute"):
            hit[("lbo_absolute",)].add(name)
    seen_rows = set()
    for row in TABLE_39:
        key = (row.kind, row.cta_group, row.ws, row.sparse)
        if key in seen_rows:
            continue
        seen_rows.add(key)
        label = (f"kind::{row.kind} cta_group::{row.cta_group}{' .ws' if row.ws else ''}{' .sp' if row.sparse else ''}"
                 f" (M {'/'.join(map(str, row.m))})")
        who = hit.get(("t39", *key), set())
        ms = sorted({m for (tag, *rest) in hit if tag == "t39m" and tuple(rest[:4]) == key for m in [rest[4]]})
        rows.append(("Table 39 row group", label + (f": M {ms} seen" if ms else ""), sorted(who)))
    for major in ("K", "MN"):
        for swizzle in SWIZZLE_CODES:
            rows.append(("layout (major x swizzle)", f"{major}-major {swizzle}", sorted(hit.get(("layout", major, swizzle), ()))))
    rows.append(("layout (major x swizzle)", "K-major 128B, absolute leading-dimension mode (descriptor bit 52, sm_103a)",
                 sorted(hit.get(("lbo_absolute",), ()))))
    # K = 96 (sm_103a): every (kind, cta_group, M) of the shape rows in force (Table 39's 256xNxK1, and CuTe's
    # M = 128 rows under Q-K96-M128 = cute-m128), and the scale-vector spellings the suite generates for them
    for row in shape_table():
        if row.k == 96:
            for m in row.m:
                rows.append(("K = 96 (sm_103a)", f"kind::{row.kind} cta_group::{row.cta_group} M={m} K=96",
                             sorted(hit.get(("k96", row.kind, row.cta_group, m), ()))))
    for kind, vec in (("mxf4", "default"), ("mxf4", "block32"), ("mxf4nvf4", "block32"), ("mxf4nvf4", "block16")):
        rows.append(("K = 96 (sm_103a)", f"kind::{kind}.block_scale{'' if vec == 'default' else '.' + vec} with K = 96",
                     sorted(hit.get(("k96form", kind, vec), ()))))
    for op in ("ld", "st"):
        for shape in LDST_SHAPES:
            nums = sorted({rest[2] for (tag, *rest) in hit if tag == "ldstn" and rest[0] == op and rest[1] == shape})
            legal = [n for n in (1, 2, 4, 8, 16, 32, 64, 128) if _legal(shape, n)]
            rows.append(("TMEM " + op, f"tcgen05.{op}.{shape} (.num seen {nums or '-'} of {legal})",
                         sorted(hit.get(("ldst", op, shape), ()))))
    for shape in CP_SHAPES:
        rows.append(("tcgen05.cp shape", shape, sorted(hit.get(("cp", shape), ()))))
    for kind in ("mxf8f6f4", "mxf4", "mxf4nvf4"):
        rows.append(("block scaling", f"kind::{kind}.block_scale", sorted(hit.get(("scale", kind), ()))))
    for p in _patterns():
        bases = sorted({_base(t) for t in p.tcgen05})
        who = set.intersection(*(hit.get(("sync", b), set()) for b in bases)) if bases else set()
        rows.append(("sync pattern (its instructions all executed; order not checked)",
                     f"{p.name} (§{p.section}: {', '.join(bases)})", sorted(who)))
    return rows


def _legal(shape: str, num: int) -> bool:
    try:
        ldst_registers(shape, num)
        return True
    except Exception:  # noqa: BLE001  (an illegal .num for the shape)
        return False


#: corpus name prefixes of the clients other than Triton (kernels_cute: ``cute.*``; kernels_flashinfer: ``vsa.*``)
CLIENT_PREFIXES = {"cute.": "cutlass", "vsa.": "flashinfer"}
CLIENT_LABELS = {"triton": "Triton", "cutlass": "CUTLASS", "flashinfer": "FlashInfer"}


def client_of(name: str) -> str:
    """The real client of a corpus name: ``cutlass`` for CuTe kernels (``cute.*``), ``flashinfer`` for
    FlashInfer's (``vsa.*``), else ``triton``."""
    return next((client for prefix, client in CLIENT_PREFIXES.items() if name.startswith(prefix)), "triton")


def confirmed_by(who: list[str]) -> str:
    """``Triton``, ``CUTLASS``, ``FlashInfer``, ``both`` (Triton and CUTLASS), ``A+B`` for another
    combination, or ``neither``: which real clients exercised a feature."""
    clients = {client_of(n) for n in who}
    if clients == {"triton", "cutlass"}:
        return "both"
    if len(clients) > 1:
        return "+".join(CLIENT_LABELS[c] for c in CLIENT_LABELS if c in clients)
    return CLIENT_LABELS.get(next(iter(clients), ""), "neither")


def open_risk(digests: dict[str, dict]) -> list[tuple[str, str]]:
    """``(group, feature)`` of every feature no real client exercised (the suite's open risk)."""
    return [(group, feature) for group, feature, who in feature_table(digests) if not who]


def markdown(digests: dict[str, dict], status: dict[str, str]) -> str:
    """The per-kernel table and the feature table as Markdown."""
    out = ["# Real-client cross-reference", "", f"Generated by `tcgen05-cts clients crossref`; {SOURCE}.", "",
           "Real clients: Triton 3.9 (Triton and Gluon kernels), CUTLASS 4.2 (CuTe kernels, `cute.*`) and "
           "FlashInfer 0.7.2.post1 (its CUDA sources, `vsa.*`).", "",
           "## Per kernel", "", "| kernel | result | tcgen05 / async instructions executed | MMA (kind, cta_group, ws, sp, M, N) | "
           "smem layouts (operand, major, swizzle) | TMEM ld/st (op, shape, num, pack) |", "|---|---|---|---|---|---|"]
    for name, d in sorted(digests.items()):
        spell = "<br>".join(f"`{s}`" for s in d["spellings"] if s.startswith(("tcgen05", "cp.async.bulk.tensor")))
        out.append(f"| {name} | {status.get(name, '')} | {spell} | {_cells(d['mma'])} | {_cells(d['layouts'])} | "
                   f"{_cells(d['ldst'])} |")
    rows = feature_table(digests)
    tally = defaultdict(int)
    for _group, _feature, who in rows:
        tally[confirmed_by(who)] += 1
    out += ["", "## Suite features exercised by a real client", "",
            f"Confirmed by both: {tally['both']}; by Triton only: {tally['Triton']}; by CUTLASS only: "
            f"{tally['CUTLASS']}; by FlashInfer only: {tally['FlashInfer']}; by neither: {tally['neither']} "
            f"(of {len(rows)}).", "",
            "| group | feature | confirmed by | clients |", "|---|---|---|---|"]
    for group, feature, who in rows:
        names = ", ".join(who[:4]) + (f" (+{len(who) - 4})" if len(who) > 4 else "")
        verdict = confirmed_by(who)
        out.append(f"| {group} | {feature} | {'**neither**' if verdict == 'neither' else verdict} | {names or '-'} |")
    return "\n".join(out) + "\n"


def _cells(items) -> str:
    return "<br>".join(", ".join(str(x) for x in item) for item in items) or "-"
