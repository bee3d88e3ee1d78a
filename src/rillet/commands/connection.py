"""Connection commands: PING, ECHO, HELLO, AUTH, SELECT, QUIT, RESET and CLIENT.

These are what clients send on connect (redis-py sends HELLO or AUTH, SELECT
and CLIENT SETINFO), so their replies must match Redis exactly.
"""

from __future__ import annotations

from rillet import REDIS_COMPAT_VERSION, errors
from rillet.acl import User
from rillet.commands.args import Options, parse_int
from rillet.commands.modules import module_entries
from rillet.commands.table import command, help_reply, redact_from, redact_options
from rillet.errors import ReplyError
from rillet.resp.types import OK, PONG, Map, SimpleString, Verbatim
from rillet.state import Client

RESET = SimpleString(b"RESET")


@command("ping", -1, "fast", group="connection", since="1.0.0")
def ping(ctx: Client, argv: list[bytes]) -> object:
    """PING [message]"""
    if len(argv) > 2:
        raise ReplyError(errors.wrong_arity("ping"))
    if ctx.pubsub is not None and not ctx.resp3:
        # In RESP2's subscribed mode PING answers as a message frame would.
        return [b"pong", argv[1] if len(argv) == 2 else b""]
    return argv[1] if len(argv) == 2 else PONG


@command("echo", 2, "fast loading stale", group="connection", since="1.0.0")
def echo(ctx: Client, argv: list[bytes]) -> object:
    """ECHO message"""
    return argv[1]


def _check_password(ctx: Client, username: bytes | None, password: bytes) -> User:
    """Redis's ACLAuthenticateUser: the user, or WRONGPASS (logged, counted in INFO)."""
    acl = ctx.server.acl
    if username is None:
        if acl.default.nopass:
            raise ReplyError(errors.AUTH_NOT_CONFIGURED)
        username = b"default"
    user = acl.authenticate(username, password)
    if user is None:
        log_auth_failure(ctx, username)
        raise ReplyError(errors.WRONGPASS)
    return user


def log_auth_failure(ctx: Client, username: bytes) -> None:
    """An ACL LOG entry for a failed AUTH (reason auth, object AUTH), as Redis adds it."""
    now = ctx.server.clock.now_ms()
    ctx.server.acl.add_log("auth", "toplevel", b"AUTH", username, client_info_line(ctx, now), now,
                           ctx.server.config["acllog-max-len"])


def _authenticate(ctx: Client, user: User) -> None:
    ctx.set_user(user)
    ctx.authenticated = True
    if ctx.conn is not None and hasattr(ctx.conn, "authenticated"):
        ctx.conn.authenticated()


@command("auth", -2, "noscript loading stale fast no_auth allow_busy", group="connection",
         since="1.0.0", redact=redact_from(1))
def auth(ctx: Client, argv: list[bytes]) -> object:
    """AUTH [username] password"""
    if len(argv) > 3:
        raise ReplyError(errors.SYNTAX)
    username = argv[1] if len(argv) == 3 else None
    _authenticate(ctx, _check_password(ctx, username, argv[-1]))
    return OK


def _valid_name(name: bytes) -> bool:
    # Redis allows printable ASCII except space (validateClientAttr), and checks
    # it as a C string: nothing after a NUL byte is looked at.
    return all(33 <= ch <= 126 for ch in name.split(b"\0", 1)[0])


@command("hello", -1, "noscript loading stale fast no_auth allow_busy", group="connection",
         since="6.0.0", redact=redact_options(2, {b"AUTH": 2}, {b"SETNAME": 1}))
def hello(ctx: Client, argv: list[bytes]) -> object:
    """HELLO [protover [AUTH username password] [SETNAME clientname]]

    Checked in Redis's order: the version (NOPROTO before any option), then
    each option as it comes, a SETNAME's name included.
    """
    protover = None
    if len(argv) >= 2:
        try:
            protover = parse_int(argv[1])
        except ReplyError:
            raise ReplyError(errors.HELLO_PROTOVER_NOT_INTEGER) from None
        if protover not in (2, 3):
            raise ReplyError(errors.NOPROTO)
    i = 2
    auth_pair = None
    name = None
    while i < len(argv):
        option = argv[i].upper()
        if option == b"AUTH" and i + 2 < len(argv):
            auth_pair = (argv[i + 1], argv[i + 2])
            i += 3
        elif option == b"SETNAME" and i + 1 < len(argv):
            name = argv[i + 1]
            if not _valid_name(name):
                raise ReplyError(errors.INVALID_CLIENT_NAME)
            i += 2
        else:
            raise ReplyError(errors.HELLO_BAD_OPTION.format(errors.c_text(argv[i])))
    if auth_pair is not None:
        _authenticate(ctx, _check_password(ctx, auth_pair[0], auth_pair[1]))
    if not ctx.authenticated:
        raise ReplyError(errors.HELLO_NOAUTH)
    if name is not None:
        ctx.name = name
    if protover is not None and ctx.resp3 != (protover == 3):
        ctx.resp3 = protover == 3
        ctx.server.pubsub.protocol_changed(ctx)  # a subscriber's frames change with it
    replication = ctx.server.replication
    is_replica = replication.is_replica if replication is not None else bool(
        ctx.server.config["replicaof"])
    role = b"replica" if is_replica else b"master"
    return Map([
        (b"server", b"redis"),
        (b"version", REDIS_COMPAT_VERSION.encode()),
        (b"proto", 3 if ctx.resp3 else 2),
        (b"id", ctx.id),
        (b"mode", b"standalone" if ctx.server.cluster is None else b"cluster"),
        (b"role", role),
        (b"modules", module_entries()),
    ])


@command("select", 2, "loading stale fast", group="connection", since="1.0.0")
def select(ctx: Client, argv: list[bytes]) -> object:
    """SELECT index"""
    index = parse_int(argv[1])
    if not -(2**31) <= index < 2**31:  # getIntFromObjectOrReply
        raise ReplyError(errors.INT32_OUT_OF_RANGE)
    if index and ctx.server.cluster is not None:
        raise ReplyError(errors.SELECT_NOT_ALLOWED)
    if not 0 <= index < len(ctx.server.keyspace):
        raise ReplyError(errors.OUT_OF_RANGE_DB)
    ctx.db = ctx.server.keyspace[index]
    return OK


@command("quit", -1, "noscript loading stale fast no_auth allow_busy", group="connection",
         since="1.0.0")
def quit_(ctx: Client, argv: list[bytes]) -> object:
    """QUIT"""
    ctx.closing = True
    return OK


@command("reset", 1, "noscript loading stale fast no_auth allow_busy", group="connection",
         since="6.2.0")
def reset(ctx: Client, argv: list[bytes]) -> object:
    """RESET"""
    server = ctx.server
    ctx.multi = None
    ctx.multi_error = False
    server.unwatch_all(ctx)
    server.pubsub.forget(ctx)
    server.tracking.disable(ctx)
    server.remove_monitor(ctx)  # before MONITOR is fed: a monitor does not see its RESET
    ctx.no_evict = ctx.no_touch = False
    ctx.db = server.keyspace[0]
    ctx.resp3 = False
    ctx.name = b""
    ctx.set_user(server.acl.default)
    ctx.authenticated = server.acl.default_open
    return RESET


# --- CLIENT ---------------------------------------------------------------------

def client_info_line(client: Client, now_ms: int, running: list[bytes] | None = None) -> str:
    """CLIENT LIST's line for `client`; `running`: the command it is running now, which
    Redis still holds in its query buffer (qbuf, as sent in RESP) and argv (argv-mem)."""
    conn = client.conn
    subs = client.pubsub
    multi = -1 if client.multi is None else len(client.multi)
    qbuf = conn.query_buffer_size if conn else 0
    argv_mem = 0
    if running is not None:
        argv_mem = sum(len(arg) for arg in running)
        qbuf += argv_mem + len(b"*%d\r\n" % len(running)) + sum(
            len(b"$%d\r\n\r\n" % len(arg)) for arg in running)
    omem = conn.output_buffer_size if conn else 0
    return (
        f"id={client.id} addr={conn.addr if conn else ''} laddr={conn.laddr if conn else ''} "
        f"fd={conn.fd if conn else -1} name={client.name.decode('utf-8', 'replace')} "
        f"age={(now_ms - client.created_ms) // 1000} "
        f"idle={(now_ms - client.last_interaction_ms) // 1000} "
        f"flags={_client_flags(client)} "
        f"db={client.db.index} sub={len(subs.channels) if subs else 0} "
        f"psub={len(subs.patterns) if subs else 0} ssub={len(subs.shard) if subs else 0} "
        f"multi={multi} watch={len(client.watched)} "
        f"qbuf={qbuf} qbuf-free=0 argv-mem={argv_mem} multi-mem=0 rbs=1024 rbp=0 obl=0 oll=0 omem={omem} "
        f"tot-mem={1024 + qbuf + omem} events=r cmd={client.last_command.decode()} "
        f"user={client.user.name.decode('utf-8', 'replace')} "
        f"redir={-1 if client.tracking is None else client.tracking.redirect} "
        f"resp={3 if client.resp3 else 2} lib-name={client.lib_name.decode('utf-8', 'replace')} "
        f"lib-ver={client.lib_ver.decode('utf-8', 'replace')} io-thread=0 "
        f"tot-net-in={getattr(conn, 'net_in', 0)} tot-net-out={getattr(conn, 'net_out', 0)} "
        f"tot-cmds={getattr(conn, 'commands', 0)}"
    )


def _client_flags(client: Client) -> str:
    # In Redis's order (networking.c getClientInfoString); "N" when none apply.
    flags = "" if client.flags == "N" else client.flags
    if _subscribed(client):
        flags += "P"
    if client.multi is not None:
        flags += "x"
    if client.blocked is not None:
        flags += "b"
    tracking = client.tracking
    if tracking is not None:
        flags += "t"
        if tracking.broken:
            flags += "R"
        if tracking.bcast:
            flags += "B"
    if client.dirty_cas and client.watched:
        flags += "d"
    if getattr(client.conn, "unix", False):
        flags += "U"
    if client.cluster_readonly:
        flags += "r"
    if client.no_evict:
        flags += "e"
    if client.no_touch:
        flags += "T"
    return flags or "N"


@command("client|id", 2, "noscript loading stale", group="connection", since="5.0.0")
def client_id(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT ID"""
    return ctx.id


@command("client|setname", 3, "noscript loading stale", group="connection", since="2.6.9")
def client_setname(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT SETNAME connection-name"""
    if not _valid_name(argv[2]):
        raise ReplyError(errors.INVALID_CLIENT_NAME)
    ctx.name = argv[2]
    return OK


@command("client|getname", 2, "noscript loading stale", group="connection", since="2.6.9")
def client_getname(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT GETNAME"""
    return ctx.name or None


@command("client|setinfo", 4, "noscript loading stale", group="connection", since="7.2.0")
def client_setinfo(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT SETINFO <LIB-NAME libname | LIB-VER libver>"""
    attr = argv[2].upper()
    if attr not in (b"LIB-NAME", b"LIB-VER"):
        shown = argv[2].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
        raise ReplyError(errors.CLIENT_SETINFO_BAD_ATTR.format(shown))
    if not _valid_name(argv[3]):
        raise ReplyError(errors.CLIENT_SETINFO_BAD_VALUE.format(argv[2].decode()))
    if attr == b"LIB-NAME":
        ctx.lib_name = argv[3]
    else:
        ctx.lib_ver = argv[3]
    return OK


@command("client|info", 2, "noscript loading stale", group="connection", since="6.2.0")
def client_info(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT INFO"""
    return Verbatim(client_info_line(ctx, ctx.server.clock.now_ms(), argv).encode() + b"\n")


@command("client|list", -2, "admin noscript loading stale", group="connection", since="2.4.0")
def client_list(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT LIST [TYPE <NORMAL | MASTER | REPLICA | PUBSUB>] [ID client-id [client-id ...]]

    As in Redis, TYPE comes alone (CLIENT LIST TYPE t) and ID takes the rest of
    the arguments; any other shape is a syntax error.
    """
    clients = list(ctx.server.clients.values())
    option = argv[2].upper() if len(argv) > 2 else b""
    if len(argv) == 4 and option == b"TYPE":
        kind = argv[3].lower()
        if kind not in _CLIENT_TYPES:
            raise ReplyError(errors.CLIENT_UNKNOWN_TYPE.format(errors.c_text(argv[3])))
        clients = [c for c in clients if _client_type(c) == _TYPE_ALIASES.get(kind, kind)]
    elif len(argv) > 3 and option == b"ID":
        ids = set()
        for raw in argv[3:]:
            try:
                ids.add(parse_int(raw))
            except ReplyError:
                raise ReplyError(errors.CLIENT_INVALID_ID) from None
        clients = [c for c in clients if c.id in ids]
    elif len(argv) != 2:
        raise ReplyError(errors.SYNTAX)
    now = ctx.server.clock.now_ms()
    text = "".join(client_info_line(c, now, argv if c is ctx else None) + "\n" for c in clients)
    return Verbatim(text.encode())


_KILL_FILTERS = Options({
    b"ID": (1, None), b"ADDR": (1, None), b"LADDR": (1, None), b"SKIPME": (1, None),
    b"USER": (1, None), b"TYPE": (1, None), b"MAXAGE": (1, None),
})


@command("client|kill", -3, "admin noscript loading stale", group="connection", since="2.4.0")
def client_kill(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT KILL <ip:port | <[ID client-id] | [TYPE type] | [USER username] | [ADDR ip:port] | [LADDR ip:port] | [SKIPME <YES | NO>] | [MAXAGE maxage]> [...]>"""
    server = ctx.server
    if len(argv) == 3:
        # Old form: CLIENT KILL addr, replies OK or an error.
        for client in list(server.clients.values()):
            if client.conn is not None and client.conn.addr == argv[2].decode():
                kill_client(client, ctx)
                return OK
        raise ReplyError(errors.NO_SUCH_CLIENT)
    filters = _KILL_FILTERS.parse(argv, 2)
    skipme = True
    wanted_id = None
    max_age = None
    for option, value in filters.items():  # checked in the order given, as Redis does
        if option == b"SKIPME":
            if value.lower() not in (b"yes", b"no"):
                raise ReplyError(errors.SYNTAX)
            skipme = value.lower() == b"yes"
        elif option == b"ID":
            try:
                wanted_id = parse_int(value)
            except ReplyError:
                raise ReplyError(errors.CLIENT_ID_NOT_POSITIVE) from None
            if wanted_id <= 0:
                raise ReplyError(errors.CLIENT_ID_NOT_POSITIVE)
        elif option == b"USER" and value not in server.acl.users:
            raise ReplyError(errors.NO_SUCH_USER.format(value.decode("utf-8", "replace")))
        elif option == b"TYPE" and value.lower() not in _CLIENT_TYPES:
            raise ReplyError(errors.CLIENT_UNKNOWN_TYPE.format(errors.c_text(value)))
        elif option == b"MAXAGE":
            max_age = parse_int(value, errors.CLIENT_MAXAGE_NOT_INTEGER)
            if max_age <= 0:
                raise ReplyError(errors.CLIENT_MAXAGE_NOT_POSITIVE)
    now = server.clock.now_ms()
    killed = 0
    for client in list(server.clients.values()):
        if skipme and client is ctx:
            continue
        if wanted_id is not None and client.id != wanted_id:
            continue
        if b"ADDR" in filters and (client.conn is None or client.conn.addr.encode() != filters[b"ADDR"]):
            continue
        if b"LADDR" in filters and (client.conn is None or client.conn.laddr.encode() != filters[b"LADDR"]):
            continue
        if b"USER" in filters and filters[b"USER"] != client.user.name:
            continue
        if b"TYPE" in filters and _client_type(client) != _TYPE_ALIASES.get(
                filters[b"TYPE"].lower(), filters[b"TYPE"].lower()):
            continue
        if max_age is not None and (now - client.created_ms) // 1000 < max_age:
            continue
        kill_client(client, ctx)
        killed += 1
    if b"TYPE" in filters and filters[b"TYPE"].lower() == b"master":
        # The master link's client is the replication's own, not in `clients`.
        replication = server.replication
        link = replication.link if replication is not None else None
        if link is not None and link.up:
            link.kill()
            killed += 1
    return killed


_TYPE_ALIASES = {b"slave": b"replica"}
_CLIENT_TYPES = frozenset({b"normal", b"master", b"replica", b"slave", b"pubsub"})


def _client_type(client: Client) -> bytes:
    """CLIENT LIST/KILL's TYPE: flag S marks a replica attached to us (replication), M the master."""
    if "S" in client.flags:
        return b"replica"
    if "M" in client.flags:
        return b"master"
    if _subscribed(client):
        return b"pubsub"
    return b"normal"


def _subscribed(client: Client) -> bool:
    """Redis's CLIENT_PUBSUB: some subscription (in RESP3 too), gone with the last one."""
    subs = client.pubsub
    return subs is not None and subs.total() > 0


def kill_client(client: Client, ctx: Client | None = None) -> None:
    """Disconnect `client` (CLIENT KILL, and the ACL changes that drop a client)."""
    client.closing = True
    # A client killing itself still gets its reply: the connection closes after it.
    if client.conn is not None and client is not ctx:
        client.conn.close()


@command("client|unblock", -3, "admin noscript loading stale", group="connection", since="5.0.0")
def client_unblock(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT UNBLOCK client-id [TIMEOUT | ERROR]"""
    target_id = parse_int(argv[2])
    mode = argv[3].upper() if len(argv) > 3 else b"TIMEOUT"
    if len(argv) > 4 or mode not in (b"TIMEOUT", b"ERROR"):
        raise ReplyError(errors.CLIENT_UNBLOCK_REASON)
    target = ctx.server.clients.get(target_id)
    if target is None or target.blocked is None:
        return 0
    entry = ctx.server.unblock(target)
    if entry is None:
        return 0
    reply: object = entry.timeout_reply
    if mode == b"ERROR":
        reply = ReplyError(errors.UNBLOCKED)
        ctx.server.stats.count_error(errors.UNBLOCKED)
    unblocked = ctx.server.on_unblocked
    if unblocked is not None:
        unblocked(target, entry, reply)
    return 1


@command("client|no-evict", 3, "admin noscript loading stale", group="connection", since="7.0.0")
def client_no_evict(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT NO-EVICT <ON | OFF>"""
    if argv[2].upper() not in (b"ON", b"OFF"):
        raise ReplyError(errors.SYNTAX)
    ctx.no_evict = argv[2].upper() == b"ON"
    return OK


@command("client|no-touch", 3, "noscript loading stale", group="connection", since="7.2.0")
def client_no_touch(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT NO-TOUCH <ON | OFF>"""
    if argv[2].upper() not in (b"ON", b"OFF"):
        raise ReplyError(errors.SYNTAX)
    ctx.no_touch = argv[2].upper() == b"ON"
    return OK


@command("client|help", 2, "loading stale", group="connection", since="5.0.0")
def client_help(ctx: Client, argv: list[bytes]) -> object:
    """CLIENT HELP"""
    return help_reply(
        "CLIENT",
        b"CACHING (YES|NO)",
        b"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
        b"GETREDIR",
        b"    Return the client ID we are redirecting to when tracking is enabled.",
        b"GETNAME",
        b"    Return the name of the current connection.",
        b"ID",
        b"    Return the ID of the current connection.",
        b"INFO",
        b"    Return information about the current client connection.",
        b"KILL <ip:port>",
        b"    Kill connection made from <ip:port>.",
        b"KILL <option> <value> [<option> <value> [...]]",
        b"    Kill connections. Options are:",
        b"    * ADDR (<ip:port>|<unixsocket>:0)",
        b"      Kill connections made from the specified address",
        b"    * LADDR (<ip:port>|<unixsocket>:0)",
        b"      Kill connections made to specified local address",
        b"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        b"      Kill connections by type.",
        b"    * USER <username>",
        b"      Kill connections authenticated by <username>.",
        b"    * SKIPME (YES|NO)",
        b"      Skip killing current connection (default: yes).",
        b"    * ID <client-id>",
        b"      Kill connections by client id.",
        b"    * MAXAGE <maxage>",
        b"      Kill connections older than the specified age.",
        b"LIST [options ...]",
        b"    Return information about client connections. Options:",
        b"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
        b"      Return clients of specified type.",
        b"UNPAUSE",
        b"    Stop the current client pause, resuming traffic.",
        b"PAUSE <timeout> [WRITE|ALL]",
        b"    Suspend all, or just write, clients for <timeout> milliseconds.",
        b"REPLY (ON|OFF|SKIP)",
        b"    Control the replies sent to the current connection.",
        b"SETNAME <name>",
        b"    Assign the name <name> to the current connection.",
        b"SETINFO <option> <value>",
        b"    Set client meta attr. Options are:",
        b"    * LIB-NAME: the client lib name.",
        b"    * LIB-VER: the client lib version.",
        b"UNBLOCK <clientid> [TIMEOUT|ERROR]",
        b"    Unblock the specified blocked client.",
        b"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
        b"         [OPTIN] [OPTOUT] [NOLOOP]",
        b"    Control server assisted client side caching.",
        b"TRACKINGINFO",
        b"    Report tracking status for the current connection.",
        b"NO-EVICT (ON|OFF)",
        b"    Protect current client connection from eviction.",
        b"NO-TOUCH (ON|OFF)",
        b"    Will not touch LRU/LFU stats when this mode is on.",
    )
