"""Lua scripts and function libraries for the differential command fuzzer.

The scripts call the fuzzer's own generated commands through redis.call and
redis.pcall (passed as ARGV, or written into the script as literals), then return
what came back, a Lua-side description of it (type, table shape, ok/err/double/map
fields), or one of a vocabulary of return values that exercise Redis's Lua-to-reply
conversions: numbers with fractions (truncated), booleans, nil, nested tables, tables
with holes, {ok=}, {err=}, redis.status_reply/error_reply, RESP3's {double=},
{map=}, {set=}. Some fail on purpose: Lua errors, error() with a string or a table,
compile errors, writes from a read-only script, arguments that are not strings.

Everything here is deterministic: scripts that read the clock or random numbers are
not generated, and what a script calls is drawn from the generator's differential
pool by a filter the test gives (the commands whose replies it would normalise are
left out: inside a script their reply is the script's).
"""

from __future__ import annotations

import hashlib
import random
import re

# A Lua function that describes a value as a string: the conversions of a reply to Lua
# values (RESP2 and RESP3) become visible in the script's reply. pairs() is only used
# through `sorted_pairs`, so the description does not depend on a table's hash order
# (nor on tables' addresses: keys that are tables are described too).
DESCRIBE = """local d
local function sorted_pairs(t, with_values)
  local ks = {}
  for k, v in pairs(t) do ks[#ks + 1] = d(k) .. (with_values and ('=>' .. d(v)) or '') end
  table.sort(ks)
  return table.concat(ks, ',')
end
d = function(v)
  local t = type(v)
  if t ~= 'table' then return t .. ':' .. tostring(v) end
  if v.ok then return 'ok:' .. tostring(v.ok) end
  if v.err then return 'err:' .. tostring(v.err) end
  if v.double then return 'double:' .. tostring(v.double) end
  if v.big_number then return 'big:' .. tostring(v.big_number) end
  if v.map then return 'map{' .. sorted_pairs(v.map, true) .. '}' end
  if v.set then return 'set{' .. sorted_pairs(v.set, false) .. '}' end
  local parts = {}
  for i = 1, #v do parts[i] = d(v[i]) end
  return '[' .. table.concat(parts, ' ') .. ']#' .. #v
end
"""

# Return values: Redis's conversions of Lua values to replies (script_lua.c).
RETURNS = [
    "1", "-7", "0", "3.99", "-3.99", "0.5", "-0.5", "2^53", "2^31", "1e15", "'hello'", "''",
    "true", "false", "nil", "{}", "{1, 'two', {3, 'four'}, false, 5}", "{1, nil, 3}",
    "{1, {2, {3, {4, {5}}}}}", "{'a', 1.5, -2.25, true}", "{true, false}",
    "{foo='bar'}", "{1, 2, foo='bar'}", "{ok='FINE'}", "{ok=''}", "{err='MYERR failed'}",
    "{err='no code'}", "{err=''}", "{1, {err='INNER in an array'}, 3}", "{1, {ok='INNER'}}",
    "redis.status_reply('STATUS')", "redis.status_reply('')",
    "redis.error_reply('My Error')", "redis.error_reply('-CODE with code')",
    "redis.error_reply('nospace')", "redis.error_reply('')",
    # Not {double=-0.0}: rillet answers 0 (docs/compat.md, Scripting).
    "{double=3.5}", "{double=2}", "{double=0.1}", "{double=1/0}", "{map={a=1}}", "0/0", "2^63",
    "{map={a={1, 2}}}", "{set={x=true}}", "{big_number='12345678901234567890'}",
    "{verbatim_string={format='txt', string='hi'}}",
    "redis.sha1hex('')", "redis.sha1hex('abc')", "tostring(1/3)", "tostring(2^63)",
    "tostring(-0.0)", "tostring(1e100)", "string.format('%.17g', 0.1)", "#KEYS", "#ARGV",
    "KEYS[1]", "ARGV[1]", "{KEYS[1], ARGV[1], ARGV[2]}", "type(ARGV[1])", "tonumber('0x10')",
    "tonumber('1e3')", "tonumber('x')", "math.floor(-2.5)", "math.huge", "-math.huge",
    "cjson.encode({1, 2, 'x'})", "cjson.encode({a=1})", "cjson.decode('[1,2.5,\"x\"]')",
    "bit.band(0xff, 0x0f)", "bit.tohex(65535)", "redis.REPL_ALL", "redis.LOG_WARNING",
    "string.rep('ab', 3)", "('x'):byte()", "select('#', 1, nil, 3)",
    # Numbers as command arguments (luaArgsToRedisArgv: integers, else fpconv_dtoa).
    "redis.call('echo', 0.1 + 0.2)", "redis.call('echo', 1e-7)", "redis.call('echo', 2^63)",
    "redis.call('echo', 0/0)", "redis.call('echo', -0.0)", "redis.call('echo', 1/3)",
    "redis.call('incrbyfloat', 'nokey', 0.1)", "redis.pcall('incrby', 'nokey', 1.5)",
]

# Scripts that fail: Lua errors, errors raised from Lua, compile errors, bad calls.
FAILING = [
    "return nosuchglobal",
    "nosuchglobal = 1",
    "return nil + 1",
    "error('boom')",
    "error({err='CUSTOM raised'})",
    "error({err='nocode'})",
    "error(42)",
    "error()",
    "return redis.call()",
    "return redis.pcall()",
    "return redis.call('nosuch')",
    "return redis.pcall('nosuch', 'a')",
    "return redis.call('get')",
    "return redis.call('get', {})",
    "return redis.call('get', 1.5)",
    "return redis.call('set', 'k1', 3.25, 'px', 100000)",
    "return redis.call('get', nil)",
    "return redis.call('get', true)",
    "return redis.call('eval', 'return 1', 0)",
    "return redis.call('multi')",
    "return redis.pcall('subscribe', 'ch')",
    # Not `return redis.setresp(4)`: rillet's Lua-written helpers lose the line of a
    # tail call (docs/compat.md, Scripting).
    "local r = redis.setresp(4) return r",
    "local r = redis.setresp() return r",
    "local r = redis.setresp('3') return redis.call('get', 'nokey')",
    "local r = redis.sha1hex() return r",
    "local r = redis.log(99, 'x') return r",
    "local r = redis.set_repl(7) return r",
    "local r = redis.acl_check_cmd('nosuch') return r",
    "return redis.acl_check_cmd('get', 'k')",
    "return {pcall(redis.setresp, 4)}",
    "return redis.status_reply()",
    "return redis.error_reply(1)",
    "return redis.status_reply('a', 'b')",
    "return 1 +",
    "return 'unfinished",
    "local t = {} t[nil] = 1",
    "return string.rep('x', -1) .. nil",
    "return redis.call('incr', 's2')",
    "return redis.pcall('incr', 's2')",
    "local r = redis.pcall('incr', 's2') return r.err",
    "return {redis.pcall('incr', 's2')}",
    "return {pcall(redis.call, 'incr', 's2')}",
    "local ok, e = pcall(redis.call, 'incr', 's2') return {tostring(ok), type(e), e.err}",
    "local ok, e = pcall(error, 'x') return {tostring(ok), e}",
    "return redis.call('xadd', 'x1', '1-1', 'f', 'v')",
]

# Bad arguments to redis.call: never in a function (see ScriptGenerator.script).
BAD_ARGUMENTS = ("{}", "nil", "true")
FAILING_FUNCTION_SAFE = [body for body in FAILING
                         if not any(f"'get', {bad})" in body for bad in BAD_ARGUMENTS)]

SHEBANGS = ["#!lua\n", "#!lua flags=no-writes\n", "#!lua flags=allow-oom,no-cluster\n",
            "#!lua flags=allow-stale\n", "#!lua flags=bogus\n", "#!lua name=x\n", "#!luax\n",
            "#!lua flags=no-writes,allow-cross-slot-keys\n"]


def lua_string(raw: bytes) -> str:
    """A Lua string literal for `raw` (any bytes)."""
    out = []
    for byte in raw:
        ch = chr(byte)
        if byte < 128 and (ch.isalnum() or ch in " _-+*.,:;/|<>=?!@#$%^&()[]{}~`"):
            out.append(ch)
        else:  # three digits: a shorter decimal escape would take a digit after it
            out.append(f"\\{byte:03d}")
    return "'" + "".join(out) + "'"


_NUMBER = re.compile(rb"-?\d{1,20}(\.\d{1,20})?([eE][-+]?\d{1,3})?")


def lua_word(raw: bytes, rng: random.Random) -> str:
    """A command word in a script: a string literal, or now and then (when it reads as
    one) a Lua number, which redis.call turns back into a string by Redis's rules."""
    if _NUMBER.fullmatch(raw) and rng.random() < 0.4:
        return raw.decode() if rng.random() < 0.7 else f"({raw.decode()} + 0.5 - 0.5)"
    return lua_string(raw)


def sha1(source: bytes) -> bytes:
    return hashlib.sha1(source).hexdigest().encode()


class ScriptGenerator:
    """EVAL/EVALSHA/SCRIPT/FCALL/FUNCTION commands around commands `inner` draws."""

    def __init__(self, rng: random.Random, inner) -> None:
        self.rng = rng
        self.inner = inner  # () -> argv of a command a script may call
        self.sources: list[bytes] = []  # scripts this run sent: EVALSHA finds them
        self.libraries: dict[bytes, list[bytes]] = {}  # library name -> function names

    # -- scripts ------------------------------------------------------------------------

    def call_body(self, args: str) -> str:
        """A body that runs one command (its words the Lua expression list `args`)."""
        rng = self.rng
        kind = rng.choice(["call", "pcall", "pcall", "describe", "describe", "protect", "twice"])
        resp = rng.choice(["", "", "redis.setresp(3) ", "redis.setresp(2) "])
        if kind == "call":
            return f"{resp}return redis.call({args})"
        if kind == "pcall":
            return f"{resp}return redis.pcall({args})"
        if kind == "describe":
            return f"{DESCRIBE}{resp}return d(redis.pcall({args}))"
        if kind == "protect":
            return (f"{resp}local ok, r = pcall(redis.call, {args})\n"
                    "if ok then return {1, r} end\n"
                    "return {0, type(r), type(r) == 'table' and r.err or tostring(r)}")
        return f"{resp}local a = redis.pcall({args})\nreturn {{a, redis.pcall({args})}}"

    def script(self, keys_name: str = "KEYS", args_name: str = "ARGV", *, function: bool = False
               ) -> tuple[str, list[bytes], list[bytes]]:
        """Lua source, its keys and its arguments. A function's body never passes redis.call
        an argument that is not a string or a number: Redis 8.2.3 crashes in the next
        FUNCTION FLUSH after a function did (freeClient from functionsLibCtxClearCurrent)."""
        rng = self.rng
        r = rng.random()
        if r < 0.45:  # one generated command, its words passed as ARGV
            argv = self.inner()
            if rng.random() < 0.5 and len(argv) > 1 and not function:
                body = self.call_body(f"{args_name}[1], {keys_name}[1], unpack({args_name}, 2)")
                return body, [argv[1]], [argv[0], *argv[2:]]
            return self.call_body(f"unpack({args_name})"), [], argv
        if r < 0.6:  # generated commands written into the script
            calls = [self.inner() for _ in range(rng.choice([1, 1, 2, 3]))]
            lines = ["local r = {}"]
            for n, argv in enumerate(calls, 1):
                fn = rng.choice(["call", "pcall", "pcall"]) if n == len(calls) else "pcall"
                lines.append(f"r[{n}] = redis.{fn}({', '.join(lua_word(a, rng) for a in argv)})")
            lines.append(rng.choice(["return r", "return r[#r]", "return #r"]))
            return "\n".join(lines), [], []
        if r < 0.85:
            body = "return " + rng.choice(RETURNS)
            if rng.random() < 0.2:
                body = "redis.setresp(3) " + body
        else:
            body = rng.choice(FAILING_FUNCTION_SAFE if function else FAILING)
        keys = [rng.choice([b"s1", b"k", b"x1"]) for _ in range(rng.choice([0, 0, 1, 2]))]
        args = [rng.choice([b"a1", b"2", b"", b"1.5"]) for _ in range(rng.choice([0, 1, 2, 3]))]
        return body, keys, args

    def shebang(self) -> str:
        return self.rng.choice(SHEBANGS) if self.rng.random() < 0.25 else ""

    def numkeys(self, keys: list[bytes], args: list[bytes]) -> list[bytes]:
        """numkeys and the keys and arguments; now and then a numkeys that does not fit."""
        rng = self.rng
        n = b"%d" % len(keys)
        if rng.random() < 0.05:
            n = rng.choice([b"-1", b"x", b"%d" % (len(keys) + len(args) + 1), b"2147483648"])
        return [n, *keys, *args]

    def eval(self, name: bytes) -> list[bytes]:
        body, keys, args = self.script()
        source = (self.shebang() + body).encode()
        self.sources.append(source)
        return [name, source, *self.numkeys(keys, args)]

    def sha(self) -> bytes:
        rng = self.rng
        r = rng.random()
        if self.sources and r < 0.8:
            return sha1(rng.choice(self.sources))
        if r < 0.9:
            return sha1(b"return 'never loaded'")
        return rng.choice([b"", b"x", b"0" * 39, b"0" * 41, sha1(b"x").upper()])

    def evalsha(self, name: bytes) -> list[bytes]:
        _, keys, args = self.script()
        return [name, self.sha(), *self.numkeys(keys, args)]

    def script_load(self) -> list[bytes]:
        body, _, _ = self.script()
        source = (self.shebang() + body).encode()
        self.sources.append(source)
        return [b"SCRIPT", b"LOAD", source]

    def script_exists(self) -> list[bytes]:
        return [b"SCRIPT", b"EXISTS", *[self.sha() for _ in range(self.rng.choice([1, 2, 3]))]]

    # -- functions ----------------------------------------------------------------------

    def function_load(self) -> list[bytes]:
        rng = self.rng
        lib = rng.choice([b"lib1", b"lib2", b"lib3"])
        functions = []
        lines = []
        for n in range(rng.choice([1, 1, 2])):
            fname = rng.choice([b"f1", b"f2", b"f3", b"f4"]) if n == 0 else lib + b"_ro"
            body, _, _ = self.script("keys", "args", function=True)
            callback = f"function(keys, args)\n{body}\nend"
            if rng.random() < 0.4:
                flags = rng.choice(["{}", "{'no-writes'}", "{'allow-oom'}", "{'bogus'}"])
                lines.append(f"redis.register_function{{function_name='{fname.decode()}', "
                             f"callback={callback}, flags={flags}}}")
            else:
                lines.append(f"redis.register_function('{fname.decode()}', {callback})")
            functions.append(fname)
        header = rng.choice([f"#!lua name={lib.decode()}\n"] * 8 + ["#!lua\n", "", "#!lua name=\n"])
        code = (header + "\n".join(lines)).encode()
        replace = [b"REPLACE"] if rng.random() < 0.5 else []
        self.libraries[lib] = functions
        return [b"FUNCTION", b"LOAD", *replace, code]

    def fcall(self, name: bytes) -> list[bytes]:
        rng = self.rng
        names = [f for fs in self.libraries.values() for f in fs]
        fname = rng.choice(names) if names and rng.random() < 0.85 else rng.choice(
            [b"f1", b"nosuch", b""])
        _, keys, args = self.script()
        if rng.random() < 0.5:
            argv = self.inner()
            keys, args = ([argv[1]], [argv[0], *argv[2:]]) if len(argv) > 1 else ([], argv)
        return [name, fname, *self.numkeys(keys, args)]

    def library_name(self) -> bytes:
        return self.rng.choice([b"lib1", b"lib2", b"lib3", b"nolib", b"lib*", b"*"])
