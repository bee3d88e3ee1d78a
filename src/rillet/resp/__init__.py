"""Sans-IO RESP2/RESP3: request bytes -> argument lists, typed replies -> bytes.

Nothing here touches sockets or the engine (the h11 idea): `parser` turns
bytes into commands, `types` names reply kinds, `encoder` renders them for
the connection's protocol version.
"""
