"""Every command's ACL categories (COMMAND INFO's 7th field) and key spec flags match Redis 8.2.3.

The categories come from the one command table (`acl=` or what flags and group
imply); ACL rules by category use the same function, so this holds both.
"""

from __future__ import annotations

import hiredis
import pytest

from rillet.commands import table
from tests.helpers.wire import Wire

# Commands Redis 8.2.3 lacks (newer than it) or knows as one command (DEBUG's subcommands).
NOT_IN_REDIS_8_2 = {"xnack", "xcfgset", "xidmprecord", "digest", "delex", "msetex", "vrange"} | {
    s.name for s in table.all_specs() if s.group == "array"}  # Redis 8.8's arrays


def _names() -> list[str]:
    return [s.name for s in table.all_specs()
            if s.name.split("|")[0] not in NOT_IN_REDIS_8_2
            and not (s.parent is not None and s.parent.one_command)]


def parse(raw: bytes):
    reader = hiredis.Reader()
    reader.feed(raw)
    return reader.gets()


@pytest.mark.parametrize("name", _names())
def test_categories_and_key_flags_match_redis(rillet_server, redis8_server, name):
    ours_wire, ref_wire = Wire(rillet_server.port), Wire(redis8_server.port)
    try:
        ours = parse(ours_wire.call("COMMAND", "INFO", name))[0]
        ref = parse(ref_wire.call("COMMAND", "INFO", name))[0]
    finally:
        ours_wire.close()
        ref_wire.close()
    assert ours[6] == ref[6], f"{name}: categories {ours[6]} vs Redis {ref[6]}"
    ours_flags = [sorted(dict(zip(k[::2], k[1::2], strict=True))[b"flags"]) for k in ours[8]]
    ref_flags = [sorted(dict(zip(k[::2], k[1::2], strict=True))[b"flags"]) for k in ref[8]]
    if ref[3] != 0:  # keyword-based specs (XREAD's STREAMS) are described differently
        assert ours_flags == ref_flags, f"{name}: key spec flags"
