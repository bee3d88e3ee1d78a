"""VSIM FILTER expressions: Redis's vector-sets expr.c and its JSON field reader.

`compile_expr(text)` gives a program (postfix tokens) or raises `ExprError`
with the offset Redis reports the error "near"; `run(program, json)` says
whether a node's JSON attributes pass. The tokenizer, the operator table and
the shunting-yard pass follow expr.c step for step, quirks included (tokens
carry no offset, so errors found after tokenizing point at the start).
Selectors read
top-level fields only, with fastjson.c's subset of JSON: strings (escapes
\\n \\r \\t \\\\ \\" decoded, others kept as the escaped char), numbers,
true/false (1/0), null, flat arrays; anything else makes the node fail.
"""

from __future__ import annotations

import math
import re
from typing import Any

from rillet.engine.doubles import strtod

NUM, STR, TUPLE, SELECTOR, OP, NULL, EOF = 1, 2, 3, 4, 5, 6, 0

OPAREN, CPAREN, NOT, POW, MULT, DIV, MOD, SUM, DIFF = 0, 1, 2, 3, 4, 5, 6, 7, 8
GT, GTE, LT, LTE, EQ, NEQ, IN, AND, OR = 9, 10, 11, 12, 13, 14, 15, 16, 17

# (name, opcode, precedence, arity), in expr.c's table order.
_OPTABLE = (
    (b"(", OPAREN, 7, 0), (b")", CPAREN, 7, 0), (b"!", NOT, 6, 1), (b"not", NOT, 6, 1),
    (b"**", POW, 5, 2), (b"*", MULT, 4, 2), (b"/", DIV, 4, 2), (b"%", MOD, 4, 2),
    (b"+", SUM, 3, 2), (b"-", DIFF, 3, 2), (b">", GT, 2, 2), (b">=", GTE, 2, 2),
    (b"<", LT, 2, 2), (b"<=", LTE, 2, 2), (b"==", EQ, 2, 2), (b"!=", NEQ, 2, 2),
    (b"in", IN, 2, 2), (b"and", AND, 1, 2), (b"&&", AND, 1, 2), (b"or", OR, 0, 2),
    (b"||", OR, 0, 2),
)
_PREC = {op: prec for _, op, prec, _ in _OPTABLE}
_ARITY = {op: arity for _, op, _, arity in _OPTABLE}
_OP_CHARS = frozenset(b"+-*%/!()<>=|&")
_SPACES = frozenset(b" \t\n\v\f\r")
_DECIMAL = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")


class ExprError(Exception):
    def __init__(self, pos: int) -> None:
        super().__init__(pos)
        self.pos = pos


class Token:
    __slots__ = ("kind", "value")

    def __init__(self, kind: int, value: Any = None) -> None:
        self.kind = kind
        # Its type follows `kind` (NUM: float; STR/SELECTOR: bytes; TUPLE: list; OP: opcode).
        self.value: Any = value


def _isalpha(c: int) -> bool:
    return 65 <= c <= 90 or 97 <= c <= 122


def _isdigit(c: int) -> bool:
    return 48 <= c <= 57


def _selector_char(c: int) -> bool:
    return _isalpha(c) or _isdigit(c) or c in (95, 45)


def _c_strtod_whole(text: bytes) -> float | None:
    """strtod(text) if it consumes all of `text`, else None (expr.c's number checks)."""
    if not text:
        return None
    value, used = strtod(text)
    return value if used == len(text) else None


class _Lexer:
    def __init__(self, text: bytes) -> None:
        self.s = text
        self.p = 0

    def at(self, i: int = 0) -> int:
        j = self.p + i
        return self.s[j] if j < len(self.s) else 0

    def spaces(self) -> None:
        while self.at() and self.at() in _SPACES:
            self.p += 1

    def number(self) -> Token | None:
        start = self.p
        while True:
            c = self.at()
            if _isdigit(c) or c in (46, 101, 69) or (self.p == start and c == 45):
                if self.p - start >= 255:
                    return None
                self.p += 1
                continue
            break
        value = _c_strtod_whole(self.s[start:self.p])
        return None if value is None else Token(NUM, value)

    def string(self) -> Token | None:
        quote = self.at()
        self.p += 1
        start = self.p
        while self.at():
            if self.at() == 92 and self.at(1):
                self.p += 2
                continue
            if self.at() == quote:
                tok = Token(STR, self.s[start:self.p])
                self.p += 1
                return tok
            self.p += 1
        return None

    def selector(self) -> Token:
        self.p += 1
        start = self.p
        while self.at() and _selector_char(self.at()):
            self.p += 1
        return Token(SELECTOR, self.s[start:self.p])

    def tuple(self) -> Token | None:
        self.p += 1
        items: list[Token] = []
        while True:
            self.spaces()
            if self.at() == 93:
                self.p += 1
                return Token(TUPLE, items)
            c = self.at()
            if _isdigit(c) or c == 45:
                item = self.number()
            elif c in (34, 39):
                item = self.string()
            else:
                return None
            if item is None:
                return None
            items.append(item)
            self.spaces()
            if self.at() == 93:
                self.p += 1
                return Token(TUPLE, items)
            if self.at() != 44:
                return None
            self.p += 1

    def operator(self) -> Token | None:
        start = self.p
        while self.at() and (_isalpha(self.at()) or self.at() in _OP_CHARS):
            self.p += 1
        run = self.s[start:self.p]
        if run == b"null":
            return Token(NULL)
        best, opcode = 0, None
        for name, op, _, _ in _OPTABLE:
            if len(name) <= len(run) and run.startswith(name) and len(name) > best:
                best, opcode = len(name), op
        if not best:
            return None
        self.p = start + best
        return Token(OP, opcode)


def _tokenize(text: bytes) -> list[Token]:
    lex = _Lexer(text)
    tokens: list[Token] = []
    while True:
        lex.spaces()
        last = tokens[-1] if tokens else None
        minus_is_number = last is None or (last.kind == OP and last.value != CPAREN)
        c = lex.at()
        current: Token | None = None
        if lex.p >= len(text) or c == 0:
            current = Token(EOF)
        elif _isdigit(c) or (minus_is_number and c == 45 and _isdigit(lex.at(1))):
            current = lex.number()
        elif c in (34, 39):
            current = lex.string()
        elif c == 46 and _selector_char(lex.at(1)):
            current = lex.selector()
        elif c == 91:
            current = lex.tuple()
        elif _isalpha(c) or c in _OP_CHARS:
            current = lex.operator()
        if current is None:
            raise ExprError(lex.p)
        tokens.append(current)
        if current.kind == EOF:
            return tokens


def compile_expr(text: bytes) -> list[Token]:
    """exprCompile: the postfix program, or ExprError(position)."""
    if b"\x00" in text:
        text = text[:text.index(b"\x00")]  # C sees the string up to its first NUL
    tokens = _tokenize(text)
    program: list[Token] = []
    ops: list[Token] = []
    items = 0

    def emit(op: Token) -> None:
        nonlocal items
        arity = _ARITY[op.value]
        if items < arity:
            raise ExprError(0)
        program.append(op)
        items = items - arity + 1

    for tok in tokens:
        if tok.kind == EOF:
            break
        if tok.kind != OP:  # a value: number, string, tuple, selector, null
            program.append(tok)
            items += 1
            continue
        if tok.value == OPAREN:
            ops.append(tok)
            continue
        if tok.value == CPAREN:
            while True:
                if not ops:
                    raise ExprError(0)
                top = ops.pop()
                if top.value == OPAREN:
                    break
                emit(top)
            continue
        prec = _PREC[tok.value]
        while ops and ops[-1].value != OPAREN:
            top_prec = _PREC[ops[-1].value]
            if top_prec < prec or (tok.value == POW and top_prec <= prec):
                break
            emit(ops.pop())
        ops.append(tok)
    while ops:
        top = ops.pop()
        if top.value == OPAREN:
            raise ExprError(0)
        emit(top)
    if items != 1:
        raise ExprError(0)
    return program


# --- evaluation ------------------------------------------------------------------------------

def _num(t: Token) -> float:
    if t.kind == NUM:
        return t.value
    if t.kind == STR and len(t.value) < 256:
        text: bytes = t.value
        if b"\x00" in text:
            text = text[:text.index(b"\x00")]
        value, used = strtod(text)
        return value if used == len(text) else 0.0
    return 0.0


def _bool(t: Token) -> bool:
    if t.kind == NUM:
        return t.value != 0
    if t.kind == STR and not t.value:
        return False
    return t.kind != NULL


def _equal(a: Token, b: Token) -> bool:
    if a.kind == STR and b.kind == STR:
        return a.value == b.value
    if a.kind == NUM and b.kind == NUM:
        return a.value == b.value
    if a.kind == NULL or b.kind == NULL:
        return a.kind == b.kind
    return _num(a) == _num(b)


def _div(a: float, b: float) -> float:
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _fmod(a: float, b: float) -> float:
    try:
        return math.fmod(a, b)
    except ValueError:
        return math.nan


def _pow(a: float, b: float) -> float:
    try:
        return math.pow(a, b)
    except OverflowError:
        return math.inf if a > 0 or float(b).is_integer() and int(b) % 2 == 0 else -math.inf
    except ValueError:
        if a == 0:
            return math.inf
        return math.nan


def run(program: list[Token], json: bytes) -> bool:
    """exprRun: True if the attributes `json` pass."""
    stack: list[Token] = []
    for t in program:
        if t.kind == SELECTOR:
            value = extract_field(json, t.value) if t.value else None
            if value is None:
                return False
            stack.append(value)
            continue
        if t.kind != OP:
            stack.append(t)
            continue
        op = t.value
        b = stack.pop()
        a: Any = stack.pop() if _ARITY[op] == 2 else None  # (a Token but for NOT)
        if op == NOT:
            r = 0.0 if _bool(b) else 1.0
        elif op == AND:
            r = 1.0 if _bool(a) and _bool(b) else 0.0
        elif op == OR:
            r = 1.0 if _bool(a) or _bool(b) else 0.0
        elif op == EQ:
            r = 1.0 if _equal(a, b) else 0.0
        elif op == NEQ:
            r = 0.0 if _equal(a, b) else 1.0
        elif op == IN:
            r = 1.0 if b.kind == TUPLE and any(_equal(a, x) for x in b.value) else 0.0
        else:
            x, y = _num(a), _num(b)
            if op == POW:
                r = _pow(x, y)
            elif op == MULT:
                r = x * y
            elif op == DIV:
                r = _div(x, y)
            elif op == MOD:
                r = _fmod(x, y)
            elif op == SUM:
                r = x + y
            elif op == DIFF:
                r = x - y
            elif op == GT:
                r = 1.0 if x > y else 0.0
            elif op == GTE:
                r = 1.0 if x >= y else 0.0
            elif op == LT:
                r = 1.0 if x < y else 0.0
            else:
                r = 1.0 if x <= y else 0.0
        stack.append(Token(NUM, r))
    return bool(stack) and _bool(stack.pop())


# --- fastjson.c ------------------------------------------------------------------------------

_JSON_NUM = frozenset(b"0123456789+-.eE")


def _skip_ws(s: bytes, p: int) -> int:
    n = len(s)
    while p < n and s[p] in _SPACES:
        p += 1
    return p


def _skip_string(s: bytes, p: int) -> int:
    """Past the string at p, or -1."""
    n = len(s)
    if p >= n or s[p] != 34:
        return -1
    p += 1
    while p < n:
        if s[p] == 92:
            p += 2
            continue
        if s[p] == 34:
            return p + 1
        p += 1
    return -1


def _skip_bracketed(s: bytes, p: int, opener: int, closer: int) -> int:
    depth = 1
    p += 1
    n = len(s)
    while p < n and depth > 0:
        c = s[p]
        if c == 34:
            p = _skip_string(s, p)
            if p < 0:
                return -1
            continue
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
        p += 1
    return p if depth == 0 else -1


def _skip_value(s: bytes, p: int) -> int:
    p = _skip_ws(s, p)
    if p >= len(s):
        return -1
    c = s[p]
    if c == 34:
        return _skip_string(s, p)
    if c == 123:
        return _skip_bracketed(s, p, 123, 125)
    if c == 91:
        return _skip_bracketed(s, p, 91, 93)
    for lit in (b"true", b"false", b"null"):
        if c == lit[0]:
            return p + len(lit) if s.startswith(lit, p) else -1
    start = p
    while p < len(s) and s[p] in _JSON_NUM:
        p += 1
    return p if p > start else -1


_ESCAPES = {110: 10, 114: 13, 116: 9, 92: 92, 34: 34}


def _parse_string(s: bytes, p: int) -> tuple[Token, int] | None:
    n = len(s)
    q = p + 1
    out = bytearray()
    while q < n:
        c = s[q]
        if c == 92:
            if q + 1 >= n:
                return None
            out.append(_ESCAPES.get(s[q + 1], s[q + 1]))
            q += 2
            continue
        if c == 34:
            return Token(STR, bytes(out)), q + 1
        out.append(c)
        q += 1
    return None


def _parse_value(s: bytes, p: int) -> tuple[Token, int] | None:
    p = _skip_ws(s, p)
    n = len(s)
    if p >= n:
        return None
    c = s[p]
    if c == 34:
        return _parse_string(s, p)
    if c == 91:
        p = _skip_ws(s, p + 1)
        items: list[Token] = []
        if p < n and s[p] == 93:
            return Token(TUPLE, items), p + 1
        while True:
            parsed = _parse_value(s, p)
            if parsed is None:
                return None
            items.append(parsed[0])
            p = _skip_ws(s, parsed[1])
            if p >= n:
                return None
            if s[p] == 44:
                p = _skip_ws(s, p + 1)
                continue
            if s[p] == 93:
                return Token(TUPLE, items), p + 1
            return None
    for lit, tok in ((b"true", Token(NUM, 1.0)), (b"false", Token(NUM, 0.0)), (b"null", Token(NULL))):
        if c == lit[0]:
            end = p + len(lit)
            if not s.startswith(lit, p):
                return None
            if end < n and s[end] not in _SPACES and s[end] not in b",]}":
                return None
            return tok, end
    if _isdigit(c) or c in (45, 43):
        start = p
        while p < n and p - start < 255 and s[p] in _JSON_NUM:
            p += 1
        value = _c_strtod_whole(s[start:p])
        if value is None:
            return None
        return Token(NUM, value), p
    return None


def extract_field(json: bytes, field: bytes) -> Token | None:
    """jsonExtractField: the top-level `field` of the JSON object as a token, or None."""
    s = json
    n = len(s)
    p = _skip_ws(s, 0)
    if p >= n or s[p] != 123:
        return None
    p += 1
    while True:
        p = _skip_ws(s, p)
        if p >= n or s[p] == 125 or s[p] != 34:
            return None
        key_end = _skip_string(s, p)
        if key_end < 0:
            return None
        match = s[p + 1:key_end - 1] == field
        p = _skip_ws(s, key_end)
        if p >= n or s[p] != 58:
            return None
        p = _skip_ws(s, p + 1)
        if p >= n:
            return None
        if match:
            parsed = _parse_value(s, p)
            return None if parsed is None else parsed[0]
        p = _skip_value(s, p)
        if p < 0:
            return None
        p = _skip_ws(s, p)
        if p >= n or s[p] != 44:
            return None
        p += 1
