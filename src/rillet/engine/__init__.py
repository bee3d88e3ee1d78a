"""The data model, without I/O: the keyspace, the stream log, consumer groups, IDs.

Nothing here imports asyncio, RESP, the command layer or the server
(tests/test_layers.py checks it); time comes from an injected `Clock`.
"""
