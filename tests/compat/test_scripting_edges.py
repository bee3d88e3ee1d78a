"""Scripts' edge cases against Redis 8.2.3, raw reply bytes: tables returned with
metatables or holding themselves, the bundled libraries on circular tables,
cjson.null, cjson.encode_keep_buffer, cmsgpack.unpack_one/unpack_limit, errorstats
for scripts' errors, no-writes scripts and redis.pcall's arguments (issue 29)."""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.needs_redis


@pytest.fixture
def deep_replies():
    """Room for the test's reader to walk a reply ~8000 arrays deep."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(old + 20000)
    yield
    sys.setrecursionlimit(old)


def test_returned_tables_are_read_raw(pair8):
    """luaReplyToRedisReply reads a returned table with rawget: no __index runs, so one
    that raises or calls redis changes nothing (rillet answered "internal error", and
    ran the redis.call after the script had ended)."""
    for body in ["return _G",
                 "return {_G}",
                 "return setmetatable({}, {__index=function() error('boom') end})",
                 "return setmetatable({}, {__index=function() return redis.call('ping') end})",
                 "return setmetatable({}, {__index=function() return redis.call('set', 'x', 'y') end})",
                 "return setmetatable({1, 2}, {__index=function(t, k) return k end})",
                 "return setmetatable({ok='FINE'}, {__index=function() error('boom') end})",
                 "return setmetatable({}, {__index={err='MYERR not raw'}})",
                 "return {map=setmetatable({a=1}, {__index=function() error('boom') end})}"]:
        pair8.check("EVAL", body, "0")
    pair8.check("EXISTS", "x")
    # Long arrays (their items come over in one piece up to 4000, one by one beyond).
    for n in (4000, 4001, 9000):
        pair8.check("EVAL", f"local t = {{}} for i = 1, {n} do t[i] = (i % 3 == 0) and {{i, 'x'}} or i end "
                    "t[#t + 2] = 'after a hole' return setmetatable(t, {__index=function() error('boom') end})",
                    "0")


@pytest.mark.parametrize("protocol", [2, 3])
def test_a_reply_that_holds_itself_reaches_the_lua_stack_limit(pair8, protocol, deep_replies):
    """A table that holds itself: nested replies until Lua's stack (8000 slots) is
    full, then "reached lua stack limit" in place of each deeper value; an array
    takes a slot a level, a map's key four and its value three, a set's member three."""
    if protocol == 3:
        pair8.check("HELLO", "3", normalise=lambda raw: b"")
    chain = ("local function chain(n) local t = {} local c = t for i = 1, n do c[1] = {} c = c[1] end"
             " c[1] = 'end' return t end ")
    for body in ["local t = {} t[1] = t return t",
                 "local t = {} t[1] = t t[2] = 'x' return t",
                 "local t = {} t.a = {map=t} return {map=t}",
                 "local t = {} t[1] = {map={k=t}} return t",
                 "local t = {} t[1] = {set={[t]=true}} return t",
                 "local t = {} t[1] = {err='X y'} t[2] = t t[3] = {double=1.5} return t",
                 chain + "return chain(3000)", chain + "return chain(7993)",
                 chain + "return chain(7994)"]:
        pair8.check("EVAL", body, "0")


def test_cmsgpack_of_a_circular_table(pair8):
    """lua_cmsgpack packs tables 16 levels deep, then nil (rillet hit Python's
    recursion limit)."""
    for body in ["local t = {} t[1] = t return cmsgpack.pack(t)",
                 "local t = {} t.a = t return cmsgpack.pack(t)",
                 "local t = {} t[1] = {t, 'x'} return cmsgpack.pack(t, 1)",
                 "local t = {} t[1] = t return #cmsgpack.unpack(cmsgpack.pack(t))"]:
        pair8.check("EVAL", body, "0")


def test_library_errors_on_circular_tables_and_their_position(pair8):
    """cjson refuses the 1001st nested table; a library's error names the calling line
    as luaL_error does ("user_script:1: "), none when pcall (a C function) calls it,
    and pcall gives its message as a string."""
    for body in ["local t = {} t[1] = t return cjson.encode(t)",
                 "local t = {} t.a = t return cjson.encode(t)",
                 "local t = {} local c = t for i = 1, 999 do c[1] = {} c = c[1] end return cjson.encode(t)",
                 "local t = {} local c = t for i = 1, 1000 do c[1] = {} c = c[1] end return cjson.encode(t)",
                 "return cjson.encode(function() end)",
                 "local s = cjson.encode(function() end) return s",
                 "return cmsgpack.unpack('\\193')",
                 "local ok, e = pcall(cjson.encode, function() end) return {tostring(ok), e}",
                 "local ok, e = pcall(function() return cjson.encode(function() end) end) return e",
                 "local t = {} t[1] = t local ok, e = pcall(cjson.encode, t) return e"]:
        pair8.check("EVAL", body, "0")


def test_cjson_encode_keep_buffer(pair8):
    """A lua_cjson setting (no effect on the output): "on"/"off" or a boolean, and the
    setting is the answer; anything else is a bad argument."""
    for body in ["return cjson.encode_keep_buffer()",
                 "return cjson.encode_keep_buffer('off')",
                 "return cjson.encode_keep_buffer()",
                 "return {cjson.encode_keep_buffer(true), cjson.encode({1, 'a', {b=2}})}",
                 "return cjson.encode_keep_buffer('on')",
                 "return cjson.encode_keep_buffer(false)",
                 "return cjson.encode_keep_buffer(true)",
                 "return cjson.encode_keep_buffer({1, 'a', {b=2}})",
                 "return cjson.encode_keep_buffer(function() end)",
                 "return cjson.encode_keep_buffer('maybe')",
                 "return cjson.encode_keep_buffer(1)",
                 "return cjson.encode_keep_buffer('on', 'off')"]:
        pair8.check("EVAL", body, "0")


def test_cmsgpack_unpack_one_and_unpack_limit(pair8):
    """unpack_one(data [, offset]) and unpack_limit(data, limit [, offset]): the offset
    to go on from (-1 at the end), then the values."""
    for body in ["return {cmsgpack.unpack_one(cmsgpack.pack(1, 2))}",
                 "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 1)}",
                 "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 2)}",
                 "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), 3)}",
                 "return {cmsgpack.unpack_one(cmsgpack.pack(1, 2), -1)}",
                 "return {cmsgpack.unpack_one('')}",
                 "return {cmsgpack.unpack_one(cmsgpack.pack({a={1, 2}}, 'x'))}",
                 "local data = cmsgpack.pack('a', 'b', 'c') local out, off = {}, 0 "
                 "while off >= 0 do local v off, v = cmsgpack.unpack_one(data, off) out[#out + 1] = v end "
                 "return out",
                 "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}",
                 "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2, 1)}",
                 "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 5)}",
                 "return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 0)}",
                 "return {cmsgpack.unpack_one('\\145')}"]:
        pair8.check("EVAL", body, "0")


@pytest.mark.parametrize("protocol", [2, 3])
def test_cjson_null(pair8, protocol):
    """JSON's null decodes to cjson.null (a userdata, a nil in a reply), which keeps
    array items and object members, and encodes back as null."""
    if protocol == 3:
        pair8.check("HELLO", "3", normalise=lambda raw: b"")
    for body in ["return cjson.encode(cjson.decode('{\"a\":null}'))",
                 "return cjson.decode('{\"a\":null}')",
                 "return cjson.decode('[1,null,3]')",
                 "return #cjson.decode('[null,null]')",
                 "return cjson.encode(cjson.decode('[1,null,{\"b\":[null]}]'))",
                 "return type(cjson.null)",
                 "return type(cjson.decode('null'))",
                 "return cjson.decode('null')",
                 "return cjson.decode('{\"a\":null}').a == cjson.null",
                 "return cjson.encode({a=cjson.null, b={cjson.null}})",
                 "return cjson.encode(cjson.null)",
                 "return {cjson.null, 1}",
                 "return {map={a=cjson.null}}",
                 "return cmsgpack.pack(cjson.null)"]:
        pair8.check("EVAL", body, "0")


def test_scripts_errors_in_errorstats(pair8):
    """A script's error reply is counted under its code (redis.error_reply's, an {err=}
    table's, nested ones too); a command's error and scriptCall's refusals are counted
    when they happen and not again when returned or raised; an argument's error only
    when it is the reply. A code is what precedes a space within the first 32 bytes."""
    for body in ["return redis.error_reply('MYCODE boom')",
                 "return redis.error_reply('-OTHER boom')",
                 "return redis.error_reply('nospace')",
                 "return {err='TBL boom'}",
                 "return {err=''}",
                 "return {err=' x'}",
                 "return {err='abcdefghijabcdefghijabcdefghijabcdefghij x'}",
                 "return {1, {err='NESTED a'}, {2, redis.error_reply('DEEP b')}}",
                 "redis.pcall('nosuch') return 1",
                 "return redis.pcall('nosuch')",
                 "return redis.call('nosuch')",
                 "redis.pcall('get') return 1",
                 "redis.pcall('get', {}) return 1",
                 "return redis.pcall('get', {})",
                 "return redis.call('get', {})",
                 "redis.pcall('incr', 'str') return 1",
                 "return redis.pcall('incr', 'str')",
                 "return redis.call('incr', 'str')",
                 "return {redis.pcall('incr', 'str'), redis.error_reply('A b')}",
                 "local e = redis.pcall('incr', 'str') local n = 0 for k in pairs(e) do n = n + 1 end return n",
                 "error({err='CODE x'})",
                 "error(redis.error_reply('CODE2 x'))",
                 "error('plain')"]:
        for wire in (pair8.ours, pair8.ref):
            wire.call("SET", "str", "abc")
            wire.call("CONFIG", "RESETSTAT")
        pair8.check("EVAL", body, "0")
        pair8.check("INFO", "errorstats")
    pair8.check("CONFIG", "RESETSTAT")


def test_no_writes_scripts_cannot_write(pair8):
    """A script or function declared no-writes gets Redis's error for any write,
    however the write is called or the script run."""
    pair8.check("FUNCTION", "FLUSH")
    pair8.check("FUNCTION", "LOAD",
                "#!lua name=nwlib\n"
                "redis.register_function{function_name='nw', callback=function(keys) "
                "return redis.call('set', keys[1], 'v') end, flags={'no-writes'}}\n"
                "redis.register_function{function_name='nwp', callback=function(keys) "
                "return redis.pcall('incr', keys[1]) end, flags={'no-writes'}}\n")
    body = "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], 'v')"
    sha = pair8.check("SCRIPT", "LOAD", body).split(b"\r\n")[1].decode()
    for args in [("EVAL", body, "1", "k"),
                 ("EVALSHA", sha, "1", "k"),
                 ("EVAL", "#!lua flags=no-writes\nreturn redis.pcall('del', KEYS[1])", "1", "k"),
                 ("EVAL", "#!lua flags=no-writes\nlocal ok, e = pcall(redis.call, 'lpush', KEYS[1], 'a') "
                  "return e", "1", "k"),
                 ("EVAL", "#!lua flags=no-writes,allow-oom\nreturn redis.call('SET', KEYS[1], 'v')", "1", "k"),
                 ("EVAL", "#!lua flags=no-writes\nredis.call('select', '1') return redis.call('set', 'k', 'v')",
                  "0"),
                 ("FCALL", "nw", "1", "k"),
                 ("FCALL", "nwp", "1", "k"),
                 ("FCALL_RO", "nw", "1", "k")]:
        pair8.check(*args)
    pair8.check("MULTI")
    pair8.check("EVAL", body, "1", "k")
    pair8.check("EXEC")
    pair8.check("EXISTS", "k")
    pair8.check("FUNCTION", "FLUSH")


def test_pcall_refuses_table_arguments(pair8):
    """redis.pcall, like redis.call, takes only strings and numbers: a table, boolean
    or nil anywhere is the arguments' error (returned by pcall, raised by call)."""
    for body in ["return redis.pcall('set', 'k', {})",
                 "return redis.pcall('set', {}, 'v')",
                 "return redis.pcall({}, 'k')",
                 "return redis.pcall('mset', 'k', 'v', 'k2', {'x'})",
                 "return redis.pcall('echo', {1})",
                 "return redis.pcall('get', true)",
                 "return redis.pcall('get', nil)",
                 "return redis.pcall('set', 'k', setmetatable({}, {__tostring=function() return 'v' end}))",
                 "local ok, e = pcall(redis.pcall, 'get', {}) return {tostring(ok), type(e), e.err}",
                 "return redis.call('set', 'k', {})"]:
        pair8.check("EVAL", body, "0")
    pair8.check("EXISTS", "k", "k2")


def test_acl_check_cmd_arguments(pair8):
    """redis.acl_check_cmd takes redis.call's arguments (a table or boolean is their
    error, raised), finds a container's subcommand without checking the arity, and
    answers the caller's user's rules (rillet answered true to all)."""
    bodies = ["redis.acl_check_cmd('get', {})", "redis.acl_check_cmd({})",
              "redis.acl_check_cmd('get', 'k', true)", "redis.acl_check_cmd('get')",
              "redis.acl_check_cmd('get', 'a', 'b', 'c')", "redis.acl_check_cmd('nosuch')",
              "redis.acl_check_cmd('config')", "redis.acl_check_cmd('config', 'nosuch')",
              "redis.acl_check_cmd('CONFIG', 'GET', 'x')", "redis.acl_check_cmd('set', 1, 2)",
              "redis.acl_check_cmd('get', 'a1')", "redis.acl_check_cmd('set', 'a1', 'v')",
              "redis.acl_check_cmd('set', 'b1', 'v')", "redis.acl_check_cmd('set')",
              "redis.acl_check_cmd('mset', 'a1', 'v', 'b2', 'v')",
              "redis.acl_check_cmd('config', 'set', 'x', 'y')", "redis.acl_check_cmd('config', 'get', 'x')"]
    for body in bodies:
        pair8.check("EVAL", f"local r = {body} return r", "0")
    # The servers are shared: only this test's entries are compared.
    pair8.both("ACL", "LOG", "RESET")
    try:
        for rules in (["+@all", "-get", "~a*", "-config|set"], ["+@all", "~*"],
                      ["+@all", "-@write", "~*"]):
            pair8.check("ACL", "SETUSER", "acu", "reset", "on", "nopass", *rules)
            try:
                pair8.check("AUTH", "acu", "x")
                for body in bodies:
                    pair8.check("EVAL", f"local r = {body} return r", "0")
                pair8.check("ACL", "LOG")
            finally:
                pair8.both("AUTH", "default", "x")
    finally:
        pair8.both("ACL", "DELUSER", "acu")


def test_deep_decodes(pair8, deep_replies):
    """cjson.decode refuses the 1001st nested array or object (brackets inside strings
    do not count), cmsgpack.unpack overflows Lua's stack at the 4000th nested array or
    map (rillet leaked Python's RecursionError)."""
    for body in ["return cjson.decode(string.rep('[', 1100) .. string.rep(']', 1100))",
                 "return #cjson.decode(string.rep('[', 999) .. string.rep(']', 999))",
                 "return cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000))",
                 "return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))",
                 "return cjson.decode(string.rep('{\"a\":', 1001) .. '1' .. string.rep('}', 1001))",
                 "return cjson.decode('[\"[[[[\", ' .. string.rep('[', 999) .. string.rep(']', 999) .. ']')",
                 "return cjson.decode('[\"\\\\\"[[\", ' .. string.rep('[', 1000) .. string.rep(']', 1000) .. ']')",
                 "local ok, e = pcall(cjson.decode, string.rep('[', 1001)) return e",
                 "return cmsgpack.unpack(string.rep('\\145', 5000) .. '\\1')",
                 "return cmsgpack.unpack(string.rep('\\145', 3999) .. '\\1')",
                 "return cmsgpack.unpack(string.rep('\\129\\1', 4000) .. '\\1')",
                 "return cmsgpack.unpack(string.rep('\\129\\1', 3999) .. '\\1')",
                 "return {cmsgpack.unpack_one(string.rep('\\145', 4000) .. '\\1')}",
                 "local ok, e = pcall(cmsgpack.unpack, string.rep('\\145', 4000)) return e"]:
        pair8.check("EVAL", body, "0")
