"""The cluster bus's wire format: Redis's `clusterMsg`, byte for byte.

A rillet node and a Redis 8.2.3 node must share a cluster, so this is Redis's
layout (src/cluster_legacy.h), not one of ours. Every packet is a fixed 2256-byte
header followed by a body whose shape depends on the type:

    offset  size  field (integers big-endian unless said)
         0     4  sig "RCmb"
         4     4  totlen: the whole packet, header included
         8     2  ver (1)
        10     2  port: the client port (the TLS one when the bus runs TLS)
        12     2  type (MsgType)
        14     2  count: gossip entries (PING/PONG/MEET), else 0
        16     8  currentEpoch
        24     8  configEpoch: the sender's, or its master's if a replica
        32     8  offset: replication offset
        40    40  sender node id
        80  2048  myslots: 16384 bits, slot s is bit (s & 7) of byte s // 8
      2128    40  slaveof node id, all NUL for a master
      2168    46  myip, NUL-terminated; empty lets the receiver use the peer address
      2214     2  extensions: ping extensions that follow the gossip
      2216    30  reserved (zero)
      2246     2  pport: the other client port (plain TCP when port is TLS)
      2248     2  cport: the bus port
      2250     2  flags: the sender's node flags (NodeFlag)
      2252     1  state: 0 ok, 1 fail
      2253     3  mflags: byte 0 holds MFlag0
      2256        body

Bodies: PING/PONG/MEET carry `count` 104-byte gossip entries, then (when mflags
has EXT_DATA) `extensions` ping extensions, each an 8-byte header (u32 length of
the whole extension, u16 type, u16 zero) and data zero-padded to a multiple of 8.
FAIL carries a node id; PUBLISH and PUBLISHSHARD two u32 lengths then channel and
message; UPDATE a configEpoch, a node id and a slot bitmap; MODULE a module id
(the sender's native byte order, little-endian on every platform Redis runs on),
a u32 length, a u8 type and the payload; FAILOVER_AUTH_REQUEST/ACK and MFSTART
are the header alone.

`decode` checks what Redis checks before acting on a packet (clusterReadHandler,
clusterProcessPacket) and raises a BusProtocolError subclass that says what the
link layer should do; it reads only within the packet, so no input crashes or
loops. Pure data: no I/O, no asyncio, nothing of the server.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum, IntFlag

SIG = b"RCmb"
PROTO_VER = 1
NAMELEN = 40
IP_LEN = 46  # NET_IP_STR_LEN
SLOTS = 16384
SLOTS_BYTES = SLOTS // 8
NULL_NAME = b"\0" * NAMELEN

_HEADER = struct.Struct(">4sIHHHHQQQ40s2048s40s46sH30sHHHB3s")
_GOSSIP = struct.Struct(">40sII46sHHHHH")
_EXT = struct.Struct(">IHH")
_PUBLISH = struct.Struct(">II")
_UPDATE = struct.Struct(">Q40s2048s")
_MODULE_ID = struct.Struct("<Q")  # native order on the sender; see the docstring
_MODULE = struct.Struct(">IB")
_FORGOTTEN = struct.Struct(">40sQ")

HEADER_LEN = _HEADER.size  # CLUSTERMSG_MIN_LEN, 2256
GOSSIP_LEN = _GOSSIP.size  # 104
EXT_HEADER_LEN = _EXT.size  # 8
FAIL_LEN = HEADER_LEN + NAMELEN
UPDATE_LEN = HEADER_LEN + _UPDATE.size
PUBLISH_MIN_LEN = HEADER_LEN + _PUBLISH.size
MODULE_MIN_LEN = HEADER_LEN + _MODULE_ID.size + _MODULE.size  # 13 bytes before the payload
# Redis reads 8 bytes (sig, totlen) before it knows how long a packet is.
PREFIX_LEN = 8

assert HEADER_LEN == 2256 and GOSSIP_LEN == 104 and _UPDATE.size == 2096


class MsgType(IntEnum):
    PING = 0
    PONG = 1
    MEET = 2
    FAIL = 3
    PUBLISH = 4
    FAILOVER_AUTH_REQUEST = 5
    FAILOVER_AUTH_ACK = 6
    UPDATE = 7
    MFSTART = 8
    MODULE = 9
    PUBLISHSHARD = 10


class ExtType(IntEnum):
    HOSTNAME = 0
    HUMAN_NODENAME = 1
    FORGOTTEN_NODE = 2
    SHARDID = 3
    INTERNALSECRET = 4


class NodeFlag(IntFlag):
    MASTER = 1
    SLAVE = 2
    PFAIL = 4
    FAIL = 8
    MYSELF = 16
    HANDSHAKE = 32
    NOADDR = 64
    MEET = 128
    MIGRATE_TO = 256
    NOFAILOVER = 512
    EXTENSIONS_SUPPORTED = 1024


class MFlag0(IntFlag):
    PAUSED = 1  # master paused for a manual failover
    FORCEACK = 2  # vote even though the master is up (manual failover)
    EXT_DATA = 4  # the sender understands ping extensions


CLUSTER_OK = 0
CLUSTER_FAIL = 1


class BusProtocolError(ValueError):
    """A packet Redis would not act on."""


class BadFrame(BusProtocolError):
    """Wrong signature or a totlen below the header's size: Redis closes the link,
    since the stream can no longer be framed."""


class IncompletePacket(BusProtocolError):
    """Fewer bytes than the packet's totlen: read more before decoding."""


class UnsupportedVersion(BusProtocolError):
    """A protocol version other than 1: Redis drops the packet, keeps the link."""


class MalformedPacket(BusProtocolError):
    """A length that does not add up for the type, or an invalid extension: Redis
    logs it, drops the packet and keeps the link."""


# --- bodies -------------------------------------------------------------------


@dataclass(slots=True)
class Gossip:
    """What the sender knows of another node. Times are Unix seconds."""

    nodename: str
    ping_sent: int = 0
    pong_received: int = 0
    ip: str = ""
    port: int = 0
    cport: int = 0
    flags: int = 0
    pport: int = 0


@dataclass(slots=True)
class HostnameExt:
    hostname: str


@dataclass(slots=True)
class HumanNodenameExt:
    nodename: str


@dataclass(slots=True)
class ForgottenNodeExt:
    """CLUSTER FORGET gossiped: drop `name` and refuse it for `ttl` seconds."""

    name: str
    ttl: int


@dataclass(slots=True)
class ShardIdExt:
    shard_id: str


@dataclass(slots=True)
class InternalSecretExt:
    """Redis 8's cluster-wide secret for internal commands; nodes keep the smallest."""

    secret: bytes


@dataclass(slots=True)
class UnknownExt:
    """A type this version does not know: Redis skips it, so it is kept as data."""

    type: int
    data: bytes = b""


PingExt = HostnameExt | HumanNodenameExt | ForgottenNodeExt | ShardIdExt | InternalSecretExt | UnknownExt


@dataclass(slots=True)
class PingBody:
    """PING, PONG and MEET."""

    gossip: list[Gossip] = field(default_factory=list)
    extensions: list[PingExt] = field(default_factory=list)


@dataclass(slots=True)
class FailBody:
    nodename: str


@dataclass(slots=True)
class PublishBody:
    """PUBLISH and PUBLISHSHARD."""

    channel: bytes
    message: bytes


@dataclass(slots=True)
class UpdateBody:
    """The slots `nodename` serves under `config_epoch`."""

    config_epoch: int
    nodename: str
    slots: bytes = bytes(SLOTS_BYTES)


@dataclass(slots=True)
class ModuleBody:
    module_id: int
    type: int
    payload: bytes = b""


@dataclass(slots=True)
class UnknownBody:
    """A type this version does not know: Redis accepts any length and ignores it."""

    data: bytes = b""


Body = PingBody | FailBody | PublishBody | UpdateBody | ModuleBody | UnknownBody | None

PING_TYPES = (MsgType.PING, MsgType.PONG, MsgType.MEET)
_BODY_OF: dict[int, type | None] = {
    MsgType.PING: PingBody, MsgType.PONG: PingBody, MsgType.MEET: PingBody,
    MsgType.FAIL: FailBody, MsgType.PUBLISH: PublishBody, MsgType.PUBLISHSHARD: PublishBody,
    MsgType.FAILOVER_AUTH_REQUEST: None, MsgType.FAILOVER_AUTH_ACK: None,
    MsgType.MFSTART: None, MsgType.UPDATE: UpdateBody, MsgType.MODULE: ModuleBody,
}


@dataclass(slots=True)
class Message:
    """One clusterMsg: the header's fields and the type's body. `count`,
    `extensions` and `totlen` are not fields: they follow from the body."""

    type: int
    sender: str
    body: Body = None
    current_epoch: int = 0
    config_epoch: int = 0
    offset: int = 0
    myslots: bytes = bytes(SLOTS_BYTES)
    slaveof: str | None = None
    myip: str = ""
    port: int = 0
    pport: int = 0
    cport: int = 0
    flags: int = 0
    state: int = CLUSTER_OK
    mflags: bytes = b"\0\0\0"


# --- helpers ----------------------------------------------------------------------


def is_node_id(name: str) -> bool:
    """verifyClusterNodeId: 40 characters of a-z and 0-9."""
    return len(name) == NAMELEN and all("a" <= c <= "z" or "0" <= c <= "9" for c in name)


def slots_bitmap(slots: Iterable[int]) -> bytes:
    bitmap = bytearray(SLOTS_BYTES)
    for slot in slots:
        if not 0 <= slot < SLOTS:
            raise ValueError(f"slot out of range: {slot}")
        bitmap[slot >> 3] |= 1 << (slot & 7)
    return bytes(bitmap)


def bitmap_slots(bitmap: bytes) -> list[int]:
    return [(i << 3) | bit for i, byte in enumerate(bitmap) if byte
            for bit in range(8) if byte >> bit & 1]


def packet_length(prefix: bytes | bytearray | memoryview) -> int | None:
    """The totlen of the packet `prefix` starts: None until 8 bytes are there,
    BadFrame when Redis would close the link (clusterReadHandler's check)."""
    if len(prefix) < PREFIX_LEN:
        return None
    if bytes(prefix[:4]) != SIG:
        raise BadFrame(f"bad signature {bytes(prefix[:4])!r}")
    totlen = int.from_bytes(prefix[4:8], "big")
    if totlen < HEADER_LEN:
        raise BadFrame(f"totlen {totlen} below the header's {HEADER_LEN}")
    return totlen


def _align8(n: int) -> int:
    return (n + 7) & ~7


def _fixed(text: str | None, size: int, what: str) -> bytes:
    raw = b"" if text is None else text.encode("latin-1")
    if len(raw) > size:
        raise ValueError(f"{what} longer than {size} bytes: {text!r}")
    return raw.ljust(size, b"\0")


def _name(text: str, what: str) -> bytes:
    raw = text.encode("latin-1")
    if len(raw) != NAMELEN:
        raise ValueError(f"{what} must be {NAMELEN} bytes: {text!r}")
    return raw


def _cstr(raw: bytes) -> str:
    """A NUL-terminated field as C reads it. latin-1 maps bytes to str one to one."""
    end = raw.find(b"\0")
    return (raw if end < 0 else raw[:end]).decode("latin-1")


# --- encoding ----------------------------------------------------------------------


def _encode_ext(ext: PingExt) -> bytes:
    kind: int
    if isinstance(ext, HostnameExt):
        kind, data = ExtType.HOSTNAME, ext.hostname.encode("latin-1") + b"\0"
    elif isinstance(ext, HumanNodenameExt):
        kind, data = ExtType.HUMAN_NODENAME, ext.nodename.encode("latin-1") + b"\0"
    elif isinstance(ext, ForgottenNodeExt):
        kind, data = ExtType.FORGOTTEN_NODE, _FORGOTTEN.pack(_name(ext.name, "forgotten node"), ext.ttl)
    elif isinstance(ext, ShardIdExt):
        kind, data = ExtType.SHARDID, _name(ext.shard_id, "shard id")
    elif isinstance(ext, InternalSecretExt):
        if len(ext.secret) != NAMELEN:
            raise ValueError(f"internal secret must be {NAMELEN} bytes")
        kind, data = ExtType.INTERNALSECRET, ext.secret
    elif isinstance(ext, UnknownExt):
        kind, data = ext.type, ext.data
    else:
        raise TypeError(f"not a ping extension: {ext!r}")
    size = _align8(len(data))
    return _EXT.pack(EXT_HEADER_LEN + size, kind, 0) + data.ljust(size, b"\0")


def _encode_body(msg: Message) -> tuple[bytes, int, int]:
    """(body bytes, count, extensions)."""
    body = msg.body
    expected = _BODY_OF.get(msg.type, UnknownBody)
    if body is None and expected is PingBody:
        body = PingBody()
    fits = body is None if expected is None else (
        isinstance(body, expected) or (body is None and expected is UnknownBody))
    if not fits:
        raise TypeError(f"{type(body).__name__} is not a body for message type {msg.type}")
    if isinstance(body, PingBody):
        parts = [_GOSSIP.pack(_name(g.nodename, "gossip node name"), g.ping_sent, g.pong_received,
                              _fixed(g.ip, IP_LEN - 1, "ip") + b"\0", g.port, g.cport, g.flags,
                              g.pport, 0)
                 for g in body.gossip]
        parts += [_encode_ext(ext) for ext in body.extensions]
        return b"".join(parts), len(body.gossip), len(body.extensions)
    if isinstance(body, FailBody):
        return _name(body.nodename, "failing node name"), 0, 0
    if isinstance(body, PublishBody):
        return _PUBLISH.pack(len(body.channel), len(body.message)) + body.channel + body.message, 0, 0
    if isinstance(body, UpdateBody):
        if len(body.slots) != SLOTS_BYTES:
            raise ValueError(f"slot bitmap must be {SLOTS_BYTES} bytes")
        return _UPDATE.pack(body.config_epoch, _name(body.nodename, "node name"), body.slots), 0, 0
    if isinstance(body, ModuleBody):
        return (_MODULE_ID.pack(body.module_id) + _MODULE.pack(len(body.payload), body.type)
                + body.payload), 0, 0
    if isinstance(body, UnknownBody):
        return body.data, 0, 0
    return b"", 0, 0


def encode(msg: Message) -> bytes:
    """The packet for `msg`, as clusterBuildMessageHdr and the senders lay it out.
    ValueError or TypeError for a field that does not fit."""
    if len(msg.myslots) != SLOTS_BYTES:
        raise ValueError(f"myslots must be {SLOTS_BYTES} bytes")
    if len(msg.mflags) != 3:
        raise ValueError("mflags must be 3 bytes")
    body, count, extensions = _encode_body(msg)
    totlen = HEADER_LEN + len(body)
    header = _HEADER.pack(
        SIG, totlen, PROTO_VER, msg.port, msg.type, count, msg.current_epoch, msg.config_epoch,
        msg.offset, _name(msg.sender, "sender"), msg.myslots,
        NULL_NAME if msg.slaveof is None else _name(msg.slaveof, "slaveof"),
        _fixed(msg.myip, IP_LEN - 1, "myip") + b"\0", extensions, bytes(30), msg.pport, msg.cport,
        msg.flags, msg.state, msg.mflags)
    return header + body


# --- decoding ----------------------------------------------------------------------


def _decode_ext(kind: int, data: bytes) -> PingExt:
    """One extension's data (its padding included), checked as clusterProcessPacket does."""
    if kind in (ExtType.HOSTNAME, ExtType.HUMAN_NODENAME):
        if not data or data[-1] != 0:
            raise MalformedPacket(f"extension type {kind} without its NUL terminator")
        text = _cstr(data)
        return HostnameExt(text) if kind == ExtType.HOSTNAME else HumanNodenameExt(text)
    if kind == ExtType.FORGOTTEN_NODE:
        if len(data) < _FORGOTTEN.size:
            raise MalformedPacket(f"truncated extension type {kind}")
        name, ttl = _FORGOTTEN.unpack_from(data)
        return ForgottenNodeExt(name.decode("latin-1"), ttl)
    if kind == ExtType.SHARDID:
        shard_id = data[:NAMELEN].decode("latin-1")
        if len(data) < NAMELEN or not is_node_id(shard_id):
            raise MalformedPacket(f"invalid shard id in extension type {kind}")
        return ShardIdExt(shard_id)
    if kind == ExtType.INTERNALSECRET:
        if len(data) < NAMELEN:
            raise MalformedPacket(f"truncated extension type {kind}")
        return InternalSecretExt(data[:NAMELEN])
    return UnknownExt(kind, data)


def _decode_ping(packet: bytes, count: int, extensions: int, ext_data: bool) -> PingBody:
    end = HEADER_LEN + count * GOSSIP_LEN
    if end > len(packet):
        raise MalformedPacket(f"{count} gossip entries do not fit in {len(packet)} bytes")
    gossip = []
    for pos in range(HEADER_LEN, end, GOSSIP_LEN):
        name, ping_sent, pong_received, ip, port, cport, flags, pport, _ = \
            _GOSSIP.unpack_from(packet, pos)
        gossip.append(Gossip(name.decode("latin-1"), ping_sent, pong_received, _cstr(ip), port,
                             cport, flags, pport))
    exts: list[PingExt] = []
    if extensions and not ext_data:
        # Redis would size the packet without them yet still walk them (reading past
        # the packet); no Redis sends this, so it is refused here.
        raise MalformedPacket(f"{extensions} extensions without the EXT_DATA flag")
    pos = end
    for _ in range(extensions):
        if len(packet) - pos < EXT_HEADER_LEN:
            raise MalformedPacket("extension header past the end of the packet")
        length, kind, _unused = _EXT.unpack_from(packet, pos)
        if length < EXT_HEADER_LEN or length % 8:
            raise MalformedPacket(f"extension without proper padding ({length} bytes)")
        if len(packet) - pos < length:
            raise MalformedPacket("extension data exceeds the packet length")
        exts.append(_decode_ext(kind, packet[pos + EXT_HEADER_LEN:pos + length]))
        pos += length
    if pos != len(packet):
        raise MalformedPacket(f"packet of length {len(packet)} but expected length {pos}")
    return PingBody(gossip, exts)


def _expect(packet: bytes, explen: int) -> None:
    if len(packet) != explen:
        raise MalformedPacket(f"packet of length {len(packet)} but expected length {explen}")


def decode(data: bytes | bytearray | memoryview) -> Message:
    """The message in `data`, which must hold exactly one packet (packet_length
    frames a stream). Raises a BusProtocolError subclass for what Redis refuses."""
    packet = bytes(data)
    totlen = packet_length(packet)
    if totlen is None or len(packet) < totlen:
        raise IncompletePacket(f"{len(packet)} bytes of a {totlen or HEADER_LEN}-byte packet")
    if len(packet) > totlen:
        raise MalformedPacket(f"{len(packet) - totlen} bytes past the packet's totlen {totlen}")
    (_sig, _totlen, ver, port, kind, count, current_epoch, config_epoch, offset, sender, myslots,
     slaveof, myip, extensions, _notused, pport, cport, flags, state, mflags) = \
        _HEADER.unpack_from(packet)
    if ver != PROTO_VER:
        raise UnsupportedVersion(f"protocol version {ver}")
    body: Body
    if kind in PING_TYPES:
        body = _decode_ping(packet, count, extensions, bool(mflags[0] & MFlag0.EXT_DATA))
    elif kind == MsgType.FAIL:
        _expect(packet, FAIL_LEN)
        body = FailBody(packet[HEADER_LEN:].decode("latin-1"))
    elif kind in (MsgType.PUBLISH, MsgType.PUBLISHSHARD):
        if totlen < PUBLISH_MIN_LEN:
            raise MalformedPacket(f"packet of length {totlen} but expected at least {PUBLISH_MIN_LEN}")
        channel_len, message_len = _PUBLISH.unpack_from(packet, HEADER_LEN)
        _expect(packet, PUBLISH_MIN_LEN + channel_len + message_len)
        start = PUBLISH_MIN_LEN
        body = PublishBody(packet[start:start + channel_len], packet[start + channel_len:])
    elif kind in (MsgType.FAILOVER_AUTH_REQUEST, MsgType.FAILOVER_AUTH_ACK, MsgType.MFSTART):
        _expect(packet, HEADER_LEN)
        body = None
    elif kind == MsgType.UPDATE:
        _expect(packet, UPDATE_LEN)
        epoch, name, slots = _UPDATE.unpack_from(packet, HEADER_LEN)
        body = UpdateBody(epoch, name.decode("latin-1"), slots)
    elif kind == MsgType.MODULE:
        if totlen < MODULE_MIN_LEN:
            raise MalformedPacket(f"packet of length {totlen} but expected at least {MODULE_MIN_LEN}")
        (module_id,) = _MODULE_ID.unpack_from(packet, HEADER_LEN)
        length, module_type = _MODULE.unpack_from(packet, HEADER_LEN + _MODULE_ID.size)
        _expect(packet, MODULE_MIN_LEN + length)
        body = ModuleBody(module_id, module_type, packet[MODULE_MIN_LEN:])
    else:
        body = UnknownBody(packet[HEADER_LEN:])
    try:
        kind = MsgType(kind)
    except ValueError:
        pass
    return Message(
        type=kind, sender=sender.decode("latin-1"), body=body, current_epoch=current_epoch,
        config_epoch=config_epoch, offset=offset, myslots=myslots,
        slaveof=None if slaveof == NULL_NAME else slaveof.decode("latin-1"), myip=_cstr(myip),
        port=port, pport=pport, cport=cport, flags=flags, state=state, mflags=mflags)
