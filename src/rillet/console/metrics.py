"""`GET /metrics`: Prometheus's text format under redis_exporter's names and labels.

redis_exporter turns INFO's fields into metrics through two tables (gauges and
counters, renamed), XINFO STREAM/GROUPS/CONSUMERS into the `redis_stream_*`
families, and adds a few of its own (`redis_up`, `redis_instance_info`,
`redis_db_keys` for every database). Dashboards and alerts built on it key on
those names and label sets, so they are kept exactly; the values come from the
same INFO text a client would get, so the two never disagree.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from rillet.engine.groups import as_long_long, group_lag, groups_in_order
from rillet.engine.stream import Stream

# INFO field -> metric (without the `redis_` prefix), as redis_exporter names them
# (only its names: a field it does not export is not exported here either).
GAUGES = {
    "uptime_in_seconds": "uptime_in_seconds",
    "process_id": "process_id",
    "connected_clients": "connected_clients",
    "blocked_clients": "blocked_clients",
    "tracking_clients": "tracking_clients",
    "client_recent_max_output_buffer": "client_recent_max_output_buffer_bytes",
    "client_recent_max_input_buffer": "client_recent_max_input_buffer_bytes",
    "used_memory": "memory_used_bytes",
    "used_memory_rss": "memory_used_rss_bytes",
    "used_memory_peak": "memory_used_peak_bytes",
    "used_memory_lua": "memory_used_lua_bytes",
    "used_memory_overhead": "memory_used_overhead_bytes",
    "used_memory_startup": "memory_used_startup_bytes",
    "used_memory_dataset": "memory_used_dataset_bytes",
    "used_memory_scripts": "memory_used_scripts_bytes",
    "maxmemory": "memory_max_bytes",
    "mem_fragmentation_ratio": "mem_fragmentation_ratio",
    "mem_fragmentation_bytes": "mem_fragmentation_bytes",
    "mem_clients_slaves": "mem_clients_slaves",
    "mem_clients_normal": "mem_clients_normal",
    "mem_not_counted_for_evict": "mem_not_counted_for_eviction_bytes",
    "lazyfree_pending_objects": "lazyfree_pending_objects",
    "active_defrag_running": "active_defrag_running",
    "migrate_cached_sockets": "migrate_cached_sockets_total",
    "active_defrag_hits": "defrag_hits",
    "active_defrag_misses": "defrag_misses",
    "active_defrag_key_hits": "defrag_key_hits",
    "active_defrag_key_misses": "defrag_key_misses",
    "expired_stale_perc": "expired_stale_percentage",
    "expired_time_cap_reached_count": "expired_time_cap_reached_total",
    "loading": "loading_dump_file",
    "rdb_changes_since_last_save": "rdb_changes_since_last_save",
    "rdb_bgsave_in_progress": "rdb_bgsave_in_progress",
    "rdb_last_save_time": "rdb_last_save_timestamp_seconds",
    "rdb_last_bgsave_status": "rdb_last_bgsave_status",
    "rdb_last_bgsave_time_sec": "rdb_last_bgsave_duration_sec",
    "rdb_current_bgsave_time_sec": "rdb_current_bgsave_duration_sec",
    "rdb_last_cow_size": "rdb_last_cow_size_bytes",
    "aof_enabled": "aof_enabled",
    "aof_rewrite_in_progress": "aof_rewrite_in_progress",
    "aof_rewrite_scheduled": "aof_rewrite_scheduled",
    "aof_last_rewrite_time_sec": "aof_last_rewrite_duration_sec",
    "aof_current_rewrite_time_sec": "aof_current_rewrite_duration_sec",
    "aof_last_cow_size": "aof_last_cow_size_bytes",
    "aof_current_size": "aof_current_size_bytes",
    "aof_base_size": "aof_base_size_bytes",
    "aof_pending_rewrite": "aof_pending_rewrite",
    "aof_buffer_length": "aof_buffer_length",
    "aof_pending_bio_fsync": "aof_pending_bio_fsync",
    "aof_delayed_fsync": "aof_delayed_fsync",
    "aof_last_bgrewrite_status": "aof_last_bgrewrite_status",
    "aof_last_write_status": "aof_last_write_status",
    "pubsub_channels": "pubsub_channels",
    "pubsub_patterns": "pubsub_patterns",
    "latest_fork_usec": "latest_fork_usec",
    "connected_slaves": "connected_slaves",
    "repl_backlog_size": "replication_backlog_bytes",
    "repl_backlog_active": "repl_backlog_is_active",
    "repl_backlog_first_byte_offset": "repl_backlog_first_byte_offset",
    "repl_backlog_histlen": "repl_backlog_history_bytes",
    "master_repl_offset": "master_repl_offset",
    "second_repl_offset": "second_repl_offset",
    "slave_expires_tracked_keys": "slave_expires_tracked_keys",
    "slave_priority": "slave_priority",
    "sync_full": "replica_resyncs_full",
    "sync_partial_ok": "replica_partial_resync_accepted",
    "sync_partial_err": "replica_partial_resync_denied",
}
COUNTERS = {
    "total_connections_received": "connections_received_total",
    "total_commands_processed": "commands_processed_total",
    "rejected_connections": "rejected_connections_total",
    "total_net_input_bytes": "net_input_bytes_total",
    "total_net_output_bytes": "net_output_bytes_total",
    "expired_keys": "expired_keys_total",
    "evicted_keys": "evicted_keys_total",
    "keyspace_hits": "keyspace_hits_total",
    "keyspace_misses": "keyspace_misses_total",
    "used_cpu_sys": "cpu_sys_seconds_total",
    "used_cpu_user": "cpu_user_seconds_total",
    "used_cpu_sys_children": "cpu_sys_children_seconds_total",
    "used_cpu_user_children": "cpu_user_children_seconds_total",
}
# Fields whose metric is labelled by the master a replica follows.
_MASTER_FIELDS = ("master_last_io_seconds_ago", "slave_repl_offset", "master_sync_in_progress")
_INSTANCE_LABELS = ("role", "redis_version", "redis_build_id", "redis_mode", "os",
                    "maxmemory_policy", "tcp_port", "run_id", "process_id")

HELP = {
    "up": "Information about the Redis instance",
    "instance_info": "Information about the Redis instance",
    "start_time_seconds": "Start time of the Redis instance since unix epoch in seconds.",
    "db_keys": "Total number of keys by DB",
    "db_keys_expiring": "Total number of expiring keys by DB",
    "db_avg_ttl_seconds": "Avg TTL in seconds",
    "commands_total": "Total number of calls per command",
    "commands_duration_seconds_total": "Total amount of time in seconds spent per command",
    "commands_rejected_calls_total": "Total number of errors prior command execution per command",
    "commands_failed_calls_total": "Total number of errors within command execution per command",
    "errors_total": "Total number of errors per error type",
    "connected_slave_offset_bytes": "Offset of connected slave",
    "connected_slave_lag_seconds": "Lag of connected slave",
    "master_link_up": "Master link status on Redis slave",
    "master_last_io_seconds_ago": "Master last io seconds ago",
    "master_sync_in_progress": "Master sync in progress",
    "slave_repl_offset": "Slave replication offset",
    "slave_info": "Information about the Redis slave",
    "stream_length": "The number of elements of the stream",
    "stream_radix_tree_keys": "Radix tree keys count",
    "stream_radix_tree_nodes": "Radix tree nodes count",
    "stream_last_generated_id": "The epoch timestamp (ms) of the latest message on the stream",
    "stream_max_deleted_entry_id": "The epoch timestamp (ms) of last message was deleted from the stream",
    "stream_first_entry_id": "The epoch timestamp (ms) of the first message in the stream",
    "stream_last_entry_id": "The epoch timestamp (ms) of the last message in the stream",
    "stream_groups": "Groups count of stream",
    "stream_group_consumers": "Consumers count of stream group",
    "stream_group_messages_pending": "Pending number of messages in that stream group",
    "stream_group_last_delivered_id": "The epoch timestamp (ms) of the last delivered message",
    "stream_group_entries_read": "Total number of entries read from the stream group",
    "stream_group_lag": "The number of messages waiting to be delivered to the stream group's consumers",
    "stream_group_consumer_messages_pending": "Pending number of messages for this specific consumer",
    "stream_group_consumer_idle_seconds": "Consumer idle time in seconds",
}


def _number(value: float | int) -> str:
    if isinstance(value, int):
        return str(value)
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


class Exposition:
    """Metric families in the order first seen, each with its TYPE and HELP once."""

    def __init__(self, prefix: str = "redis_") -> None:
        self.prefix = prefix
        self._families: dict[str, tuple[str, list[str]]] = {}

    def add(self, name: str, value: float | int, kind: str = "gauge",
            labels: Iterable[tuple[str, str]] = (), help: str | None = None) -> None:
        family = self._families.get(name)
        if family is None:
            family = self._families[name] = (
                f"# HELP {self.prefix}{name} {help or HELP.get(name, name + ' metric')}\n"
                f"# TYPE {self.prefix}{name} {kind}\n", [])
        text = ",".join(f'{key}="{_escape(val)}"' for key, val in labels)
        family[1].append(f"{self.prefix}{name}{{{text}}} {_number(value)}\n" if text
                         else f"{self.prefix}{name} {_number(value)}\n")

    def extend(self, name: str, kind: str, samples: list[str]) -> None:
        """Samples already written out (each line whole) for a family not seen yet."""
        self._families[name] = (f"# HELP {self.prefix}{name} {HELP.get(name, name + ' metric')}\n"
                                f"# TYPE {self.prefix}{name} {kind}\n", samples)

    def render(self) -> bytes:
        out = []
        for head, samples in self._families.values():
            out.append(head)
            out.extend(samples)
        return "".join(out).encode()


def _info_value(text: str) -> float | int | None:
    if text in ("ok", "true"):
        return 1
    if text in ("err", "fail", "false"):
        return 0
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return None


def _pairs(text: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in text.split(",") if "=" in part)


def add_info(out: Exposition, info: str, databases: int, now_s: float | None = None) -> None:
    """INFO's text as redis_exporter exports it."""
    section = ""
    fields: dict[str, str] = {}
    seen_dbs: set[str] = set()
    for line in info.splitlines():
        if line.startswith("# "):
            section = line[2:]
            continue
        key, colon, value = line.partition(":")
        if not colon:
            continue
        fields[key] = value
        if section == "Commandstats" and key.startswith("cmdstat_"):
            stats = _pairs(value)
            cmd = [("cmd", key[len("cmdstat_"):])]
            out.add("commands_total", int(stats.get("calls", 0)), "counter", cmd)
            out.add("commands_duration_seconds_total", int(stats.get("usec", 0)) / 1e6, "counter", cmd)
            out.add("commands_rejected_calls_total", int(stats.get("rejected_calls", 0)), "counter", cmd)
            out.add("commands_failed_calls_total", int(stats.get("failed_calls", 0)), "counter", cmd)
            continue
        if section == "Errorstats" and key.startswith("errorstat_"):
            out.add("errors_total", int(_pairs(value).get("count", 0)), "counter",
                    [("err", key[len("errorstat_"):])])
            continue
        if section == "Keyspace" and key.startswith("db"):
            stats = _pairs(value)
            out.add("db_keys", int(stats.get("keys", 0)), labels=[("db", key)])
            out.add("db_keys_expiring", int(stats.get("expires", 0)), labels=[("db", key)])
            if "avg_ttl" in stats:
                out.add("db_avg_ttl_seconds", int(stats["avg_ttl"]) / 1000, labels=[("db", key)])
            seen_dbs.add(key)
            continue
        if section == "Replication":
            master = [("master_host", fields.get("master_host", "")),
                      ("master_port", fields.get("master_port", ""))]
            if key == "master_link_status":
                out.add("master_link_up", 1 if value == "up" else 0, labels=master)
                continue
            if key in _MASTER_FIELDS:
                number = _info_value(value)
                out.add(key, number if number is not None else 0, labels=master)
                continue
            if key.startswith("slave") and key[5:].isdigit():
                replica = _pairs(value)
                labels = [("slave_ip", replica.get("ip", "")), ("slave_port", replica.get("port", "")),
                          ("slave_state", replica.get("state", ""))]
                out.add("connected_slave_offset_bytes", int(replica.get("offset", 0)), labels=labels)
                if "lag" in replica:
                    out.add("connected_slave_lag_seconds", int(replica["lag"]), labels=labels)
                continue
        if key == "uptime_in_seconds" and now_s is not None:
            out.add("start_time_seconds", int(now_s) - int(value))
        name = GAUGES.get(key)
        kind = "gauge"
        if name is None:
            name = COUNTERS.get(key)
            kind = "counter"
        if name is None:
            continue
        number = _info_value(value)
        if number is None:
            continue
        if name == "latest_fork_usec":
            name, number = "latest_fork_seconds", number / 1e6
        out.add(name, number, kind)
    for index in range(databases):
        db = f"db{index}"
        if db not in seen_dbs:
            out.add("db_keys", 0, labels=[("db", db)])
            out.add("db_keys_expiring", 0, labels=[("db", db)])
    out.add("instance_info", 1, labels=[(label, fields.get(label, "")) for label in _INSTANCE_LABELS])
    if fields.get("role") == "slave":
        out.add("slave_info", 1, labels=[("master_host", fields.get("master_host", "")),
                                         ("master_port", fields.get("master_port", "")),
                                         ("read_only", fields.get("slave_read_only", ""))])


STREAM_FAMILIES = ("stream_length", "stream_radix_tree_keys", "stream_radix_tree_nodes",
                   "stream_last_generated_id", "stream_groups", "stream_max_deleted_entry_id",
                   "stream_first_entry_id", "stream_last_entry_id")
GROUP_FAMILIES = ("stream_group_consumers", "stream_group_messages_pending",
                  "stream_group_last_delivered_id", "stream_group_entries_read", "stream_group_lag")
CONSUMER_FAMILIES = ("stream_group_consumer_messages_pending", "stream_group_consumer_idle_seconds")


class StreamLines:
    """The `redis_stream_*` samples, written straight from the engine's objects with each
    label text built once (a thousand streams: ~14 ms of CPU), a slice of streams at a
    time so the listener can let RESP clients in between slices."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = {
            name: [] for name in (*STREAM_FAMILIES, *GROUP_FAMILIES, *CONSUMER_FAMILIES)}

    def add(self, streams: Iterable[tuple[int, bytes, Stream]], now_ms: int) -> None:
        lines = self.lines
        (length, tree_keys, tree_nodes, last_generated, groups_count, max_deleted, first_entry,
         last_entry) = (lines[name] for name in STREAM_FAMILIES)
        consumers_count, pending, last_delivered, entries_read, lag = (
            lines[name] for name in GROUP_FAMILIES)
        consumer_pending, consumer_idle = (lines[name] for name in CONSUMER_FAMILIES)
        for db, key, stream in streams:
            base = f'{{db="db{db}",stream="{_escape(_name(key))}"'
            size = stream.length
            length.append(f"redis_stream_length{base}}} {size}\n")
            tree_keys.append(f"redis_stream_radix_tree_keys{base}}} {stream.radix_tree_keys}\n")
            tree_nodes.append(f"redis_stream_radix_tree_nodes{base}}} {stream.radix_tree_nodes}\n")
            last_generated.append(f"redis_stream_last_generated_id{base}}} {stream.last_id[0]}\n")
            groups = stream.groups
            groups_count.append(f"redis_stream_groups{base}}} {len(groups)}\n")
            max_deleted.append(
                f"redis_stream_max_deleted_entry_id{base}}} {stream.max_deleted_id[0]}\n")
            first_entry.append(
                f"redis_stream_first_entry_id{base}}} {stream.first_id[0] if size else 0}\n")
            last_entry.append(
                f"redis_stream_last_entry_id{base}}} {stream.last_valid_id()[0] if size else 0}\n")
            if not groups:
                continue
            for group in groups_in_order(stream):
                labels = f'{base},group="{_escape(_name(group.name))}"'
                consumers = group.consumers
                consumers_count.append(f"redis_stream_group_consumers{labels}}} {len(consumers)}\n")
                pending.append(f"redis_stream_group_messages_pending{labels}}} {len(group.pel)}\n")
                last_delivered.append(
                    f"redis_stream_group_last_delivered_id{labels}}} {group.last_id[0]}\n")
                read = group.entries_read
                entries_read.append(f"redis_stream_group_entries_read{labels}}} "
                                    f"{0 if read is None else as_long_long(read)}\n")
                behind = group_lag(stream, group)
                if behind is not None:  # nil: Redis cannot tell (a deletion in the way)
                    lag.append(f"redis_stream_group_lag{labels}}} {behind}\n")
                for consumer in group.consumers_in_order():
                    each = f'{labels},consumer="{_escape(_name(consumer.name))}"}} '
                    consumer_pending.append(
                        f"redis_stream_group_consumer_messages_pending{each}{len(consumer.pel)}\n")
                    consumer_idle.append(f"redis_stream_group_consumer_idle_seconds{each}"
                                         f"{_number(consumer.idle_ms(now_ms) / 1e3)}\n")

    def write(self, out: Exposition) -> None:
        for name, samples in self.lines.items():
            if samples:
                out.extend(name, "gauge", samples)


def render(info: str | None, databases: int, streams: StreamLines,
           last_render_s: float) -> bytes:
    """The whole exposition; `info` None leaves out the server's figures (a user not
    allowed INFO sees only its streams)."""
    out = Exposition()
    out.add("up", 1)
    if info is not None:
        add_info(out, info, databases, time.time())
    streams.write(out)
    # rillet's own.
    own = Exposition("rillet_")
    own.add("console_last_render_seconds", last_render_s,
            help="How long the previous /metrics answer held the event loop")
    if info is not None:
        add_policy_counters(own, info)
    return out.render() + own.render()


# INFO's stream policy counters (commands/policies.py) -> rillet_* counters.
POLICY_COUNTERS = {
    "stream_retention_trimmed": ("stream_retention_trimmed_total",
                                 "Stream entries trimmed by RILLET.XRETENTION"),
    "stream_deadlettered": ("stream_deadlettered_total",
                            "Stream entries moved to a dead-letter stream by RILLET.XDEADLETTER"),
}


def add_policy_counters(out: Exposition, info: str) -> None:
    for line in info.splitlines():
        key, colon, value = line.partition(":")
        family = POLICY_COUNTERS.get(key) if colon else None
        if family is not None:
            out.add(family[0], int(value), "counter", help=family[1])
