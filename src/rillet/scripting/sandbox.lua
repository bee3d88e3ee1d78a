-- rillet's Lua sandbox (chunk name "=rillet"): what a script sees, as Redis 8 builds it.
-- Called once per runtime with the Python callables it needs; returns the
-- functions Python drives. Scripts never see the Python objects themselves:
-- they are upvalues here, and the state's real globals are emptied.
local py_call, py_pcall, py_log, py_sha1hex, py_hook, py_lib = ...

local G = _G
local dbg = debug
local setfenv, getfenv, loadstring_, type_, error_, tostring_ = setfenv, getfenv, loadstring, type, error, tostring
local rawget_, setmetatable_ = rawget, setmetatable
-- Captured before the real globals are emptied below.
local string, select, table, rawset, load, ipairs, pairs, os = string, select, table, rawset, load, ipairs, pairs, os
local xpcall_, pcall_, unpack_, tonumber_, floor, ceil = xpcall, pcall, unpack, tonumber, math.floor, math.ceil

-- redis.call is the Python function itself (a C function to Lua, as in Redis,
-- so `return redis.call(...)` keeps the script's line for the error text). A
-- command's error comes out of it as a Python exception whose text starts with
-- MARK; these turn it back into Redis's {err=...} table.
local MARK = "\0rillet\0"
local function as_error_table(err)
    if type_(err) == "userdata" then
        local text = tostring_(err)
        if string.sub(text, 1, 8) == MARK then
            -- (then "c": the command's error was counted in errorstats already)
            return {err = string.sub(text, 10), ignore_error_stats_update = string.sub(text, 9, 9) == "c" or nil}
        end
        return text  -- a library's error (libs.py): its message, as luaL_error's
    end
    return err
end
-- Redis's luaRedisPcall: an error table caught by pcall becomes its err string.
local function fix_pcall(ok, ...)
    if ok then return ok, ... end
    local err = as_error_table((...))
    if type_(err) == "table" and type_(rawget_(err, "err")) == "string" then
        err = rawget_(err, "err")
    end
    return false, err
end

-- What Redis 8.2 leaves in a script's globals (its allow lists in script_lua.c).
local env = {}
for _, name in ipairs({
    "assert", "collectgarbage", "error", "gcinfo", "getmetatable", "ipairs", "next",
    "pairs", "pcall", "rawequal", "rawget", "rawset", "select", "setmetatable",
    "tonumber", "tostring", "type", "unpack", "xpcall", "_VERSION",
    "coroutine", "math", "string", "table",
}) do
    env[name] = G[name]
end
env.os = {clock = os.clock}

-- Redis's __redis__err__handler: a string error becomes {err="ERR ..."}; the
-- script's source and line are added (skipping C frames and rillet's own).
local function err_handler(err)
    err = as_error_table(err)
    local level = 2
    local info = dbg.getinfo(level, "nSl")
    while info and (info.what == "C" or info.source == "=rillet") do
        level = level + 1
        info = dbg.getinfo(level, "nSl")
    end
    if type_(err) ~= "table" then
        err = {err = "ERR " .. tostring_(err)}
    end
    if info then
        err.source = info.source
        err.line = info.currentline
    end
    return err
end
env.__redis__err__handler = err_handler
env.pcall = function(f, ...) return fix_pcall(pcall_(f, ...)) end
env.xpcall = function(f, handler)
    return xpcall_(f, function(err) return handler(as_error_table(err)) end)
end

local proxy = {}
-- Globals are read-only and reading a missing one is an error, with Redis's texts.
-- A global read goes proxy -> env as a table __index (a lookup in C, no Lua
-- call: scripts read `redis` and KEYS on every line); only a miss in env calls
-- the erroring function.
setmetatable_(env, {
    __index = function(_, key)
        error_("Script attempted to access nonexistent global variable '" .. tostring_(key) .. "'", 2)
    end,
    __metatable = false,
})
setmetatable_(proxy, {
    __index = env,
    __newindex = function()
        error_("Attempt to modify a readonly table", 2)
    end,
    __metatable = false,
})
env._G = proxy

-- Code compiled inside a script runs in the same sandbox.
env.loadstring = function(code, name)
    local f, e = loadstring_(code, name)
    if f then setfenv(f, proxy) end
    return f, e
end
env.load = function(chunk, name)
    local f, e = load(chunk, name)
    if f then setfenv(f, proxy) end
    return f, e
end

local redis = {}
env.redis = redis

-- redis.call raises a command's error; redis.pcall returns it as {err=...}.
redis.call = py_call
redis.pcall = py_pcall

-- Redis's luaPushErrorBuff rules: "-CODE msg" keeps CODE, else ERR; trailing CR/LF trimmed.
local function error_table(text)
    local code, msg
    if string.sub(text, 1, 1) == "-" then
        local space = string.find(text, " ", 1, true)
        if space then
            code, msg = string.sub(text, 2, space - 1), string.sub(text, space + 1)
        else
            code, msg = "ERR", string.sub(text, 2)
        end
    else
        code, msg = "ERR", text
    end
    msg = string.gsub(msg, "[\r\n]+$", "")
    return {err = code .. " " .. msg}
end

-- Redis's luaPushError + luaError: the helpers raise {err="ERR msg"}, which pcall turns
-- into the string "ERR msg" (a plain string error would lose the ERR).
local function raise(msg)
    error_({err = "ERR " .. msg}, 0)
end
-- lua_tonumber then a C int: numeric strings count, fractions are truncated, the rest is 0.
local function c_int(v)
    v = tonumber_(v) or 0
    if v >= 0 then return floor(v) end
    return ceil(v)
end

-- error_reply and status_reply return (not raise) an error table for a bad call.
redis.error_reply = function(...)
    local text = ...
    if select("#", ...) ~= 1 or type_(text) ~= "string" then
        return error_table("wrong number or type of arguments")
    end
    if string.sub(text, 1, 1) ~= "-" then text = "-" .. text end
    return error_table(text)
end
redis.status_reply = function(...)
    local text = ...
    if select("#", ...) ~= 1 or type_(text) ~= "string" then
        return error_table("wrong number or type of arguments")
    end
    return {ok = text}
end
redis.sha1hex = function(...)
    if select("#", ...) ~= 1 then
        raise("wrong number of arguments")
    end
    local value = ...
    if type_(value) == "number" then
        value = tostring_(value)  -- lua_tolstring's text ("%.14g"), as Redis hashes it
    end
    return py_sha1hex(value)
end
redis.log = function(level, ...)
    if select("#", ...) < 1 then
        raise("redis.log() requires two arguments or more.")
    end
    if tonumber_(level) == nil then
        raise("First argument must be a number (log level).")
    end
    level = c_int(level)
    if level < 0 or level > 3 then
        raise("Invalid log level.")
    end
    local parts = {}
    for i = 1, select("#", ...) do parts[i] = tostring_((select(i, ...))) end
    py_log(level, table.concat(parts, " "))
end
redis.setresp = function(...)
    if select("#", ...) ~= 1 then
        raise("redis.setresp() requires one argument.")
    end
    local v = c_int((...))
    if v ~= 2 and v ~= 3 then
        raise("RESP version must be 2 or 3.")
    end
    py_lib("setresp", v)
end
redis.set_repl = function(...)
    if select("#", ...) ~= 1 then
        raise("redis.set_repl() requires one argument.")
    end
    local v = c_int((...))
    if v < 0 or v > 3 then
        raise("Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.")
    end
    py_lib("set_repl", v)
end
redis.replicate_commands = function() return true end
redis.breakpoint = function() return false end
redis.debug = function() end
redis.acl_check_cmd = function(...)
    if select("#", ...) < 1 then
        raise("Please specify at least one argument for this redis lib call")
    end
    local allowed = py_lib("acl_check_cmd", ...)
    if allowed == nil then
        raise("Invalid command passed to redis.acl_check_cmd()")
    elseif type_(allowed) == "string" then  -- an argument that is not a string or number
        error_({err = allowed}, 0)
    end
    return allowed
end
redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING = 0, 1, 2, 3
redis.REPL_NONE, redis.REPL_AOF, redis.REPL_SLAVE, redis.REPL_REPLICA, redis.REPL_ALL = 0, 1, 2, 2, 3

-- The libraries Redis bundles (bit, cjson, cmsgpack, struct), as shims over Python.
env.bit = py_lib("bit")
env.cjson = py_lib("cjson")
env.cmsgpack = py_lib("cmsgpack")
env.struct = py_lib("struct")

-- Nothing of the host state stays reachable from the real globals.
for name in pairs(G) do
    if name ~= "_G" then G[name] = nil end
end

-- The busy hook: every 100000 instructions Python looks at the clock (and,
-- past busy-reply-threshold, serves other clients); after SCRIPT KILL it
-- answers on every line, so a pcall cannot swallow the kill for long.
-- It stays armed between runs (arming and disarming it cost a fifth of an
-- empty script's run; outside a run py_hook has nothing to do): arm() puts it
-- back in count mode only after a kill left it in line mode.
local sethook = dbg.sethook
local line_mode = false
local function hook()
    -- Never raise in rillet's own frames (the line after xpcall in run()).
    local where = dbg.getinfo(2, "S")
    if where and where.source == "=rillet" then return end
    local kill = py_hook()
    if kill then
        line_mode = true
        sethook(hook, "l")
        error_(kill, 0)
    end
end
local function arm()
    if line_mode then
        line_mode = false
        sethook(hook, "", 100000)
    end
end
sethook(hook, "", 100000)

local function compile(body, chunkname)
    local f, e = loadstring_(body, chunkname)
    if not f then return nil, e end
    setfenv(f, proxy)
    return f, false
end

-- The first nkeys values are the keys, the rest the arguments (built here: a
-- table made from Python costs more than the whole call).
local function split(nkeys, ...)
    local n = select("#", ...)
    if n == nkeys then return {...}, {} end  -- keys only (EVALSHA sha 1 key), or nothing
    if nkeys == 0 then return {}, {...} end
    local all = {...}
    return {unpack_(all, 1, nkeys)}, {unpack_(all, nkeys + 1, n)}
end

-- The run's outcome: a string or number result alone (one value crosses to
-- Python, not a tuple of three), else ok, result (the value or the error
-- table), and a status reply's text ({ok=...} without err), which spares
-- Python two table lookups through lupa for the commonest table a script returns.
local function finish(ok, result)
    if ok then
        local kind = type_(result)
        if kind == "string" or kind == "number" then return result end
        if kind == "table" then
            local status = rawget_(result, "ok")
            if type_(status) == "string" and type_(rawget_(result, "err")) ~= "string" then
                return ok, result, status
            end
        end
    end
    return ok, result, nil
end

-- Run f with the hook armed; returns what finish() does.
local function run(f, nkeys, ...)
    local keys, argv = split(nkeys, ...)
    rawset(env, "KEYS", keys)
    rawset(env, "ARGV", argv)
    arm()
    return finish(xpcall_(f, err_handler))
end

-- The same, KEYS and ARGV set already (EVALSHA's call from C, scripting/_calls.pyx).
local function run_set(f)
    arm()
    return finish(xpcall_(f, err_handler))
end

-- A function library (FUNCTION LOAD) runs its body once, where `redis` offers
-- register_function and little else; its functions, called later by FCALL,
-- see the full `redis` object. Both through the same read-only globals.
local loading = false
local function protect(t)
    return setmetatable_(t, {
        __index = function(_, key)
            error_("Script attempted to access nonexistent global variable '" .. tostring_(key) .. "'", 2)
        end,
        __newindex = function() error_("Attempt to modify a readonly table", 2) end,
        __metatable = false,
    })
end
local lib_redis_fields = {}
local lib_redis = protect(lib_redis_fields)
local lib_env = setmetatable_({}, {
    __index = function(_, key)
        if key == "redis" then
            if loading then return lib_redis end
            return redis
        end
        -- While the library loads, `redis` is all there is (as Redis 8).
        local value = (not loading) and rawget_(env, key) or nil
        if value == nil or key == "KEYS" or key == "ARGV" then
            error_("Script attempted to access nonexistent global variable '" .. tostring_(key) .. "'", 2)
        end
        return value
    end,
    __newindex = function() error_("Attempt to modify a readonly table", 2) end,
    __metatable = false,
})

local function run_library(body, chunkname, register)
    local f, e = loadstring_(body, chunkname)
    if not f then return nil, e end
    for k in pairs(lib_redis_fields) do rawset(lib_redis_fields, k, nil) end
    for _, name in ipairs({"log", "setresp", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
                           "REDIS_VERSION", "REDIS_VERSION_NUM"}) do
        rawset(lib_redis_fields, name, redis[name])
    end
    rawset(lib_redis_fields, "register_function", register)
    setfenv(f, lib_env)
    loading = true
    arm()
    local ok, result = xpcall_(f, err_handler)
    loading = false
    return ok, result
end

-- Functions are called as f(keys, args), with the same error handling.
local function run_function(f, nkeys, ...)
    local keys, args = split(nkeys, ...)
    arm()
    return finish(xpcall_(function() return f(keys, args) end, err_handler))
end

local function set_version(version, num)
    redis.REDIS_VERSION = version
    redis.REDIS_VERSION_NUM = num
end

-- Builders for replies Python hands to Lua: a call costs a quarter of a table made in Python.
local function mk_status(s) return {ok = s} end
-- A command's error (redis.pcall's reply): counted in errorstats when the command
-- failed, so not again if the script returns it (Redis's field, which scripts see);
-- not for an argument's error (errors.SCRIPT_CALL_UNCOUNTED).
local function mk_error(s, uncounted)
    if uncounted then return {err = s} end
    return {err = s, ignore_error_stats_update = true}
end

-- luaReplyToRedisReply reads a returned table raw, in this order: no metamethod of
-- the script's runs (one could raise, or call redis after the run). The kind of
-- reply and what it needs (three values at least); an array's length runs to its first nil.
local function reply_shape(t)
    local v = rawget_(t, "err")
    if type_(v) == "string" then return "err", v, rawget_(t, "ignore_error_stats_update") == true end
    v = rawget_(t, "ok")
    if type_(v) == "string" then return "ok", v, nil end
    v = rawget_(t, "double")
    if type_(v) == "number" then return "double", v, nil end
    v = rawget_(t, "big_number")
    if type_(v) == "string" then return "big_number", v, nil end
    v = rawget_(t, "verbatim_string")
    if type_(v) == "table" then
        local format, text = rawget_(v, "format"), rawget_(v, "string")
        if type_(format) == "string" and type_(text) == "string" then return "verbatim", text, format end
    end
    v = rawget_(t, "map")
    if type_(v) == "table" then return "map", v, nil end
    v = rawget_(t, "set")
    if type_(v) == "table" then return "set", v, nil end
    local n = 0
    while rawget_(t, n + 1) ~= nil do n = n + 1 end
    -- The items too (unpack reads raw), while they fit Lua's C stack: one crossing
    -- to Python instead of one per item.
    if n <= 4000 then return "array", n, nil, unpack_(t, 1, n) end
    return "array", n, nil
end
local function mk_array(...) return {...} end
-- 32 new {ok="OK"} tables at once (Builders.status_of hands them out one by one).
local function mk_oks()
    local t = {}
    for i = 1, 32 do t[i] = {ok = "OK"} end
    return unpack_(t, 1, 32)
end

return compile, run, run_library, run_function, set_version, type_, mk_status, mk_error, mk_array, mk_oks,
    run_set, env, reply_shape
