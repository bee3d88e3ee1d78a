"""The master side: replicas attached to us, PSYNC, full syncs, ACKs and WAIT.

A replica is an ordinary client connection that sent PSYNC (or SYNC): its
client gets flag S and an entry here. A full sync forks a child that writes
the snapshot payload into a pipe (the master keeps serving), while the writes
that follow gather in the entry's `pending`. As in Redis's disk-less sync
(`repl-diskless-sync yes`, the default), a replica that announced `capa eof`
gets the payload as the child makes it, between `$EOF:<mark>` and the mark, so
sending overlaps making; once the child is done and the replica's first REPLCONF
ACK says it has loaded (nothing may follow the mark before: Redis's replicas look
for it at the end of a read), `pending` goes out and the replica is online.
Other replicas (and `repl-diskless-sync no`) get `$<len>` and the whole payload
once the child is done, then `pending`.

A partial resync sends the missing backlog as the replica reads it (a cursor
into the backlog feeds its connection's `stream`), and the stream goes to it
directly only once it has caught up: what comes meanwhile is in the backlog,
after what it is reading. Like the payload, that backlog does not count
against client-output-buffer-limit: Redis's replicas share the backlog's
blocks, so a replica whose backlog is larger than its limit still comes back.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rillet import cpuaffinity
from rillet.persistence import fork
from rillet.replication.backlog import Cursor
from rillet.replication.payload import write_payload
from rillet.replication.protocol import encode_command

if TYPE_CHECKING:
    from rillet.config import Config
    from rillet.replication.core import Replication
    from rillet.state import Persistence

log = logging.getLogger("rillet")

WAIT_BGSAVE_START = "wait_bgsave"  # a full sync waits for the next child
WAIT_BGSAVE_END = "wait_bgsave_end"  # +FULLRESYNC sent, the child is writing the payload
WAIT_ACK = "wait_ack"  # the streamed payload is out; the stream starts at the first ACK
ONLINE = "online"
# Each state as INFO's slaveN and Redis's logs name it.
STATE_NAMES = {ONLINE: "online", WAIT_ACK: "online", WAIT_BGSAVE_START: "wait_bgsave",
               WAIT_BGSAVE_END: "wait_bgsave"}

KIND_REPL = "repl"
_POLL_S = 0.02
_PIPE_BYTES = 1 << 20  # the payload pipe's capacity (F_SETPIPE_SZ), where allowed
_PIPE_READS = 4  # reads of the pipe per event-loop turn: clients are served between
_REAP_S = 0.001  # the child has closed the pipe: it is exiting
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
_CATCHUP_PIECE = 256 * 1024  # backlog bytes per piece sent to a replica catching up


@dataclass(eq=False)
class ReplicaEntry:
    client: Any
    ip: str
    port: int
    capa: set[bytes] = field(default_factory=set)
    state: str = WAIT_BGSAVE_START
    ack_offset: int = 0
    aof_ack_offset: int = 0  # REPLCONF ACK ... FACK: what the replica's AOF has fsynced
    ack_time: float = field(default_factory=time.monotonic)
    pending: list[bytes] | None = None  # stream bytes since the child's fork
    # The payload's (or the backlog's, after a partial resync) size while it
    # drains: as in Redis, it does not count against client-output-buffer-limit,
    # so the replica class's limits apply after it.
    payload_size: int = 0
    sent_after_payload: int = 0
    streaming: bool = False  # got `$EOF:<mark>`: the payload goes out as it is made
    catchup: Cursor | None = None  # resynced partially: where it is in the backlog

    @property
    def conn(self) -> Any:
        return self.client.conn

    def closed(self) -> bool:
        conn = self.client.conn
        transport = getattr(conn, "transport", None)
        return conn is None or transport is None or transport.is_closing()


@dataclass(eq=False)
class Waiter:
    """A client blocked in WAIT (or WAITAOF) until enough copies hold `offset`."""

    client: Any
    offset: int
    numreplicas: int
    timer: Any = None
    aof: bool = False  # WAITAOF: replicas' fsynced offsets, and the local AOF
    numlocal: int = 0
    aof_bytes: int = 0  # WAITAOF: the local AOF's size to be durable


class MasterSide:
    def __init__(self, replication: Replication) -> None:
        self.repl = replication
        self.state = replication.state
        self.config = replication.config
        self.entries: dict[int, ReplicaEntry] = {}  # client id -> entry
        # Handshake details (REPLCONF listening-port / ip-address / capa) by client id.
        self.handshakes: dict[int, dict[str, Any]] = {}
        self.child: fork.Child | None = None
        self.child_offset = 0
        self.child_entries: list[ReplicaEntry] = []
        self.child_stream_db = -1
        # The running child's payload: what it wrote so far, the pipe it writes
        # to (-1 once it is closed), the mark that ends it for streaming replicas.
        self.child_chunks: list[bytes] = []
        self.child_size = 0
        self.child_rfd = -1
        self.child_mark = b""
        self._poll_timer: Any = None
        self.waiters: list[Waiter] = []
        self._ack_requested = False

    # --- handshake ---------------------------------------------------------------------
    def handshake(self, client: Any) -> dict[str, Any]:
        return self.handshakes.setdefault(client.id, {"port": 0, "ip": None, "capa": set()})

    def psync(self, client: Any, replid: bytes, offset: int, sync_cmd: bool = False) -> None:
        """PSYNC replid offset (or SYNC): continue from the backlog, or start a full sync."""
        repl = self.repl
        repl.flush_out()  # the backlog and the replicas' buffers are current from here
        info = self.handshakes.pop(client.id, None) or {"port": 0, "ip": None, "capa": set()}
        ip = info["ip"] or _host_of(client.conn.addr if client.conn is not None else "")
        entry = ReplicaEntry(client, ip, info["port"], info["capa"])
        client.flags = "S"
        self.entries[client.id] = entry
        log.info("Replica %s:%d asks for synchronization", entry.ip, entry.port)
        if not sync_cmd and self._try_partial(entry, replid, offset):
            repl.sync_partial_ok += 1
            return
        if not sync_cmd and replid != b"?":
            repl.sync_partial_err += 1
        repl.sync_full += 1
        repl.create_backlog()
        log.info("Full resync requested by replica %s:%d", entry.ip, entry.port)
        self._full_sync(entry, sync_cmd)

    def _try_partial(self, entry: ReplicaEntry, replid_raw: bytes, offset: int) -> bool:
        repl = self.repl
        backlog = repl.backlog
        replid = replid_raw.decode("ascii", "replace")
        if backlog is None or replid == "?":
            return False
        if replid != repl.replid and not (
            replid == repl.replid2 and offset <= repl.second_repl_offset
        ):
            log.info("Partial resynchronization not accepted: Replication ID mismatch "
                     "(Replica asked for '%s', my replication IDs are '%s' and '%s')",
                     replid, repl.replid, repl.replid2)
            return False
        if not backlog.covers(offset):
            log.info("Unable to partial resync with replica %s:%d for lack of backlog "
                     "(Replica request was: %d).", entry.ip, entry.port, offset)
            return False
        if b"psync2" in entry.capa:
            header = b"+CONTINUE %s\r\n" % repl.replid.encode()
        else:
            header = b"+CONTINUE\r\n"
        entry.state = ONLINE
        entry.ack_offset = offset - 1
        entry.ack_time = time.monotonic()
        entry.conn.send(header)
        entry.catchup = backlog.cursor(offset)
        entry.conn.stream(lambda: self._catch_up(entry))
        log.info("Partial resynchronization request from %s:%d accepted. Sending %d bytes "
                 "of backlog starting from offset %d.", entry.ip, entry.port,
                 repl.master_repl_offset - offset + 1, offset)
        return True

    def _catch_up(self, entry: ReplicaEntry) -> bytes | memoryview | None:
        """The replica's next piece of backlog; None once it has it all (or is dropped)."""
        cursor = entry.catchup
        backlog = self.repl.backlog
        if cursor is None:
            return None
        piece = backlog.read(cursor, _CATCHUP_PIECE) if backlog is not None else None
        if piece is None:
            self._fell_behind(entry)
            return None
        if piece:
            entry.payload_size += len(piece)
            return piece
        entry.catchup = None  # up to date: send_all writes to it from here
        if not entry.payload_size:
            _replica_limits(entry)
        return None

    def _fell_behind(self, entry: ReplicaEntry) -> None:
        """The backlog moved past a replica still catching up. Redis would have kept
        the blocks for it, counted toward its limit (at least the backlog's size), and
        dropped it just so."""
        entry.catchup = None
        self.entries.pop(entry.client.id, None)
        entry.conn.close_for_output_limit()

    def _full_sync(self, entry: ReplicaEntry, sync_cmd: bool) -> None:
        entry.state = WAIT_BGSAVE_START
        entry.capa.add(b"sync" if sync_cmd else b"psync")
        if self.child is not None:
            # Attach to the running child if another replica is waiting on it: the
            # same payload, and a copy of the stream that replica buffered since.
            donor = next((e for e in self.child_entries if not e.closed()), None)
            if donor is not None and donor.pending is not None:
                self._attach(entry, self.child_offset)
                entry.pending = list(donor.pending)
                self.child_entries.append(entry)
            return  # else it waits for the next child (see _child_done)
        self._start_child()

    def _attach(self, entry: ReplicaEntry, offset: int) -> None:
        entry.state = WAIT_BGSAVE_END
        if b"sync" not in entry.capa:
            entry.conn.send(b"+FULLRESYNC %s %d\r\n" % (self.repl.replid.encode(), offset))
        if b"eof" in entry.capa and self.config["repl-diskless-sync"]:
            # From here the payload goes out as it is made (what exists already first).
            entry.streaming = True
            entry.conn.send(b"$EOF:%s\r\n" % self.child_mark)
            if self.child_chunks:
                entry.conn.send(b"".join(self.child_chunks))

    def _start_child(self) -> None:
        repl = self.repl
        repl.flush_out()  # bytes counted before the fork must not land in `pending`
        waiting = [e for e in self.entries.values()
                   if e.state == WAIT_BGSAVE_START and not e.closed()]
        if not waiting:
            return
        state = self.state
        # The stream re-selects after a full sync, as Redis's slaveseldb = -1; a
        # replica forwards its master's bytes and passes on the db they are in.
        repl.selected_db = -1
        link = repl.link
        # (A master re-selects after the fork anyway; Redis writes 0 then.)
        stream_db = link.client.db.index if repl.is_replica and link and link.client else 0
        offset = repl.master_repl_offset
        replid = repl.replid
        try:
            rfd, wfd = os.pipe()
        except OSError as error:
            log.warning("Can't create the pipe for a replica's full sync: %s", error.strerror)
            for entry in waiting:
                self.drop(entry)
            return
        try:
            fcntl.fcntl(wfd, _F_SETPIPE_SZ, _PIPE_BYTES)  # fewer, larger hand-overs
        except OSError:
            pass  # (above /proc/sys/fs/pipe-max-size: the default size works too)
        cpulist = str(self.config["bgsave-cpulist"])

        def work(_path: str) -> None:
            cpuaffinity.pin(cpulist)
            write_payload(state, wfd, stream_db, replid, offset)

        try:
            child = fork.start(KIND_REPL, lambda pid: "", work, keep_fds=(wfd,))
        except OSError as error:
            os.close(rfd)
            os.close(wfd)
            log.warning("Can't fork for a replica's full sync: %s", error.strerror)
            for entry in waiting:
                self.drop(entry)
            return
        os.close(wfd)
        os.set_blocking(rfd, False)
        streamed = self.config["repl-diskless-sync"] and any(b"eof" in e.capa for e in waiting)
        log.info("Starting BGSAVE for SYNC with target: %s (pid %d)",
                 "replicas sockets" if streamed else "memory", child.pid)
        self.child = child
        self.child_offset = offset
        self.child_stream_db = stream_db
        self.child_entries = waiting
        self.child_chunks = []
        self.child_size = 0
        self.child_rfd = rfd
        self.child_mark = os.urandom(20).hex().encode()
        for entry in waiting:
            self._attach(entry, offset)
            entry.pending = []
        loop = self.repl.server.loop
        if loop is not None:
            loop.add_reader(rfd, self._on_pipe)
        self._schedule_poll()

    def _on_pipe(self) -> None:
        """The pipe is readable: take what the child wrote; reap it soon after the end."""
        if self._read_pipe(_PIPE_READS) and self.child is not None:
            # The child closes the pipe as it exits: reap it without the usual wait.
            if self._poll_timer is not None:
                self._poll_timer.cancel()
            self._schedule_poll(_REAP_S)

    def _read_pipe(self, reads: int) -> bool:
        """Up to `reads` reads (all there is if negative), kept and passed on to the
        streaming replicas; True once the pipe is at its end (and closed)."""
        rfd = self.child_rfd
        while rfd >= 0 and reads != 0:
            reads -= 1
            try:
                chunk = os.read(rfd, _PIPE_BYTES)
            except (BlockingIOError, InterruptedError):
                return False
            except OSError:
                chunk = b""
            if not chunk:
                self._close_pipe()
                return True
            self.child_chunks.append(chunk)
            self.child_size += len(chunk)
            for entry in self.child_entries:
                if entry.streaming and not entry.closed():
                    entry.conn.send(chunk)
        return rfd < 0

    def _close_pipe(self) -> None:
        rfd, self.child_rfd = self.child_rfd, -1
        if rfd < 0:
            return
        loop = self.repl.server.loop
        if loop is not None:
            loop.remove_reader(rfd)
        os.close(rfd)

    def _schedule_poll(self, delay: float = _POLL_S) -> None:
        loop = self.repl.server.loop
        if loop is not None:
            self._poll_timer = loop.call_later(delay, self._poll_child, delay)

    def _poll_child(self, delay: float = _POLL_S) -> None:
        self._poll_timer = None
        child = self.child
        if child is None:
            return
        code = fork.poll(child)
        # (A child that exited has closed its end: the rest is in the pipe.)
        if code is None or (code == 0 and not self._read_pipe(-1)):
            self._schedule_poll(delay)
            return
        self._close_pipe()
        self.child = None
        entries, self.child_entries = self.child_entries, []
        chunks, self.child_chunks = self.child_chunks, []
        try:
            self._child_done(code, entries, chunks)
        finally:
            self.child_size = 0
        self._start_child()  # replicas that arrived while this child ran

    def _child_done(self, code: int, entries: list[ReplicaEntry], chunks: list[bytes]) -> None:
        if code != 0:
            log.warning("Background transfer error (child exit code %d)", code)
            for entry in entries:
                self.drop(entry)
            return
        size = self.child_size
        whole: bytes | None = None  # joined once, for the replicas that get `$<len>`
        for entry in entries:
            if entry.closed():
                self.entries.pop(entry.client.id, None)
                continue
            entry.sent_after_payload = 0
            if entry.streaming:
                entry.conn.send(self.child_mark)
                entry.payload_size = size + 2 * len(self.child_mark) + 7
                # The replica looks for the mark at the end of what it reads: the
                # stream waits for its first ACK (Redis's repl_start_cmd_stream_on_ack).
                entry.state = WAIT_ACK
                entry.ack_time = time.monotonic()
                log.info("Streamed RDB transfer with replica %s:%d succeeded (socket). "
                         "Waiting for REPLCONF ACK from replica to enable streaming",
                         entry.ip, entry.port)
                continue
            if whole is None:
                whole = b"".join(chunks)
            header = b"$%d\r\n" % size
            entry.payload_size = len(header) + size
            # Two writes, not one concatenation: the payload is not copied again.
            entry.conn.send(header)
            entry.conn.send(whole)
            self._go_online(entry)

    def _go_online(self, entry: ReplicaEntry) -> None:
        """The payload is out: the writes since the fork follow, then the live stream."""
        pending = entry.pending or []
        entry.pending = None
        entry.state = ONLINE
        entry.ack_time = time.monotonic()
        if pending:
            tail = b"".join(pending)
            entry.conn.send(tail)
            entry.sent_after_payload = len(tail)
        log.info("Synchronization with replica %s:%d succeeded", entry.ip, entry.port)

    # --- the stream -----------------------------------------------------------------------
    def send_all(self, data: bytes) -> None:
        for entry in self.entries.values():
            if entry.state == ONLINE:
                if entry.catchup is not None:
                    continue  # it reads this from the backlog, after what it is reading
                entry.conn.send(data)
                if entry.payload_size:
                    entry.sent_after_payload += len(data)
            elif entry.pending is not None:
                entry.pending.append(data)

    def drop(self, entry: ReplicaEntry) -> None:
        self.entries.pop(entry.client.id, None)
        conn = entry.conn
        if conn is not None:
            entry.client.closing = True
            conn.close()

    def disconnect_all(self) -> None:
        self.repl.flush_out()
        for entry in list(self.entries.values()):
            self.drop(entry)

    # --- ACKs and WAIT ------------------------------------------------------------------------
    def ack(self, client: Any, offset: int, aof_offset: int = -1) -> None:
        entry = self.entries.get(client.id)
        if entry is None:
            return
        if offset > entry.ack_offset:
            entry.ack_offset = offset
        if aof_offset > entry.aof_ack_offset:
            entry.aof_ack_offset = aof_offset
        entry.ack_time = time.monotonic()
        if entry.state == WAIT_ACK:
            self._go_online(entry)
        if self.waiters:
            self._serve_waiters()

    def acked(self, offset: int, aof: bool = False) -> int:
        return sum(1 for e in self.entries.values()
                   if e.state == ONLINE and not e.closed()
                   and (e.aof_ack_offset if aof else e.ack_offset) >= offset)

    def local_aof_durable(self, aof_bytes: int) -> int:
        """1 if the local AOF has fsynced its first `aof_bytes` bytes (WAITAOF numlocal)."""
        persistence = self.state.persistence
        if persistence is None or persistence.aof_state == "off":
            return 0
        return 1 if _aof_durable(persistence, self.config) >= aof_bytes else 0

    def good_replicas(self) -> int:
        max_lag = int(self.config["min-replicas-max-lag"])
        now = time.monotonic()
        return sum(1 for e in self.entries.values()
                   if e.state == ONLINE and now - e.ack_time <= max_lag and not e.closed())

    def request_ack(self) -> None:
        """Ask every replica for its offset, once per event-loop turn (REPLCONF GETACK *)."""
        if self._ack_requested:
            return
        self._ack_requested = True
        loop = self.repl.server.loop

        def send() -> None:
            self._ack_requested = False
            if self.entries and self.repl.master_host is None:
                self.repl.feed_raw(encode_command([b"REPLCONF", b"GETACK", b"*"]))

        if loop is None:
            send()
        else:
            loop.call_soon(send)

    def add_waiter(self, waiter: Waiter, timeout_ms: int) -> None:
        self.waiters.append(waiter)
        loop = self.repl.server.loop
        if timeout_ms > 0 and loop is not None:
            waiter.timer = loop.call_later(timeout_ms / 1000, self._finish, waiter)
        self.request_ack()
        if waiter.aof and loop is not None:
            loop.call_later(_POLL_S, self._poll_aof_waiters)

    def _poll_aof_waiters(self) -> None:
        # The local AOF's fsync completes in the background: look again soon.
        self._serve_waiters()
        loop = self.repl.server.loop
        if loop is not None and any(w.aof for w in self.waiters):
            loop.call_later(_POLL_S, self._poll_aof_waiters)

    def _ready(self, waiter: Waiter) -> bool:
        if self.acked(waiter.offset, waiter.aof) < waiter.numreplicas:
            return False
        return not waiter.aof or self.local_aof_durable(waiter.aof_bytes) >= waiter.numlocal

    def _serve_waiters(self) -> None:
        for waiter in list(self.waiters):
            if self._ready(waiter):
                self._finish(waiter)

    def _finish(self, waiter: Waiter) -> None:
        if waiter not in self.waiters:
            return
        self.waiters.remove(waiter)
        if waiter.timer is not None:
            waiter.timer.cancel()
        client = waiter.client
        if client.blocked is None:
            return  # disconnected or unblocked meanwhile
        acked = self.acked(waiter.offset, waiter.aof)
        if waiter.aof:
            reply: object = [self.local_aof_durable(waiter.aof_bytes), acked]
        else:
            reply = acked
        server = self.repl.server
        entry = self.state.unblock(client)
        if entry is not None:  # (it is: the client was blocked)
            server._deliver(client, entry, reply)

    def abort_waits(self) -> None:
        for waiter in list(self.waiters):
            self._finish(waiter)

    # --- periodic work ------------------------------------------------------------------------
    def cron(self, now: float) -> None:
        timeout = int(self.config["repl-timeout"])
        for entry in list(self.entries.values()):
            if entry.closed():
                self.entries.pop(entry.client.id, None)
                continue
            if entry.state == WAIT_BGSAVE_END and not entry.streaming:
                # Redis's newline keepalive while the payload is being made (not
                # inside a payload that is already going out).
                entry.conn.send(b"\n")
            elif entry.state in (ONLINE, WAIT_ACK) and now - entry.ack_time > timeout:
                log.warning("Disconnecting timedout replica (streaming sync): %s:%d",
                            entry.ip, entry.port)
                self.drop(entry)
                continue
            if entry.catchup is not None:
                backlog = self.repl.backlog
                if backlog is None or entry.catchup.offset < backlog.first_byte_offset:
                    self._fell_behind(entry)  # (it reads nothing: no piece would tell)
                    continue
                entry.conn.pull()  # (in case nothing else does)
            transport = getattr(entry.conn, "transport", None)
            # Less queued than what followed the payload: the payload has left.
            if entry.payload_size and entry.catchup is None and transport is not None and \
                    transport.get_write_buffer_size() <= entry.sent_after_payload:
                entry.payload_size = 0  # the payload has left: the replica's limits apply
                _replica_limits(entry)
            conn = entry.conn
            if not entry.payload_size and entry.client.obuf_class == "replica" and \
                    getattr(conn, "obuf_limited", False) and conn.over_output_limit():
                # (The connection checks on each send; a replica that stopped
                # reading while nothing was sent is caught here, as Redis's cron.)
                conn.close_for_output_limit()
        for client_id in list(self.handshakes):
            if client_id not in self.state.clients:
                del self.handshakes[client_id]
        if self.waiters:
            self._serve_waiters()

    # --- views ----------------------------------------------------------------------------------
    def online(self) -> list[ReplicaEntry]:
        return [e for e in self.entries.values() if not e.closed()]

    def info_lines(self) -> list[tuple[str, object]]:
        now = time.monotonic()
        entries = self.online()
        lines: list[tuple[str, object]] = [("connected_slaves", len(entries))]
        for n, entry in enumerate(entries):
            lines.append((f"slave{n}", f"ip={entry.ip},port={entry.port},"
                          f"state={STATE_NAMES[entry.state]},"
                          f"offset={entry.ack_offset},lag={int(now - entry.ack_time)}"))
        return lines


def _host_of(addr: str) -> str:
    host = addr.rsplit(":", 1)[0]
    return host.strip("[]")


def _aof_durable(persistence: Persistence, config: Config) -> int:
    """Bytes of the AOF that are durable as far as WAITAOF goes (written, under `no`)."""
    aof = persistence.aof
    policy = config["appendfsync"]
    if policy == "no":
        return aof.written_total
    if policy == "everysec" and not aof.bio.fsync_pending:
        # The background fsync of the incr file is done up to synced_size.
        return max(aof.synced_total, aof.written_total - (aof.incr_size - aof.synced_size))
    return aof.synced_total


def aof_position(persistence: Persistence) -> int:
    """The AOF's size including what is buffered: what must become durable."""
    return persistence.aof.fed_total


def _replica_limits(entry: ReplicaEntry) -> None:
    """From now on the connection enforces client-output-buffer-limit's replica class."""
    entry.client.set_output_class("replica")
