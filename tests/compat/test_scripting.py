"""EVAL, EVALSHA, EVAL_RO, SCRIPT against Redis 8.2.3, raw reply bytes, RESP2 and RESP3."""

from __future__ import annotations

import hashlib

import pytest

RETURNS = [
    "return 1",
    "return -7",
    "return 3.99",
    "return -3.99",
    "return 'hello'",
    "return ''",
    "return true",
    "return false",
    "return nil",
    "return {}",
    "return {1, 'two', {3, 'four'}, false, 5}",
    "return {1, nil, 3}",
    "return {ok='FINE'}",
    "return {err='MYERR something failed'}",
    "return {err='no code'}",
    "return redis.status_reply('STATUS')",
    "return redis.error_reply('My Error')",
    "return redis.error_reply('-CODE with code')",
    "return redis.error_reply('nospace')",
    "return {double=3.5}",
    "return {double=2}",
    "return {map={a=1}}",
    "return {set={x=true}}",
    "return {big_number='12345678901234567890'}",
    "return redis.sha1hex('')",
    "return redis.REDIS_VERSION ~= nil",
    "return {1, {2, {3, {4}}}}",
    "return cjson.encode({1, 2, {a=1}})",
    "return cjson.decode('[1,2,3]')",
    "return cjson.decode('{\"a\":[1,\"x\"]}').a",
    "return bit.band(0xff, 0x0f)",
    "return bit.tohex(65535)",
    "return bit.bxor(5, 3)",
    "return cmsgpack.unpack(cmsgpack.pack({1, 2, 'abc'}))",
    "return struct.unpack('>I2', struct.pack('>I2', 258))",
    "return type(os.clock())",
    "return _VERSION",
    "return tostring(KEYS[1]) .. tostring(ARGV[1])",
    "return #ARGV",
]


@pytest.mark.parametrize("protocol", [2, 3])
def test_script_returns(pair8, protocol):
    if protocol == 3:
        pair8.check("HELLO", "3", normalise=lambda raw: b"")
    for body in RETURNS:
        pair8.check("EVAL", body, "0")
        pair8.check("EVAL", body, "1", "k", "a1", "a2")


RESP3_SCRIPTS = [
    "redis.setresp(3); return redis.call('xadd', 's', '1-1', 'f', 'v')",
    "redis.setresp(3); return redis.call('xrange', 's', '-', '+')",
    "redis.setresp(3); return redis.call('get', 'nokey')",
    "redis.setresp(2); return redis.call('get', 'nokey')",
    "redis.setresp(3); local r = redis.call('get', 'nokey'); return r == nil",
    "redis.setresp(2); local r = redis.call('get', 'nokey'); return r == false",
    "redis.setresp(3); return redis.call('xread', 'streams', 'nokey', '0')",
    "redis.setresp(3); return true",
    "redis.setresp(3); return false",
    "redis.setresp(4)",
]


@pytest.mark.parametrize("protocol", [2, 3])
def test_setresp(pair8, protocol):
    if protocol == 3:
        pair8.check("HELLO", "3", normalise=lambda raw: b"")
    for body in RESP3_SCRIPTS:
        pair8.check("EVAL", body, "0")


ERRORS = [
    "return foo",
    "x = 1",
    "error('boom')",
    "error({err='X boom'})",
    "return redis.call('nosuch')",
    "return redis.pcall('nosuch')",
    "return redis.call('get')",
    "return redis.call()",
    "return redis.call('get', {})",
    "return redis.call('incr', 'str')",
    "return redis.pcall('incr', 'str')",
    "local ok, e = pcall(redis.call, 'incr', 'str'); return e.err",
    "local ok, e = pcall(error, 'plain'); return e",
    "return redis.call('multi')",
    "return redis.call('eval', 'return 1', '0')",
    "return redis.call('script', 'load', 'return 1')",
    "return retur",
    "retur",
    "return print",
    "return loadstring('return 1')()",
    "return loadfile",
    "return dofile",
    "return io",
    "return os.execute",
    "return debug",
    "return require",
    "return redis.call('xadd', 's', 'bad-id', 'f', 'v')",
    "return redis.call('xgroup', 'create', 's', 'g', '$')",
    "return redis.call('config', 'nosuch')",
    "return redis.call('config')",
    "return redis.call('xread', 'block', '0', 'streams', 'nosuch', '$')",
    "local t = {} ; t[1] = redis.call('set', 'a', 'b') ; return t",
]


def test_errors(pair8):
    pair8.check("SET", "str", "abc")
    for body in ERRORS:
        pair8.check("EVAL", body, "0")


def test_bad_eval_arguments(pair8):
    pair8.check("EVAL", "return 1", "x")
    pair8.check("EVAL", "return 1", "-1")
    pair8.check("EVAL", "return 1", "2", "a")
    pair8.check("EVAL", "return 1")
    pair8.check("EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", "0")
    pair8.check("EVALSHA", "fff", "0")
    pair8.check("EVALSHA_RO", "ffffffffffffffffffffffffffffffffffffffff", "0")


def test_shebang_flags(pair8):
    pair8.check("EVAL", "#!lua flags=no-writes\nreturn redis.call('set', 'a', '1')", "0")
    pair8.check("EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'a')", "0")
    pair8.check("EVAL", "#!lua flags=bogus\nreturn 1", "0")
    pair8.check("EVAL", "#!lua name=x\nreturn 1", "0")
    pair8.check("EVAL", "#!lux\nreturn 1", "0")
    pair8.check("EVAL", "#!lua\nreturn 1", "0")
    pair8.check("EVAL", "#!lua flags=\nreturn 1", "0")
    pair8.check("EVAL", "#!lua flags=allow-oom,no-cluster\nreturn redis.call('set', 'a', '1')", "0")
    pair8.check("EVAL_RO", "return redis.call('set', 'a', '1')", "0")
    pair8.check("EVAL_RO", "return redis.call('get', 'a')", "0")


def test_script_cache(pair8):
    pair8.check("SCRIPT", "FLUSH")
    sha = pair8.check("SCRIPT", "LOAD", "return 'cached'")
    digest = sha.split(b"\r\n")[1].decode()
    pair8.check("SCRIPT", "EXISTS", digest, "ffffffffffffffffffffffffffffffffffffffff")
    pair8.check("EVALSHA", digest, "0")
    pair8.check("EVALSHA", digest.upper(), "0")
    pair8.check("EVALSHA_RO", digest, "0")
    pair8.check("SCRIPT", "FLUSH", "bad")
    pair8.check("SCRIPT", "FLUSH", "ASYNC")
    pair8.check("EVALSHA", digest, "0")
    pair8.check("SCRIPT", "EXISTS", digest)
    pair8.check("SCRIPT", "KILL")
    pair8.check("SCRIPT", "LOAD", "retur")
    pair8.check("SCRIPT", "NOSUCH")


def test_script_writes_and_keys(pair8):
    body = ("redis.call('set', KEYS[1], ARGV[1]); redis.call('incr', KEYS[2]);"
            " return {redis.call('get', KEYS[1]), redis.call('get', KEYS[2])}")
    pair8.check("EVAL", body, "2", "a", "n", "v1")
    pair8.check("EVAL", body, "2", "a", "n", "v2")
    pair8.check("MGET", "a", "n")
    pair8.check("EVAL", "redis.call('select', '1'); return redis.call('get', 'a')", "0")
    pair8.check("GET", "a")
    pair8.check("EVAL", "return redis.call('select', '1')", "0")


def test_eval_inside_multi(pair8):
    pair8.check("MULTI")
    pair8.check("EVAL", "return redis.call('incr', 'c')", "0")
    pair8.check("EVAL", "return redis.call('incr', 'c')", "0")
    pair8.check("EXEC")


def test_acl_rules_apply_to_a_scripts_commands(pair8):
    """scriptCall checks the user's ACL rules: command and key denials, raised and pcall'd."""
    pair8.check("ACL", "SETUSER", "scriptu", "on", "nopass", "+@all", "-get", "~a*")
    try:
        pair8.check("AUTH", "scriptu", "x")
        pair8.check("EVAL", "return redis.call('GET', 'a1')", "0")
        pair8.check("EVAL", "return redis.pcall('GET', 'a1')", "0")
        pair8.check("EVAL", "return redis.call('SET', 'k', 'v')", "0")
        pair8.check("EVAL", "return redis.call('SET', 'a1', 'v')", "0")
        pair8.check("ACL", "LOG", "RESET")
    finally:
        pair8.both("AUTH", "default", "x")
        pair8.check("ACL", "DELUSER", "scriptu")


def test_ro_commands_refuse_scripts_declaring_writes(pair8):
    """A shebang without no-writes declares a writing script: EVAL_RO/EVALSHA_RO refuse it
    before it runs (scriptPrepareForRun); without a shebang it runs. Found by the fuzzer."""
    for body in ["#!lua\nreturn 1", "#!lua flags=allow-stale\nreturn 1",
                 "#!lua flags=no-writes\nreturn 1", "return 1",
                 "#!lua\nreturn redis.call('get', 'k')"]:
        pair8.check("EVAL_RO", body, "0")
        pair8.check("SCRIPT", "LOAD", body)
        sha = hashlib.sha1(body.encode()).hexdigest()
        pair8.check("EVALSHA_RO", sha, "0")
        pair8.check("EVALSHA", sha, "0")


HELPER_CALLS = [
    "return redis.status_reply()",
    "return redis.error_reply(1)",
    "return redis.status_reply('a', 'b')",
    "local r = redis.status_reply() return {type(r), r.err}",
    "local r = redis.error_reply(1) return {type(r), r.err}",
    "return {redis.error_reply(true)}",
    "local ok, e = pcall(redis.status_reply) return {tostring(ok), type(e)}",
    "local ok, e = pcall(redis.setresp, 4) return {tostring(ok), e}",
    "local ok, e = pcall(redis.sha1hex) return {tostring(ok), e}",
    "local ok, e = pcall(redis.log, 99, 'x') return {tostring(ok), e}",
    "local ok, e = pcall(redis.set_repl, 99) return {tostring(ok), e}",
    "local ok, e = pcall(redis.acl_check_cmd, 'nosuch') return {tostring(ok), e}",
    "local r = redis.acl_check_cmd('nosuch') return r",
    "local r = redis.setresp('3') return redis.call('get', 'nokey') == nil",
    "local r = redis.setresp(2.9) return redis.call('get', 'nokey') == false",
    "local r = redis.set_repl('3') return 1",
    "local r = redis.log('2', 'x') return 1",
    "local r = redis.log({}, 'x') return 1",
]


def test_redis_helpers_bad_calls(pair8):
    """The redis.* helpers' errors as Redis's C helpers give them: error_reply and
    status_reply return an error table, the others raise {err="ERR ..."} (so pcall
    gives "ERR ..."), numeric strings are numbers. Found by the command fuzzer.
    (A helper's error from a tail call names `=(tail call)`: docs/compat.md.)"""
    for body in HELPER_CALLS:
        pair8.check("EVAL", body, "0")


def test_noscript_command_with_wrong_arity_in_a_script(pair8):
    """scriptCall checks the arity before the noscript flag. Found by the fuzzer."""
    for body in ["return redis.pcall('acl', 'whoami', 'x')", "return redis.pcall('acl', 'whoami')",
                 "return redis.pcall('multi', 'x')", "return redis.pcall('client', 'id', 'x')",
                 "return redis.pcall('acl')", "return redis.pcall('acl', 'nosuch')"]:
        pair8.check("EVAL", body, "0")


@pytest.mark.parametrize("protocol", [2, 3])
def test_number_and_verbatim_conversions(pair8, protocol):
    """A Lua number out of long long's range (or NaN) converts as x86-64 Redis's cast
    does, to INT64_MIN; a verbatim string's format is three bytes, space-padded.
    Found by the fuzzer. ({double=-0.0} answers 0: docs/compat.md.)"""
    if protocol == 3:
        pair8.check("HELLO", "3", normalise=lambda raw: b"")
    for body in ["return math.huge", "return -math.huge", "return 0/0", "return 2^63",
                 "return -2^63", "return 2^64", "return 1e300", "return {1.99, -1.99, 2^62}",
                 "return {map={a=0/0}}", "return {1e300, 0/0, 2^63, -2^63}",
                 "return {verbatim_string={format='toolong', string='hi'}}",
                 "return {verbatim_string={format='x', string='hi'}}",
                 "return {verbatim_string={format='', string='hi'}}",
                 "return {verbatim_string={format='mkd', string='hi'}}"]:
        pair8.check("EVAL", body, "0")


def test_read_only_scripts_refuse_may_replicate_commands(pair8):
    """scriptVerifyWriteCommandAllow: PFCOUNT and PUBLISH (may_replicate, a flag COMMAND
    INFO hides) are writes to a read-only script. Found by the command fuzzer."""
    pair8.check("SET", "ro_s", "hello")
    for body in ["return redis.pcall('pfcount', 'ro_s')", "return redis.pcall('pfcount', 'nokey')",
                 "return redis.pcall('publish', 'ch', 'x')", "return redis.pcall('get', 'ro_s')",
                 "#!lua flags=no-writes\nreturn redis.pcall('pfcount', 'nokey')"]:
        pair8.check("EVAL_RO", body, "0")
    pair8.check("EVAL", "#!lua flags=no-writes\nreturn redis.pcall('publish', 'ch', 'x')", "0")
    for name in ("pfcount", "publish", "spublish"):
        pair8.check("COMMAND", "INFO", name)
    pair8.check("DEL", "ro_s")


NUMBER_ARGUMENTS = ["0.1 + 0.2", "1e20", "2^53 + 1", "-0.0", "1/0", "-1/0", "0/0", "-(0/0)", "100",
                    "3.0", "1e-7", "1e16", "-1.5e-300", "2^62", "-2^62", "2^62 + 2048", "2^63",
                    "1/3", "5e-324", "1.7976931348623157e308", "12345678.9"]


def test_numbers_as_command_arguments(pair8):
    """A Lua number passed to redis.call: an integer within +-2^62, else fpconv_dtoa's
    shortest digits (not %.17g), NaN with its sign. Found by the command fuzzer."""
    for expr in NUMBER_ARGUMENTS:
        pair8.check("EVAL", f"return redis.call('echo', {expr})", "0")
