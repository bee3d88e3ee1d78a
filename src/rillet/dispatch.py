"""The one entry point for running a command: checks, call, effects, stats.

`Dispatcher.execute(client, argv)` runs Redis's processCommand checks in
Redis's order (unknown command, arity, auth, ACL permissions, subscribed
mode, MULTI queueing, busy script, loading, write guard, replication), calls
the handler, and hands a write's effects to the publish step
(ServerState.publish_write), which feeds the AOF and replicas. Network
clients, the AOF loader and a replica link all come through here, so there is
one code path and one set of bugs.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from time import perf_counter_ns

from rillet import errors
from rillet.commands import table
from rillet.commands.acl import refuse as acl_refusal
from rillet.commands.cluster import has_keys as cluster_has_keys
from rillet.commands.cluster import route as cluster_route
from rillet.commands.scripting import declared_flags
from rillet.commands.table import TIMING_MASK, TIMING_SAMPLE, CommandSpec, shown_argv
from rillet.errors import CountedReplyError, ReplyError
from rillet.hotkeys import Hotkeys, request_bytes
from rillet.memory import may_replicate, writes
from rillet.notify import READS_AFTER, READS_BEFORE, READS_SET_GET, read_stats_kind
from rillet.observe import COARSE_SLOW_NS, SMALL_US, coarse_ns, record_latency
from rillet.resp.types import NO_REPLY, QUEUED, PushedFrames
from rillet.state import PAUSE_KEY, Block, Client, ServerState

log = logging.getLogger("rillet")
_TABLE_GET = table.TABLE.get

# Commands that run at once even inside MULTI (Redis: processCommand).
_MULTI_IMMEDIATE = frozenset({"exec", "discard", "multi", "watch", "quit", "reset"})
# Not shown to MONITOR (Redis: CMD_SKIP_MONITOR and CMD_ADMIN).
_NOT_MONITORED = frozenset({"skip_monitor", "admin"})
# What a RESP2 client may run while subscribed (Redis's processCommand).
_PUBSUB_ALLOWED = frozenset({"subscribe", "ssubscribe", "sunsubscribe", "psubscribe", "unsubscribe",
                             "punsubscribe", "ping", "quit", "reset"})


class Dispatcher:
    __slots__ = ("state", "run_replicated")

    def __init__(self, state: ServerState) -> None:
        self.state = state
        # The compiled loop's entry for a master's commands on a replica
        # (_fastpath.run_replicated), set by the server layer when it is built:
        # replication reaches it through this object, not by import.
        self.run_replicated: Callable[..., int] | None = None
        state.transactions = self
        state.script_flags = functools.partial(declared_flags, state)  # maxmemory's EVAL/FCALL flags
        state.acl.commands.load(table.COMMANDS.values(), table.acl_categories)
        for spec in table.COMMANDS.values():
            for each in (spec, *spec.subcommands.values()):
                each.read_stats = read_stats_kind(each, each.first_key, each.find_keys is not None)

    def execute(self, client: Client, argv: list[bytes]) -> object:
        """Run one command for `client`; returns a reply, or a `Block` to park it."""
        spec = _TABLE_GET(argv[0])
        if spec is None or spec.subcommands:
            resolved = self._resolve(client, argv)
            if isinstance(resolved, ReplyError):
                return self._mute(client, None, resolved) if client.reply_mode else resolved
            spec = resolved
        # Like Redis's c->lastcmd: set at lookup, so CLIENT LIST shows the command
        # being run, and EXEC (not what it ran) once it is done.
        client.last_command = spec.name_bytes
        if not spec.min_argc <= len(argv) <= spec.max_argc:
            refused = self._reject(client, self._arity_error(client, spec, argv), spec)
            return self._mute(client, spec, refused) if client.reply_mode else refused
        if spec.protected_by and not client.protected_action_allowed(spec.protected_by):
            refused = self._reject(client, errors.PROTECTED_REFUSED[spec.protected_by], spec)
            return self._mute(client, spec, refused) if client.reply_mode else refused
        # The rare states (not authenticated, in MULTI, loading, writes refused)
        # are folded into one flag, so the common path costs one attribute read.
        if client.gated:
            if client.pubsub is not None or client.tracking is not None:
                # It may be sent frames by its own command: they follow its reply.
                pubsub = self.state.pubsub
                saved = pubsub.enter(client)
                reply = None
                try:
                    reply = self._gated(client, spec, argv)
                finally:
                    reply = pubsub.leave(client, reply, saved)
                return reply
            return self._gated(client, spec, argv)
        # maxmemory for an ungated client: only a command that may grow memory is
        # checked (`oom_check`), so with `maxmemory 0` this is one attribute read
        # for the DENYOOM commands and nothing for the rest (_fastpath.pyx: same).
        if spec.oom_check and self.state.memory.limit and not client.is_internal and \
                self.state.memory.refuse(client, spec, argv):
            return self._reject(client, errors.OOM, spec)
        return self.call(client, spec, argv)

    def _gated(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> object:
        refused = self._gate(client, spec, argv)
        if refused is not None:
            reply = refused
        elif client.tracking is not None:
            reply = self._tracked_call(client, spec, argv)
        else:
            reply = self.call(client, spec, argv)
        if client.cluster_asking and client.multi is None and spec.name != "asking":
            client.cluster_asking = False  # ASKING is for one command, or one transaction
        if client.reply_mode:
            return self._mute(client, spec, reply)
        return reply

    def _paused(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> Block | None:
        """CLIENT PAUSE: park the command until the pause ends (Redis's blockPostponeClient).

        WRITE pauses writes and may-replicate commands (EVAL, FCALL, PUBLISH...), and
        EXEC of a transaction holding one; ALL pauses everything, CLIENT UNPAUSE too.
        """
        state = self.state
        now = state.clock.now_ms()
        if now >= state.pause_end_ms:
            state.unpause()
            return None
        if not state.pause_all and not may_replicate(state, client, spec, argv):
            return None
        if not client.blocked_retry:
            state.wake_key_at(state.pause_end_ms, client.db.index, PAUSE_KEY)
        return Block([PAUSE_KEY], 0, argv, None)

    def _tracked_call(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> object:
        """A command of a client with CLIENT TRACKING on: it is the current client
        while it runs (NOLOOP), and its CACHING flag lasts one command, or one
        transaction, or until a command other than CLIENT (Redis's resetClient)."""
        tracking = self.state.tracking
        tracking.current = client
        try:
            reply = self.call(client, spec, argv)
        finally:
            tracking.current = None
        if tracking.pending:
            tracking.send_pending(client)
        mode = client.tracking
        if mode is not None and mode.caching and client.multi is None \
                and not spec.name.startswith("client|"):
            mode.caching = False
        return reply

    @staticmethod
    def _mute(client: Client, spec: CommandSpec | None, reply: object) -> object:
        """CLIENT REPLY OFF|SKIP: the reply is not sent (a parked command still parks),
        but pub/sub's (un)subscribe frames are, as Redis's pushes are (CLIENT_PUSHING).
        `spec` is None for a command refused before it was resolved."""
        if reply.__class__ is Block:
            return reply
        if client.reply_mode == 2:
            if reply is NO_REPLY and spec is not None and spec.name == "client|reply":
                return NO_REPLY  # the SKIP itself; the next command is skipped
            client.reply_mode = 0
            client.update_gate()
        return reply if reply.__class__ is PushedFrames else NO_REPLY

    @staticmethod
    def _arity_error(client: Client, spec: CommandSpec, argv: list[bytes]) -> str:
        parent = spec.parent
        if parent is None or not parent.one_command:
            return errors.wrong_arity(spec.name)
        # DEBUG is one command in Redis: the protection is checked first, then its
        # own parsing finds the arguments wrong.
        if parent.protected_by and not client.protected_action_allowed(parent.protected_by):
            return errors.PROTECTED_REFUSED[parent.protected_by]
        return errors.subcommand_syntax(argv[1], parent.name)

    def _resolve(self, client: Client, argv: list[bytes]) -> CommandSpec | ReplyError:
        """The spec for a mixed-case name or a container's subcommand, or the error."""
        spec = _TABLE_GET(argv[0]) or _TABLE_GET(argv[0].lower())
        if spec is None and client.is_internal:
            # Loading and replication speak the original names (rename-command is for clients).
            spec = table.COMMANDS.get(argv[0].lower().decode("utf-8", "replace"))
        if spec is None:
            return self._reject(client, errors.unknown_command(argv[0], argv[1:]))
        if spec.subcommands and (len(argv) >= 2 or spec.handler is None):
            # A container (CONFIG, CLIENT, XINFO...): the subcommand picks the spec.
            if len(argv) < 2:
                return self._reject(client, errors.wrong_arity(spec.name))
            sub = spec.subcommands.get(argv[1]) or spec.subcommands.get(argv[1].lower())
            if sub is None:
                if spec.protected_by and not client.protected_action_allowed(spec.protected_by):
                    # DEBUG is one protected command in Redis: refused whatever follows.
                    return self._reject(client, errors.PROTECTED_REFUSED[spec.protected_by], spec)
                if spec.one_command:  # DEBUG's own parsing: one reply for both
                    return self._reject(client, errors.subcommand_syntax(argv[1], spec.name))
                return self._reject(client, errors.unknown_subcommand(argv[1], spec.name))
            spec = sub
        return spec

    def _gate(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> object | None:
        """Redis's checks after arity, in its order; None lets the command run."""
        if not client.authenticated and not spec.allowed_unauthenticated:
            return self._reject(client, errors.NOAUTH, spec)
        if client.restricted:
            # The user's ACL limits something (an unrestricted user never gets here).
            refused = acl_refusal(client, spec, argv)
            if refused is not None:
                return self._reject(client, refused, spec)
        state = self.state
        if state.cluster is not None and not client.is_internal and cluster_has_keys(spec):
            # cluster-enabled yes: keyed commands go to their slot's node (Redis's
            # getNodeByQuery, right after the ACL check). A replica's master and the
            # loader are obeyed whatever the slot.
            redirect = cluster_route(state, client, spec, argv)
            if redirect is not None:
                return self._redirect(client, spec, redirect)
        # maxmemory (memory.py): evict what the policy allows, then -OOM for a
        # command that may grow memory (Redis checks this before MISCONF and MULTI;
        # as Redis, a gated client's every command evicts first).
        if state.memory.limit and not client.is_internal and state.memory.refuse(client, spec, argv):
            return self._reject(client, errors.OOM, spec)
        if state.pause_end_ms and not client.is_internal:
            postponed = self._paused(client, spec, argv)
            if postponed is not None:
                return postponed
        subs = client.pubsub
        if subs is not None and not client.resp3 and spec.name not in _PUBSUB_ALLOWED and subs.total():
            return self._reject(client, errors.PUBSUB_CONTEXT.format(spec.name), spec)
        if state.script_busy is not None and "allow_busy" not in spec.flags:
            # A script ran past busy-reply-threshold (Redis's processCommand order: before loading).
            return self._reject(client, errors.BUSY_EVAL if state.script_busy.is_eval
                                else errors.BUSY_FUNCTION, spec)
        if state.loading and "loading" not in spec.flags and not client.is_internal:
            return self._reject(client, errors.LOADING, spec)
        if state.write_guard is not None and not client.is_internal and writes(state, client, spec, argv):
            problem = state.write_guard()
            if problem is not None:
                return self._reject(client, problem, spec)
        # Replication hook (replication/core.py command_guard): MASTERDOWN on a
        # replica whose link is down (replica-serve-stale-data no); while FAILOVER
        # pauses writes, a Block that parks the client until they resume.
        guard = state.command_guard
        if guard is not None and not client.is_internal:
            verdict = guard(client, spec, argv)
            if verdict is not None:
                if isinstance(verdict, Block):
                    return verdict
                return self._reject(client, verdict, spec)
        # Queued last, as Redis's processCommand: a command refused above (BUSY,
        # NOREPLICAS, MASTERDOWN...) is not queued and makes EXEC answer EXECABORT.
        if client.multi is not None and spec.name not in _MULTI_IMMEDIATE:
            if not spec.allowed_in_multi:
                return self._reject(client, errors.COMMAND_NOT_ALLOWED_IN_MULTI, spec)
            client.multi.append((spec, argv))
            return QUEUED
        return None

    def call(self, client: Client, spec: CommandSpec, argv: list[bytes]) -> object:
        """Run an already-checked command; a write's effects go through the publish step.

        server/_fastpath.pyx repeats these lines for a plain command (keep in
        step); tests/server/test_paths_agree.py runs generated pipelines through
        both and compares replies, effects and stats.
        """
        state = self.state
        hotkeys = state.hotkeys
        if hotkeys is not None and hotkeys.active and not hotkeys.nesting:
            return self._call_hotkeys(hotkeys, client, spec, argv)
        write = spec.is_write
        if write:
            dirty_before = state.dirty
        # Every call is timed, for the slow log; but recording a duration costs
        # more than a SET (~0.5 us): a `fast` command (O(1), O(log N)) or a write
        # is recorded once in TIMING_SAMPLE calls and counted TIMING_SAMPLE times
        # (INFO commandstats' usec and the latency histogram are estimates), and
        # its other calls only when the slow log (or a block) wants them, timed
        # on the coarse clock when that is fine enough (observe.COARSE_SLOW_NS).
        unsampled = spec.sampled and spec.calls & TIMING_MASK
        clock = coarse_ns if unsampled and state.slow_ns >= COARSE_SLOW_NS else perf_counter_ns
        started = clock()
        if state.keymiss:
            # notify-keyspace-events `m` (every client is gated meanwhile, so the
            # compiled fast path, which has no such line, does not run).
            state.key_misses(client, spec, argv)
        reads = spec.read_stats  # keyspace_hits/misses (_fastpath.pyx: same)
        if reads == READS_BEFORE or (reads == READS_SET_GET and len(argv) > 3):
            state.count_reads(client, spec, argv)
        try:
            reply = spec.handler(client, argv)  # type: ignore[misc]  # only a container's is None
        except Exception as error:
            if write:
                state.drop_effects()  # a handler that failed must leave no effect behind
            reply = self._failed(spec, argv, error)
        elapsed_ns = clock() - started
        if reads == READS_AFTER:
            state.count_reads_after(client, spec, argv)
        if not unsampled:
            spec.usec += elapsed_ns * (TIMING_SAMPLE if spec.sampled else 1) // 1000
            self.timed(client, spec, argv, elapsed_ns, reply)
        elif elapsed_ns >= state.slow_ns or reply.__class__ is Block or client.blocked_retry:
            self.timed(client, spec, argv, elapsed_ns, reply, False)
        spec.calls += 1
        if client.tracking is not None:
            # CLIENT TRACKING: the keys of a read-only command are remembered (not
            # on the compiled fast path: a tracking client is gated).
            state.tracking.remember(client, spec, argv)
        if state.monitors and not spec.flags & _NOT_MONITORED and not (
                client.blocked_retry and client.blocked is not None
                and client.blocked.shown_argv is not None):
            # Shown once, when first run: not again when re-run unblocked.
            state.feed_monitors(client, shown_argv(spec, argv))
        if reply.__class__ is Block and (client.in_exec or client.is_internal):
            # Inside MULTI or while loading, a blocking command acts as if it timed out.
            reply = reply.timeout_reply
        if write:
            state.publish_write(client.db.index, argv, dirty_before)
        return reply

    def _call_hotkeys(self, hotkeys: Hotkeys, client: Client, spec: CommandSpec,
                      argv: list[bytes]) -> object:
        """`call` during a HOTKEYS session: the command's keys get its time and bytes
        (the commands it runs itself, a script's or EXEC's, count as its own)."""
        hotkeys.expire(self.state.clock.now_ms())
        if not hotkeys.active:
            self.state.hotkeys_changed()
            return self.call(client, spec, argv)
        try:
            keys = [argv[index] for index, _ in spec.keys_with_flags(argv)]
        except Exception:  # a malformed command: its handler answers
            keys = []
        hotkeys.nesting += 1
        started = perf_counter_ns()
        try:
            reply = self.call(client, spec, argv)
        finally:
            hotkeys.nesting -= 1
        if keys:
            hotkeys.record(keys, (perf_counter_ns() - started) // 1000, request_bytes(argv))
        return reply

    def timed(self, client: Client, spec: CommandSpec, argv: list[bytes], elapsed_ns: int,
              reply: object, sample: bool = True) -> None:
        """A call's duration: a `sample` (every call, or one in TIMING_SAMPLE of a
        `fast` command's) into the latency histogram; the slow log if it was slow
        enough, a blocked command's once it is unblocked (Server._deliver)."""
        state = self.state
        if sample and state.config.values["latency-tracking"]:
            # LATENCY HISTOGRAM (observe.record_latency), its common case inline.
            elapsed_us = elapsed_ns // 1000
            histogram = spec.latency_histogram
            if histogram is not None and elapsed_us < 4096:
                histogram[SMALL_US[elapsed_us]] += 1
            else:
                record_latency(spec, elapsed_ns)
        if client.blocked_retry:
            blocked = client.blocked
            if blocked is not None and blocked.shown_argv is not None:
                blocked.duration_ns += elapsed_ns
                return
        if isinstance(reply, Block) and not (client.in_exec or client.is_internal):
            reply.shown_argv = shown_argv(spec, argv)
            reply.duration_ns = elapsed_ns
        elif elapsed_ns >= state.slow_ns:
            state.latency_sample("fast-command" if "fast" in spec.flags else "command", elapsed_ns)
            if "skip_slowlog" not in spec.flags:
                state.log_slow(client, shown_argv(spec, argv), elapsed_ns)

    def run_transaction(self, client: Client, queued: list[tuple[CommandSpec, list[bytes]]]) -> list[object]:
        """EXEC's body: the queued commands in order, their effects published as one."""
        state = self.state
        replies: list[object] = []
        client.in_exec = True
        state.begin_transaction()
        try:
            for spec, argv in queued:
                if client.restricted:
                    # Redis checks again at EXEC: the user's rules may have changed.
                    refused = acl_refusal(client, spec, argv, at_exec=True)
                    if refused is not None:
                        self._count_error(refused)
                        replies.append(ReplyError(refused))
                        continue
                replies.append(self.call(client, spec, argv))
        finally:
            client.in_exec = False
            state.end_transaction()
        return replies

    def _failed(self, spec: CommandSpec, argv: list[bytes], error: Exception) -> ReplyError:
        """The reply for a handler that raised: its error, or a logged internal error."""
        spec.failed_calls += 1
        if error.__class__ is not ReplyError and not isinstance(error, ReplyError):
            # A bug: never take the server down with it.
            log.error("internal error running %r", argv[:3], exc_info=error)
            error = ReplyError(errors.INTERNAL_ERROR.format(spec.name))
            self.state.stats.unexpected_error_replies += 1
        if error.__class__ is not CountedReplyError:
            self._count_error(error.message)
        # The error is the reply: kept with its traceback it would form a cycle (error ->
        # traceback -> call's frame -> reply -> error) that only the collector frees, and
        # not once frozen (gcpolicy.py).
        error.__traceback__ = None
        return error

    def _reject(self, client: Client, message: str, spec: CommandSpec | None = None) -> ReplyError:
        if client.multi is not None:
            # Redis flags the transaction so EXEC answers EXECABORT.
            client.multi_error = True
        if spec is not None:
            spec.rejected_calls += 1
            if spec.name == "exec":
                # Redis's execCommandAbort: a rejected EXEC discards the transaction.
                self._discard(client)
                reason = message[4:] if message.startswith("ERR ") else message
                message = errors.EXECABORT_BECAUSE.format(reason)
        self._count_error(message)
        return ReplyError(message)

    def _redirect(self, client: Client, spec: CommandSpec, message: str) -> ReplyError:
        if spec.name != "exec":
            return self._reject(client, message, spec)
        # A transaction routed elsewhere is discarded and answered with the redirection
        # itself, not EXECABORT (Redis's processCommand: discardTransaction).
        self._discard(client)
        spec.rejected_calls += 1
        self._count_error(message)
        return ReplyError(message)

    def _discard(self, client: Client) -> None:
        client.multi = None
        client.multi_error = False
        self.state.unwatch_all(client)

    def _count_error(self, message: str) -> None:
        self.state.stats.count_error(message)
