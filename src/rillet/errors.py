"""Every error text rillet sends, in one place.

Error text is part of Redis's API: clients map the first word to an exception
class and tests compare replies byte for byte. A `ReplyError` carries the full
line without the leading '-' (e.g. "ERR syntax error"); it may be raised from
engine/ or commands/ and becomes an error reply with nothing mutated.
"""

from __future__ import annotations


class ReplyError(Exception):
    """A Redis error reply. `message` starts with the error code (ERR, WRONGTYPE...)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    @property
    def code(self) -> str:
        return self.message.split(" ", 1)[0]


class CountedReplyError(ReplyError):
    """An error reply already counted in errorstats (a script's command error, counted
    when the command failed, raised again as the script's error)."""

    __slots__ = ()


class ProtocolError(Exception):
    """The peer broke RESP framing: reply with the error, then close the connection."""


# --- generic ------------------------------------------------------------------
SYNTAX = "ERR syntax error"
NOT_INTEGER = "ERR value is not an integer or out of range"
NOT_FLOAT = "ERR value is not a valid float"
OVERFLOW = "ERR increment or decrement would overflow"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"
NO_SUCH_KEY = "ERR no such key"
OUT_OF_RANGE_DB = "ERR DB index is out of range"
NOAUTH = "NOAUTH Authentication required."
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
AUTH_NOT_CONFIGURED = (
    "ERR AUTH <password> called without any password configured for the default user. "
    "Are you sure your configuration is correct?"
)
NOPROTO = "NOPROTO unsupported protocol version"
INVALID_EXPIRE = "ERR invalid expire time in '{}' command"
SELECT_NOT_ALLOWED = "ERR SELECT is not allowed in cluster mode"
MAXCLIENTS = "ERR max number of clients reached"
LOADING = "LOADING Redis is loading the dataset in memory"
MISCONF_AOF = "MISCONF Errors writing to the AOF file: {}"
READONLY_REPLICA = "READONLY You can't write against a read only replica."
EXPIRE_OPTIONS = "ERR NX and XX, GT or LT options at the same time are not compatible"
EXPIRE_GT_LT = "ERR GT and LT options at the same time are not compatible"
INVALID_CLIENT_NAME = "ERR Client names cannot contain spaces, newlines or special characters."
NO_SUCH_CLIENT = "ERR No such client"
CLIENT_SETINFO_BAD_ATTR = "ERR Unrecognized option '{}'"
CLIENT_SETINFO_BAD_VALUE = (
    "ERR {} cannot contain spaces, newlines or special characters."
)


def wrong_arity(fullname: str) -> str:
    return f"ERR wrong number of arguments for '{fullname}' command"


# --- transactions ---------------------------------------------------------------
MULTI_NESTED = "ERR MULTI calls can not be nested"
EXEC_WITHOUT_MULTI = "ERR EXEC without MULTI"
DISCARD_WITHOUT_MULTI = "ERR DISCARD without MULTI"
EXECABORT = "EXECABORT Transaction discarded because of previous errors."
WATCH_IN_MULTI = "ERR WATCH inside MULTI is not allowed"
COMMAND_NOT_ALLOWED_IN_MULTI = "ERR Command not allowed inside a transaction"

# --- config -------------------------------------------------------------------
CONFIG_UNKNOWN_PARAM = "ERR Unknown option or number of arguments for CONFIG SET - '{}'"
CONFIG_SET_FAILED = "ERR CONFIG SET failed (possibly related to argument '{}') - {}"
CONFIG_DUPLICATE = "ERR CONFIG SET failed (possibly related to argument '{}') - duplicate parameter"
CONFIG_IMMUTABLE = "can't set immutable config"
CONFIG_PORT_UNUSABLE = "Unable to listen on this port. Check server logs."
CONFIG_PROTECTED = "can't set protected config"

# --- the web console's HTTP answers (server/http.py, console/): each a response body ---------
HTTP_AUTH_REQUIRED = "authentication required"
HTTP_NOT_FOUND = "not found"
HTTP_METHOD = "method not allowed"
HTTP_BAD_REQUEST = "bad request"
HTTP_BODY = "request bodies are not accepted"
HTTP_HEAD_TOO_LARGE = "request header too large"
HTTP_TOO_MANY = "too many console connections"
HTTP_INTERNAL = "internal error"
HTTP_HOST_DENIED = ("DENIED the console answers only to an address or localhost while"
                    " protected mode is on")

# --- connections (server/connection.py) ---------------------------------------------------
PROTECTED_MODE_DENIED = (
    "DENIED Redis is running in protected mode because protected mode is enabled and no"
    " password is set for the default user. In this mode connections are only accepted from"
    " the loopback interface. If you want to connect from external computers to Redis you may"
    " adopt one of the following solutions: 1) Just disable protected mode sending the command"
    " 'CONFIG SET protected-mode no' from the loopback interface by connecting to Redis from"
    " the same host the server is running, however MAKE SURE Redis is not publicly accessible"
    " from internet if you do so. Use CONFIG REWRITE to make this change permanent."
    " 2) Alternatively you can just disable the protected mode by editing the Redis"
    " configuration file, and setting the protected mode option to 'no', and then restarting"
    " the server. 3) If you started the server manually just for testing, restart it with the"
    " '--protected-mode no' option. 4) Set up an authentication password for the default"
    " user. NOTE: You only need to do one of the above things in order for the server to start"
    " accepting connections from the outside."
)

# --- streams ------------------------------------------------------------------
STREAM_INVALID_ID = "ERR Invalid stream ID specified as stream command argument"
STREAM_ID_TOO_SMALL = (
    "ERR The ID specified in XADD is equal or smaller than the target stream top item"
)
STREAM_ID_ZERO = "ERR The ID specified in XADD must be greater than 0-0"
STREAM_EXHAUSTED = (
    "ERR The stream has exhausted the last possible ID, unable to add more items"
)
STREAM_UNBALANCED_XREAD = (
    "ERR Unbalanced '{}' list of streams: for each stream key an ID or '$' must be specified."
)
TIMEOUT_NEGATIVE = "ERR timeout is negative"
TIMEOUT_NOT_INTEGER = "ERR timeout is not an integer or out of range"

# --- consumer groups ------------------------------------------------------------
BUSYGROUP = "BUSYGROUP Consumer Group name already exists"

# --- stream engine (engine/ids.py, engine/stream.py) ------------------------------
STREAM_INVALID_START_INTERVAL = "ERR invalid start ID for the interval"
STREAM_INVALID_END_INTERVAL = "ERR invalid end ID for the interval"
STREAM_ELEMENTS_TOO_LARGE = "ERR Elements are too large to be stored"


# --- consumer-group commands (commands/groups.py) ---------------------------------
XGROUP_NO_KEY = (
    "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
    "to use the MKSTREAM option to create an empty stream automatically."
)
NOGROUP_FOR_KEY = "NOGROUP No such consumer group '{}' for key name '{}'"
NOGROUP_KEY_OR_GROUP = "NOGROUP No such key '{}' or consumer group '{}'"
NOGROUP_XREADGROUP = (
    "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option"
)
ENTRIESREAD_INVALID = "ERR value for ENTRIESREAD must be positive or -1"
XREADGROUP_SPECIAL_ID = (
    "ERR The {0} ID is meaningless in the context of XREADGROUP: you want to read the history "
    "of this consumer by specifying a proper ID, or use the > ID to get new messages. "
    "The {0} ID would just return an empty result set."
)
XREADGROUP_UNBALANCED = (
    "ERR Unbalanced 'xreadgroup' list of streams: for each stream key an ID or '>' "
    "must be specified."
)
XREADGROUP_MISSING_GROUP = "ERR Missing GROUP option for XREADGROUP"
TIMEOUT_OUT_OF_RANGE = "ERR timeout is out of range"
CLAIM_MIN_IDLE_NOT_INTEGER = "ERR min-idle-time is not an integer or out of range"
CLAIM_MIN_IDLE_NEGATIVE = "ERR min-idle-time must be a positive integer"
XCLAIM_INVALID_MIN_IDLE = "ERR Invalid min-idle-time argument for XCLAIM"
XCLAIM_INVALID_IDLE = "ERR Invalid IDLE option argument for XCLAIM"
XCLAIM_INVALID_TIME = "ERR Invalid TIME option argument for XCLAIM"
XCLAIM_INVALID_RETRYCOUNT = "ERR Invalid RETRYCOUNT option argument for XCLAIM"
XCLAIM_UNKNOWN_OPTION = "ERR Unrecognized XCLAIM option '{}'"
XAUTOCLAIM_INVALID_MIN_IDLE = "ERR Invalid min-idle-time argument for XAUTOCLAIM"
XAUTOCLAIM_COUNT = "ERR COUNT must be > 0"
IDS_NUMIDS_INVALID = "ERR Number of IDs must be a positive integer"
IDS_NUMIDS_MISMATCH = "ERR The `numids` parameter must match the number of arguments"
IDS_REQUIRED = "ERR IDS option is required"
XNACK_MODE = "ERR mode must be SILENT, FAIL, or FATAL"
XNACK_NUMIDS_INVALID = "ERR numids must be a positive integer"
XNACK_NUMIDS_MISMATCH = "ERR number of IDs doesn't match numids"
XNACK_RETRYCOUNT = "ERR Invalid RETRYCOUNT value, must be >= 0"
XNACK_UNKNOWN_OPTION = "ERR Unrecognized XNACK option '{}'"
XNACK_EXPECTED_IDS = "ERR syntax error, expected IDS keyword"


# Redis formats command names and arguments into these messages with C's "%.*s":
# the text stops at a NUL byte and the limit counts bytes, and the raw bytes go
# out unchanged (CR and LF become spaces). These versions work on bytes and
# carry non-UTF-8 bytes through `str` with surrogateescape (the encoder
# reverses it).
def _c_string(raw: bytes, limit: int) -> bytes:
    nul = raw.find(b"\0")
    return (raw if nul < 0 else raw[:nul])[:limit]


def _message(raw: bytes) -> str:
    return raw.replace(b"\r", b" ").replace(b"\n", b" ").decode("utf-8", "surrogateescape")


def c_text(raw: bytes) -> str:
    """A client's bytes as C's "%s" puts them into an error: up to the first NUL, raw."""
    return _message(_c_string(raw, len(raw)))


def unknown_command(name: bytes, args: list[bytes]) -> str:
    shown = b""
    for arg in args:
        if len(shown) >= 128:
            break
        shown += b"'" + _c_string(arg, 128 - len(shown)) + b"' "
    return _message(b"ERR unknown command '" + _c_string(name, 128)
                    + b"', with args beginning with: " + shown)


def unknown_subcommand(sub: bytes, container: str) -> str:
    return _message(b"ERR unknown subcommand '" + _c_string(sub, 128) + b"'. Try "
                    + container.upper().encode() + b" HELP.")


def debug_error(text: bytes) -> str:
    """DEBUG ERROR's reply: the client's text as the whole error line (no ERR added)."""
    return _message(text)


DEBUG_RELOAD_OPTIONS = "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options."
DEBUG_PACKED_THRESHOLD = "ERR argument must be a memory value bigger than 1 and smaller than 4gb"


def subcommand_syntax(sub: bytes, container: str) -> str:
    """Redis's addReplySubcommandSyntaxError: a known subcommand given bad arguments."""
    return _message(b"ERR unknown subcommand or wrong number of arguments for '"
                    + _c_string(sub, 128) + b"'. Try " + container.upper().encode() + b" HELP.")

# --- stream commands (commands/streams.py, commands/stream_common.py) -----------------
XADD_MAXLEN_NEGATIVE = "ERR The MAXLEN argument must be >= 0."
XADD_LIMIT_NEGATIVE = "ERR The LIMIT argument must be >= 0."
TRIM_MAXLEN_AND_MINID = (
    "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
)
TRIM_LIMIT_WITHOUT_APPROX = "ERR syntax error, LIMIT cannot be used without the special ~ option"
TRIM_LIMIT_WITHOUT_STRATEGY = (
    "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
)
XTRIM_NO_STRATEGY = "ERR syntax error, XTRIM must be called with a trimming strategy"
XREAD_UNBALANCED = (
    "ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must be "
    "specified."
)
XREAD_GROUP_OPTION = "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
XREAD_NOACK_OPTION = "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
XREAD_GT_ID = (
    "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
    "<consumer> option."
)
XSETID_SMALLER_THAN_TOP = "ERR The ID specified in XSETID is smaller than the target stream top item"
XSETID_ENTRIES_ADDED_NEGATIVE = "ERR entries_added must be positive"
XSETID_ENTRIES_ADDED_TOO_SMALL = (
    "ERR The entries_added specified in XSETID is smaller than the target stream length"
)
XSETID_SMALLER_THAN_GIVEN_MAXDEL = (
    "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"
)
XSETID_SMALLER_THAN_MAXDEL = (
    "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id"
)
# Redis 8.6 idempotent production (not runnable here: texts from Redis's own test suite
# and client libraries' tests against 8.6).
IDMP_TWICE = "ERR IDMP/IDMPAUTO specified multiple times"
IDMP_EXPLICIT_ID = "ERR IDMP/IDMPAUTO can be used only with auto-generated IDs"
IDMP_EMPTY_PID = "ERR IDMP requires a non-empty producer ID"
IDMP_EMPTY_IID = "ERR IDMP requires a non-empty idempotent ID"
IDMPAUTO_EMPTY_PID = "ERR IDMPAUTO requires a non-empty producer ID"
# XIDMPRECORD's refusals (redis.io lists the cases; the texts as fakeredis has them)
XIDMPRECORD_NO_ENTRY = "ERR The specified stream ID was deleted or doesn't exist"
XIDMPRECORD_OTHER_ID = (
    "ERR The specified IDMP producer-id/idempotent-id pair maps to a different stream ID")
XCFGSET_NO_PARAMETER = "ERR At least one parameter (IDMP-DURATION or IDMP-MAXSIZE) is required"
XCFGSET_DURATION_RANGE = "ERR IDMP-DURATION must be between 1 and 86400 seconds"
XCFGSET_MAXSIZE_RANGE = "ERR IDMP-MAXSIZE must be between 1 and 10000 entries"

# --- connection, keyspace and server commands (commands/connection.py, keys.py,
# strings.py, server.py) -------------------------------------------------------------
HELLO_PROTOVER_NOT_INTEGER = "ERR Protocol version is not an integer or out of range"
HELLO_BAD_OPTION = "ERR Syntax error in HELLO option '{}'"
HELLO_NOAUTH = (
    "NOAUTH HELLO must be called with the client already authenticated, otherwise the "
    "HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and "
    "select the RESP protocol version at the same time"
)
INT32_OUT_OF_RANGE = "ERR value is out of range, value must between -2147483648 and 2147483647"
CLIENT_UNKNOWN_TYPE = "ERR Unknown client type '{}'"
CLIENT_INVALID_ID = "ERR Invalid client ID"
CLIENT_ID_NOT_POSITIVE = "ERR client-id should be greater than 0"
NO_SUCH_USER = "ERR No such user '{}'"
CLIENT_MAXAGE_NOT_INTEGER = "ERR maxage is not an integer or out of range"
CLIENT_MAXAGE_NOT_POSITIVE = "ERR maxage should be greater than 0"
CLIENT_UNBLOCK_REASON = "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR"
UNBLOCKED = "UNBLOCKED client unblocked via CLIENT UNBLOCK"
DECREMENT_OVERFLOW = "ERR decrement would overflow"
INVALID_CURSOR = "ERR invalid cursor"
EXPIRE_UNSUPPORTED_OPTION = "ERR Unsupported option {}"
CONFIG_NO_FILE = "ERR The server is running without a config file"
CONFIG_REWRITE_FAILED = "ERR Rewriting config file: {}"
SHUTDOWN_NOT_IN_PROGRESS = "ERR No shutdown in progress."
FUNCTION_FLUSH_MODE = "ERR FUNCTION FLUSH only supports SYNC|ASYNC option"
GETKEYS_INVALID_COMMAND = "ERR Invalid command specified"
GETKEYS_WRONG_ARITY = "ERR Invalid number of arguments specified for command"
GETKEYS_NO_KEYS = "ERR The command has no key arguments"
GETKEYS_INVALID_ARGS = "ERR Invalid arguments specified for command"

# --- dispatch (dispatch.py) -------------------------------------------------------------
INTERNAL_ERROR = "ERR internal error while running '{}'"
EXECABORT_BECAUSE = "EXECABORT Transaction discarded because of: {}"

# --- persistence (persistence/manager.py, commands/persistence.py) ----------------------
DEBUG_DISABLED = (
    'ERR DEBUG command not allowed. If the enable-debug-command option is set to "local", you'
    " can run it from a local connection, otherwise you need to set this option in the"
    " configuration file, and then restart the server."
)
PERSISTENCE_UNAVAILABLE = "ERR persistence is not available on this server"
MISCONF_RDB = (
    "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist"
    " to disk. Commands that may modify the data set are disabled, because this instance is"
    " configured to report errors during writes if RDB snapshotting fails"
    " (stop-writes-on-bgsave-error option). Please check the Redis logs for details about"
    " the RDB error."
)
RDB_RELOAD_FAILED = "ERR Error trying to load the RDB dump, check server logs."
AOF_LOAD_FAILED = "ERR Error loading the AOF: {}"
SAVE_FAILED = "ERR"
BGSAVE_IN_PROGRESS = "ERR Background save already in progress"
BGSAVE_CHILD_ACTIVE = (
    "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE"
    " SCHEDULE in order to schedule a BGSAVE whenever possible."
)
BGREWRITEAOF_IN_PROGRESS = "ERR Background append only file rewriting already in progress"
BGREWRITEAOF_FAILED = (
    "ERR Can't execute an AOF background rewriting. Please check the server logs for"
    " more information."
)

# --- ACL (acl.c) ---------------------------------------------------------------
NOPERM_COMMAND = "NOPERM User {} has no permissions to run the '{}' command"
NOPERM_KEY = "NOPERM No permissions to access a key"
NOPERM_CHANNEL = "NOPERM No permissions to access a channel"
NOPERM_AT_EXEC = ("NOPERM ACLs rules changed between the moment the transaction was accumulated "
                  "and the EXEC call. This command is no longer allowed for the following reason: {}")
DRYRUN_COMMAND = "User {} has no permissions to run the '{}' command"
DRYRUN_KEY = "User {} has no permissions to access the '{}' key"
DRYRUN_CHANNEL = "User {} has no permissions to access the '{}' channel"
ACL_SETUSER_RULE = "ERR Error in ACL SETUSER modifier '{}': {}"
ACL_BAD_USERNAME = "ERR Usernames can't contain spaces or null characters"
ACL_DEFAULT_UNDELETABLE = "ERR The 'default' user cannot be removed"
ACL_UNKNOWN_CATEGORY = "ERR Unknown category '{}'"
ACL_GENPASS_BITS = ("ERR ACL GENPASS argument must be the number of bits for the output password, "
                    "a positive number up to 4096")
ACL_USER_NOT_FOUND = "ERR User '{}' not found"
ACL_COMMAND_NOT_FOUND = "ERR Command '{}' not found"
ACL_NO_FILE = ("ERR This Redis instance is not configured to use an ACL file. You may want to "
               "specify users via the ACL SETUSER command and then issue a CONFIG REWRITE "
               "(assuming you have a Redis configuration file set) in order to store users in the "
               "Redis configuration.")
ACL_SAVE_FAILED = "ERR There was an error trying to save the ACLs. Please check the server logs for more information"
ACL_LOAD_FAILED = "ERR Error loading ACLs, {}"
# --- replication (rillet/replication, commands/replication.py) --------------------------
NOREPLICAS = "NOREPLICAS Not enough good replicas to write."
MASTERDOWN = (
    "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
)
INVALID_MASTER_PORT = "ERR Invalid master port"
WAIT_ON_REPLICA = (
    "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0"
    " if a replica is configured to be writable (which is not the default) writes to replicas"
    " are just local and are not propagated."
)
WAITAOF_ON_REPLICA = (
    "ERR WAITAOF cannot be used with replica instances. Please also note that writes to"
    " replicas are just local and are not propagated."
)
WAITAOF_APPENDONLY_OFF = (
    "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled."
)
REPLICAOF_DURING_FAILOVER = "ERR REPLICAOF not allowed while failing over."
REPLCONF_UNRECOGNIZED = "ERR Unrecognized REPLCONF option: {}"
REPLICA_ALREADY_CONNECTED = "OK Already connected to specified master"
PSYNC_FAILOVER_REPLID = "ERR PSYNC FAILOVER replid must match my replid."
FAILOVER_NOT_IN_PROGRESS = "ERR No failover in progress."
FAILOVER_IN_PROGRESS = "ERR FAILOVER already in progress."
FAILOVER_ON_REPLICA = "ERR FAILOVER is not valid when server is a replica."
FAILOVER_NO_REPLICAS = "ERR FAILOVER requires connected replicas."
FAILOVER_FORCE = (
    "ERR FAILOVER with force option requires both a timeout and target HOST and IP."
)
FAILOVER_NOT_A_REPLICA = "ERR FAILOVER target HOST and PORT is not a replica."
FAILOVER_NOT_ONLINE = "ERR FAILOVER target replica is not online."
FAILOVER_TIMEOUT = "ERR FAILOVER timeout must be greater than 0"
# --- collections: hashes, lists, sets, sorted sets ----------------------------------
HASH_NOT_INTEGER = "ERR hash value is not an integer"
HASH_NOT_FLOAT = "ERR hash value is not a float"
FLOAT_NAN_OR_INF = "ERR value is NaN or Infinity"
INCR_NAN_OR_INF = "ERR increment would produce NaN or Infinity"
RANDOM_COUNT_RANGE = (
    "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
)
VALUE_OUT_OF_RANGE = "ERR value is out of range"
HFE_NUMFIELDS_MISMATCH = "ERR The `numfields` parameter must match the number of arguments"
HFE_NUMFIELDS_POSITIVE = "ERR Parameter `numFields` should be greater than 0"
HFE_NUMFIELDS_COUNT = "ERR Number of fields must be a positive integer"
HFE_INVALID_NUMFIELDS = "ERR invalid number of fields"
HFE_UNKNOWN_ARGUMENT = "ERR unknown argument: {}"
HFE_FIELDS_MISSING = "ERR Mandatory argument FIELDS is missing or not at the right position"
HFE_NEGATIVE = "ERR invalid expire time, must be >= 0"
HFE_FNX_FXX = "ERR Only one of FXX or FNX arguments can be specified"
HFE_ONE_EXPIRY = "ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified"
STRING_NOT_FLOAT = "ERR value is not a valid float"
NUMKEYS_POSITIVE = "ERR numkeys should be greater than 0"
NUMKEYS_TOO_MANY = "ERR Number of keys can't be greater than number of args"
LIMIT_NEGATIVE = "ERR LIMIT can't be negative"
COUNT_MUST_BE_POSITIVE = "ERR value is out of range, must be positive"
NOVALUES_ONLY_HSCAN = "ERR NOVALUES option can only be used in HSCAN"
INDEX_OUT_OF_RANGE = "ERR index out of range"
LPOS_RANK_ZERO = (
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use"
    " negative to start from the end of the list"
)
COUNT_NEGATIVE = "ERR COUNT can't be negative"
MAXLEN_NEGATIVE = "ERR MAXLEN can't be negative"
COUNT_POSITIVE = "ERR count should be greater than 0"
TIMEOUT_NOT_FLOAT = "ERR timeout is not a float or out of range"
ZADD_XX_NX = "ERR XX and NX options at the same time are not compatible"
ZADD_GT_LT_NX = "ERR GT, LT, and/or NX options at the same time are not compatible"
ZADD_INCR_PAIR = "ERR INCR option supports a single increment-element pair"
ZSET_NAN_SCORE = "ERR resulting score is not a number (NaN)"
ZSET_MIN_MAX_FLOAT = "ERR min or max is not a float"
ZSET_MIN_MAX_LEX = "ERR min or max not valid string range item"
ZRANGE_LIMIT_RANK = (
    "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"
)
ZRANGE_WITHSCORES_LEX = "ERR syntax error, WITHSCORES not supported in combination with BYLEX"
ZSET_NEED_KEY = "ERR at least 1 input key is needed for '{}' command"
ZSET_WEIGHT_FLOAT = "ERR weight value is not a float"
STRING_TOO_LONG = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
OFFSET_OUT_OF_RANGE = "ERR offset is out of range"
LCS_NOT_STRINGS = "ERR The specified keys must contain string values"
LCS_LEN_AND_IDX = "ERR If you want both the length and indexes, please just use IDX."
LCS_TOO_BIG = "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"
SAME_OBJECT = "ERR source and destination objects are the same"
SWAPDB_FIRST = "ERR invalid first DB index"
SWAPDB_SECOND = "ERR invalid second DB index"
NO_LFU = (
    "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that"
    " when switching between policies at runtime LRU and LFU data will take some time to adjust."
)
NO_LRU = (
    "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when"
    " switching between policies at runtime LRU and LFU data will take some time to adjust."
)
# --- DUMP / RESTORE (commands/dump.py, persistence/rdb.py) ------------------------------
BUSYKEY = "BUSYKEY Target key name already exists."
RESTORE_BAD_TTL = "ERR Invalid TTL value, must be >= 0"
RESTORE_BAD_IDLETIME = "ERR Invalid IDLETIME value, must be >= 0"
RESTORE_BAD_FREQ = "ERR Invalid FREQ value, must be >= 0 and <= 255"
RESTORE_BAD_PAYLOAD = "ERR DUMP payload version or checksum are wrong"
RESTORE_BAD_FORMAT = "ERR Bad data format"

# --- scripting (EVAL, SCRIPT, FUNCTION, FCALL) --------------------------------------
NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL."
NOTBUSY = "NOTBUSY No scripts in execution right now."
UNKILLABLE = (
    "UNKILLABLE Sorry the script already executed write commands against the dataset. "
    "You can either wait the script termination or kill the server in a hard way using "
    "the SHUTDOWN NOSAVE command."
)
BUSY_EVAL = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
BUSY_FUNCTION = (
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."
)
# A killed function gets it too (Redis's one count hook for both).
SCRIPT_KILLED_BY_USER = "Script killed by user with SCRIPT KILL..."
SCRIPT_COMPILE = "ERR Error compiling script (new function): {}"
SCRIPT_BAD_ENGINE = "ERR Unexpected engine in script shebang: {}"
SCRIPT_BAD_SHEBANG_OPTION = "ERR Unknown lua shebang option: {}"
SCRIPT_BAD_FLAG = "ERR Unexpected flag in script shebang: {}"
SCRIPT_NUMKEYS_TOO_MANY = "ERR Number of keys can't be greater than number of args"
SCRIPT_NUMKEYS_NEGATIVE = "ERR Number of keys can't be negative"
SCRIPT_CALL_OUTSIDE = "ERR redis.call/pcall can only be called inside a script invocation"
SCRIPT_CALL_NO_ARGS = "ERR Please specify at least one argument for this redis lib call"
SCRIPT_CALL_BAD_ARG = "ERR Lua redis lib command arguments must be strings or integers"
# luaArgsToRedisArgv's errors: the only redis.call/pcall errors not counted in
# errorstats when they happen (the script's reply counts them, if it is one). A
# command's error, or scriptCall's refusal, is counted at once and its table says
# so (ignore_error_stats_update), so that returning or raising it counts no more.
SCRIPT_CALL_UNCOUNTED = frozenset({SCRIPT_CALL_OUTSIDE, SCRIPT_CALL_NO_ARGS, SCRIPT_CALL_BAD_ARG})
SCRIPT_UNKNOWN_COMMAND = "ERR Unknown Redis command called from script"
SCRIPT_WRONG_ARITY = "ERR Wrong number of args calling Redis command from script"
SCRIPT_NOT_ALLOWED = "ERR This Redis command is not allowed from script"
SCRIPT_WRITE_IN_READONLY = "ERR Write commands are not allowed from read-only scripts."
# scriptCall's ACL check (a script's command the user may not run): the NOPERM text without its code.
SCRIPT_ACL_FAILURE = "ERR ACL failure in script: {}"
# Cluster mode (Redis's scriptPrepareForRun and scriptVerifyClusterState)
SCRIPT_NO_CLUSTER = "ERR Can not run script on cluster, 'no-cluster' flag is set."
SCRIPT_CLUSTER_DOWN_READONLY = ("ERR Script attempted to execute a write command while the cluster"
                                " is down and readonly")
SCRIPT_CLUSTER_DOWN = "ERR Script attempted to execute a command while the cluster is down"
SCRIPT_CROSSSLOT = ("ERR Command '{}' in script attempted to access keys that don't hash to the"
                    " same slot")
SCRIPT_NON_LOCAL_KEY = "ERR Script attempted to access a non local key in a cluster node"
SCRIPT_OTHER_SLOT = "ERR Script attempted to access keys that do not hash to the same slot"
SCRIPT_FLUSH_OPTION = "ERR SCRIPT FLUSH only support SYNC|ASYNC option"
# A script's reply nested past luaReplyToRedisReply's Lua stack (LUAI_MAXCSTACK).
SCRIPT_STACK_LIMIT = "ERR reached lua stack limit"
FUNCTION_NO_METADATA = "ERR Missing library metadata"
FUNCTION_BAD_METADATA = "ERR Invalid metadata value given: {}"
FUNCTION_NO_NAME = "ERR Library name was not given"
FUNCTION_NO_ENGINE = "ERR Engine '{}' not found"
FUNCTION_BAD_LIBRARY_NAME = (
    "ERR Library names can only contain letters, numbers, or underscores(_) "
    "and must be at least one character long"
)
FUNCTION_LIBRARY_EXISTS = "ERR Library '{}' already exists"
FUNCTION_EXISTS = "ERR Function {} already exists"
FUNCTION_EXISTS_RESTORE = "ERR Function {} already exists"
FUNCTION_REGISTER_FAILED = "ERR Error registering functions: {}"
FUNCTION_NONE_REGISTERED = "ERR No functions registered"
FUNCTION_REGISTER_ARGS = "ERR wrong number of arguments to redis.register_function"
FUNCTION_UNKNOWN_ARGUMENT = "ERR unknown argument given to redis.register_function"
FUNCTION_BAD_DESCRIPTION = "ERR description argument given to redis.register_function must be a string"
FUNCTION_BAD_FLAGS = "ERR flags argument to redis.register_function must be a table representing function flags"
FUNCTION_UNKNOWN_FLAG = "ERR unknown flag given"
FUNCTION_NAME_NOT_STRING = "ERR function_name argument given to redis.register_function must be a string"
FUNCTION_CALLBACK_NOT_FUNCTION = "ERR callback argument given to redis.register_function must be a function"
FUNCTION_SECOND_NOT_FUNCTION = "ERR second argument to redis.register_function must be a function"
FUNCTION_ALREADY_IN_LIBRARY = "ERR Function already exists in the library"
FUNCTION_LIBRARY_NOT_FOUND = "ERR Library not found"
FUNCTION_NOT_FOUND = "ERR Function not found"
FUNCTION_RO_WITH_WRITES = "ERR Can not execute a script with write flag using *_ro command."
FUNCTION_RESTORE_PAYLOAD = "ERR DUMP payload version or checksum are wrong"
FUNCTION_RESTORE_POLICY = "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."
FUNCTION_LIST_BAD_OPTION = "ERR Unknown argument {}"
FUNCTION_LOAD_BAD_OPTION = "ERR Unknown option given: {}"
FUNCTION_LIST_NO_LIBRARYNAME = "ERR library name argument was not given"
FCALL_BAD_NUMKEYS = "ERR Bad number of keys provided"
FUNCTION_COMPILE = "ERR Error compiling function: {}"

# --- pub/sub --------------------------------------------------------------------------
PUBSUB_CONTEXT = (
    "ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET "
    "are allowed in this context"
)
SLOWLOG_COUNT = "ERR count should be greater than or equal to -1"
CLIENT_PAUSE_MODE = "ERR CLIENT PAUSE mode must be WRITE or ALL"

# --- bitmaps (commands/bitmaps.py: bitops.c) ---------------------------------------------
BIT_OFFSET = "ERR bit offset is not an integer or out of range"
BIT_VALUE = "ERR bit is not an integer or out of range"
BITPOS_BIT = "ERR The bit argument must be 1 or 0."
BITOP_NOT_ONE_KEY = "ERR BITOP NOT must be called with a single source key."
BITOP_TWO_KEYS = "ERR BITOP {} must be called with at least two source keys."
BITFIELD_TYPE = (
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is."
)
BITFIELD_OVERFLOW = "ERR Invalid OVERFLOW type specified"
BITFIELD_RO_GET_ONLY = "ERR BITFIELD_RO only supports the GET subcommand"

# --- SORT (commands/sort.py: sort.c) ---------------------------------------------------------
SORT_NOT_DOUBLE = "ERR One or more scores can't be converted into double"
SORT_BY_ACL = "ERR BY option of SORT denied due to insufficient ACL permissions."
SORT_BY_CLUSTER = ("ERR BY option of SORT denied in Cluster mode when keys formed by the pattern"
                   " may be in different slots.")
SORT_GET_CLUSTER = ("ERR GET option of SORT denied in Cluster mode when keys formed by the"
                    " pattern may be in different slots.")
SORT_GET_ACL = "ERR GET option of SORT denied due to insufficient ACL permissions."

# --- arrays (Redis 8.8, t_array.c) -----------------------------------------------------
ARRAY_INVALID_INDEX = "ERR invalid array index"
ARRAY_INDEX_OVERFLOW = "ERR array index overflow"
ARRAY_INSERT_OVERFLOW = "ERR insert index overflow"
ARRAY_RANGE_TOO_BIG = "ERR range exceeds maximum of 1000000 items"
ARRAY_COUNT_TOO_BIG = "ERR count exceeds maximum of 1000000 items"
ARRAY_LIMIT_POSITIVE = "ERR LIMIT must be positive"
ARRAY_UNKNOWN_OP = "ERR unknown operation"
ARRAY_MATCH_VALUE = "ERR MATCH requires a value argument"
ARRAY_INVALID_SIZE = "ERR invalid size"
ARRAY_SIZE_POSITIVE = "ERR size must be positive"
ARRAY_INVALID_COUNT = "ERR invalid COUNT"
ARRAY_TOO_MANY_PREDICATES = "ERR too many predicates, maximum is 250"
ARRAY_RE_TOO_LONG = "ERR regular expression is too long, maximum is 2048 bytes"
ARRAY_RE_EMPTY = "ERR regular expression is empty"
ARRAY_RE_INVALID = "ERR invalid regular expression: {}"
ARRAY_RE_BACKREFS = "ERR regular expression backreferences are not supported"

# --- HyperLogLog (hyperloglog.c) ------------------------------------------------------------
HLL_WRONGTYPE = "WRONGTYPE Key is not a valid HyperLogLog string value."
HLL_CORRUPT = "INVALIDOBJ Corrupted HLL object detected"
PFDEBUG_NO_KEY = "ERR The specified key does not exist"
PFDEBUG_NOT_SPARSE = "ERR HLL encoding is not sparse"
PFDEBUG_UNKNOWN = "ERR Unknown PFDEBUG subcommand '{}'"

# --- geo (geo.c) ------------------------------------------------------------------------------
GEO_BAD_PAIR = "ERR invalid longitude,latitude pair {:f},{:f}"
GEO_UNIT = "ERR unsupported unit provided. please use M, KM, FT, MI"
GEO_NEED_RADIUS = "ERR need numeric radius"
GEO_NEGATIVE_RADIUS = "ERR radius cannot be negative"
GEO_NEED_WIDTH = "ERR need numeric width"
GEO_NEED_HEIGHT = "ERR need numeric height"
GEO_NEGATIVE_BOX = "ERR height or width cannot be negative"
GEO_NO_MEMBER = "ERR could not decode requested zset member"
GEO_COUNT = "ERR COUNT must be > 0"
GEO_STORE_WITH = "ERR {} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
GEO_NEED_FROM = "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {}"
GEO_NEED_BY = "ERR exactly one of BYRADIUS and BYBOX can be specified for {}"
GEO_ANY_COUNT = "ERR the ANY argument requires COUNT argument"

# --- maxmemory --------------------------------------------------------------------------
OOM = "OOM command not allowed when used memory > 'maxmemory'."
SCRIPT_OOM_ALLOW_OOM = (
    "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'"
)

# --- CLIENT TRACKING (networking.c clientCommand, tracking.c) --------------------------
TRACKING_REDIRECT_TWICE = "ERR A client can only redirect to a single other client"
TRACKING_REDIRECT_MISSING = "ERR The client ID you want redirect to does not exist"
TRACKING_PREFIX_NEEDS_BCAST = "ERR PREFIX option requires BCAST mode to be enabled"
TRACKING_BCAST_SWITCH = (
    "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
    "and then re-enabling it with a different mode."
)
TRACKING_BCAST_OPTIN = "ERR OPTIN and OPTOUT are not compatible with BCAST"
TRACKING_OPTIN_OPTOUT = "ERR You can't specify both OPTIN mode and OPTOUT mode"
TRACKING_OPT_SWITCH = (
    "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
    "and then re-enabling it with a different mode."
)
TRACKING_PREFIX_EXISTING = (
    "ERR Prefix '{}' overlaps with an existing prefix '{}'. "
    "Prefixes for a single client must not overlap."
)
TRACKING_PREFIX_OTHER = (
    "ERR Prefix '{}' overlaps with another provided prefix '{}'. "
    "Prefixes for a single client must not overlap."
)
CACHING_NOT_TRACKING = (
    "ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN "
    "or OPTOUT mode enabled"
)
CACHING_YES_NOT_OPTIN = "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode."
CACHING_NO_NOT_OPTOUT = "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode."

# --- cluster, modules, MIGRATE, LOLWUT, SCRIPT DEBUG (commands/cluster.py, modules.py, migrate.py)
CLUSTER_DISABLED = "ERR This instance has cluster support disabled"
# cluster-enabled yes: CLUSTER's own errors (cluster.c, cluster_legacy.c)
CLUSTER_BAD_SLOT = "ERR Invalid or out of range slot"
CLUSTER_COUNT_BAD_SLOT = "ERR Invalid slot"
CLUSTER_GETKEYS_BAD_ARGS = "ERR Invalid slot or number of keys"
CLUSTER_SLOT_TWICE = "ERR Slot {} specified multiple times"
CLUSTER_SLOT_BUSY = "ERR Slot {} is already busy"
CLUSTER_SLOT_UNASSIGNED = "ERR Slot {} is already unassigned"
CLUSTER_RANGE_REVERSED = "ERR start slot number {} is greater than end slot number {}"
CLUSTER_UNKNOWN_NODE = "ERR Unknown node {}"
CLUSTER_UNKNOWN_NODE_SETSLOT = "ERR I don't know about node {}"
CLUSTER_SETSLOT_SYNTAX = ("ERR Invalid CLUSTER SETSLOT action or number of arguments."
                          " Try CLUSTER HELP")
CLUSTER_SETSLOT_ON_REPLICA = "ERR Please use SETSLOT only with masters."
CLUSTER_NOT_SLOT_OWNER = "ERR I'm not the owner of hash slot {}"
CLUSTER_ALREADY_SLOT_OWNER = "ERR I'm already the owner of hash slot {}"
CLUSTER_TARGET_NOT_MASTER = "ERR Target node is not a master"
CLUSTER_SLOT_HAS_KEYS = ("ERR Can't assign hashslot {} to a different node while I still hold"
                         " keys for this hash slot.")
CLUSTER_MEET_BAD_PORT = "ERR Invalid base port specified: {}"
CLUSTER_MEET_BAD_BUS_PORT = "ERR Invalid bus port specified: {}"
CLUSTER_MEET_BAD_ADDRESS = "ERR Invalid node address specified: {}:{}"
CLUSTER_FLUSHSLOTS_NOT_EMPTY = "ERR DB must be empty to perform CLUSTER FLUSHSLOTS."
CLUSTER_FORGET_MYSELF = "ERR I tried hard but I can't forget myself..."
CLUSTER_FORGET_MY_MASTER = "ERR Can't forget my master!"
CLUSTER_REPLICATE_MYSELF = "ERR Can't replicate myself"
CLUSTER_REPLICATE_REPLICA = "ERR I can only replicate a master, not a replica."
CLUSTER_REPLICATE_NOT_EMPTY = ("ERR To set a master the node must be empty and without assigned"
                               " slots.")
CLUSTER_NOT_A_MASTER = "ERR The specified node is not a master"
CLUSTER_BAD_EPOCH = "ERR Invalid config epoch specified: {}"
CLUSTER_EPOCH_OTHER_NODES = ("ERR The user can assign a config epoch only when the node does not"
                             " know any other node.")
CLUSTER_EPOCH_NONZERO = "ERR Node config epoch is already non-zero"
CLUSTER_RESET_WITH_KEYS = "ERR CLUSTER RESET can't be called with master nodes containing keys"
CLUSTER_SAVE_FAILED = "ERR error saving the cluster node config: {}"
CLUSTER_FAILOVER_ON_MASTER = "ERR You should send CLUSTER FAILOVER to a replica"
CLUSTER_FAILOVER_NO_MASTER = "ERR I'm a replica but my master is unknown to me"
CLUSTER_FAILOVER_MASTER_DOWN = "ERR Master is down or failed, please use CLUSTER FAILOVER FORCE"
# rillet has no cluster bus yet (docs/cluster.md): a failover needs one.
CLUSTER_FAILOVER_NO_BUS = "ERR CLUSTER FAILOVER needs the cluster bus, which this node has not got yet"
SLOT_STATS_REVERSED = "ERR Start slot number {} is greater than end slot number {}"
SLOT_STATS_METRIC = "ERR Unrecognized sort metric for ORDERBY."
SLOT_STATS_LIMIT = "ERR Limit has to lie in between 1 and 16384 (maximum number of slots)."
SLOT_STATS_REPEATED = "ERR Multiple filters of the same type are disallowed."
# The dispatcher's gate (Redis's getNodeByQuery and clusterRedirectClient)
CLUSTER_CROSSSLOT = "CROSSSLOT Keys in request don't hash to the same slot"
CLUSTER_TRYAGAIN = "TRYAGAIN Multiple keys request during rehashing of slot"
CLUSTER_DOWN = "CLUSTERDOWN The cluster is down"
CLUSTER_DOWN_READONLY = "CLUSTERDOWN The cluster is down and only accepts read commands"
CLUSTER_DOWN_UNBOUND = "CLUSTERDOWN Hash slot not served"
CLUSTER_MOVED = "MOVED {} {}:{}"
CLUSTER_ASK = "ASK {} {}:{}"
SWAPDB_IN_CLUSTER = "ERR SWAPDB is not allowed in cluster mode"
MOVE_IN_CLUSTER = "ERR MOVE is not allowed in cluster mode"
COPY_DB_IN_CLUSTER = "ERR Copying to another database is not allowed in cluster mode"
REPLICAOF_IN_CLUSTER = "ERR REPLICAOF not allowed in cluster mode."
MODULE_DISABLED = (
    'ERR MODULE command not allowed. If the enable-module-command option is set to "local", you'
    " can run it from a local connection, otherwise you need to set this option in the"
    " configuration file, and then restart the server."
)
# Redis's CMD_PROTECTED refusals, by the config that allows them (dispatch.py).
PROTECTED_REFUSED = {"enable-debug-command": DEBUG_DISABLED, "enable-module-command": MODULE_DISABLED}
MODULE_LOAD_FAILED = "ERR Error loading the extension. Please check the server logs."
MODULE_UNLOAD_UNKNOWN = "ERR Error unloading module: no such module with that name"
MODULE_UNLOAD_BUILT_IN = "ERR Error unloading module: the module can't be unloaded"
LATENCY_NO_SAMPLES = "ERR No samples available for event '{}'"
SCRIPT_DEBUG_USAGE = "ERR Use SCRIPT DEBUG YES/SYNC/NO"
SCRIPT_DEBUG_MULTI = "ERR SCRIPT DEBUG must be called outside a pipeline"
SCRIPT_DEBUG_UNSUPPORTED = (
    "ERR SCRIPT DEBUG YES/SYNC is not supported: this server has no Lua debugger"
)
MIGRATE_IOERR = "IOERR error or timeout {} to target instance"
MIGRATE_CONNECT = "IOERR error or timeout connecting to the client"
MIGRATE_KEYS_EMPTY = (
    "ERR When using MIGRATE KEYS option, the key argument must be set to the empty string"
)
MIGRATE_TARGET = "ERR Target instance replied with error: {}"

# --- CONFIG SET values of Redis's special parameters (config.py, after the dash) -----------
CONFIG_OOM_VALUES_COUNT = "wrong number of arguments"
CONFIG_OOM_VALUES_RANGE = "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
CONFIG_PERCENTILES_INVALID = "Invalid latency-tracking-info-percentiles parameters"
CONFIG_PERCENTILES_RANGE = "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
CONFIG_MEMORY_OR_PERCENT = "argument must be a memory or percent value"
CONFIG_PERCENT_MAX = "percentage argument must be less or equal to {}"
CONFIG_SHUTDOWN_SAVE_NOSAVE = "shutdown options SAVE and NOSAVE can't be used simultaneously"
CONFIG_INVALID_LOCALE = "Invalid locale name"
CONFIG_BAD_HOSTNAME = "Hostnames may only contain alphanumeric characters, hyphens or dots"
CONFIG_BAD_NODENAME = "Announced human node name contained invalid character"

# --- vector sets (Redis 8's vectorset module: modules/vector-sets/vset.c) ---------------------
VSET_BAD_VECTOR = "ERR invalid vector specification"
VSET_BAD_EF = "ERR invalid EF"
VSET_BAD_M = "ERR invalid M"
VSET_BAD_OPTION_AFTER_ELEMENT = "ERR invalid option after element"
VSET_QUANT_MISMATCH = "ERR asked quantization mismatch with existing vector set"
VSET_M_MISMATCH = "ERR asked M value mismatch with existing vector set"
VSET_DIM_MISMATCH = "ERR Vector dimension mismatch - got {} but set has {}"
VSET_NO_PROJECTION = "ERR cannot add projection to existing set without projection"
VSET_PROJECTION_MISMATCH = "ERR projection dimension mismatch with existing set"
VSET_INPUT_DIM_MISMATCH = "ERR Input dimension mismatch for projection - got {} but projection expects {}"
VSET_NO_ELEMENT = "ERR element not found in set"
VSET_BAD_COUNT = "ERR invalid COUNT"
VSET_BAD_EPSILON = "ERR invalid EPSILON"
VSET_BAD_FILTER_EF = "ERR invalid FILTER-EF"
VSET_FILTER_SYNTAX = "ERR syntax error in FILTER expression near: {}"
VSET_VSIM_SYNTAX = "ERR syntax error in VSIM command"
VSET_NO_KEY = "ERR key does not exist"
VSET_BAD_VEMB_OPTION = "ERR invalid option"
VSET_COUNT_NOT_INTEGER = "ERR COUNT value is not an integer"
VSET_NO_COPY = "ERR not supported for this module key"
VSET_BAD_RANGE_COUNT = "ERR invalid COUNT value"
VSET_BAD_RANGE_START = "ERR invalid start range format"
VSET_BAD_RANGE_END = "ERR invalid end range format"
VSET_RANGE_MIN_MAX = "ERR '-' can only be used as first argument, '+' only as second"
# --- INCREX (Redis 8.8): texts from Redis's tests/unit/type/increx.tcl and the
# redis.io page; the parts those match with a wildcard follow Redis's usual forms.
INCREX_ENX_NEEDS_EXPIRE = "ERR ENX flag requires an expiration"
INCREX_NOT_INTEGER = "ERR {} is not an integer or out of range"
INCREX_NOT_FLOAT = "ERR {} is not a valid float"
INCREX_INCREMENT_INFINITY = "ERR BYFLOAT increment cannot be Infinity"
INCREX_VALUE_INFINITY = "ERR value cannot be Infinity"
INCREX_BOUNDS_ORDER = "ERR LBOUND can't be greater than UBOUND"
INCREX_DELTA_OVERFLOW = "ERR applied increment would overflow"
INCREX_DELTA_INFINITY = "ERR applied increment would be Infinity"
# --- HOTKEYS (Redis 8.6, hotkeys.c) ---------------------------------------------------------
HOTKEYS_IN_PROGRESS = "ERR hotkey tracking session already in progress"
HOTKEYS_METRICS_REQUIRED = "ERR METRICS parameter is required"
HOTKEYS_METRICS_COUNT = "ERR METRICS count must be > 0 and <= 2"
HOTKEYS_COUNT_RANGE = "ERR COUNT must be between 1 and 64"
HOTKEYS_DURATION_RANGE = "ERR DURATION must be between 1 and 1000000"
HOTKEYS_SAMPLE_RANGE = "ERR SAMPLE ratio must be positive"
HOTKEYS_METRIC_TWICE = "ERR METRICS {} defined more than once!"
HOTKEYS_METRICS_MISMATCH = "ERR METRICS count does not match number of metric types provided"
HOTKEYS_NO_VALID_METRICS = "ERR METRICS no valid metrics passed. Supported: CPU|NET"
HOTKEYS_SLOTS_NO_CLUSTER = "ERR SLOTS parameter cannot be used in non-cluster mode"
HOTKEYS_RESET_IN_PROGRESS = "ERR hotkey tracking session in progress, stop tracking first"

# --- stream policies (commands/policies.py, rillet's own commands) -------------------
RETENTION_NOT_VALID = "ERR milliseconds must be a non-negative integer"
MAX_DELIVERIES_NOT_POSITIVE = "ERR max-deliveries must be a positive integer"
DEAD_LETTER_SAME_KEY = "ERR the dead-letter key must differ from the stream's key"
