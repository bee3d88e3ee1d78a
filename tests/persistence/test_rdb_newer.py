"""RDB versions 13 and 14 (Redis 8.6 and 8.8): streams with IDMP state and NACK zones.

rillet writes version 12 (so Redis 8.2 loads its dumps) and reads up to 14. The
_4/_5 stream payloads are produced here by the codec's own writer
(`save_stream(..., rdb_type)`), then loaded back as a DUMP payload and inside a
whole RDB file; the loaded stream must equal the original by every view a
client has (entries, XINFO STREAM FULL, XPENDING, IDMP answers).
"""

from __future__ import annotations

import pytest

from rillet.clock import ManualClock
from rillet.persistence import rdb, rdb_stream
from rillet.persistence.rdb_format import (
    TYPE_STREAM_LISTPACKS_3,
    TYPE_STREAM_LISTPACKS_4,
    TYPE_STREAM_LISTPACKS_5,
    RDBError,
    crc64,
    encode_len,
    encode_string,
)
from tests.persistence.support import InProcess

NOW_MS = 1_800_000_000_000


def _node() -> InProcess:
    """An in-process server on a stopped clock, so idle times compare."""
    node = InProcess()
    node.state.clock = ManualClock(NOW_MS)
    return node


def _source() -> InProcess:
    node = _node()
    run = node.run
    for i in range(1, 8):
        run("XADD", "s", f"{i}-0", "f", i)
    # IDMP needs `*`; an iid's age is its entry ID's time, so these are recent.
    run("XADD", "s", "IDMP", "p1", "a", "*", "f", "x")
    run("XADD", "s", "IDMP", "p1", "b", "*", "f", "y")
    run("XADD", "s", "IDMP", "p2", "a", "*", "f", "z")
    run("XADD", "s", "IDMP", "p1", "a", "*", "f", "dup")  # a duplicate: counted, not added
    run("XCFGSET", "s", "IDMP-DURATION", 300)
    run("XGROUP", "CREATE", "s", "g", "0")
    run("XGROUP", "CREATE", "s", "h", "$")
    run("XREADGROUP", "GROUP", "g", "alice", "COUNT", 4, "STREAMS", "s", ">")
    run("XREADGROUP", "GROUP", "g", "bob", "COUNT", 3, "STREAMS", "s", ">")
    # Released in this order: the NACK zone keeps it (4 before 2).
    run("XNACK", "s", "g", "FAIL", "IDS", 1, "4-0")
    run("XNACK", "s", "g", "SILENT", "IDS", 1, "2-0")
    run("XGROUP", "CREATECONSUMER", "s", "h", "idle")
    return node


def _views(node: InProcess) -> list:
    run = node.run
    full = run("XINFO", "STREAM", "s", "FULL")
    return [
        run("XRANGE", "s", "-", "+"),
        full,
        run("XPENDING", "s", "g", "-", "+", 100),
        run("XPENDING", "s", "g"),
        # The idle order: the NACK zone first, in the order XNACK released (4, then 2).
        [(entry.key, entry.owner, entry.delivery_count)
         for group in node.state.keyspace.dbs[0].data[b"s"].groups.values()
         for entry in group.pending_in_idle_order()],
        run("XAUTOCLAIM", "s", "g", "carol", 0, "0", "COUNT", 3, "JUSTID"),
        # IDMP: a known (pid, iid) answers its entry, a new one adds.
        run("XADD", "s", "IDMP", "p1", "b", "*", "f", "again"),
        run("XADD", "s", "IDMP", "p2", "a", "*", "f", "again"),
        run("XINFO", "STREAM", "s"),
    ]


def _payload(node: InProcess, rdb_type: int) -> bytes:
    chunks: list[bytes] = []
    writer = rdb.RDBWriter(lambda data: chunks.append(bytes(data)), True, checksum=False,
                           config=node.state.config)
    writer.u8(rdb_type)
    rdb_stream.save_stream(writer, node.state.keyspace.dbs[0].data[b"s"], rdb_type)
    writer.flush()
    return b"".join(chunks)


def _dump(body: bytes, version: int) -> bytes:
    body = body + version.to_bytes(2, "little")
    return body + crc64(0, body).to_bytes(8, "little")


@pytest.mark.parametrize("rdb_type,version", [(TYPE_STREAM_LISTPACKS_4, 13),
                                              (TYPE_STREAM_LISTPACKS_5, 14)])
def test_restore_payload_of_newer_stream_types(rdb_type, version):
    source = _source()
    payload = _dump(_payload(source, rdb_type), version)
    target = _node()
    assert target.run("RESTORE", "s", 0, payload) == b"OK"
    if rdb_type == TYPE_STREAM_LISTPACKS_5:
        assert _views(target) == _views(source)
    else:  # _4 has no NACK zone: released entries load unowned, in delivery order
        assert target.run("XRANGE", "s", "-", "+") == source.run("XRANGE", "s", "-", "+")
        again = ("XADD", "s", "IDMP", "p1", "b", "*", "f", "again")
        assert target.run(*again) == source.run(*again)


def test_rdb_file_version_14_loads():
    source = _source()
    value = _payload(source, TYPE_STREAM_LISTPACKS_5)  # type byte, then the payload
    body = (b"REDIS0014" + b"\xfa" + encode_string(b"redis-ver", False)
            + encode_string(b"8.8.0", False) + b"\xfe\x00" + value[:1]
            + encode_string(b"s", False) + value[1:] + b"\xff")
    data = body + crc64(0, body).to_bytes(8, "little")
    target = _node()
    stats = rdb.load_keyspace(target.state, data)
    assert stats.version == 14 and stats.keys_loaded == 1
    assert _views(target) == _views(source)


def test_dump_takes_the_newer_form_only_for_state_type_3_would_lose():
    source = _source()  # IDMP state and XNACK-released entries
    payload = source.run("DUMP", "s")
    assert (payload[0], int.from_bytes(payload[-10:-8], "little")) == (TYPE_STREAM_LISTPACKS_5, 14)
    target = _node()
    assert target.run("RESTORE", "s", 0, payload) == b"OK"
    assert _views(target) == _views(source)

    idmp_only = _node()
    idmp_only.run("XADD", "s", "IDMP", "p1", "a", "*", "f", "x")
    payload = idmp_only.run("DUMP", "s")
    assert (payload[0], int.from_bytes(payload[-10:-8], "little")) == (TYPE_STREAM_LISTPACKS_4, 13)
    target = _node()
    target.run("RESTORE", "s", 0, payload)
    again = ("XADD", "s", "IDMP", "p1", "a", "*", "f", "again")
    assert target.run(*again) == idmp_only.run(*again)

    plain = _node()
    plain.run("XADD", "s", "1-0", "f", "v")
    payload = plain.run("DUMP", "s")
    assert (payload[0], int.from_bytes(payload[-10:-8], "little")) == (TYPE_STREAM_LISTPACKS_3, 12)


def test_stream_that_never_used_idmp_stays_without_it():
    source = InProcess()
    source.run("XADD", "s", "1-0", "f", "v")
    target = InProcess()
    target.run("RESTORE", "s", 0, _dump(_payload(source, TYPE_STREAM_LISTPACKS_4), 13))
    assert target.state.keyspace.dbs[0].data[b"s"].idmp is None


def test_nack_zone_must_name_unowned_entries():
    source = InProcess()
    source.run("XADD", "s", "1-0", "f", "v")
    source.run("XGROUP", "CREATE", "s", "g", "0")
    source.run("XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
    body = _payload(source, TYPE_STREAM_LISTPACKS_5)
    idmp = encode_len(100) + encode_len(100) + b"\0\0\0"  # no IDMP: defaults, nothing kept
    assert body.endswith(b"\0" + idmp)  # ... then an empty NACK zone before it
    owned = (1).to_bytes(8, "big") + (0).to_bytes(8, "big")  # 1-0, which alice owns
    bad = body[: -len(idmp) - 1] + encode_len(1) + owned + idmp
    with pytest.raises(RDBError, match="NACK zone ID pending in the group and owned by no"):
        rdb.restore_value(_dump(bad, 14), InProcess().state)


def test_versions_past_14_and_module_key_metadata_are_refused():
    with pytest.raises(RDBError, match="Can't handle RDB format version 15"):
        rdb.read_version(b"REDIS0015")
    body = b"REDIS0013\xfe\x00\xf3\x01"
    with pytest.raises(RDBError, match="no module or function data \\(opcode 243\\)"):
        for _ in rdb.parse(InProcess().state, body + b"\xff" + b"\0" * 8, rdb.LoadStats()):
            pass
    assert not rdb.verify_payload(_dump(b"\x00\x01x", 15))
    assert rdb.verify_payload(_dump(b"\x00\x01x", 14))
