"""Hash slots: Redis's keyHashSlot (CRC16/XMODEM of the key or its hash tag, mod 16384)."""

from __future__ import annotations

from binascii import crc_hqx

SLOTS = 16384
_MASK = SLOTS - 1


def key_slot(key: bytes) -> int:
    """The key's slot; only the part between the first `{` and the next `}` is
    hashed when that part is not empty (a hash tag), as Redis does."""
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            key = key[start + 1:end]
    # crc_hqx is CRC-CCITT with polynomial 0x1021 and initial value 0: Redis's crc16.
    return crc_hqx(key, 0) & _MASK


def pattern_slot(pattern: bytes) -> int:
    """The one slot every key matching `pattern` is in, or -1 when they may be in any
    (Redis's patternHashSlot: a wildcard or an escape before a hash tag)."""
    tag_start = -1
    for i, byte in enumerate(pattern):
        if byte in b"*?[\\":
            return -1
        if tag_start == -1 and byte == 0x7B:  # {
            tag_start = i
        elif tag_start >= 0 and byte == 0x7D:  # }
            if i == tag_start + 1:
                tag_start = -2  # an empty tag: the whole key is hashed
            else:
                return crc_hqx(pattern[tag_start + 1:i], 0) & _MASK
    return crc_hqx(pattern, 0) & _MASK
