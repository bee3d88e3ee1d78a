"""busproto on its own: Redis's offsets, golden packets, round trips of every type,
and the packets clusterProcessPacket refuses (tests/cluster/test_busproto_redis.py
checks the same against a live Redis 8.2.3)."""

from __future__ import annotations

import base64
import zlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rillet.cluster import busproto as bp

A = "a" * 40
B = "0123456789abcdef0123456789abcdef01234567"

# A PONG Redis 8.2.3 sent (cluster-announce-hostname redis-a.example, human nodename
# alpha, slots 0-8191, currentEpoch 1), zlib-compressed: header plus four extensions,
# 24 + 16 + 48 + 48 bytes.
REDIS_PONG = zlib.decompress(base64.b64decode(
    "eNrt1jFOQzEMBmA/wcIGGwtHKHIcx/GbewMmVidxRKVWqujS03EbzgF9LYiRhY18g2VZvz37ab0rADfPML09wATffrovwWPt"
    "MbJgSpxzwug1GXYNVismnpXZTdrHMAz/FgzDMPyt698C7yu4my6p+6W8etscVvboR9vtt76Mbpevxrb7F7usIFwB9B6qYDMi"
    "ykXQtEYhaoLYXZMrNew5cT3nT/cbltBPG1pm6jlocJGEdebCWTmSUWhiQT8BYWUoMg=="))


def test_redis_pong_decodes_and_encodes_back() -> None:
    msg = bp.decode(REDIS_PONG)
    assert len(REDIS_PONG) == 2392
    assert msg.type == bp.MsgType.PONG and msg.sender == "1e3cf3346055477503ec5a0f81acc0549844ea6d"
    assert (msg.port, msg.cport, msg.pport) == (48669, 58669, 0)
    assert msg.flags == bp.NodeFlag.MASTER | bp.NodeFlag.MYSELF
    # Half the slots covered: the cluster is down from its point of view.
    assert (msg.current_epoch, msg.config_epoch, msg.offset, msg.state) == (1, 0, 0, bp.CLUSTER_FAIL)
    assert msg.mflags == bytes([bp.MFlag0.EXT_DATA, 0, 0]) and msg.slaveof is None and msg.myip == ""
    assert bp.bitmap_slots(msg.myslots) == list(range(8192))
    assert msg.body == bp.PingBody([], [
        bp.HostnameExt("redis-a.example"), bp.HumanNodenameExt("alpha"),
        bp.ShardIdExt("ff1c60da2227b60a8c3622d600fe85e82d0f754c"),
        bp.InternalSecretExt(b"d0b1fc608b92f7181e6650c94b478432a21d6a18")])
    assert bp.encode(msg) == REDIS_PONG


def test_header_offsets_are_redis_static_asserts() -> None:
    """cluster_legacy.h's static_assert offsets, each field given a distinct value."""
    msg = bp.Message(
        bp.MsgType.PONG, A, current_epoch=0x0102030405060708, config_epoch=0x1112131415161718,
        offset=0x2122232425262728, myslots=bp.slots_bitmap([0, 9, 16383]), slaveof=B,
        myip="10.0.0.1", port=6379, pport=6380, cport=16379, flags=0x0402, state=bp.CLUSTER_FAIL,
        mflags=b"\x05\x06\x07")
    raw = bp.encode(msg)
    assert len(raw) == 2256 == bp.HEADER_LEN
    assert raw[0:4] == b"RCmb"
    assert raw[4:8] == (2256).to_bytes(4, "big")
    assert raw[8:10] == b"\x00\x01"
    assert raw[10:12] == (6379).to_bytes(2, "big")
    assert raw[12:14] == b"\x00\x01" and raw[14:16] == b"\x00\x00"  # type, count
    assert raw[16:24] == bytes(range(1, 9))
    assert raw[24:32] == bytes(range(0x11, 0x19))
    assert raw[32:40] == bytes(range(0x21, 0x29))
    assert raw[40:80] == A.encode()
    # Slot s is bit s & 7 of byte s // 8: slots 0 and 9 and 16383.
    assert raw[80] == 0b1 and raw[81] == 0b10 and raw[2127] == 0x80
    assert raw[2128:2168] == B.encode()
    assert raw[2168:2214] == b"10.0.0.1".ljust(46, b"\0")
    assert raw[2214:2216] == b"\x00\x00"  # extensions
    assert raw[2216:2246] == bytes(30)
    assert raw[2246:2248] == (6380).to_bytes(2, "big")
    assert raw[2248:2250] == (16379).to_bytes(2, "big")
    assert raw[2250:2252] == b"\x04\x02"
    assert raw[2252] == 1 and raw[2253:2256] == b"\x05\x06\x07"


def _header(kind: int, totlen: int, count: int = 0, extensions: int = 0,
            mflags: bytes = b"\4\0\0") -> bytes:
    """A header written field by field, independently of busproto's struct."""
    return (b"RCmb" + totlen.to_bytes(4, "big") + b"\0\1" + (7000).to_bytes(2, "big")
            + kind.to_bytes(2, "big") + count.to_bytes(2, "big") + bytes(24) + A.encode()
            + bytes(2048) + bytes(40) + bytes(46) + extensions.to_bytes(2, "big") + bytes(30)
            + bytes(2) + (17000).to_bytes(2, "big") + b"\0\1" + b"\0" + mflags)


def _msg(kind: int, body: bp.Body = None, **fields) -> bp.Message:
    return bp.Message(kind, A, body, port=7000, cport=17000, flags=bp.NodeFlag.MASTER,
                      mflags=b"\4\0\0", **fields)


def test_golden_ping_with_gossip_and_extensions() -> None:
    gossip = (B.encode() + (1700000000).to_bytes(4, "big") + (1700000001).to_bytes(4, "big")
              + b"127.0.0.1".ljust(46, b"\0") + (7001).to_bytes(2, "big")
              + (17001).to_bytes(2, "big") + (0x0401).to_bytes(2, "big")
              + (7002).to_bytes(2, "big") + b"\0\0")
    assert len(gossip) == 104
    hostname = b"\0\0\0\x18" + b"\0\0" + b"\0\0" + b"host.example\0".ljust(16, b"\0")
    human = b"\0\0\0\x10" + b"\0\1" + b"\0\0" + b"abc\0".ljust(8, b"\0")
    forgotten = b"\0\0\0\x38" + b"\0\2" + b"\0\0" + B.encode() + (60).to_bytes(8, "big")
    shard = b"\0\0\0\x30" + b"\0\3" + b"\0\0" + A.encode()  # 40 is aligned already
    secret = b"\0\0\0\x30" + b"\0\4" + b"\0\0" + b"s" * 40
    body = gossip + hostname + human + forgotten + shard + secret
    raw = _header(bp.MsgType.PING, 2256 + len(body), count=1, extensions=5) + body
    msg = _msg(bp.MsgType.PING, bp.PingBody(
        [bp.Gossip(B, 1700000000, 1700000001, "127.0.0.1", 7001, 17001, 0x0401, 7002)],
        [bp.HostnameExt("host.example"), bp.HumanNodenameExt("abc"), bp.ForgottenNodeExt(B, 60),
         bp.ShardIdExt(A), bp.InternalSecretExt(b"s" * 40)]))
    assert bp.encode(msg) == raw
    assert bp.decode(raw) == msg


def test_golden_other_bodies() -> None:
    fail = _header(bp.MsgType.FAIL, 2296) + B.encode()
    assert bp.encode(_msg(bp.MsgType.FAIL, bp.FailBody(B))) == fail
    publish = _header(bp.MsgType.PUBLISH, 2256 + 8 + 5) + b"\0\0\0\2\0\0\0\3" + b"chmsg"
    assert bp.encode(_msg(bp.MsgType.PUBLISH, bp.PublishBody(b"ch", b"msg"))) == publish
    update = (_header(bp.MsgType.UPDATE, 2256 + 2096) + (9).to_bytes(8, "big") + B.encode()
              + bp.slots_bitmap(range(8)))
    assert bp.encode(_msg(bp.MsgType.UPDATE, bp.UpdateBody(9, B, bp.slots_bitmap(range(8))))) \
        == update
    module = (_header(bp.MsgType.MODULE, 2256 + 13 + 2) + (0x0102).to_bytes(8, "little")
              + b"\0\0\0\2" + b"\x07" + b"hi")
    assert bp.encode(_msg(bp.MsgType.MODULE, bp.ModuleBody(0x0102, 7, b"hi"))) == module
    for kind in (bp.MsgType.FAILOVER_AUTH_REQUEST, bp.MsgType.FAILOVER_AUTH_ACK,
                 bp.MsgType.MFSTART):
        assert bp.encode(_msg(kind)) == _header(kind, 2256)
    for raw in (fail, publish, update, module):
        assert bp.encode(bp.decode(raw)) == raw


# --- round trips ---------------------------------------------------------------------

names = st.text("abcdefghijklmnopqrstuvwxyz0123456789", min_size=40, max_size=40)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFFFFFF)
u64 = st.integers(0, 2**64 - 1)
ips = st.text("0123456789abcdef.:", max_size=45)
texts = st.text(st.characters(min_codepoint=1, max_codepoint=255), max_size=60)
gossips = st.builds(bp.Gossip, names, u32, u32, ips, u16, u16, u16, u16)
exts = st.one_of(
    st.builds(bp.HostnameExt, texts), st.builds(bp.HumanNodenameExt, texts),
    st.builds(bp.ForgottenNodeExt, names, u64), st.builds(bp.ShardIdExt, names),
    st.builds(bp.InternalSecretExt, st.binary(min_size=40, max_size=40)),
    st.builds(bp.UnknownExt, st.integers(5, 0xFFFF),
              st.integers(0, 4).map(lambda n: bytes(range(8 * n)))))
bitmaps = st.lists(st.integers(0, bp.SLOTS - 1), max_size=40).map(bp.slots_bitmap)
bodies = {
    bp.MsgType.PING: st.builds(bp.PingBody, st.lists(gossips, max_size=4), st.lists(exts, max_size=5)),
    bp.MsgType.FAIL: st.builds(bp.FailBody, names),
    bp.MsgType.PUBLISH: st.builds(bp.PublishBody, st.binary(max_size=40), st.binary(max_size=40)),
    bp.MsgType.UPDATE: st.builds(bp.UpdateBody, u64, names, bitmaps),
    bp.MsgType.MODULE: st.builds(bp.ModuleBody, u64, st.integers(0, 255), st.binary(max_size=40)),
    bp.MsgType.FAILOVER_AUTH_ACK: st.none(),
}
bodies[bp.MsgType.PONG] = bodies[bp.MsgType.MEET] = bodies[bp.MsgType.PING]
bodies[bp.MsgType.PUBLISHSHARD] = bodies[bp.MsgType.PUBLISH]
bodies[bp.MsgType.FAILOVER_AUTH_REQUEST] = bodies[bp.MsgType.MFSTART] = st.none()


@st.composite
def messages(draw) -> bp.Message:
    kind = draw(st.sampled_from(list(bp.MsgType)))
    return bp.Message(
        kind, draw(names), draw(bodies[kind]), current_epoch=draw(u64), config_epoch=draw(u64),
        offset=draw(u64), myslots=draw(bitmaps), slaveof=draw(st.none() | names),
        myip=draw(ips), port=draw(u16), pport=draw(u16), cport=draw(u16), flags=draw(u16),
        state=draw(st.integers(0, 255)),
        # EXT_DATA always: without it the extensions a PING carries are refused.
        mflags=bytes([draw(st.integers(0, 255)) | bp.MFlag0.EXT_DATA, draw(st.integers(0, 255)),
                      draw(st.integers(0, 255))]))


@given(messages())
def test_every_type_round_trips(msg: bp.Message) -> None:
    raw = bp.encode(msg)
    assert bp.packet_length(raw) == len(raw)
    assert bp.decode(raw) == msg
    assert bp.encode(bp.decode(raw)) == raw


def test_unknown_type_keeps_its_bytes() -> None:
    raw = _header(42, 2256 + 5) + b"hello"
    msg = bp.decode(raw)
    assert msg.type == 42 and msg.body == bp.UnknownBody(b"hello")
    assert bp.encode(msg) == raw


def test_slot_helpers() -> None:
    assert bp.bitmap_slots(bp.slots_bitmap([16383, 0, 8, 7])) == [0, 7, 8, 16383]
    with pytest.raises(ValueError):
        bp.slots_bitmap([16384])
    assert bp.is_node_id(B) and not bp.is_node_id("A" * 40) and not bp.is_node_id("a" * 39)


def test_encode_refuses_fields_that_do_not_fit() -> None:
    for bad in (_msg(bp.MsgType.PING, bp.PingBody([bp.Gossip("short")])),
                bp.Message(bp.MsgType.PING, "short"),
                _msg(bp.MsgType.PING, myip="x" * 46),
                _msg(bp.MsgType.PING, myslots=b"\0"),
                _msg(bp.MsgType.PING, bp.PingBody([], [bp.InternalSecretExt(b"short")]))):
        with pytest.raises(ValueError):
            bp.encode(bad)
    for bad in (_msg(bp.MsgType.FAIL), _msg(bp.MsgType.PING, bp.FailBody(B)),
                _msg(bp.MsgType.MFSTART, bp.PingBody())):
        with pytest.raises(TypeError):
            bp.encode(bad)


# --- what Redis refuses --------------------------------------------------------------


def _with(raw: bytes, offset: int, value: bytes) -> bytes:
    return raw[:offset] + value + raw[offset + len(value):]


def _totlen(raw: bytes, n: int | None = None) -> bytes:
    return _with(raw, 4, (len(raw) if n is None else n).to_bytes(4, "big"))


PING = bp.encode(_msg(bp.MsgType.PING, bp.PingBody([bp.Gossip(B)], [bp.HostnameExt("h")])))
EXT_AT = 2256 + 104


def test_framing() -> None:
    assert bp.packet_length(PING[:7]) is None
    assert bp.packet_length(PING[:8]) == len(PING)
    with pytest.raises(bp.BadFrame):
        bp.packet_length(b"RCmc" + PING[4:8])
    with pytest.raises(bp.BadFrame):
        bp.decode(_totlen(PING, 2255))
    with pytest.raises(bp.IncompletePacket):
        bp.decode(PING[:-1])
    with pytest.raises(bp.IncompletePacket):
        bp.decode(PING[:5])
    with pytest.raises(bp.MalformedPacket):
        bp.decode(PING + b"\0")
    with pytest.raises(bp.UnsupportedVersion):
        bp.decode(_with(PING, 8, b"\0\2"))


@pytest.mark.parametrize("raw", [
    # Gossip count past the packet; one more than there is.
    _with(PING, 14, b"\0\x50"), _with(PING, 14, b"\0\2"),
    # Extensions: one more than there is, or any without EXT_DATA.
    _with(PING, 2214, b"\0\2"), _with(PING, 2253, b"\0"),
    # Extension length: below its header, unpadded, past the packet.
    _with(PING, EXT_AT, (4).to_bytes(4, "big")), _with(PING, EXT_AT, (12).to_bytes(4, "big")),
    _with(PING, EXT_AT, (24).to_bytes(4, "big")),
    # Hostname without its NUL.
    _with(PING, EXT_AT + 8, b"12345678"),
    # Shard id that is not a node id; forgotten node and secret too short.
    _with(PING, EXT_AT + 4, b"\0\3"), _with(PING, EXT_AT + 4, b"\0\2"),
    _with(PING, EXT_AT + 4, b"\0\4"),
    # Header-only types with a body; fixed bodies a byte short or long.
    _totlen(bp.encode(_msg(bp.MsgType.MFSTART)) + b"x"),
    _totlen(bp.encode(_msg(bp.MsgType.FAIL, bp.FailBody(B)))[:-1]),
    _totlen(bp.encode(_msg(bp.MsgType.UPDATE, bp.UpdateBody(1, B))) + b"x"),
    # PUBLISH and MODULE lengths that do not add up, or overflow.
    _with(bp.encode(_msg(bp.MsgType.PUBLISH, bp.PublishBody(b"c", b"m"))), 2256, b"\0\0\0\2"),
    _with(bp.encode(_msg(bp.MsgType.PUBLISH, bp.PublishBody(b"c", b"m"))), 2260, b"\xff" * 4),
    _totlen(bp.encode(_msg(bp.MsgType.PUBLISH, bp.PublishBody(b"", b"")))[:-1]),
    _with(bp.encode(_msg(bp.MsgType.MODULE, bp.ModuleBody(1, 2, b"p"))), 2264, b"\0\0\0\0"),
    _totlen(bp.encode(_msg(bp.MsgType.MODULE, bp.ModuleBody(1, 2)))[:-1]),
])
def test_refused_as_redis_refuses(raw: bytes) -> None:
    with pytest.raises(bp.MalformedPacket):
        bp.decode(raw)


def test_unknown_extension_type_is_kept() -> None:
    raw = _with(PING, EXT_AT + 4, b"\0\x63")
    ext = bp.decode(raw).body.extensions[0]
    assert ext == bp.UnknownExt(99, b"h".ljust(8, b"\0"))
    assert bp.encode(bp.decode(raw)) == raw


@given(st.data())
def test_damaged_packets_decode_or_raise_a_protocol_error(data) -> None:
    """Any truncation or overwrite of a valid packet: a Message or a
    BusProtocolError, never another exception."""
    raw = bytearray(bp.encode(data.draw(messages())))
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(raw) - 1))
        raw[pos] = data.draw(st.integers(0, 255))
    # The fields lengths hang on, overwritten on purpose some of the time.
    if data.draw(st.booleans()):
        field = data.draw(st.sampled_from([4, 14, 2214, 2256, 2260, 2264]))
        size = 2 if field in (14, 2214) else 4
        raw[field:field + size] = data.draw(st.binary(min_size=size, max_size=size))
    raw = raw[:data.draw(st.integers(0, len(raw)))]
    try:
        bp.decode(raw)
    except bp.BusProtocolError:
        pass
