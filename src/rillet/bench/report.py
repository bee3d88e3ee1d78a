"""Benchmark results: rows with per-server figures, targets and verdicts; tables, RESULTS.md, plots.

A row holds every repetition per server; the figure is their median (or max
for worst-case rows). Ratios are always rillet / redis-server 7.0 from the same
run, and every target prints MET or MISSED by x%.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field

BASELINE = "redis"
SUBJECT = "rillet"
RATE_UNITS = ("ops/s", "msg/s")


@dataclass
class Target:
    issue: str
    op: str  # ">=" or "<="
    value: float
    kind: str = "ratio"  # "ratio": rillet/redis; "value": rillet's own figure
    note: str = ""

    def text(self, unit: str) -> str:
        sym = "≥" if self.op == ">=" else "≤"
        if self.kind == "ratio":
            what = f"{self.value:g}×"
        elif unit == "runs":
            what = f"{self.value:.0%} of runs"
        elif unit == "×":
            what = f"{self.value:g}× growth"
        elif unit == "%":
            what = f"{self.value:g}%"
        else:
            what = f"{self.value:g} {unit}"
        extra = f" {self.note}" if self.note else ""
        return f"{sym} {what} ({self.issue}{extra})"

    def verdict(self, figure: float | None) -> str:
        if figure is None:
            return "n/a"
        if self.op == ">=":
            met = figure >= self.value
            miss = (self.value - figure) / self.value * 100 if self.value else 0.0
        else:
            met = figure <= self.value
            miss = (figure - self.value) / self.value * 100 if self.value else 0.0
        return "MET" if met else f"MISSED by {miss:.0f}%"


@dataclass(eq=False)  # rows are dict keys by identity in multi-row measurements
class Row:
    test: str
    unit: str
    higher_is_better: bool = True
    targets: list[Target] = field(default_factory=list)
    aggregate: str = "median"
    reps: dict[str, list[float]] = field(default_factory=dict)
    details: dict[str, list[dict]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    note: str = ""

    def add(self, server: str, value: float, detail: dict | None = None) -> None:
        self.reps.setdefault(server, []).append(value)
        if detail:
            self.details.setdefault(server, []).append(detail)

    def fail(self, server: str, error: str) -> None:
        self.errors.setdefault(server, error)

    def value(self, server: str) -> float | None:
        values = self.reps.get(server)
        if not values or server in self.errors:
            return None
        if self.aggregate == "max":
            return max(values)
        if self.aggregate == "min":
            return min(values)
        if self.aggregate == "mean":
            return sum(values) / len(values)
        return statistics.median(values)

    def ratio(self) -> float | None:
        ours, theirs = self.value(SUBJECT), self.value(BASELINE)
        if ours is None or theirs is None or theirs == 0:
            return None
        return ours / theirs

    def detail(self, server: str) -> dict:
        entries = self.details.get(server) or []
        if not entries:
            return {}
        keys = {k for e in entries for k, v in e.items() if isinstance(v, (int, float))}
        return {
            k: statistics.median([e[k] for e in entries if isinstance(e.get(k), (int, float))])
            for k in sorted(keys)
        }

    def verdicts(self) -> list[str]:
        out = []
        for target in self.targets:
            figure = self.ratio() if target.kind == "ratio" else self.value(SUBJECT)
            out.append(target.verdict(figure))
        return out

    def verdict_text(self) -> str:
        verdicts = self.verdicts()
        if not verdicts:
            return ""
        if len(verdicts) == 1:
            return verdicts[0]
        return ", ".join(f"{t.issue}{(' ' + t.note) if t.note else ''} {v}"
                         for t, v in zip(self.targets, verdicts, strict=True))

    def target_text(self) -> str:
        return ", ".join(t.text(self.unit) for t in self.targets)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Row:
        data = dict(data)
        data["targets"] = [Target(**t) for t in data.get("targets", [])]
        return cls(**data)


def fmt_value(value: float | None, unit: str) -> str:
    if value is None:
        return "n/a"
    if unit in RATE_UNITS:
        return f"{value:,.0f}"
    if unit == "%":
        return f"{value:.3f}%"
    if unit == "runs":
        return f"{value:.0%}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    if abs(value) >= 0.1 or value == 0:
        return f"{value:.3f}"
    return f"{value:.2g}"


def fmt_ratio(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.2f}×"


def _cell(row: Row, server: str) -> str:
    value = row.value(server)
    text = fmt_value(value, row.unit)
    if value is not None and row.unit == "×":
        text += "×"
    elif value is not None and row.unit not in ("%", "runs", *RATE_UNITS):
        text += f" {row.unit}"
    return text


def table_rows(rows: list[Row], servers: dict[str, str]) -> tuple[list[str], list[list[str]]]:
    header = ["test", *servers.values(), f"{SUBJECT}/{BASELINE}", "target", "verdict"]
    body = []
    for row in rows:
        body.append([
            row.test, *(_cell(row, s) for s in servers),
            fmt_ratio(row.ratio()), row.target_text(), row.verdict_text(),
        ])
    return header, body


def text_table(header: list[str], body: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for r in body:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines)


def md_table(header: list[str], body: list[list[str]]) -> str:
    def esc(cell: str) -> str:
        return cell.replace("|", "\\|")

    lines = ["| " + " | ".join(esc(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in body]
    return "\n".join(lines)


def detail_lines(rows: list[Row], servers: dict[str, str]) -> list[list[str]]:
    """CPU figures per row: server µs/op and cores used by server and client."""
    body = []
    for row in rows:
        cells = []
        any_detail = False
        for server in servers:
            d = row.detail(server)
            if not d:
                cells.append("")
                continue
            any_detail = True
            parts = []
            if "server_us_per_op" in d:
                parts.append(f"{d['server_us_per_op']:.2f} µs/op")
            if "server_cores" in d:
                client = d.get("client_cores")
                parts.append(
                    f"cores {d['server_cores']:.2f}"
                    + (f" / client {client:.2f}" if client is not None else "")
                )
            if "rss_before_mib" in d and "rss_after_mib" in d:
                parts.append(f"RSS {d['rss_before_mib']:.1f} → {d['rss_after_mib']:.1f} MiB")
            if not parts:
                parts = [f"{k.replace('_', ' ')} {v:.1f}" for k, v in d.items()]
            cells.append(", ".join(parts))
        if any_detail:
            body.append([row.test, *cells])
    return body


def errors_of(rows: list[Row], servers: dict[str, str]) -> list[str]:
    seen: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        for server, error in row.errors.items():
            seen.setdefault((server, error), []).append(row.test)
    out = []
    for (server, error), tests in seen.items():
        label = servers.get(server, server)
        which = tests[0] if len(tests) == 1 else f"{len(tests)} rows"
        out.append(f"n/a [{label}, {which}]: {error}")
    return out


def section_text(section: dict) -> str:
    rows = [Row.from_dict(r) for r in section["rows"]]
    servers = section["servers"]
    out = [f"== {section['title']} ({section['issues']}) =="]
    if section.get("error"):
        out.append(f"n/a: {section['error']}")
    if rows:
        out.append(text_table(*table_rows(rows, servers)))
        details = detail_lines(rows, servers)
        if details:
            out.append("details (server CPU µs per op; cores used by server / by the client):")
            out.append(text_table(["test", *servers.values()], details))
    out += errors_of(rows, servers)
    out += [f"note: {n}" for n in section.get("notes", [])]
    busy = section.get("busy") or {}
    if busy.get("max") == busy.get("max"):  # not NaN
        out.append(f"other processes used up to {busy['max']:.2f} cores before the measurements")
    return "\n".join(out)


def section_markdown(section: dict) -> str:
    rows = [Row.from_dict(r) for r in section["rows"]]
    servers = section["servers"]
    mode = "quick" if section.get("quick") else "full"
    busy = section.get("busy") or {}
    out = [
        f"## {section['title']} ({section['issues']})",
        "",
        f"Run {section['started']} ({mode}, {section['reps']} interleaved rep(s), "
        f"{section.get('duration_s', 0):.0f} s). Other processes used up to "
        f"{busy.get('max', float('nan')):.2f} cores (median {busy.get('median', float('nan')):.2f})"
        " just before the measurements.",
        "",
    ]
    if section.get("error"):
        out += [f"n/a: {section['error']}", ""]
    if rows:
        out += [md_table(*table_rows(rows, servers)), ""]
        details = detail_lines(rows, servers)
        if details:
            out += ["Details: server CPU µs per operation, and cores used by the server / by the "
                    "client.",
                    "", md_table(["test", *servers.values()], details), ""]
    errs = errors_of(rows, servers)
    out += [f"- {e}" for e in errs]
    out += [f"- {n}" for n in section.get("notes", [])]
    if errs or section.get("notes"):
        out.append("")
    for plot in section.get("plots", []):
        out += [f"![{os.path.basename(plot)}]({plot})", ""]
    return "\n".join(out)


def target_rows(sections: list[dict]) -> tuple[list[str], list[list[str]]]:
    body = []
    for section in sections:
        servers = section["servers"]
        for data in section["rows"]:
            row = Row.from_dict(data)
            for target, verdict in zip(row.targets, row.verdicts(), strict=True):
                body.append([
                    section["name"], row.test, target.text(row.unit),
                    _cell(row, SUBJECT), _cell(row, BASELINE) if BASELINE in servers else "",
                    fmt_ratio(row.ratio()), verdict,
                ])
    header = ["section", "test", "target", SUBJECT, BASELINE, f"{SUBJECT}/{BASELINE}", "verdict"]
    return header, body


def targets_markdown(sections: list[dict]) -> str:
    header, body = target_rows(sections)
    return md_table(header, body) if body else "(no targets measured yet)"


def targets_text(sections: list[dict]) -> str:
    header, body = target_rows(sections)
    return text_table(header, body) if body else "(no targets measured)"


def plot_ratios(sections: list[dict], path: str) -> str | None:
    """Horizontal bars: rillet/redis for every throughput row, with the targets marked."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    labels, ratios, targets = [], [], []
    for section in sections:
        for data in section["rows"]:
            row = Row.from_dict(data)
            if row.unit not in RATE_UNITS:
                continue
            labels.append(f"{section['name']}: {row.test}")
            ratios.append(row.ratio() or 0.0)
            ratio_targets = [t.value for t in row.targets if t.kind == "ratio"]
            targets.append(max(ratio_targets) if ratio_targets else None)
    if not labels:
        return None
    fig, ax = plt.subplots(figsize=(9, 0.32 * len(labels) + 1.4))
    ys = list(range(len(labels)))[::-1]
    colors = [
        "tab:green" if t is not None and r >= t else ("tab:red" if t is not None else "tab:gray")
        for r, t in zip(ratios, targets, strict=True)
    ]
    ax.barh(ys, ratios, color=colors, alpha=0.8)
    for y, t in zip(ys, targets, strict=True):
        if t is not None:
            ax.plot([t, t], [y - 0.4, y + 0.4], color="black", linewidth=2)
    for y, r in zip(ys, ratios, strict=True):
        ax.text(max(r, 0) + 0.01, y, f"{r:.2f}×" if r else "n/a", va="center", fontsize=7)
    ax.axvline(1.0, color="grey", linestyle=":")
    ax.set_yticks(ys)
    ax.set_yticklabels(labels, fontsize=8)
    ax.set_xlabel("throughput, rillet / redis-server (same run); black tick = target")
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_pel(section: dict, path: str) -> str | None:
    """Server CPU per call against PEL size: flat lines are the #7 target."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    points = section.get("pel_points") or []
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    styles = {"rillet": "-", "redis": "--", "redis8": ":"}
    colors = {"XACK": "tab:blue", "XPENDING": "tab:green", "XAUTOCLAIM": "tab:orange"}
    series: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for p in points:
        if p.get("us"):
            series.setdefault((p["server"], p["op"]), []).append((p["size"], p["us"]))
    for (server, op), pts in sorted(series.items()):
        pts.sort()
        ax.plot([x for x, _ in pts], [y for _, y in pts], styles.get(server, "-"),
                color=colors.get(op), marker="o",
                label=f"{section['servers'].get(server, server)} {op}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("pending entries in the group (PEL size)")
    ax.set_ylabel("server CPU µs per call (redis-benchmark -P 64 -c 50)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# --- modes of one server against its own baseline (security_overhead, maxmemory_overhead) ---

ModeKey = tuple[str, str, str]  # (server label, mode, workload)


def collect_modes(reps: int, modes: Iterable[str], kinds: list,
                  measure: Callable[[object, str], dict[str, float | str]],
                  ) -> tuple[dict[ModeKey, list[float]], dict[ModeKey, str]]:
    """Run `measure(kind, mode)` reps times, interleaved (rillet, redis, rillet, redis...):
    the rates per (label, mode, workload), and the text of what could not be measured."""
    runs: dict[ModeKey, list[float]] = {}
    notes: dict[ModeKey, str] = {}
    for _ in range(reps):
        for mode in modes:
            for kind in kinds:
                for name, value in measure(kind, mode).items():
                    key = (kind.label, mode, name)
                    if isinstance(value, str):
                        notes[key] = value
                    else:
                        runs.setdefault(key, []).append(value)
    return runs, notes


def print_mode_table(runs: dict[ModeKey, list[float]], notes: dict[ModeKey, str],
                     labels: list[str], workloads: Iterable[str], modes: Iterable[str],
                     base_mode: str, mode_width: int) -> None:
    """Median requests/s per server and mode (after the caller's title line), each with
    its ratio to the same server's `base_mode`, and the first server's over the second's."""
    rate = {key: statistics.median(values) for key, values in runs.items()}
    header = f"{'workload':<12} {'mode':<{mode_width}} " + " ".join(f"{label:>24}" for label in labels)
    header += f" {'rillet/' + labels[1]:>16}" if len(labels) > 1 else ""
    print(header)
    for name in workloads:
        for mode in modes:
            cells = []
            for label in labels:
                key = (label, mode, name)
                if key not in rate:
                    cells.append(f"{notes.get(key, 'n/a')[:24]:>24}")
                    continue
                base = rate.get((label, base_mode, name))
                ratio = f" ({rate[key] / base:.2f}x)" if base else ""
                cells.append(f"{rate[key]:>14,.0f}{ratio:>10}")
            line = f"{name:<12} {mode:<{mode_width}} " + " ".join(cells)
            if len(labels) > 1:
                ours, ref = rate.get((labels[0], mode, name)), rate.get((labels[1], mode, name))
                line += f" {ours / ref:>15.2f}x" if ours and ref else f" {'n/a':>16}"
            print(line)
