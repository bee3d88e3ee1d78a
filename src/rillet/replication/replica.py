"""The replica side: the link to our master (Redis's replication handshake and stream).

`MasterLink.run` connects, goes through PING, AUTH, REPLCONF listening-port,
REPLCONF capa eof capa psync2 and PSYNC <replid> <offset+1> (our own ID and
offset: after a restart, a promotion or a lost link we continue partially when
the master still has our history), then either loads a full-sync payload or
continues, and applies the stream. Commands go through the dispatcher as an
internal client (the master client: never refused, never blocked); the exact
bytes are forwarded to our own replicas and counted into our offset.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from rillet.compiled import compiled
from rillet.errors import ReplyError
from rillet.persistence.loader import LoadError, LoadProgress
from rillet.replication.core import EXPIRE_MASTER_STREAM, EXPIRE_REPLICA_READ
from rillet.replication.payload import load_payload, stream_db_of
from rillet.replication.protocol import StreamError, StreamParser, encode_command, encoded_size

if TYPE_CHECKING:
    from rillet.replication.core import Replication

log = logging.getLogger("rillet")

_READ_BYTES = 1 << 16
_PAYLOAD_READ_BYTES = 1 << 22
_LOAD_SLICE_S = 0.02
_RETRY_S = 1.0
_EOF_MARK_LEN = 40
# The compiled scanner's limits: bulk lengths it takes (longer ones the parser
# judges), and the pending bytes it is given at most (see apply).
_MAX_BULK = 1 << 40
_SCAN_MAX = 1 << 20
# The first byte of PING and REPLCONF, the master's commands applied here as no data.
_CONTROL_FIRST = frozenset((b"p", b"P", b"r", b"R"))

# Clients' request scanner (resp/_multibulk.pyx, rillet/compiled.py): the stream is the same RESP.
_multibulk = compiled("rillet.resp._multibulk")
_scan = _multibulk.scan if _multibulk is not None else None


class LinkError(Exception):
    """The handshake or the sync failed; the link retries after a pause."""


class _StreamProtocol(asyncio.Protocol):
    """The link's protocol once the stream flows: each read is applied at once."""

    def __init__(self, link: MasterLink, done: asyncio.Future[None]) -> None:
        self.link = link
        self.done = done

    def data_received(self, data: bytes) -> None:
        link = self.link
        if self.done.done():
            return
        link.last_io = time.monotonic()
        link.state.stats.net_repl_input_bytes += len(data)
        link.parser.feed(data)
        try:
            link.apply()
        except Exception as error:  # noqa: BLE001 - ends the link, as a raise in stream() did
            self.done.set_exception(error)
            link._close()

    def eof_received(self) -> bool:
        return False  # (the transport closes; connection_lost ends the link)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_exception(EOFError("connection lost") if exc is None else exc)


class MasterLink:
    def __init__(self, replication: Replication, host: str, port: int, failover: bool = False) -> None:
        self.repl = replication
        self.state = replication.state
        self.config = replication.config
        self.host = host
        self.port = port
        self.task: asyncio.Future[None] | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.reader: asyncio.StreamReader | None = None
        self.parser = StreamParser()
        self.client: Any = None  # the master client, kept across reconnections (its db)
        self.link_state = "connect"  # ROLE's connect / connecting / sync / connected
        self.up = False
        self.syncing = False
        self.sync_total = -1
        self.sync_read = 0
        now = time.monotonic()
        self.last_io = 0.0
        self.up_since = now
        self.down_since = now
        self.disconnected_s = 0.0
        self.current_attempts = 0
        self.total_attempts = 0
        self._stopped = False
        self.failover = failover  # the first PSYNC carries FAILOVER (see failover.py)
        # WAITAOF: (AOF size, offset) after each applied chunk; the offset whose
        # AOF bytes are durable goes to the master as REPLCONF ACK ... FACK.
        self.aof_marks: deque[tuple[int, int]] = deque()
        self.fack = 0
        self.held = bytearray()  # an unfinished transaction's bytes (see apply)

    # --- lifecycle --------------------------------------------------------------------
    def start(self) -> None:
        self.task = asyncio.ensure_future(self.run())

    def stop(self) -> None:
        self._stopped = True
        if self.task is not None:
            self.task.cancel()
        self._close()
        self._mark_down()
        self._discard_partial()

    def _discard_partial(self) -> None:
        """Drop a transaction the link broke in: it was not counted, it will come again."""
        self.held.clear()
        client = self.client
        if client is not None and client.multi is not None:
            client.multi = None
            client.multi_error = False

    def _close(self) -> None:
        writer, self.writer = self.writer, None
        if writer is not None:
            writer.close()

    def _mark_down(self) -> None:
        if self.up:
            self.up = False
            self.down_since = time.monotonic()
        self.syncing = False
        self.link_state = "connect"

    def disconnected_total(self, now: float) -> float:
        return self.disconnected_s + (0 if self.up else now - self.down_since)

    async def run(self) -> None:
        while not self._stopped:
            try:
                await self.session()
            except asyncio.CancelledError:
                raise
            except (TimeoutError, OSError, LinkError, StreamError, EOFError) as error:
                if not self._stopped:
                    log.warning("Replication link to MASTER %s:%d: %s", self.host, self.port,
                                error or type(error).__name__)
            except Exception:
                log.exception("internal error in the replication link")
            finally:
                self._close()
                self._mark_down()
                self._discard_partial()
                if self.syncing and self.state.loading:
                    self.state.loading = False
            if self._stopped:
                return
            await asyncio.sleep(_RETRY_S)

    # --- one connection -----------------------------------------------------------------
    async def session(self) -> None:
        timeout = int(self.config["repl-timeout"])
        self.link_state = "connecting"
        self.current_attempts += 1
        self.total_attempts += 1
        self.last_io = time.monotonic()
        # A large read buffer: the full-sync payload comes in big reads.
        self.reader, self.writer = await asyncio.wait_for(
            asyncio.open_connection(self.host, self.port, limit=_PAYLOAD_READ_BYTES), timeout)
        self.parser = StreamParser()
        log.info("MASTER <-> REPLICA sync started")
        self.link_state = "handshake"
        reply = await self.call([b"PING"])
        if reply.startswith(b"-") and not reply.startswith((b"-NOAUTH", b"-NOPERM", b"-ERR operation not permitted")):
            raise LinkError(f"Error reply to PING from master: '{reply.decode(errors='replace')}'")
        log.info("Master replied to PING, replication can continue...")
        password = str(self.config["masterauth"])
        if password:
            user = str(self.config["masteruser"])
            argv = [b"AUTH", user.encode(), password.encode()] if user else [b"AUTH", password.encode()]
            reply = await self.call(argv)
            if reply.startswith(b"-"):
                raise LinkError(f"Unable to AUTH to MASTER: {reply.decode(errors='replace')}")
        port = int(self.config["replica-announce-port"] or self.config["port"])
        await self.call([b"REPLCONF", b"listening-port", b"%d" % port])
        announce_ip = str(self.config["replica-announce-ip"])
        if announce_ip:
            await self.call([b"REPLCONF", b"ip-address", announce_ip.encode()])
        await self.call([b"REPLCONF", b"capa", b"eof", b"capa", b"psync2"])
        repl = self.repl
        if repl.has_history:
            psync = [b"PSYNC", repl.replid.encode(), b"%d" % (repl.master_repl_offset + 1)]
            log.info("Trying a partial resynchronization (request %s:%d).", repl.replid,
                     repl.master_repl_offset + 1)
        else:
            psync = [b"PSYNC", b"?", b"-1"]
            log.info("Partial resynchronization not possible (no cached master)")
        self.link_state = "sync"
        failover, self.failover = self.failover, False
        if failover:
            psync.append(b"FAILOVER")
        reply = await self.call(psync)
        if failover:
            repl.failover.psync_answered(reply.startswith((b"+FULLRESYNC", b"+CONTINUE")))
        if reply.startswith(b"+FULLRESYNC"):
            words = reply.split()
            if len(words) != 3:
                raise LinkError("Master replied with wrong +FULLRESYNC syntax.")
            await self.full_sync(words[1].decode(), int(words[2]))
        elif reply.startswith(b"+CONTINUE"):
            words = reply.split()
            new_id = words[1].decode() if len(words) > 1 else None
            log.info("Successful partial resynchronization with master.")
            log.info("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.")
            repl.continued(new_id)
            if self.client is None:
                self.client = self._new_client()
                if 0 <= repl.stream_db < len(self.state.keyspace.dbs):
                    self.client.db = self.state.keyspace[repl.stream_db]
        else:
            raise LinkError(f"Unexpected reply to PSYNC from master: "
                            f"{reply.decode(errors='replace')}")
        self._mark_up()
        if reply.startswith(b"+FULLRESYNC"):
            # At once, as Redis's replicas: after a streamed payload the master
            # waits for this first ACK before it sends the stream.
            self.send_ack()
        await self.stream(timeout)

    def _mark_up(self) -> None:
        now = time.monotonic()
        if not self.up:
            self.disconnected_s += now - self.down_since
        self.up = True
        self.up_since = now
        self.link_state = "connected"
        self.current_attempts = 0
        self.last_io = now
        log.info("MASTER <-> REPLICA link is up")

    def _new_client(self) -> Any:
        client = self.state.internal_client()
        client.flags = "M"
        return client

    async def call(self, argv: list[bytes]) -> bytes:
        """Send one handshake command; its reply line (a lone newline is a keepalive)."""
        assert self.writer is not None
        self.writer.write(encode_command(argv))
        while True:
            line = await self.read_line()
            if line:
                return line

    async def read_line(self) -> bytes:
        timeout = int(self.config["repl-timeout"])
        while True:
            line = self.parser.line()
            if line is not None:
                return line.lstrip(b"\n")  # newlines are the master's keepalives
            await self._read(timeout)

    async def _read(self, timeout: float) -> None:
        # No wait_for here (a timer and a task per read): cron() closes a link
        # silent for longer than repl-timeout, which ends this read.
        assert self.reader is not None
        data = await self.reader.read(_READ_BYTES)
        if not data:
            raise EOFError("connection lost")
        self.last_io = time.monotonic()
        self.state.stats.net_repl_input_bytes += len(data)
        self.parser.feed(data)

    # --- full sync --------------------------------------------------------------------------
    async def full_sync(self, replid: str, offset: int) -> None:
        timeout = int(self.config["repl-timeout"])
        log.info("Full resync from master: %s:%d", replid, offset)
        self.syncing = True
        self.sync_total = -1
        self.sync_read = 0
        header = b""
        while not header:
            header = await self.read_line()  # newlines before the payload are keepalives
        if not header.startswith(b"$"):
            raise LinkError(f"Bad protocol from MASTER, the first byte is not '$': {header[:40]!r}")
        eof_mark = None
        if header.startswith(b"$EOF:"):
            eof_mark = header[5:]
            if len(eof_mark) != _EOF_MARK_LEN:
                raise LinkError("Bad EOF mark from MASTER")
            log.info("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to disk")
        else:
            self.sync_total = int(header[1:])
            log.info("MASTER <-> REPLICA sync: receiving %d bytes from master to disk",
                     self.sync_total)
        directory = str(self.config["dir"]) or "."
        path = os.path.join(directory, f"temp-{int(time.time())}.{os.getpid()}.rdb")
        try:
            with open(path, "wb") as handle:
                await self._receive(handle, eof_mark, timeout)
            stream_db = stream_db_of(path)
            await self._load(path)
            if 0 <= stream_db < len(self.state.keyspace.dbs):
                self.client.db = self.state.keyspace[stream_db]
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass
        self.repl.synced_full(replid, offset)
        self.syncing = False
        log.info("MASTER <-> REPLICA sync: Finished with success")
        persistence = self.state.persistence
        if persistence is not None and persistence.aof_state != "off":
            # Redis restarts the AOF after a full sync: the new base is the loaded data.
            try:
                persistence.bgrewriteaof()
            except Exception as error:  # noqa: BLE001 - logged; the AOF keeps its old base
                log.warning("Could not rewrite the AOF after a full sync: %s", error)

    async def _receive(self, handle: Any, eof_mark: bytes | None, timeout: float) -> None:
        parser = self.parser
        if eof_mark is None:
            left = self.sync_total
            chunk = parser.take(left)  # what came with the header
            while True:
                handle.write(chunk)
                left -= len(chunk)
                self.sync_read += len(chunk)
                if left <= 0:
                    return
                # Straight from the socket to the file, in large reads.
                assert self.reader is not None
                chunk = await self.reader.read(min(left, _PAYLOAD_READ_BYTES))
                if not chunk:
                    raise EOFError("connection lost during the full sync")
                self.last_io = time.monotonic()
                self.state.stats.net_repl_input_bytes += len(chunk)
        # Diskless form: bytes until the 40-byte mark, the last 40 kept back until we
        # know. Nothing follows the mark before our first ACK, so it ends a read.
        held = b""
        while True:
            if parser.pending():
                data = parser.take(parser.pending())  # what came with the header
            else:
                # Straight from the socket, in large reads.
                assert self.reader is not None
                data = await self.reader.read(_PAYLOAD_READ_BYTES)
                if not data:
                    raise EOFError("connection lost during the full sync")
                self.last_io = time.monotonic()
                self.state.stats.net_repl_input_bytes += len(data)
            self.sync_read += len(data)
            if len(data) >= _EOF_MARK_LEN:
                handle.write(held)
                handle.write(memoryview(data)[:-_EOF_MARK_LEN])
                held = data[-_EOF_MARK_LEN:]
            else:
                joined = held + data
                handle.write(joined[:-_EOF_MARK_LEN])
                held = joined[-_EOF_MARK_LEN:]
            if held == eof_mark:
                return

    async def _load(self, path: str) -> None:
        state = self.state
        log.info("MASTER <-> REPLICA sync: Loading DB in memory")
        log.info("MASTER <-> REPLICA sync: Flushing old data")
        state.keyspace.flush_all()
        state.db_flushed(None)
        state.tracking.flushed()  # Redis's emptyData: tracking clients get the null
        self.repl.sync_failed()  # until loaded, we have no history anyone can continue from
        state.loading = True
        progress = LoadProgress(total_bytes=os.path.getsize(path))
        deadline = time.perf_counter() + _LOAD_SLICE_S
        try:
            for _ in load_payload(state, path, progress):
                if time.perf_counter() >= deadline:
                    await asyncio.sleep(0)
                    deadline = time.perf_counter() + _LOAD_SLICE_S
        except LoadError as error:
            state.keyspace.flush_all()  # nothing half-loaded
            raise LinkError(f"Failed trying to load the MASTER synchronization DB: {error}") from None
        finally:
            state.loading = False
        self.client = self._new_client()
        log.info("MASTER <-> REPLICA sync: Loaded %d keys", progress.keys_loaded)

    # --- the stream ---------------------------------------------------------------------------
    async def stream(self, timeout: int) -> None:
        if self.parser.pending():
            self.apply()
        reader = self.reader
        buffered = getattr(reader, "_buffer", None)
        transport = getattr(self.writer, "transport", None)
        if buffered.__class__ is not bytearray or transport is None or not hasattr(transport, "set_protocol"):
            while True:  # (a reader or transport of another make: the streams' way)
                await self._read(timeout)
                self.apply()
        # The stream is applied as it arrives, in the transport's own callback:
        # a StreamReader would copy each read twice and resume this task for it.
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        protocol = _StreamProtocol(self, done)
        leftover = bytes(buffered)
        buffered.clear()
        transport.set_protocol(protocol)
        transport.resume_reading()  # (the reader may have paused it when full)
        if leftover:
            protocol.data_received(leftover)
        await done  # the link's end: EOFError, or what apply() raised

    def apply(self) -> None:
        """Run every complete command buffered; forward and count their bytes.

        The canonical commands at the front (all a master sends) are cut by the
        compiled scanner clients' requests use; anything else (a keepalive newline,
        a non-canonical encoding, the tail of a read) goes through the parser.
        """
        parser = self.parser
        repl = self.repl
        dbs = self.state.keyspace.dbs
        for db in dbs:
            db.expire_mode = EXPIRE_MASTER_STREAM
        committed: list[bytes] = []
        try:
            while True:
                pending = parser.pending()
                if not pending:
                    break
                # (A command far larger than a read waits in the parser, which
                # does not copy what it has so far on every read as rest() does.)
                data = parser.rest() if _scan is not None and pending <= _SCAN_MAX else b""
                commands, used = _scan(data, _MAX_BULK) if data and _scan is not None else ([], 0)
                if not commands:
                    got = parser.command()  # one command, or a keepalive, the slow way
                    if got is None:
                        break
                    argv, used = got
                    if not argv:
                        continue  # a keepalive: not part of the stream
                    commands = [argv]
                    if not data:
                        data = parser.last()
                else:
                    parser.pos += used
                self._run(commands, data, used, committed)
        finally:
            for db in dbs:
                db.expire_mode = EXPIRE_REPLICA_READ
        if committed:
            raw = b"".join(committed)
            applied = repl.master_repl_offset + len(raw)
            persistence = self.state.persistence
            if persistence is not None and persistence.aof_state != "off":
                self.aof_marks.append((persistence.aof.fed_total, applied))
            repl.feed_raw(raw)
            if repl.backlog is None:  # (no backlog: still count what we applied)
                repl.master_repl_offset += len(raw)
        # Blocked readers (XREAD on this replica) are served once per read, as
        # a client's own pipeline would wake them.
        self.repl.server.after_batch()

    def _run(self, commands: list[list[bytes]], data: bytes, used: int,
             committed: list[bytes]) -> None:
        """Execute `commands` (the first `used` bytes of `data`); what counts goes to `committed`.

        A transaction's bytes count (and go on to our replicas) at its EXEC, as
        Redis's reploff: a link lost mid-transaction resumes at its MULTI (see
        _discard_partial). Byte positions inside `data` are only worked out where
        a transaction starts or ends, or a GETACK asks for our offset.
        """
        client = self.client
        held = self.held
        in_multi = client.multi is not None
        commit_end = 0  # data[:commit_end] is counted
        at_index = at_byte = 0  # a cursor for _offset_of

        def offset_of(index: int) -> int:
            nonlocal at_index, at_byte
            while at_index < index:
                at_byte += encoded_size(commands[at_index])
                at_index += 1
            return at_byte

        server = self.repl.server
        dispatcher = server.dispatcher
        state = self.state
        count = len(commands)
        index = 0
        # The compiled command loop's inline path, for the master's commands too.
        run_replicated = dispatcher.run_replicated
        while index < count:
            self._gate(client)
            if run_replicated is not None:
                index = run_replicated(dispatcher, state, client, commands, index, in_multi,
                                       self._failed)
            else:
                index = self._run_plain(commands, index, in_multi)
            if (client.multi is not None) is not in_multi:
                # commands[index - 1] entered or left MULTI.
                in_multi = not in_multi
                if in_multi:  # MULTI: what came before counts; the rest is held
                    end = offset_of(index - 1)
                    committed.append(data[commit_end:end])
                    commit_end = end
                else:  # EXEC (or DISCARD): the whole transaction counts now
                    end = offset_of(index)
                    if held:
                        committed.append(bytes(held))
                        held.clear()
                    committed.append(data[commit_end:end])
                    commit_end = end
                continue
            if index == count:
                break
            # A PING or REPLCONF of the master's: no data, answered here.
            argv = commands[index]
            if argv[0].lower() == b"replconf" and len(argv) >= 2 and \
                    argv[1].lower() == b"getack":
                # Our offset before this command (what is counted so far).
                pending = sum(map(len, committed))
                if not in_multi:
                    pending += offset_of(index) - commit_end
                self.send_ack(self.repl.master_repl_offset + pending)
            index += 1
        if in_multi:
            held += data[commit_end:used]  # (from the MULTI, or all of it)
        else:
            committed.append(data[commit_end:used])

    def _gate(self, client: Any) -> None:
        """Whether the master client takes the dispatcher's checks (Client.gated).

        It is internal: authentication, ACLs, maxmemory, CLIENT PAUSE, loading, a
        read-only replica's write guard and the replication guard never refuse
        it (Dispatcher._gate), so the server's gate (on for every client of a
        read-only replica) is not its own. What the gated path still does for it
        gates it: MULTI's queueing, a busy script's BUSY, MONITOR's feed,
        keyspace miss events (keep in step with Dispatcher._gate and call).
        Internal clients are not in `clients`, so nothing else updates this.
        """
        state = self.state
        client.gated = (client.multi is not None or state.script_busy is not None
                        or bool(state.monitors) or bool(state.keymiss)
                        or client.tracking is not None or client.pubsub is not None
                        or client.reply_mode != 0)

    def _run_plain(self, commands: list[list[bytes]], start: int, in_multi: bool) -> int:
        """From `start`, run the master's commands until a PING or REPLCONF (not run:
        _run answers them) or one that entered or left MULTI (run); the index to go
        on from. server/_fastpath.pyx run_replicated is this, compiled (keep in step)."""
        client = self.client
        execute = self.repl.server.dispatcher.execute
        for index in range(start, len(commands)):
            argv = commands[index]
            name = argv[0]
            if name[:1] in _CONTROL_FIRST and name.lower() in (b"ping", b"replconf"):
                return index
            reply = execute(client, argv)
            if reply.__class__ is ReplyError:
                self._failed(argv, reply)
            if (client.multi is not None) is not in_multi:
                return index + 1
        return len(commands)

    @staticmethod
    def _failed(argv: list[bytes], reply: Any) -> None:
        log.debug("command from master failed: %r: %s", argv[:3], reply)

    def send_ack(self, offset: int | None = None) -> None:
        writer = self.writer
        if writer is None or not self.up:
            return
        if offset is None:
            offset = self.repl.master_repl_offset
        writer.write(encode_command([b"REPLCONF", b"ACK", b"%d" % offset,
                                     b"FACK", b"%d" % self._aof_offset(offset)]))

    def _aof_offset(self, offset: int) -> int:
        """The stream offset our AOF holds durably (0 without an AOF, as Redis's replicas)."""
        persistence = self.state.persistence
        if persistence is None or persistence.aof_state == "off":
            self.aof_marks.clear()
            return 0
        from rillet.replication.master import _aof_durable

        durable = _aof_durable(persistence, self.config)
        marks = self.aof_marks
        while marks and marks[0][0] <= durable:
            self.fack = marks.popleft()[1]
        if not marks and durable >= persistence.aof.fed_total:
            self.fack = offset  # nothing of ours is waiting for the disk
        return self.fack

    def cron(self, now: float) -> None:
        """Once a second: REPLCONF ACK (the master's lag and WAIT come from it), repl-timeout."""
        if self.writer is not None and self.link_state != "connect":
            timeout = int(self.config["repl-timeout"])
            if now - self.last_io > timeout:
                log.warning("MASTER timeout: no data nor PING received...")
                self._close()
                return
        if self.up:
            self.send_ack()

    def kill(self) -> None:
        """CLIENT KILL TYPE master: drop the link; it reconnects and continues partially."""
        self._close()

