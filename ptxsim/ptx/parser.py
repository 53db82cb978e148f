"""Parser for the PTX subset the generated kernels use (PTX ISA chapters 4-5, 10-11).

Output is plain data (frozen dataclasses); the compiler (:mod:`ptxsim.ptx.compiler`) gives it
meaning.  What is parsed::

    module     .version  .target  .address_size  [.visible|.extern|.weak] .entry
               module-scope .global/.const/.shared variables; .file/.loc/.section are skipped
               ``.section name { ... }`` (DWARF debug data) is skipped whole
    entry      .entry name ( .param [.align n] .type name[ [n] ], ... )
               .maxntid/.reqntid/.reqnctapercluster/.explicitcluster/.maxnreg/.minnctapersm/
               .maxclusterrank  { body }
    body       .reg [.type] names (``%r<8>`` ranges too)   .shared/.local/.const/.global variables
               (``.align``, arrays, ``[]`` for extern)   labels   nested { } scopes: flattened, each
               name declared in a nested scope (register, variable, label) renamed ``name$N`` so
               inline-asm blocks may redeclare ``complete``/``waitLoop`` (PTX ISA §4.4 scoping)
               [@[!]p] opcode{.qualifier} operand, ... ;
    operands   registers / names (``%tid.x``)   ``_``   immediates (decimal, 0x hex, 0b binary,
               octal, ``U`` suffix, 0fXXXXXXXX, 0dXXXXXXXXXXXXXXXX, decimal floats)
               ``[base]`` ``[base+imm]`` ``[base-imm]`` ``[imm]``   ``{a, b, ...}``   ``!p``   ``p|q``
               ``name+imm``

Anything else is a :class:`PtxSyntaxError` naming the line.
"""

from __future__ import annotations

import re

from ptxsim.errors import PtxSyntaxError
from ptxsim.ptx.syntax import (  # noqa: F401  (re-exported: the parser's output types)
    Addr,
    BranchTargets,
    Imm,
    Instr,
    Kernel,
    Label,
    Module,
    Name,
    Not,
    Operand,
    Pair,
    ParamDecl,
    RegDecl,
    VarDecl,
    Vec,
)

# -- tokens -------------------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<string>"[^"\n]*")
  | (?P<fhex>0[fF][0-9a-fA-F]{8}(?![0-9a-fA-F])|0[dD][0-9a-fA-F]{16}(?![0-9a-fA-F]))
  | (?P<hex>0[xX][0-9a-fA-F]+U?)
  | (?P<bin>0[bB][01]+U?)
  | (?P<float>\d+\.\d*(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)
  | (?P<int>\d+U?)
  | (?P<dot>\.[A-Za-z0-9_:]+)
  | (?P<ident>[A-Za-z_$%][A-Za-z0-9_$]*)
  | (?P<punct>[{}()\[\],;:@!+\-|<>=*/&~])
""", re.VERBOSE)

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)


class Tok:
    """One token: ``kind`` (a group of ``_TOKEN``), ``text``, source ``line``, offsets ``start``/``end``
    (a plain slotted class: a module has thousands of tokens, a frozen dataclass built each one
    through ``object.__setattr__``, a third of a kernel's load time)."""

    __slots__ = ("kind", "text", "line", "start", "end")

    def __init__(self, kind: str, text: str, line: int, start: int, end: int) -> None:
        self.kind, self.text, self.line, self.start, self.end = kind, text, line, start, end

    def __repr__(self) -> str:
        return f"Tok({self.kind!r}, {self.text!r}, line {self.line})"


def _strip_comments(text: str) -> str:
    """Replace comments by spaces (newlines kept) so offsets and line numbers survive."""
    return _COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def tokenize(text: str) -> list[Tok]:
    clean = _strip_comments(text)
    toks: list[Tok] = []
    append, match, size = toks.append, _TOKEN.match, len(clean)
    pos, line = 0, 1
    while pos < size:
        m = match(clean, pos)
        if m is None:
            raise PtxSyntaxError(f"line {line}: unexpected character {clean[pos]!r}")
        kind, end = m.lastgroup, m.end()
        if kind == "ws":                  # the only tokens that span lines (strings stop at one)
            line += clean.count("\n", pos, end)
        else:
            append(Tok(kind, clean[pos:end], line, pos, end))
        pos = end
    return toks


def parse_int(text: str) -> int:
    """Integer literal: decimal, 0x hex, 0b binary, 0-prefixed octal, optional ``U`` suffix."""
    t = text[:-1] if text.endswith("U") else text
    if t[:2] in ("0x", "0X"):
        return int(t[2:], 16)
    if t[:2] in ("0b", "0B"):
        return int(t[2:], 2)
    if len(t) > 1 and t[0] == "0":
        return int(t, 8)
    return int(t)


# -- parser -------------------------------------------------------------------------------------

_VAR_SPACES = (".global", ".const", ".shared", ".local")
_SKIPPED_LINE_DIRECTIVES = (".file", ".loc", ".section")
_ENTRY_DIRECTIVES = {".maxntid": 3, ".reqntid": 3, ".reqnctapercluster": 3, ".maxnreg": 1,
                     ".minnctapersm": 1, ".maxclusterrank": 1, ".explicitcluster": 0, ".noreturn": 0}


class _Parser:
    def __init__(self, text: str) -> None:
        self.src = text
        self.toks = tokenize(text)
        self.i = 0
        self.scopes: list[dict[str, str]] = []     # nested-scope renames, innermost last
        self.scope_count = 0

    # scopes (PTX ISA §4.4: a name declared in a { } block is visible there and in inner blocks)
    def resolve(self, text: str) -> str:
        for scope in reversed(self.scopes):
            if text in scope:
                return scope[text]
        return text

    def declare(self, text: str) -> str:
        if not self.scopes:
            return text
        return self.scopes[-1].setdefault(text, f"{text}${self.scope_count}")

    def _block_labels(self) -> list[str]:
        """Labels defined directly in the block starting at the current token (inner blocks skipped)."""
        depth, j, found = 0, self.i, []
        while j < len(self.toks):
            tok = self.toks[j]
            if tok.text == "{":
                depth += 1
            elif tok.text == "}":
                if depth == 0:
                    break
                depth -= 1
            elif (depth == 0 and tok.kind == "ident" and j + 1 < len(self.toks) and self.toks[j + 1].text == ":"
                  and (j == 0 or self.toks[j - 1].text in (";", "{", "}", ":") or self.toks[j - 1].line != tok.line)):
                found.append(tok.text)
            j += 1
        return found

    def skip_braced(self) -> None:
        """Skip a ``{ ... }`` group (the current token is its ``{``)."""
        self.expect("{")
        depth = 1
        while depth:
            tok = self.next()
            depth += {"{": 1, "}": -1}.get(tok.text, 0)

    # token helpers
    def peek(self, k: int = 0) -> Tok | None:
        try:
            return self.toks[self.i + k]      # i + k is never negative
        except IndexError:
            return None

    def next(self) -> Tok:
        tok = self.peek()
        if tok is None:
            raise PtxSyntaxError("unexpected end of PTX text")
        self.i += 1
        return tok

    def error(self, what: str, tok: Tok | None = None) -> PtxSyntaxError:
        tok = tok or self.peek()
        if tok is None:
            return PtxSyntaxError(f"end of text: {what}")
        return PtxSyntaxError(f"line {tok.line}: {what}, but got {tok.text!r}")

    def expect(self, text: str) -> Tok:
        tok = self.next()
        if tok.text != text:
            raise self.error(f"expects {text!r}", tok)
        return tok

    def accept(self, text: str) -> bool:
        tok = self.peek()
        if tok is not None and tok.text == text:
            self.i += 1
            return True
        return False

    def expect_int(self) -> int:
        tok = self.next()
        if tok.kind not in ("int", "hex", "bin"):
            raise self.error("expects an integer", tok)
        return parse_int(tok.text)

    def skip_line(self, line: int) -> None:
        while self.peek() is not None and self.peek().line == line:
            self.i += 1

    def adjacent(self) -> bool:
        """Whether the next token touches the previous one (``ld`` ``.global``)."""
        nxt = self.peek()
        return nxt is not None and self.i > 0 and nxt.start == self.toks[self.i - 1].end

    # module
    def module(self) -> Module:
        version, target, address_size = "", (), 64
        kernels: dict[str, Kernel] = {}
        variables: list[VarDecl] = []
        while self.peek() is not None:
            tok = self.next()
            if tok.text == ".version":
                version = self.next().text
            elif tok.text == ".target":
                names = [self.next().text]
                while self.accept(","):
                    names.append(self.next().text)
                target = tuple(names)
            elif tok.text == ".address_size":
                address_size = self.expect_int()
            elif tok.text == ".section":
                self.next()                               # the section name
                if self.peek() is not None and self.peek().text == "{":
                    self.skip_braced()
            elif tok.text in _SKIPPED_LINE_DIRECTIVES:
                self.skip_line(tok.line)
            elif tok.text in (".visible", ".weak", ".extern", ".common"):
                if tok.text == ".extern" and self.peek() and self.peek().text in _VAR_SPACES:
                    variables.append(self.var_decl(self.next(), extern=True))
                continue
            elif tok.text == ".entry":
                kernel = self.entry(tok.line)
                if kernel.name in kernels:
                    raise PtxSyntaxError(f"line {tok.line}: entry {kernel.name!r} defined twice")
                kernels[kernel.name] = kernel
            elif tok.text == ".func":
                raise PtxSyntaxError(f"line {tok.line}: .func (device functions) is not supported by the simulator")
            elif tok.text in _VAR_SPACES:
                variables.append(self.var_decl(tok))
            elif tok.text == ".pragma":
                self.next()
                self.expect(";")
            else:
                raise self.error("expects a module directive (.version, .target, .address_size, .entry, a variable)", tok)
        return Module(version, target, address_size, kernels, tuple(variables))

    def entry(self, line: int) -> Kernel:
        name = self.next()
        if name.kind != "ident":
            raise self.error("expects the entry name", name)
        params: list[ParamDecl] = []
        if self.accept("("):
            while not self.accept(")"):
                params.append(self.param())
                if not self.accept(","):
                    self.expect(")")
                    break
        directives: dict = {}
        while self.peek() is not None and self.peek().text != "{":
            tok = self.next()
            if tok.text == ".pragma":
                self.next()
                self.expect(";")
                continue
            if tok.text not in _ENTRY_DIRECTIVES:
                raise self.error("expects an entry directive (" + ", ".join(_ENTRY_DIRECTIVES) + ") or '{'", tok)
            values = []
            for k in range(_ENTRY_DIRECTIVES[tok.text]):
                if k and not self.accept(","):
                    break
                values.append(self.expect_int())
            directives[tok.text[1:]] = tuple(values) if tok.text != ".explicitcluster" else True
        self.expect("{")
        regs: list[RegDecl] = []
        variables: list[VarDecl] = []
        body: list = []
        self.block(regs, variables, body)
        return Kernel(name.text, tuple(params), directives, tuple(regs), tuple(variables), tuple(body), line)

    def param(self) -> ParamDecl:
        self.expect(".param")
        align, ptype, pointer = None, None, False
        while self.peek() is not None and self.peek().kind == "dot":
            tok = self.next()
            if tok.text == ".align":
                n = self.expect_int()
                if not pointer:            # `.ptr .space .align N`: the pointee's alignment, not the parameter's
                    align = n
            elif tok.text in (".ptr", ".global", ".shared", ".const", ".local"):
                pointer = pointer or tok.text == ".ptr"
                continue
            else:
                ptype = tok.text[1:]
        name = self.next()
        if ptype is None or name.kind != "ident":
            raise self.error("expects `.param .type name`", name)
        count = None
        if self.accept("["):
            count = self.expect_int()
            self.expect("]")
        return ParamDecl(name.text, ptype, align, count)

    def var_decl(self, space_tok: Tok, extern: bool = False) -> VarDecl:
        align, vtype = None, None
        while self.peek() is not None and self.peek().kind == "dot":
            tok = self.next()
            if tok.text == ".align":
                align = self.expect_int()
            elif tok.text in (".v2", ".v4", ".v8"):
                raise PtxSyntaxError(f"line {tok.line}: vector variables ({tok.text}) are not supported by the simulator")
            else:
                vtype = tok.text[1:]
        name = self.next()
        if vtype is None or name.kind != "ident":
            raise self.error(f"expects `{space_tok.text} [.align n] .type name`", name)
        count = None
        if self.accept("["):
            count = 0 if self.peek().text == "]" else self.expect_int()
            self.expect("]")
        init = None
        if self.accept("="):
            init = self.initializer()
        self.expect(";")
        return VarDecl(space_tok.text[1:], name.text, vtype, align, count, extern, init, space_tok.line)

    def initializer(self) -> tuple:
        values = []
        braced = self.accept("{")
        while True:
            neg = self.accept("-")
            tok = self.next()
            if tok.kind not in ("int", "hex", "bin"):
                raise self.error("expects an integer initializer", tok)
            values.append(-parse_int(tok.text) if neg else parse_int(tok.text))
            if not braced or not self.accept(","):
                break
        if braced:
            self.expect("}")
        return tuple(values)

    # body
    def block(self, regs: list, variables: list, body: list) -> None:
        while True:
            tok = self.peek()
            if tok is None:
                raise PtxSyntaxError("end of text inside an entry body: expects '}'")
            if tok.text == "}":
                self.i += 1
                return
            if tok.text == "{":
                self.i += 1
                self.scope_count += 1
                self.scopes.append({})
                for label in self._block_labels():
                    self.declare(label)
                try:
                    self.block(regs, variables, body)
                finally:
                    self.scopes.pop()
            elif tok.text == ".reg":
                self.i += 1
                regs.extend(self.reg_decl(tok.line))
            elif tok.text in _VAR_SPACES:
                self.i += 1
                variables.append(self._scoped_var(self.var_decl(tok)))
            elif tok.text == ".extern":
                self.i += 1
                variables.append(self._scoped_var(self.var_decl(self.next(), extern=True)))
            elif tok.text == ".pragma":
                self.i += 1
                self.next()
                self.expect(";")
            elif tok.text in _SKIPPED_LINE_DIRECTIVES:
                self.i += 1
                self.skip_line(tok.line)
            elif tok.kind == "ident" and getattr(self.peek(1), "text", None) == ":":
                if getattr(self.peek(2), "text", None) == ".branchtargets":
                    self.i += 3
                    body.append(self.branch_targets(tok))
                else:
                    self.i += 2
                    body.append(Label(self.resolve(tok.text) if self.scopes else tok.text, tok.line))
            elif tok.text == "@" or tok.kind == "ident":
                body.append(self.instruction())
            else:
                raise self.error("expects an instruction, a label, a declaration or '}'", tok)

    def branch_targets(self, name) -> BranchTargets:
        """The label list after ``name: .branchtargets`` (its names resolved in the current scope)."""
        labels = []
        while True:
            tok = self.next()
            if tok.kind != "ident":
                raise self.error("expects a label in a .branchtargets list", tok)
            labels.append(self.resolve(tok.text) if self.scopes else tok.text)
            if not self.accept(","):
                break
        self.expect(";")
        return BranchTargets(self.resolve(name.text) if self.scopes else name.text, tuple(labels), name.line)

    def _scoped_var(self, var: VarDecl) -> VarDecl:
        if not self.scopes:
            return var
        return VarDecl(var.space, self.declare(var.name), var.type, var.align, var.count, var.extern, var.init, var.line)

    def reg_decl(self, line: int) -> list[RegDecl]:
        tok = self.next()
        if tok.text in (".v2", ".v4", ".v8"):
            raise PtxSyntaxError(f"line {line}: vector registers ({tok.text}) are not supported by the simulator")
        if tok.kind != "dot":
            raise self.error("expects the register type", tok)
        rtype = tok.text[1:]
        out: list[RegDecl] = []
        while True:
            name = self.next()
            if name.kind != "ident":
                raise self.error("expects a register name", name)
            if self.accept("<"):
                count = self.expect_int()
                self.expect(">")
                out.extend(RegDecl(self.declare(f"{name.text}{k}"), rtype, line) for k in range(count))
            else:
                out.append(RegDecl(self.declare(name.text), rtype, line))
            if not self.accept(","):
                break
        self.expect(";")
        return out

    def instruction(self) -> Instr:
        first = self.peek()
        guard, neg = None, False
        if self.accept("@"):
            neg = self.accept("!")
            g = self.next()
            if g.kind != "ident":
                raise self.error("expects a predicate register after '@'", g)
            guard = Name(self.resolve(g.text))
        op = self.next()
        if op.kind != "ident":
            raise self.error("expects an opcode", op)
        opcode = op.text
        while self.adjacent() and self.peek().kind == "dot":
            opcode += self.next().text
        operands: list = []
        if not self.accept(";"):
            while True:
                operands.append(self.operand())
                if self.accept(";"):
                    break
                self.expect(",")
        end = self.toks[self.i - 1].end
        text = " ".join(self.src[first.start:end].split())
        return Instr(opcode, tuple(operands), guard, neg, first.line, text)

    def name(self) -> Name:
        tok = self.next()
        if tok.kind != "ident":
            raise self.error("expects a name", tok)
        text = self.resolve(tok.text)
        while self.adjacent() and self.peek().kind == "dot":        # %tid.x, %clusterid.y
            text += self.next().text
        return Name(text)

    def number(self, neg: bool = False) -> Imm:
        tok = self.next()
        sign = -1 if neg else 1
        if tok.kind == "fhex":
            if neg:
                raise self.error("expects no sign on a 0f/0d literal", tok)
            return Imm(int(tok.text[2:], 16), "f32" if tok.text[1] in "fF" else "f64")
        if tok.kind == "float":
            return Imm(sign * float(tok.text), "float")
        if tok.kind in ("int", "hex", "bin"):
            return Imm(sign * parse_int(tok.text), "int")
        raise self.error("expects a number", tok)

    def operand(self):
        tok = self.peek()
        if tok is None:
            raise self.error("expects an operand")
        if tok.text == "{":
            self.i += 1
            items = []
            while True:
                items.append(self.operand())
                if self.accept("}"):
                    return Vec(tuple(items))
                self.expect(",")
        if tok.text == "[":
            self.i += 1
            return self.address()
        if tok.text == "!":
            self.i += 1
            return Not(self.name())
        if tok.text == "-":
            self.i += 1
            return self.number(neg=True)
        if tok.kind in ("int", "hex", "bin", "float", "fhex"):
            return self.number()
        if tok.kind == "ident":
            name = self.name()
            if self.accept("|"):
                return Pair(name, self.name())
            if self.peek() is not None and self.peek().text in ("+", "-"):
                sign = 1 if self.next().text == "+" else -1
                return Name(name.text, sign * self.expect_int())
            return name
        raise self.error("expects an operand", tok)

    def address(self) -> Addr:
        base: Name | None = None
        offset = 0
        sign = 1
        while True:
            tok = self.peek()
            if tok is None:
                raise self.error("expects ']'")
            if tok.kind == "ident":
                if base is not None or sign < 0:
                    raise self.error("expects at most one register or variable in an address", tok)
                base = self.name()
            elif tok.kind in ("int", "hex", "bin"):
                self.i += 1
                offset += sign * parse_int(tok.text)
            else:
                raise self.error("expects a register, variable or integer in an address", tok)
            nxt = self.next()
            if nxt.text == "]":
                return Addr(base, offset)
            if nxt.text == "+":
                sign = -1 if self.accept("-") else 1
            elif nxt.text == "-":
                sign = -1
            elif nxt.text == "," and base is not None:     # [tensorMap, {c0, ..}] of cp.async.bulk.tensor
                from ptxsim.ptx.syntax import TensorRef
                coords = self.operand()
                self.expect("]")
                return TensorRef(Addr(base, offset), coords)
            else:
                raise self.error("expects '+', '-' or ']' in an address", nxt)


def parse_ptx(text: str) -> Module:
    """Parse a PTX module; raise :class:`PtxSyntaxError` naming the line on anything unknown."""
    return _Parser(text).module()
