"""PTX pieces of the shared-tile kernels (TMA loads, stores and reductions, bulk copies and stores).

Register conventions of these kernels (every piece below relies on them):
  %r0 = %tid.x, %r20 = %ntid.x, %r1 = the tile's shared address, %r2 = the mbarrier's,
  %rd1 = the output buffer (global), %rd5 = the global source of a copy into the tile;
  a loop over the tile keeps its byte offset in %r3 and its stride (16 ntid) in %r21.
A loop over the tile is shared by the whole CTA, 16 bytes a thread a step:

    thread t:  bytes 16t .. 16t+15,  then 16(t+ntid) ..,  then 16(t+2 ntid) ..   while < limit
"""

from __future__ import annotations

from conformance.battery.spec import WAIT_BOUND, WAIT_HINT

#: the 16 bytes at %r3 of the tile := words w = w * 0x9E3779B1 + 0x7F4A7C15 (w = word index)
PATTERN_CHUNK = """  shr.u32 %r4, %r3, 2;
  mad.lo.u32 %r5, %r4, 0x9E3779B1, 0x7F4A7C15;
  add.u32 %r6, %r5, 0x9E3779B1;
  add.u32 %r7, %r6, 0x9E3779B1;
  add.u32 %r8, %r7, 0x9E3779B1;
  add.u32 %r9, %r1, %r3;
  st.shared.v4.b32 [%r9], {%r5, %r6, %r7, %r8};"""

#: the 16 bytes at %r3 of the tile := those at %r3 of the global source %rd5
COPY_IN_CHUNK = """  cvt.u64.u32 %rd3, %r3;
  add.u64 %rd4, %rd5, %rd3;
  ld.global.v4.b32 {%r5, %r6, %r7, %r8}, [%rd4];
  add.u32 %r9, %r1, %r3;
  st.shared.v4.b32 [%r9], {%r5, %r6, %r7, %r8};"""

#: out[16 + %r3 ..] := the 16 bytes at %r3 of the tile (out[0:16] holds the status words)
DUMP_CHUNK = """  add.u32 %r9, %r1, %r3;
  ld.shared.v4.b32 {%r5, %r6, %r7, %r8}, [%r9];
  cvt.u64.u32 %rd3, %r3;
  add.u64 %rd4, %rd1, %rd3;
  st.global.v4.b32 [%rd4+16], {%r5, %r6, %r7, %r8};"""


def tile_prologue(source: str | None = None, coords: bool = False) -> str:
    """Register declarations, %r0 = tid, %r20 = ntid, %rd1 = the ``out`` parameter (global) and,
    when ``source`` names a parameter, %rd5 = it (global); ``coords``: also the TMA coordinate
    registers %c0..%c2."""
    text = f"""  .reg .pred %p<8>;
  .reg .b32 %r<24>{', %c<3>' if coords else ''};
  .reg .b64 %rd<8>;
  mov.u32 %r0, %tid.x;
  mov.u32 %r20, %ntid.x;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd1, %rd1;"""
    if source:
        text += f"\n  ld.param.u64 %rd5, [{source}];\n  cvta.to.global.u64 %rd5, %rd5;"
    return text


def tile_loop(label: str, limit: str | int, chunk: str, done: str, first: bool = True) -> str:
    """The CTA's loop over tile bytes [0, ``limit``) (see the module's diagram), ``chunk`` handling
    the 16 bytes at %r3 (it may use %r4..%r9, %rd3, %rd4), ending at label ``done``. The kernel's
    ``first`` loop also sets the stride %r21 (the later ones reuse it)."""
    stride = "\n  shl.b32 %r21, %r20, 4;" if first else ""
    return f"""  shl.b32 %r3, %r0, 4;{stride}
{label}:
  setp.ge.u32 %p1, %r3, {limit};
  @%p1 bra {done};
{chunk}
  add.u32 %r3, %r3, %r21;
  bra {label};
{done}:"""


def fill_tile_with_pattern(limit: str | int) -> str:
    """Tile bytes [0, limit) := the known pattern (:data:`PATTERN_CHUNK`), written through the generic
    proxy; ends at label FILLED."""
    return tile_loop("FILL", limit, PATTERN_CHUNK, "FILLED")


def copy_into_tile(limit: str | int) -> str:
    """Tile bytes [0, limit) := the global source %rd5's; ends at label FILLED."""
    return tile_loop("FILL", limit, COPY_IN_CHUNK, "FILLED")


def dump_tile(limit: str | int) -> str:
    """out[16:16 + limit] := tile bytes [0, limit); ends at label END (after an earlier loop set %r21)."""
    return tile_loop("DUMP", limit, DUMP_CHUNK, "END", first=False)


def bounded_wait(label: str, done: str, parity, bar: str = "%r2", timeout_flag: str | None = None) -> str:
    """Wait for phase ``parity`` of mbarrier ``bar`` with at most WAIT_BOUND try_wait of WAIT_HINT ns
    (%p3 = whether it completed); when it did not, 1 is stored at ``timeout_flag`` (an address,
    e.g. ``[%rd1+4]``) if given. Ends at label ``done``."""
    flag = f"\n  mov.u32 %r13, 1;\n  st.global.u32 {timeout_flag}, %r13;" if timeout_flag else ""
    return f"""  mov.u32 %r12, 0;
{label}:
  mbarrier.try_wait.parity.shared::cta.b64 %p3, [{bar}], {parity}, {WAIT_HINT};
  @%p3 bra {done};
  add.u32 %r12, %r12, 1;
  setp.lt.u32 %p4, %r12, {WAIT_BOUND};
  @%p4 bra {label};{flag}
{done}:"""
