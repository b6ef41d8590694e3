#!/usr/bin/env python3
"""The results of one `scripts/bench.sh` run, and docs/BENCHMARKS.md from them.

  report.py annotate --section S --key K --run N [--status C] [--varz-before "in out"] [--varz-after "in out"]
      stdin: roombench's JSON lines; stdout: the same lines tagged with section, key, run
      (and, with a nats-server running, the messages it carried during the step).
  report.py held --results R --section S --key K
      exit 0 if that fan-out step is held in median (no loss, p99 <= 200 ms), else 1.
  report.py knee --results R --section S
      the highest rate of S held in median (nothing if none).
  report.py render --results R --commands C --out OUT ...
      the whole report, from scratch, from R alone.

Every figure of a step is the median of its runs, with min–max beside it.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys

P99_TARGET_MS = 200.0


# ----------------------------------------------------------------------------- data

def load(path):
    records = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    pass
    return records


def group(records, section, scenario=None):
    """{key: [records of each run]} for a section (keys in first-seen order)."""
    out = {}
    for r in records:
        if r.get("section") != section:
            continue
        if scenario and r.get("scenario") != scenario:
            continue
        out.setdefault(str(r.get("key")), []).append(r)
    return out


def values(runs, field):
    return [float(r[field]) for r in runs if isinstance(r.get(field), (int, float))]


def median(runs, field):
    v = values(runs, field)
    return statistics.median(v) if v else None


def run_held(r):
    return (r.get("loss", 1) == 0 and float(r.get("p99_ms", 1e9)) <= P99_TARGET_MS
            and r.get("delivered", 0) > 0 and "aborted" not in r and r.get("status", 0) == 0)


def step_held(runs):
    """Held in median: median loss 0 and median p99 within the target (and a majority of runs delivered)."""
    if not runs:
        return False
    loss = median(runs, "loss")
    p99 = median(runs, "p99_ms")
    delivered = [r for r in runs if r.get("delivered", 0) > 0]
    return (loss is not None and loss == 0 and p99 is not None and p99 <= P99_TARGET_MS
            and len(delivered) * 2 > len(runs))


def knee(records, section):
    """(rate, runs) of the highest rate held in median, or (None, None)."""
    best = (None, None)
    for key, runs in group(records, section, "fanout").items():
        if step_held(runs):
            rate = int(float(key))
            if best[0] is None or rate > best[0]:
                best = (rate, runs)
    return best


def ladder_top(records, section):
    keys = [int(float(k)) for k in group(records, section, "fanout")]
    return max(keys) if keys else None


def knee_ceiling(records, section, knee_rate):
    """The lowest rate above the knee that was measured and not held (None: the ladder ended held)."""
    above = [int(float(k)) for k, runs in group(records, section, "fanout").items()
             if (knee_rate is None or int(float(k)) > knee_rate) and not step_held(runs)]
    return min(above) if above else None


# ----------------------------------------------------------------------------- formatting

def fint(v):
    return "–" if v is None else f"{int(round(v)):,}"


def fms(v):
    if v is None:
        return "–"
    if v >= 100:
        return f"{v:.0f} ms"
    if v >= 10:
        return f"{v:.1f} ms"
    return f"{v:.2f} ms"


def fpct(v):
    return "–" if v is None else f"{v:.0f} %"


def fmib(kib):
    return "–" if kib is None else f"{kib / 1024:.1f} MiB"


def spread(runs, field, fmt=fint, scale=1.0):
    """'median (min–max)', or just the value for one run."""
    v = [x * scale for x in values(runs, field)]
    if not v:
        return "–"
    m = statistics.median(v)
    if len(v) == 1:
        return fmt(m)
    return f"{fmt(m)} ({fmt(min(v))}–{fmt(max(v))})"


def bytes_per_delivery(runs):
    """Median wire bytes per delivery of fan-out runs, or None."""
    v = [r["bytes_per_s"] / r["delivered_per_s"] for r in (runs or []) if r.get("delivered_per_s")]
    return statistics.median(v) if v else None


def ratio(a, b):
    return "–" if a is None or b is None or b == 0 else f"{a / b:.2f}×"


def closes(runs):
    total = {}
    for r in runs:
        for code, n in (r.get("step_close_codes") or r.get("close_codes") or {}).items():
            total[code] = total.get(code, 0) + n
    return ", ".join(f"{c}×{n}" for c, n in sorted(total.items())) or "none"


def aborted(runs):
    reasons = sorted({r["aborted"] for r in runs if "aborted" in r})
    bad = [r for r in runs if r.get("status", 0) != 0]
    errors = sorted({r["error"] for r in runs if "error" in r})
    note = ""
    if reasons:
        note += " — aborted: " + "; ".join(reasons)
    if bad:
        note += f" — **{len(bad)} of {len(runs)} run(s) failed**" + (f" ({'; '.join(errors)})" if errors else "")
    return note


# ----------------------------------------------------------------------------- commands

def cmd_annotate(args):
    def varz(text):
        parts = (text or "").split()
        return (int(parts[0]), int(parts[1])) if len(parts) == 2 else None
    before, after = varz(args.varz_before), varz(args.varz_after)
    emitted = 0
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            r = json.loads(line)
        except json.JSONDecodeError:
            continue
        r["section"], r["key"], r["run"], r["status"] = args.section, args.key, args.run, args.status
        if args.status and args.error:
            r["error"] = args.error
        if r.get("scenario") == "join-storm" and r.get("joined"):
            r["pushes_per_peer"] = round(r.get("pushes_received", 0) / r["joined"], 1)
        if before and after and "bus_in_msgs" not in r:  # roombench --varz counts the sending step only
            r["bus_in_msgs"] = after[0] - before[0]
            r["bus_out_msgs"] = after[1] - before[1]
        print(json.dumps(r, separators=(",", ":")))
        emitted += 1
    if emitted == 0:
        # The run produced no result (roombench failed, a server crashed): keep a record
        # of it, so the report counts the run instead of silently having fewer.
        print(json.dumps({"scenario": args.scenario, "section": args.section, "key": args.key, "run": args.run,
                          "status": args.status or 1, "error": args.error or "no result"}, separators=(",", ":")))


def cmd_ab(args):
    """Two roomd builds side by side (scripts/bench/ab.sh): Markdown on stdout."""
    records = load(args.results)
    a, b = group(records, "ab-a", "fanout"), group(records, "ab-b", "fanout")

    def cpu_per_delivery(runs):
        v = [r["server_cpu_pct"] / 100 * r["window_s"] / r["delivered"] * 1e6 for r in runs
             if r.get("delivered") and "server_cpu_pct" in r and "window_s" in r]
        if not v:
            return "–", None
        m = statistics.median(v)
        return (f"{m:.3f} µs" + (f" ({min(v):.3f}–{max(v):.3f})" if len(v) > 1 else "")), m

    print(f"A = `{args.a.strip()}`, B = `{args.b.strip()}`; fan-out 1 → N, runs alternating A, B on a fresh roomd"
          " per step; median (min–max). CPU per delivery drops when roomd is busier (more frames per write, fewer"
          " syscalls), and with other load on the machine: compare it at rates that saturate both sides, and confirm"
          " a small difference with perf.")
    print()
    print("| msg/s | side | held | delivered/s | p99 | loss | roomd CPU per delivery | B ÷ A (delivered/s, CPU per delivery) |")
    print("|---|---|---|---|---|---|---|---|")
    for key in sorted(set(a) | set(b), key=float):
        rows = []
        for side, runs in (("A", a.get(key, [])), ("B", b.get(key, []))):
            text, m = cpu_per_delivery(runs)
            rows.append((side, runs, text, m))
        ra, rb = rows[0][1], rows[1][1]
        for side, runs, text, m in rows:
            held = sum(1 for r in runs if run_held(r))
            cmp = ""
            if side == "B" and rows[0][3] and m:
                cmp = f"{ratio(median(rb, 'delivered_per_s'), median(ra, 'delivered_per_s'))}, {m / rows[0][3]:.3f}×"
            print(f"| {int(float(key)):,} | {side} | {held}/{len(runs)} | {spread(runs, 'delivered_per_s')}"
                  f" | {spread(runs, 'p99_ms', fms)} | {spread(runs, 'loss')} | {text} | {cmp} |")


def cmd_held(args):
    runs = group(load(args.results), args.section, "fanout").get(str(args.key), [])
    sys.exit(0 if step_held(runs) else 1)


def cmd_knee(args):
    rate, _ = knee(load(args.results), args.section)
    if rate is not None:
        print(rate)


# ----------------------------------------------------------------------------- the document

class Doc:
    def __init__(self, records, args):
        self.r = records
        self.a = args
        self.lines = []

    def add(self, line=""):
        self.lines.append(line)

    def g(self, section, scenario=None):
        return group(self.r, section, scenario)

    # -- header

    def header(self):
        a = self.a
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        self.add("# roomd benchmarks")
        self.add()
        if a.quick == "1":
            self.add("> **QUICK mode** (`QUICK=1`): one short run per step and smaller sizes, to check the"
                     " machinery. These figures are not results; `make bench` without QUICK produces the report.")
            self.add()
        self.add(f"Generated by `make bench` (`scripts/bench.sh`, then `scripts/bench/report.py render`) on {now}"
                 f" at commit `{a.revision}`, in {float(a.elapsed) / 60:.1f} min. The whole file is rewritten by"
                 " every run: every figure below comes from that one run, on the code of that commit.")
        self.add()
        if a.note and os.path.exists(a.note):
            # NOTE=FILE: the runner's words on this run (what is new since the last one), quoted as given.
            with open(a.note) as f:
                note = f.read().strip()
            if note:
                self.add("\n".join("> " + line if line else ">" for line in note.splitlines()))
                self.add()
        self.add(f"**Method.** Every load step runs for {a.step_s} s against a **fresh server started for that step"
                 f" alone**, and every step runs **{a.runs} time(s)**; a figure is the **median** of the runs with the"
                 " **min–max** in brackets. A fan-out rate is *held* when, in median, nothing is lost and the p99"
                 " latency is ≤ 200 ms; the *knee* is the highest rate held. Ratios are always **roomd ÷ nats-server**."
                 + (" **Pinned** (`PIN=1`): every server on CPU 0, roombench on CPU 1." if a.pinned == "1" else
                    " Server and load tool share the machine's cores (not pinned)."))
        self.add()
        self.machine()

    def machine(self):
        a = self.a
        cpu = "?"
        try:
            for line in open("/proc/cpuinfo"):
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        except OSError:
            pass
        mem = "?"
        try:
            for line in open("/proc/meminfo"):
                if line.startswith("MemTotal:"):
                    mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
        except OSError:
            pass
        background = values(self.r, "background_cpu_pct")
        self.add("| | |")
        self.add("|---|---|")
        self.add(f"| CPUs | {os.cpu_count()} ({cpu}), "
                 + ("the servers pinned to CPU 0, roombench to CPU 1 |" if a.pinned == "1"
                    else "shared by the server and roombench |"))
        self.add(f"| Memory | {mem} |")
        self.add(f"| Kernel | Linux {platform.release()} |")
        self.add(f"| Versions | {a.versions} |")
        self.add("| Network | loopback (127.0.0.1) only |")
        try:
            import resource
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            self.add(f"| Open files per process | {hard:,} (hard cap of this sandbox): a step has at most ~19,000 peers,"
                     " each side (server, roombench) one process |")
        except Exception:
            pass
        self.add(f"| Load average at start | {a.load} |")
        if background:
            mean = statistics.mean(background)
            note = " — the machine was not quiet: figures are pessimistic" if mean > 20 else ""
            self.add(f"| Other processes' CPU during the steps | {mean:.0f} % of one core on average"
                     f" (max {max(background):.0f} %){note} |")
        self.add()

    # -- targets (issue 12)

    def targets(self):
        self.add("## Targets (issues 12, 21, 22, 24, 34, 35 and 37)")
        self.add()
        self.add("| what | target | measured (median, min–max) | verdict |")
        self.add("|---|---|---|---|")
        rk, rruns = knee(self.r, "fanout-roomd")
        nk, nruns = knee(self.r, "fanout-nats")
        rtop, ntop = ladder_top(self.r, "fanout-roomd"), ladder_top(self.r, "fanout-nats")
        rd = median(rruns, "delivered_per_s") if rruns else None
        nd = median(nruns, "delivered_per_s") if nruns else None
        if rtop is not None or ntop is not None:
            ge_r = "≥ " if rk is not None and rk == rtop else ""
            ge_n = "≥ " if nk is not None and nk == ntop else ""
            measured = (f"roomd ÷ nats-server = **{ratio(rd, nd)}**: roomd {ge_r}{fint(rd)}/s"
                        f" ({self.knee_text(rk, rruns)}), nats-server {ge_n}{fint(nd)}/s ({self.knee_text(nk, nruns)})")
            if rd is not None and nd:
                x = rd / nd
                # The ladders bound each knee: held at rk, not held at the next rate measured (rc).
                rc, nc = knee_ceiling(self.r, "fanout-roomd", rk), knee_ceiling(self.r, "fanout-nats", nk)
                low = rk / nc if nc else None      # roomd's worst case against nats-server's best
                high = rc / nk if rc else None     # and the other way round
                bounds = (f"; the ladders bound the knees: roomd [{rk:,}, {f'{rc:,}' if rc else '?'}),"
                          f" nats-server [{nk:,}, {f'{nc:,}' if nc else '?'}) msg/s, so the ratio lies between"
                          f" {f'{low:.2f}×' if low else '?'} and {f'{high:.2f}×' if high else '?'}.")
                measured += bounds
                if low is not None and low >= 2:
                    verdict = "**met**"
                elif high is not None and high <= 2:
                    verdict = f"**missed**: {x:.2f}× instead of 2× (roomd's knee would have to grow {2 / x:.2f}×)"
                elif x >= 2:
                    verdict = (f"**met at the measured knees** ({x:.2f}×), not settled by the ladders' bounds"
                               f" ({f'{low:.2f}×' if low else '?'}–{f'{high:.2f}×' if high else '?'})")
                else:
                    verdict = (f"**missed at the measured knees** ({x:.2f}×; roomd's knee would have to grow {2 / x:.2f}×),"
                               f" not settled by the ladders' bounds ({f'{low:.2f}×' if low else '?'}–"
                               f"{f'{high:.2f}×' if high else '?'})")
            else:
                verdict = "**missed**: no knee for " + ("roomd" if rd is None else "nats-server")
            tk, truns = knee(self.r, "fanout-threads")
            if self.g("fanout-threads", "fanout"):
                td = median(truns, "delivered_per_s") if truns else None
                measured += (f" With `--threads 2` (h): {fint(td)}/s at {tk:,} msg/s, **{ratio(td, nd)}** nats-server."
                             if td else " With `--threads 2` (h): no rate held.")
                verdict += "; (h) and its CPU budget show why, and what would close it."
            self.add(f"| fan-out 1 → 1,000, held (10-s steps, no loss, p99 ≤ 200 ms) | ≥ 2 × nats-server in the same run"
                     f" | {measured} | {verdict} |")
        over = self.g("overload", "fanout")
        top = max(over, key=float) if over else None
        if top is not None:
            runs = over[top]
            pct = [r["delivered_per_s"] / rd * 100 for r in runs if rd and "delivered_per_s" in r]
            closed = values(runs, "receivers_closed")
            loss = values(runs, "loss")
            growth = [r["server_rss_kib"] - r.get("server_rss_start_kib", r["server_rss_kib"]) for r in runs
                      if "server_rss_kib" in r]
            pct_text = "–" if not pct else (f"{statistics.median(pct):.0f} %" + (
                f" ({min(pct):.0f}–{max(pct):.0f} %)" if len(pct) > 1 else ""))
            misses = []
            if closed and statistics.median(closed) > 0:
                misses.append(f"{fint(statistics.median(closed))} receivers closed")
            if loss and statistics.median(loss) > 0:
                misses.append(f"{fint(statistics.median(loss))} messages lost")
            unanswered = [r["sent"] - r.get("acked", 0) - r.get("rejected", 0) for r in runs if "sent" in r]
            if unanswered and statistics.median(unanswered) > 0:
                misses.append(f"{fint(statistics.median(unanswered))} broadcasts never answered")
            rejected = values(runs, "rejected")
            if rejected and statistics.median(rejected) > 0:
                misses.append(f"{fint(statistics.median(rejected))} broadcasts refused")
            if pct and statistics.median(pct) < 90:
                misses.append(f"{90 - statistics.median(pct):.0f} points under 90 % of the knee")
            verdict = "**met**" if not misses and pct else ("**missed**: " + ", ".join(misses) if misses else "–")
            self.add(f"| overload at {top}× the knee for {self.over_s(runs)} s | 0 healthy receivers closed, 0 loss,"
                     f" ≥ 90 % of knee throughput, RSS bounded | receivers closed {spread(runs, 'receivers_closed')}"
                     f" ({closes(runs)}); loss {spread(runs, 'loss')}; delivered {pct_text} of the knee;"
                     f" RSS {fmib(median(runs, 'server_rss_start_kib'))} → {fmib(median(runs, 'server_rss_kib'))}"
                     f" (peak {fmib(median(runs, 'server_hwm_kib'))}, growth {fmib(statistics.median(growth)) if growth else '–'})"
                     f"{aborted(runs)} | {verdict} |")
        idle = self.g("idle", "idle")
        if "10000" in idle:
            runs = idle["10000"]
            p50 = median(runs, "probe_join_p50_ms")
            verdict = "–" if p50 is None else ("**met**" if p50 <= 1 else f"**missed** by {p50 - 1:.2f} ms ({p50:.1f}×)")
            self.add(f"| join p50 into a 10,000-peer room | ≤ 1 ms | {spread(runs, 'probe_join_p50_ms', fms)}"
                     f" (p99 {spread(runs, 'probe_join_p99_ms', fms)}; {runs[0].get('probe_joins', '?')} joins one at a time"
                     f" per run){aborted(runs)} | {verdict} |")
        big = max((k for k in idle), key=float) if idle else None
        if big is not None:
            runs = idle[big]
            cpu = median(runs, "server_cpu_pct")
            per = median(runs, "rss_per_peer_bytes")
            misses = []
            if cpu is not None and cpu > 2:
                misses.append(f"CPU by {cpu - 2:.1f} points ({cpu / 2:.1f}×)")
            if per is not None and per > 8192:
                misses.append(f"RSS by {(per - 8192) / 1024:.1f} KiB per peer")
            joined = median(runs, "joined")
            note = "" if big == "19000" else f" (measured at {int(float(big)):,}: the target's 19,000 did not run)"
            verdict = "–" if cpu is None else ("**met**" if not misses else "**missed**: " + ", ".join(misses))
            self.add(f"| {int(float(big)):,} idle joined peers{note} | ≤ 2 % of a core, ≤ 8 KiB RSS per peer"
                     f" | CPU {spread(runs, 'server_cpu_pct', fpct)} over {runs[0].get('window_s', '?')} s;"
                     f" {spread(runs, 'rss_per_peer_bytes')} B per peer; {fint(joined)} joined{aborted(runs)} | {verdict} |")
        storm = self.g("storm", "join-storm")
        key = "10000" if "10000" in storm else (max(storm, key=float) if storm else None)
        if key is not None:
            runs = storm[key]
            per = median(runs, "room_state_bytes_per_peer")
            verdict = "–" if per is None else ("**met**" if per <= 200 else f"**missed** by {per - 200:.0f} B per viewer")
            self.add(f"| {int(float(key)):,} viewers joining one room | total `room-state` bytes O(N), ≤ 200 B per viewer"
                     f" | {spread(runs, 'room_state_bytes_per_peer', lambda v: f'{v:,.1f}')} B per viewer"
                     f" ({spread(runs, 'room_state_bytes')} B in {spread(runs, 'room_state_pushes')} pushes);"
                     f" everything received {spread(runs, 'bytes_received_per_peer')} B per viewer{aborted(runs)}"
                     f" | {verdict} (O(N): see the table in (a)) |")
        rooms = self.g("rooms", "rooms")
        if rooms:
            key = next(iter(rooms))
            runs = rooms[key]
            p99s = values(runs, "p99_ms")
            ok = sum(1 for p in p99s if p <= 20)
            each = ", ".join(fms(p) for p in p99s)
            worst = max(p99s) if p99s else None
            verdict = "–" if not p99s else ("**met**" if ok == len(p99s) == 3 else
                                           f"**missed**: {ok} of {len(p99s)} runs ≤ 20 ms (worst {fms(worst)},"
                                           f" {worst - 20:+.1f} ms)" if ok < len(p99s) else
                                           f"{ok} of {len(p99s)} runs ≤ 20 ms (needs 3 runs)")
            self.add(f"| {key.replace('x', ' rooms × ')} peers, 1 msg/s each | p99 ≤ 20 ms in 3 of 3 runs"
                     f" | p99 per run: {each}; loss {spread(runs, 'loss')}{aborted(runs)} | {verdict} |")
        self.audience_targets()
        self.later_targets()
        self.add()

    def later_targets(self):
        """Issue 35's and 37's rows of the targets table."""
        hooks = self.g("hooks", "rooms")
        answer, timeout = hooks.get("answer", []), hooks.get("timeout", [])
        if answer:
            sent, p99, loss = median(answer, "messages_per_s"), median(answer, "p99_ms"), median(answer, "loss")
            tp99 = median(timeout, "p99_ms") if timeout else None
            met = (sent is not None and sent >= 4_900 and p99 is not None and p99 <= 50 and loss == 0
                   and (not timeout or (tp99 is not None and tp99 <= 50)))
            cpu = values(answer, "server_cpu_pct")
            self.add("| hooked broadcasts (issue 35, section 30): 500 rooms × 10 peers at 1 msg/s, a hook answering in"
                     " 5 ms; then room-0's hook never answering | ≥ 5,000 hooked msg/s with p99 ≤ 50 ms; the other"
                     " rooms' p99 unchanged while one room's hook times out"
                     f" | {fint(sent)}/s: p99 {spread(answer, 'p99_ms', fms)}, loss {fint(loss)}"
                     + (f", roomd's core {min(cpu):.0f}–{max(cpu):.0f} %" if cpu else "")
                     + (f"; with room-0's timeouts p99 {spread(timeout, 'p99_ms', fms)}" if timeout else "")
                     + f" ((r)) | {'**met**' if met else '**missed**'} |")
        rk, rruns = knee(self.r, "fanout-roomd")
        nk, nruns = knee(self.r, "fanout-nats")
        if rruns and nruns:
            rd, nd = median(rruns, "delivered_per_s"), median(nruns, "delivered_per_s")
            x = rd / nd if rd and nd else None
            rh = sum(1 for r in rruns if run_held(r))
            nh = sum(1 for r in nruns if run_held(r))
            pinned = "" if str(self.a.pinned) == "1" else " (this run was not pinned)"
            verdict = ("**met**" if x and x >= 3 and rh == len(rruns) else
                       f"**missed** (3×{'' if x and x >= 3 else f': {x:.2f}×'}); the knee held"
                       f" {rh} of {len(rruns)}" if x else "–")
            self.add(f"| fan-out knee pinned (issue 37) | ≥ 3 × nats-server, the knee held 3 of 3"
                     f" | {ratio(rd, nd)} (roomd {rk:,} msg/s held {rh}/{len(rruns)}, nats-server {nk:,} held"
                     f" {nh}/{len(nruns)}){pinned}; (h) and the model below say what 3× takes | {verdict} |")
        feed = self.g("feed", "feed-wrk")
        pairs = []
        for conns in ("32", "128"):
            r, n = feed.get(f"roomd-{conns}"), feed.get(f"nginx-keepalive-{conns}")
            if r and n:
                pairs.append((conns, median(r, "rps"), median(n, "rps"), median(r, "cpu_us_per_request"),
                              median(n, "cpu_us_per_request")))
        if pairs:
            ok = all(a and b and a / b >= 0.8 for _, a, b, _, _ in pairs)
            text = ", ".join(f"**{a / b:.2f}×** at {c} ({fint(a)} against {fint(b)} req/s)" if a and b else f"– at {c}"
                             for c, a, b, _, _ in pairs)
            cost = pairs[0]
            if cost[3] and cost[4]:
                text += f"; {cost[3]:.1f} µs of CPU per request against nginx's {cost[4]:.1f} at {cost[0]}"
            self.add(f"| the feed pinned at 32 and 128 kept connections (issue 37) | ≥ 0.8 × nginx | {text} ((m))"
                     f" | {'**met**' if ok else '**missed**'} |")
        plain, on = self.g("deflate-plain", "fanout"), self.g("deflate-on", "fanout")
        bp = bytes_per_delivery([r for runs in plain.values() for r in runs])
        bo = bytes_per_delivery([r for runs in on.values() for r in runs])
        if bp and bo:
            pk, ok_ = knee(self.r, "deflate-plain")[0], knee(self.r, "deflate-on")[0]
            self.add(f"| bytes per delivery with and without compression (issue 37) | measured, compression kept only if"
                     f" it helps | {fint(bp)} B plain, {fint(bo)} B with permessage-deflate (−{(1 - bo / bp) * 100:.0f} %);"
                     f" knee {fint(pk)} msg/s plain, {fint(ok_)} compressed ((b′)) | reported |")

    def audience_targets(self):
        """Issue 21's (and 22's, 24's) rows of the targets table."""
        words = next((r for r in self.r if r.get("scenario") == "micro" and r.get("case") == "word-filter"), None)
        if words and words.get("ns_per_op") is not None:
            us = words["ns_per_op"] / 1000
            verdict = "**met**" if us <= 100 else f"**missed**: {us:.1f} µs"
            self.add(f"| word filter (issue 22): a 4 KiB message against 1,000 blocked words | microseconds (≤ 100 µs)"
                     f" | {us:.1f} µs per message (micro `word-filter`, median of {words.get('rounds', '?')} rounds) | {verdict} |")
        timing = self.g("testmode", "timing")
        if "manual" in timing or "real" in timing:
            manual = median(timing.get("manual", []), "wall_s")
            real = median(timing.get("real", []), "wall_s")
            met = manual is not None and manual < 1 and (real is None or real > 110)
            verdict = "**met**" if met else ("–" if manual is None else f"**missed**: {manual:.2f} s on the manual clock")
            self.add(f"| guest call-in timing scenario (60-s expiry, 20-s grace, 30-s quiz) | test mode < 1 s, real"
                     f" time > 110 s | manual clock {spread(timing.get('manual', []), 'wall_s', lambda v: f'{v:.3f} s')},"
                     f" real time {spread(timing.get('real', []), 'wall_s', lambda v: f'{v:.1f} s')} | {verdict} |")
        for key, runs in self.g("taps", "taps").items():
            p99 = median(runs, "react_p99_ms")
            per = median(runs, "reactions_per_peer_per_interval")
            unanswered = [r.get("calls_offered", 0) - r.get("calls_acked", 0) for r in runs]
            misses = []
            if p99 is not None and p99 > 50:
                misses.append(f"p99 {fms(p99)}")
                tap_us, rate = median(runs, "server_cpu_us_per_tap"), median(runs, "taps_per_s")
                if tap_us and rate:
                    misses[-1] += (f" (roomd's core {tap_us * rate / 1e4:.0f} % busy at {fint(rate)} taps/s: calls"
                                   " queue behind a backlog once one builds; its drain takes turns of tens of ms,"
                                   " levers.md; where the CPU goes: the profile below)")
            if per is not None and per > 1:
                misses.append(f"{per:.3f} on-reactions per peer per interval")
            if unanswered and statistics.median(unanswered) > 0:
                misses.append(f"{fint(statistics.median(unanswered))} calls not answered")
            verdict = "–" if p99 is None else ("**met**" if not misses else "**missed**: " + ", ".join(misses))
            calls, count = key.split("x")
            self.add(f"| {fint(median(runs, 'peers'))} viewers tapping 5/s for {fint(median(runs, 'duration_s'))} s"
                     f" ({calls} call(s)/s of {count} tap(s)) | every `react` answered, p99 ≤ 50 ms, ≤ 1 `on-reactions`"
                     f" per peer per interval | p99 {spread(runs, 'react_p99_ms', fms)}; answered"
                     f" {spread(runs, 'calls_acked')} of {fint(median(runs, 'calls_offered'))};"
                     f" {spread(runs, 'reactions_per_peer_per_interval', lambda v: f'{v:.3f}')} per peer per interval;"
                     f" {spread(runs, 'server_cpu_us_per_tap', lambda v: f'{v:.2f}')} µs CPU per tap;"
                     f" {spread(runs, 'bytes_per_peer_per_s')} B per peer per s{aborted(runs)} | {verdict} |")
        for key, runs in self.g("history", "history-join").items():
            p50 = median(runs, "after_join_p50_ms")
            verdict = "–" if p50 is None else ("**met**" if p50 <= 1 else f"**missed** by {p50 - 1:.2f} ms")
            self.add(f"| join p50 into {fint(median(runs, 'peers'))} peers with a full {fint(median(runs, 'history'))}"
                     f"-message history | ≤ 1 ms, answer size reported | {spread(runs, 'after_join_p50_ms', fms)}"
                     f" (empty history {spread(runs, 'before_join_p50_ms', fms)}); answer"
                     f" {spread(runs, 'after_answer_bytes')} B{aborted(runs)} | {verdict} |")
        for key, runs in self.g("questions", "questions").items():
            p99 = median(runs, "list_p99_ms")
            verdict = "–" if p99 is None else ("**met**" if p99 <= 5 else f"**missed** by {p99 - 5:.2f} ms")
            self.add(f"| `question-list` with {fint(median(runs, 'questions'))} questions, {fint(median(runs, 'peers'))}"
                     f" viewers voting | p99 ≤ 5 ms | {spread(runs, 'list_p99_ms', fms)} (p50"
                     f" {spread(runs, 'list_p50_ms', fms)}; votes {spread(runs, 'votes_acked')} answered, p99"
                     f" {spread(runs, 'vote_p99_ms', fms)}){aborted(runs)} | {verdict} |")
        for key, runs in self.g("chatclear", "chat-clear").items():
            clear, ping = median(runs, "clear_ms"), median(runs, "ping_during_ms")
            misses = [f"{name} {fms(v)}" for name, v in (("chat-clear", clear), ("ping", ping)) if v is not None and v > 10]
            verdict = "–" if clear is None else ("**met**" if not misses else "**missed**: " + ", ".join(misses))
            self.add(f"| `chat-clear` over {fint(median(runs, 'messages'))} messages and {fint(median(runs, 'counts'))}"
                     f" reaction counts: its time and the worst ping in another room (issue 34) | ≤ 10 ms each"
                     f" | chat-clear {spread(runs, 'clear_ms', fms)}; worst ping during it"
                     f" {spread(runs, 'ping_during_ms', fms)}{aborted(runs)} | {verdict} |")

    def knee_text(self, rate, runs):
        if rate is None:
            return "no rate held"
        held = sum(1 for r in runs if run_held(r))
        return (f"at {rate:,} msg/s, {spread(runs, 'delivered_per_s')}/s, p99 {spread(runs, 'p99_ms', fms)},"
                f" {held}/{len(runs)} runs held")

    def over_s(self, runs):
        d = median(runs, "duration_s")
        return f"{d:.0f}" if d is not None else "?"

    # -- summary: roomd ÷ nats-server first

    def summary(self):
        self.add("## Summary")
        self.add()
        self.add("| scenario | roomd ÷ nats-server | roomd | nats-server (WebSocket) | lws mirror (floor) |")
        self.add("|---|---|---|---|---|")
        rk, rruns = knee(self.r, "fanout-roomd")
        nk, nruns = knee(self.r, "fanout-nats")
        mk, mruns = knee(self.r, "fanout-mirror")

        def kt(rate, runs, section):
            if not self.g(section, "fanout"):
                return "not measured"
            if rate is None:
                return "no rate held"
            return f"{spread(runs, 'delivered_per_s')}/s at {rate:,} msg/s, p99 {spread(runs, 'p99_ms', fms)}"

        rd = median(rruns, "delivered_per_s") if rruns else None
        nd = median(nruns, "delivered_per_s") if nruns else None
        self.add(f"| (b) fan-out 1 → {FANOUT_N(self.r)}, knee (held: no loss, p99 ≤ 200 ms) | {ratio(rd, nd)}"
                 f" | {kt(rk, rruns, 'fanout-roomd')} | {kt(nk, nruns, 'fanout-nats')} | {kt(mk, mruns, 'fanout-mirror')} |")

        def peak(section):
            best = None
            for key, runs in self.g(section, "fanout").items():
                m = median(runs, "delivered_per_s")
                if m is not None and (best is None or m > best[0]):
                    best = (m, key, runs)
            return best

        pr, pn, pm = peak("fanout-roomd"), peak("fanout-nats"), peak("fanout-mirror")

        def pt(p):
            return "–" if p is None else f"{fint(p[0])}/s at {int(float(p[1])):,} msg/s, p99 {fms(median(p[2], 'p99_ms'))}"

        self.add(f"| (b) fan-out, highest median deliveries/s of any step (any latency) |"
                 f" {ratio(pr and pr[0], pn and pn[0])} | {pt(pr)} | {pt(pn)} | {pt(pm)} |")
        wire = bytes_per_delivery

        wr = wire(rruns or (pr and pr[2]))
        wn = wire(nruns or (pn and pn[2]))
        wm = wire(mruns or (pm and pm[2]))
        self.add(f"| (b) bytes on the wire per delivery (100-byte message) | {ratio(wr, wn)} | {fint(wr)} B | {fint(wn)} B"
                 f" | {fint(wm)} B |")
        don = [r for runs in self.g("deflate-on", "fanout").values() for r in runs]
        wd = wire(don) if don else None
        if wd:
            self.add(f"| (b′) the same with permessage-deflate (roomd compresses; nats-server's WebSocket does not here)"
                     f" | {ratio(wd, wn)} | {fint(wd)} B | {fint(wn)} B | – |")
        cr = median(rruns, "server_cpu_pct") if rruns else None
        cn = median(nruns, "server_cpu_pct") if nruns else None
        if cr and cn and rd and nd:
            self.add(f"| (b) deliveries per server CPU second at the knee | {ratio(rd / cr, nd / cn)}"
                     f" | {fint(rd / cr * 100)} (CPU {fpct(cr)}) | {fint(nd / cn * 100)} (CPU {fpct(cn)}) | – |")
        storm = self.g("storm", "join-storm")
        mirror = self.g("storm-mirror", "join-storm")
        for key, runs in storm.items():
            m = mirror.get(key)
            self.add(f"| (a) {int(float(key)):,} viewers join one room | – (no nats equivalent)"
                     f" | {spread(runs, 'joins_per_s')} joins/s, p99 {spread(runs, 'join_p99_ms', fms)}"
                     f" | – | {spread(m, 'joins_per_s') + ' WebSocket handshakes/s (no join)' if m else '–'} |")
        for key, runs in self.g("idle", "idle").items():
            self.add(f"| (d) {int(float(key)):,} idle peers | – | CPU {spread(runs, 'server_cpu_pct', fpct)},"
                     f" {spread(runs, 'rss_per_peer_bytes')} B RSS per peer, one more join p50"
                     f" {spread(runs, 'probe_join_p50_ms', fms)} | – | – |")
        for key, runs in self.g("rooms", "rooms").items():
            self.add(f"| (c) {key.replace('x', ' rooms × ')} peers, 1 msg/s each | – | p99 {spread(runs, 'p99_ms', fms)},"
                     f" loss {spread(runs, 'loss')} | – | – |")
        for key, runs in sorted(self.g("overload", "fanout").items(), key=lambda kv: float(kv[0])):
            pct = [r["delivered_per_s"] / rd * 100 for r in runs if rd and "delivered_per_s" in r]
            self.add(f"| (b) overload: roomd at {key}× its knee | – | {spread(runs, 'delivered_per_s')}/s delivered"
                     f" ({f'{statistics.median(pct):.0f} %' if pct else '–'} of the knee), loss {spread(runs, 'loss')},"
                     f" receivers closed {spread(runs, 'receivers_closed')} | – | – |")
        tk, truns = knee(self.r, "fanout-threads")
        if self.g("fanout-threads", "fanout"):
            td = median(truns, "delivered_per_s") if truns else None
            self.add(f"| (h) fan-out knee on 2 service threads (`--threads 2`) ÷ on 1 | – | {ratio(td, rd)}:"
                     f" {kt(tk, truns, 'fanout-threads')} | – | – |")
        cl = self.g("cluster", "fanout")
        multi = [k for k in cl if k != "1-node"]
        if multi and "1-node" in cl:
            a, b = cl[multi[0]], cl["1-node"]
            self.add(f"| (g) one room over {multi[0].replace('-', ' ')} ÷ on 1 node | – | deliveries/s"
                     f" {ratio(median(a, 'delivered_per_s'), median(b, 'delivered_per_s'))}, p99"
                     f" {ratio(median(a, 'p99_ms'), median(b, 'p99_ms'))} | – | – |")
        self.add()

    # -- (b)

    def fanout(self):
        self.add("## (b) Fan-out: 1 sender → 1,000 receivers, 100-byte messages")
        self.add()
        self.add("One room (roomd: 1,000 `viewer`s and a `host` sending `broadcast`; nats-server: 1,000 WebSocket"
                 " clients subscribed to one subject and a publisher; the lws mirror: 1,000 clients of one mirror"
                 " instance). The sender sends at the given rate for the step's seconds; the text carries the"
                 " send time, so each receiver measures latency. *Delivered/s* = deliveries ÷ (last delivery −"
                 " first send); *loss* = expected − delivered after the drain window. The ladder stops after the"
                 " first rate not held in median.")
        self.add()
        for section, name in (("fanout-roomd", "roomd"), ("fanout-nats", "nats-server"), ("fanout-mirror", "lws mirror")):
            steps = self.g(section, "fanout")
            if not steps:
                continue
            self.add(f"**{name}**")
            self.add()
            self.add("| msg/s | held | delivered/s | p50 | p99 | max | loss | closes | server CPU | client CPU |"
                     " bytes/delivery |" + (" bus out ÷ delivered |" if section == "fanout-nats" else ""))
            self.add("|---|---|---|---|---|---|---|---|---|---|---|" + ("---|" if section == "fanout-nats" else ""))
            for key in sorted(steps, key=float):
                runs = steps[key]
                held = sum(1 for r in runs if run_held(r))
                line = (f"| {int(float(key)):,} | {'**yes**' if step_held(runs) else 'no'} ({held}/{len(runs)})"
                        f" | {spread(runs, 'delivered_per_s')} | {spread(runs, 'p50_ms', fms)} | {spread(runs, 'p99_ms', fms)}"
                        f" | {spread(runs, 'max_ms', fms)} | {spread(runs, 'loss')} | {closes(runs)}"
                        f" | {spread(runs, 'server_cpu_pct', fpct)} | {spread(runs, 'client_cpu_pct', fpct)}"
                        f" | {fint(bytes_per_delivery(runs))} |")
                if section == "fanout-nats":
                    bus = [r["bus_out_msgs"] / r["delivered"] for r in runs if r.get("delivered") and "bus_out_msgs" in r]
                    line += f" {statistics.median(bus):.3f} |" if bus else " – |"
                busy = [r for r in runs if r.get("client_cpu_pct", 0) >= 90]
                note = f" (roombench ≥ 90 % CPU in {len(busy)} run(s): the load tool may be the limit)" if busy else ""
                self.add(line + aborted(runs) + note)
            self.add()
        over = self.g("overload", "fanout")
        if over:
            rk, rruns = knee(self.r, "fanout-roomd")
            rd = median(rruns, "delivered_per_s") if rruns else None
            self.add("### Overload: roomd above its knee")
            self.add()
            self.add(f"roomd at a multiple of its knee ({fint(rk)} msg/s = {fint(rd)} deliveries/s in median) for the"
                     " given seconds, then a drain window of twice that: what roomd queued or paused arrives late, and"
                     " *loss* counts only what never arrives. *Acked* is the sender's `broadcast` calls answered (flow"
                     " control answers them later instead of refusing them). roombench writes to its sockets itself,"
                     " so its sender reads its answers while roomd is not reading it: lws' own write keeps what the"
                     " socket does not take and, on a raw socket, reads nothing until that is written. With it the"
                     " sender stopped reading its answers for seconds whenever roomd paused the room, and roomd closed"
                     " it with 4008 as a slow consumer (as it must close any client that does not read).")
            self.add()
            self.add("| × knee | msg/s | sent / acked | delivered/s | % of knee | p99 | loss | receivers closed | RSS start → end (peak) |")
            self.add("|---|---|---|---|---|---|---|---|---|")
            for key in sorted(over, key=float):
                runs = over[key]
                pct = [r["delivered_per_s"] / rd * 100 for r in runs if rd and "delivered_per_s" in r]
                pct_text = "–" if not pct else f"{statistics.median(pct):.0f} %" + (
                    f" ({min(pct):.0f}–{max(pct):.0f})" if len(pct) > 1 else "")
                self.add(f"| {key} | {fint(median(runs, 'rate'))} | {fint(median(runs, 'sent'))} / {spread(runs, 'acked')}"
                         f" | {spread(runs, 'delivered_per_s')} | {pct_text} | {spread(runs, 'p99_ms', fms)}"
                         f" | {spread(runs, 'loss')} | {spread(runs, 'receivers_closed')} ({closes(runs)})"
                         f" | {fmib(median(runs, 'server_rss_start_kib'))} → {fmib(median(runs, 'server_rss_kib'))}"
                         f" ({fmib(median(runs, 'server_hwm_kib'))}){aborted(runs)} |")
            self.add()

    # -- (a), (c), (d), (e), (f)

    def deflate(self):
        plain, on = self.g("deflate-plain", "fanout"), self.g("deflate-on", "fanout")
        rss = self.g("deflate-rss", "deflate-rss")
        pushes = [r for r in self.r if r.get("scenario") == "micro" and r.get("deflated_bytes")]
        if not (plain or on or rss or pushes):
            return
        self.add("## (b′) Fan-out with permessage-deflate (issue 37)")
        self.add()
        self.add(f"(b)'s room (1 sender → {FANOUT_N(self.r)} receivers, roombench's 100-byte `x`-padded text), plain and"
                 " with permessage-deflate **alternating run by run** at each rate, a fresh roomd per step. roomd"
                 " compresses for clients that offer the extension (browsers do; `--no-permessage-deflate` turns it"
                 " off): each push once, for all its recipients that negotiated it (a fresh deflate state per message,"
                 " no context takeover). `roombench --deflate` offers it and inflates what it gets (each distinct"
                 " compressed push once, found by hash, not once per receiver).")
        self.add()
        if plain or on:
            self.add("| msg/s | plain: held | p99 | bytes/delivery | server CPU | client CPU"
                     " | deflate: held | p99 | bytes/delivery | server CPU | client CPU |")
            self.add("|---|---|---|---|---|---|---|---|---|---|---|")

            def cols(runs):
                if not runs:
                    return "– | – | – | – | –"
                held = sum(1 for r in runs if run_held(r))
                return (f"{'**yes**' if step_held(runs) else 'no'} ({held}/{len(runs)}) | {spread(runs, 'p99_ms', fms)}"
                        f" | {fint(bytes_per_delivery(runs))} | {spread(runs, 'server_cpu_pct', fpct)}"
                        f" | {spread(runs, 'client_cpu_pct', fpct)}")
            for key in sorted(set(plain) | set(on), key=float):
                self.add(f"| {int(float(key)):,} | {cols(plain.get(key))} | {cols(on.get(key))} |")
            self.add()
            pk, _ = knee(self.r, "deflate-plain")
            ok, _ = knee(self.r, "deflate-on")
            busy = [r for runs in on.values() for r in runs if r.get("client_cpu_pct", 0) >= 90]
            self.add(f"- **Knee: {fint(pk)} msg/s plain, {fint(ok)} msg/s compressed** (the highest of these rates held in"
                     " median)." + (f" roombench was at ≥ 90 % of its core in {len(busy)} compressed run(s): inflating"
                                    " and parsing, the load tool is the limit there, not roomd." if busy else ""))
        if pushes:
            self.add("- **Bytes and CPU per push** (`roombench micro --case deflate`: roomd's `MessageDeflater`"
                     " in-process, median ns of the rounds; once per push whatever the recipients):")
            self.add()
            self.add("  | push | plain bytes | compressed | saved | CPU per push | per delivery to 1,000 |")
            self.add("  |---|---|---|---|---|---|")
            for r in pushes:
                b, d, ns = r.get("bytes"), r.get("deflated_bytes"), r.get("ns_per_op")
                saved = f"−{(1 - d / b) * 100:.0f} %" if b and d else "–"
                self.add(f"  | {r.get('what', '').replace('MessageDeflater: ', '')} | {fint(b)} | {fint(d)} | {saved}"
                         f" | {'–' if ns is None else f'{ns / 1000:.1f} µs'}"
                         f" | {'–' if ns is None else f'{ns / 1000:.1f} ns'} |")
            self.add()
        if rss:
            by_run = {}
            for mode, runs in rss.items():
                for r in runs:
                    if "bytes_per_connection" in r:
                        by_run.setdefault(r.get("run"), {})[mode] = r["bytes_per_connection"]
            diffs = [m["deflate"] - m["none"] for m in by_run.values() if "deflate" in m and "none" in m]
            n = next((r.get("connections") for runs in rss.values() for r in runs if r.get("connections")), None)
            if diffs:
                self.add(f"- **RSS per compressing connection: {fint(statistics.median(diffs))} B**"
                         + (f" ({fint(min(diffs))}–{fint(max(diffs))})" if len(diffs) > 1 else "")
                         + f": {len(diffs)} run(s) of {fint(n)} Python `websockets` clients, each in a room of its own,"
                         " that compress every message they send, against roomd, minus the same against"
                         f" `roomd --no-permessage-deflate` ({spread(rss.get('deflate', []), 'bytes_per_connection')}"
                         f" against {spread(rss.get('none', []), 'bytes_per_connection')} B per connection;"
                         " `scripts/bench/deflate_rss.py`). lws frees its inflater after each message (both"
                         " `no_context_takeover` flags) and keeps a 1 KiB inflate buffer per connection once it has"
                         " inflated one; roomd's deflater is one per service thread.")
            else:
                self.add("- RSS per compressing connection: no complete run (see the work directory's logs).")
        self.add()

    def storm(self):
        storm = self.g("storm", "join-storm")
        if not storm:
            return
        self.add("## (a) N viewers joining one room: joins/s and `room-state` bytes")
        self.add()
        self.add("N `viewer` connections, then N `join`s to one room sent at once. Above `large_room_threshold`"
                 " (1,000) joins are announced by `room-state` pushes (section 12): `{peer_count}` to every peer at"
                 " most every 2 s, lists only to moderating roles (none here). *room-state bytes* counts those pushes'"
                 " payloads at all peers until 3 s pass without a frame; *everything received* is every byte the"
                 " peers read (join answers, pushes, WebSocket headers).")
        self.add()
        self.add("| N | joined | joins/s | join p50 / p99 | room-state pushes | room-state bytes | per viewer"
                 " | pushes of any kind per viewer | everything received per viewer | server RSS after |")
        self.add("|---|---|---|---|---|---|---|---|---|---|")
        for key in sorted(storm, key=float):
            runs = storm[key]
            self.add(f"| {int(float(key)):,} | {spread(runs, 'joined')} | {spread(runs, 'joins_per_s')}"
                     f" | {spread(runs, 'join_p50_ms', fms)} / {spread(runs, 'join_p99_ms', fms)}"
                     f" | {spread(runs, 'room_state_pushes')} | {spread(runs, 'room_state_bytes')}"
                     f" | {spread(runs, 'room_state_bytes_per_peer', lambda v: f'{v:,.1f} B')}"
                     f" | {spread(runs, 'pushes_per_peer', lambda v: f'{v:,.0f}')}"
                     f" | {spread(runs, 'bytes_received_per_peer', lambda v: f'{v:,.0f} B')}"
                     f" | {fmib(median(runs, 'server_rss_kib'))}{aborted(runs)} |")
        self.add()
        self.add("Below the threshold, joins are announced one by one (`on-peer-join` to every peer already in the"
                 " room): the first 1,000 joins cost ~1,000²/2 pushes whatever N is, which is most of *everything"
                 " received* at small N; above it the cost per viewer is the `room-state` column.")
        self.add()
        mirror = self.g("storm-mirror", "join-storm")
        for key, runs in mirror.items():
            self.add(f"lws mirror (floor), {int(float(key)):,} WebSocket handshakes (no join step):"
                     f" {spread(runs, 'joins_per_s')}/s.")
            self.add()

    def idle(self):
        idle = self.g("idle", "idle")
        if not idle:
            return
        self.add("## (d) Idle peers: CPU, RSS per peer, join latency vs room size")
        self.add()
        w = next(iter(idle.values()))[0].get("window_s", "?")
        covers = isinstance(w, (int, float)) and w >= 21
        self.add(f"N viewers join one room; after the pushes settle, roomd's CPU is measured over {w} s of"
                 + (" silence (it covers a keepalive round: pings go out after 20 s without traffic)" if covers else
                    " silence (shorter than the 20 s after which keepalive pings go out: their round is not in it)")
                 + ", RSS per peer ="
                 " (RSS after − RSS before the connections) ÷ N. Then more peers join **one at a time** (the next"
                 " after the previous answer): *one more join* is that call's answer time. Each of those joins changes"
                 " the peer count, so `room-state` pushes to all N peers (every 2 s) run between them: the p99 shows"
                 " a join that waited for one.")
        self.add()
        self.add("| peers | joined | idle CPU (% of a core) | server RSS | RSS per peer | one more join p50 | p99 |")
        self.add("|---|---|---|---|---|---|---|")
        for key in sorted(idle, key=float):
            runs = idle[key]
            self.add(f"| {int(float(key)):,} | {spread(runs, 'joined')} | {spread(runs, 'server_cpu_pct', lambda v: f'{v:.1f} %')}"
                     f" | {spread(runs, 'server_rss_kib', fmib)} | {spread(runs, 'rss_per_peer_bytes', lambda v: f'{v:,.0f} B')}"
                     f" | {spread(runs, 'probe_join_p50_ms', fms)} | {spread(runs, 'probe_join_p99_ms', fms)}{aborted(runs)} |")
        self.add()

    def rooms(self):
        rooms = self.g("rooms", "rooms")
        if not rooms:
            return
        self.add("## (c) Many rooms")
        self.add()
        self.add("| rooms × peers | run | p50 | p99 | max | delivered/s | loss | server CPU |")
        self.add("|---|---|---|---|---|---|---|---|")
        for key, runs in rooms.items():
            for r in runs:
                self.add(f"| {key.replace('x', ' × ')} | {r.get('run')} | {fms(r.get('p50_ms'))} | {fms(r.get('p99_ms'))}"
                         f" | {fms(r.get('max_ms'))} | {fint(r.get('delivered_per_s'))} | {fint(r.get('loss'))}"
                         f" | {fpct(r.get('server_cpu_pct'))}{aborted([r])} |")
            self.add(f"| {key.replace('x', ' × ')} | **median** | {fms(median(runs, 'p50_ms'))} | {fms(median(runs, 'p99_ms'))}"
                     f" | {fms(median(runs, 'max_ms'))} | {fint(median(runs, 'delivered_per_s'))} | {fint(median(runs, 'loss'))}"
                     f" | {fpct(median(runs, 'server_cpu_pct'))} |")
        self.add()

    def hooks(self):
        hooks = self.g("hooks", "rooms")
        if not hooks:
            return
        self.add("## (r) Hooks: every broadcast through the app's hook")
        self.add()
        self.add("Rooms of 10 peers as in (c), 1 msg/s per peer (`HOOK_ROOMS` of them, 500 by default: 5,000 hooked msg/s,")
        self.add("the target), with `settings.hooks` on `message`: `roombench hook-server` (SwiftNIO, one event loop,")
        self.add("every request verified and parsed) answers `{\"allow\":true}` after 5 ms (`answer`), and never for")
        self.add("room-0 (`timeout`: its messages go out at `timeout_ms` 1000, `on_error` allow; the other rooms are")
        self.add("99.8 % of the deliveries). Always pinned: roomd on CPU 0, the hook server and roombench on CPU 1. Latency is send to")
        self.add("delivery, the hook's wait included: compare (c). Target: the hooked messages/s held with p99 ≤ 50 ms,")
        self.add("and `timeout`'s p99 as `answer`'s.")
        self.add()
        self.add("| hook | run | sent/s | p50 | p99 | max | delivered/s | loss | server CPU |")
        self.add("|---|---|---|---|---|---|---|---|---|")
        for key, runs in hooks.items():
            for r in runs:
                self.add(f"| {key} | {r.get('run')} | {fint(r.get('messages_per_s'))} | {fms(r.get('p50_ms'))}"
                         f" | {fms(r.get('p99_ms'))} | {fms(r.get('max_ms'))} | {fint(r.get('delivered_per_s'))}"
                         f" | {fint(r.get('loss'))} | {fpct(r.get('server_cpu_pct'))}{aborted([r])} |")
            self.add(f"| {key} | **median** | {fint(median(runs, 'messages_per_s'))} | {fms(median(runs, 'p50_ms'))}"
                     f" | {fms(median(runs, 'p99_ms'))} | {fms(median(runs, 'max_ms'))}"
                     f" | {fint(median(runs, 'delivered_per_s'))} | {fint(median(runs, 'loss'))}"
                     f" | {fpct(median(runs, 'server_cpu_pct'))} |")
        self.add()

    def speakers(self):
        sp = self.g("speakers", "speakers")
        if not sp:
            return
        self.add("## (e) Active speakers")
        self.add()
        self.add("| peers | speakers × Hz | `active-speakers`/s received | per peer per tick | server CPU speaking / idle |")
        self.add("|---|---|---|---|---|")
        for key, runs in sp.items():
            r0 = runs[0]
            self.add(f"| {int(float(key)):,} | {r0.get('speakers', '?')} × {r0.get('level_rate_hz', '?')}"
                     f" | {spread(runs, 'pushes_per_s')} | {spread(runs, 'per_peer_per_tick', lambda v: f'{v:.2f}')}"
                     f" | {spread(runs, 'server_cpu_speaking_pct', fpct)} / {spread(runs, 'server_cpu_idle_pct', fpct)}"
                     f"{aborted(runs)} |")
        self.add()

    def poll(self):
        polls = self.g("poll", "poll")
        if not polls:
            return
        self.add("## (f) Polls")
        self.add()
        self.add("One room: a host and N viewers; the host starts a visible poll, V viewers vote once each within the"
                 " spread (5,000 votes in 0.2 s: 25,000 votes/s offered). Targets (issue 8): ≥ 20,000 votes/s, answer"
                 " p99 ≤ 50 ms, ≤ 1 `on-poll-stats` per peer per interval.")
        self.add()
        self.add("| viewers | votes answered | votes/s | answer p50 / p99 | on-poll-stats per peer per s | shortest gap | server CPU |")
        self.add("|---|---|---|---|---|---|---|")
        for key, runs in polls.items():
            self.add(f"| {int(float(key)):,} | {spread(runs, 'votes_acked')} / {fint(median(runs, 'voters'))}"
                     f" | {spread(runs, 'votes_per_s')} | {spread(runs, 'vote_p50_ms', fms)} / {spread(runs, 'vote_p99_ms', fms)}"
                     f" | {spread(runs, 'stats_per_peer_per_s', lambda v: f'{v:.3f}')} | {spread(runs, 'stats_min_gap_ms', fms)}"
                     f" | {spread(runs, 'server_cpu_pct', fpct)}{aborted(runs)} |")
        self.add()

    def audience(self):
        taps = self.g("taps", "taps")
        history = self.g("history", "history-join")
        qa = self.g("questions", "questions")
        if not (taps or history or qa):
            return
        self.add("## (i)–(k) The audience: reactions, chat history, Q&A (issue 21)")
        self.add()
        if taps:
            self.add("(i) One room of N viewers, every one tapping the stream (`react {target:\"stream\"}`) for the"
                     " step's duration, the calls of all viewers spread evenly. *5 × 1*: a client that sends every tap"
                     " (5 calls a second of `count` 1); *1 × 5*: one that adds a second of taps into one call of"
                     " `count` 5 (section 20 allows 1..50). Targets: every `react` answered, p99 ≤ 50 ms, at most one"
                     " `on-reactions` per peer per interval (1,000 ms); CPU per tap and bytes per peer per second"
                     " reported. *Shortest gap*: between two `on-reactions` at any peer, measured on arrival.")
            self.add()
            self.add("| viewers | calls/s × taps | react answered | taps/s | answer p50 / p99 | server CPU per tap"
                     " | server CPU | on-reactions per peer per interval | shortest gap | bytes per peer per s (on-reactions) |")
            self.add("|---|---|---|---|---|---|---|---|---|---|")
            for key, runs in taps.items():
                r0 = runs[0]
                self.add(f"| {fint(r0.get('peers'))} | {key.replace('x', ' × ')}"
                         f" | {spread(runs, 'calls_acked')} / {fint(median(runs, 'calls_offered'))}"
                         f" | {spread(runs, 'taps_per_s')}"
                         f" | {spread(runs, 'react_p50_ms', fms)} / {spread(runs, 'react_p99_ms', fms)}"
                         f" | {spread(runs, 'server_cpu_us_per_tap', lambda v: f'{v:.2f} µs')}"
                         f" | {spread(runs, 'server_cpu_pct_tap_phase', fpct)}"
                         f" | {spread(runs, 'reactions_per_peer_per_interval', lambda v: f'{v:.3f}')}"
                         f" | {spread(runs, 'reactions_min_gap_ms', fms)}"
                         f" | {spread(runs, 'bytes_per_peer_per_s')} ({spread(runs, 'reactions_bytes_per_peer_per_s')})"
                         f"{aborted(runs)} |")
            self.add()
        if history:
            self.add("(j) One room of N viewers and a host: one more viewer joins at a time, first with an empty chat"
                     " history, then after the host sent 200 messages of 100 bytes to everyone (the default"
                     " `history_size`): the `join` answer then carries them as `chat`. Target: join p50 ≤ 1 ms at"
                     " 10,000 peers; the answer's size reported.")
            self.add()
            self.add("| peers | messages | join p50 / p99, empty history | answer bytes | join p50 / p99, full history"
                     " | answer bytes |")
            self.add("|---|---|---|---|---|---|")
            for key, runs in history.items():
                self.add(f"| {fint(median(runs, 'peers'))} | {fint(median(runs, 'history'))}"
                         f" | {spread(runs, 'before_join_p50_ms', fms)} / {spread(runs, 'before_join_p99_ms', fms)}"
                         f" | {spread(runs, 'before_answer_bytes')}"
                         f" | {spread(runs, 'after_join_p50_ms', fms)} / {spread(runs, 'after_join_p99_ms', fms)}"
                         f" | {spread(runs, 'after_answer_bytes')}{aborted(runs)} |")
            self.add()
        if qa:
            self.add("(k) One room of N viewers; 500 of them ask one question each; then every viewer votes 5 times"
                     " (up, or down one time in four) on questions picked by a fixed pseudo-random sequence, spread"
                     " over 10 s, while 100 viewers page through `question-list` (200 calls a second in all, `top`"
                     " and `new` alternately, offsets across the list, limit 20) during the votes and 3 s after."
                     " Target: `question-list` p99 ≤ 5 ms.")
            self.add()
            self.add("| viewers | questions | votes answered | vote p50 / p99 | question-list answered | list p50 / p99"
                     " | list answer bytes | on-questions per peer per interval | shortest gap | server CPU |")
            self.add("|---|---|---|---|---|---|---|---|---|---|")
            for key, runs in qa.items():
                self.add(f"| {fint(median(runs, 'peers'))} | {fint(median(runs, 'questions'))}"
                         f" | {spread(runs, 'votes_acked')} / {fint(median(runs, 'votes_sent'))}"
                         f" | {spread(runs, 'vote_p50_ms', fms)} / {spread(runs, 'vote_p99_ms', fms)}"
                         f" | {spread(runs, 'lists_acked')} / {fint(median(runs, 'lists_sent'))}"
                         f" | {spread(runs, 'list_p50_ms', fms)} / {spread(runs, 'list_p99_ms', fms)}"
                         f" | {spread(runs, 'list_answer_bytes_mean')}"
                         f" | {spread(runs, 'questions_per_peer_per_interval', lambda v: f'{v:.3f}')}"
                         f" | {spread(runs, 'questions_min_gap_ms', fms)}"
                         f" | {spread(runs, 'server_cpu_pct', fpct)}{aborted(runs)} |")
            self.add()

    def stage(self):
        runs_by_peers = self.g("stage", "stage")
        if not runs_by_peers:
            return
        self.add("## (p) A large audience that stays quiet (issue 32)")
        self.add()
        self.add("One room of N viewers (above `large_room_threshold`, 1,000), a host and a moderator; the host"
                 " broadcasts 100-byte messages to everyone 2 times a second in each of three 10-s windows, and every"
                 " viewer's delivery latency is measured (*host p99*: the deliveries' p99 / the p99 of the host's"
                 " `broadcast` answer, its own call's round trip). *Base*: nothing else. *Renaming*: one viewer"
                 " calls `peer-update {name}` 100 times a second (the template's `messages_per_second`): the"
                 " `on-peer-update` pushes every other viewer got (target 0, PROTOCOL.md section 28; the viewer"
                 " itself and the two moderating peers get theirs). *Asking*: 1,000 viewers call `stage-request`"
                 " with a note of about 65 bytes, spread over the window: the `on-stage-queue` bytes each moderating peer got"
                 " a second (coalesced each `interval_ms`, 1,000, at most 16 KiB a push). Targets: host p99 ≤ 20 ms"
                 " and no worse than the base window. The host broadcasts to *everyone* (each message a push to"
                 " 10,000 sockets: the burst's writes decide the p99, issue 37) or to the *moderator* role only"
                 " (the flood's own cost alone).")
        self.add()
        self.add("| viewers | host broadcasts to | host p99 base | renames answered | pushes to other viewers | host p99 renaming"
                 " | asked | on-stage-queue per moderator | host p99 asking | server CPU |")
        self.add("|---|---|---|---|---|---|---|---|---|---|")
        for key, runs in runs_by_peers.items():
            self.add(f"| {fint(median(runs, 'peers'))} | {key} | {spread(runs, 'base_p99_ms', fms)} / {spread(runs, 'base_answer_p99_ms', fms)}"
                     f" | {spread(runs, 'renames_acked')} | {spread(runs, 'rename_pushes_to_others')}"
                     f" | {spread(runs, 'rename_p99_ms', fms)} / {spread(runs, 'rename_answer_p99_ms', fms)}"
                     f" | {spread(runs, 'asks_acked')} / {fint(median(runs, 'askers'))}"
                     f" | {spread(runs, 'stage_queue_bytes_per_moderator_per_s', lambda v: f'{v / 1024:.1f} KiB/s')}"
                     f" | {spread(runs, 'ask_p99_ms', fms)} / {spread(runs, 'ask_answer_p99_ms', fms)} | {spread(runs, 'server_cpu_pct', fpct)}{aborted(runs)} |")
        self.add()

    def synthetic(self):
        runs_by_key = self.g("synthetic", "synthetic")
        if not runs_by_key:
            return
        any_run = next(iter(runs_by_key.values()))
        peers = fint(median(any_run, "peers"))
        self.add("## (q) The same audience, real and synthetic (issue 38)")
        self.add()
        self.add(f"One room of {peers} viewers and a host; the host broadcasts a 100-byte chat line (`broadcast"
                 " {info:{message}}`) to everyone at the row's rate for the step's seconds, on the bench"
                 " template. *Real*: the viewers are WebSocket clients of roombench that join with tokens and read"
                 " everything (deliveries counted at the viewers). *Synthetic*: the same number of peers of test"
                 " mode's synthetic audience (roomd `--test-mode`, `POST /v2/test/audience`, PROTOCOL.md section 33):"
                 " socketless, each push encoded once per message and handed to every recipient, counted in"
                 " `roomd_test_audience_pushes_total` and dropped (deliveries = its delta, checked against the"
                 " broadcasts answered × viewers). Over the broadcast window only (until the last answer, and"
                 " with real viewers the last delivery): roomd's CPU (schedstat of every thread) ÷ deliveries;"
                 " *net* subtracts roomd's idle CPU with the same audience, measured for 3 s before. *Host answer*:"
                 " the host's `broadcast` call's round trip. *Deliveries per client read*: the frames a viewer's"
                 " read took in one go, i.e. how many messages roomd was behind at that socket (each of its writes"
                 " then carried as many). The ratio real ÷ synthetic is the share of roomd's cost the synthetic"
                 " audience does not measure: socket writes, the kernel's copies, lws.")
        self.add()
        self.add("| viewers | msg/s | delivered / expected | deliveries/s | server CPU | CPU µs per delivery"
                 " | net of idle | idle CPU | host answer p50 / p99 | delivery p99 | deliveries per client read |")
        self.add("|---|---|---|---|---|---|---|---|---|---|---|")
        us = lambda v: f"{v:.3f} µs"
        for key, runs in runs_by_key.items():
            mode = runs[0].get("mode", key)
            matches = all(r.get("delivered_matches", False) for r in runs)
            self.add(f"| {fint(median(runs, 'peers'))} {mode} | {fint(median(runs, 'rate'))}"
                     f" | {spread(runs, 'delivered')} / {fint(median(runs, 'expected'))}{'' if matches else ' (**differs**)'}"
                     f" | {spread(runs, 'delivered_per_s')} | {spread(runs, 'server_cpu_pct_window', fpct)}"
                     f" | {spread(runs, 'server_cpu_us_per_delivery', us)}"
                     f" | {spread(runs, 'server_cpu_us_per_delivery_net', us)}"
                     f" | {spread(runs, 'idle_cpu_pct', lambda v: f'{v:.1f} %')}"
                     f" | {spread(runs, 'answer_p50_ms', fms)} / {spread(runs, 'answer_p99_ms', fms)}"
                     f" | {spread(runs, 'delivery_p99_ms', fms) if mode == 'real' else '–'}"
                     f" | {spread(runs, 'deliveries_per_read', lambda v: f'{v:.1f}') if mode == 'real' else '–'}{aborted(runs)} |")
        self.add()
        for key, real in runs_by_key.items():
            if not key.startswith("real-"):
                continue
            synth = runs_by_key.get("synthetic-" + key[len("real-"):])
            if not synth:
                continue
            held = sum(1 for r in real if r.get("held"))
            self.add(f"- At {fint(median(real, 'rate'))} msg/s, real ÷ synthetic, CPU per delivery (medians):"
                     f" **{ratio(median(real, 'server_cpu_us_per_delivery'), median(synth, 'server_cpu_us_per_delivery'))}**,"
                     f" net of idle {ratio(median(real, 'server_cpu_us_per_delivery_net'), median(synth, 'server_cpu_us_per_delivery_net'))};"
                     f" real sockets held the rate (every broadcast answered, nothing lost, the last delivery"
                     f" within 1 s of the last answer) in {held} of {len(real)} run(s).")
        self.add()

    def feed(self):
        feed = self.g("feed", "feed-wrk")
        room = self.g("feed-room", "fanout")
        if not (feed or room):
            return
        self.add("## (m) The audience feed over HTTP (issue 23)")
        self.add()
        self.add("`GET /v2/rooms/{room_id}/feed?from=S&to=T` (PROTOCOL.md §24), with wrk (Debian) as the load tool"
                 " (scripts/bench/feed.lua), with keep-alive (a GET keeps its connection: docs/PROTOCOL.md section 9)"
                 " unless a row says `close`. Targets: the host's `broadcast` p99 ≤ 20 ms while the viewers poll;"
                 " roomd ÷ nginx ≥ 0.5 at p99 ≤ 50 ms; the cost per request independent of the room's size.")
        self.add()
        viewers = {k: v for k, v in feed.items() if k.startswith("viewers-")}
        if viewers or room:
            self.add("**Viewers.** N viewers (wrk connections) each polling every 3 s, the first poll at a random"
                     " point of the first 3 s, all for one room on the kits' 3-s grid, while that room has a host"
                     " chatting and tapping, a visible poll with votes every second, a live stream with a cue, and"
                     " roombench's fan-out (a host broadcasting to 100 receivers at 20 msg/s) whose delivery p99 is"
                     " the room's own latency.")
            self.add()
            self.add("| viewers | requests/s offered | requests/s held | p50 / p99 | non-2xx | socket errors"
                     " | roomd CPU | CPU per request | host broadcast p50 / p99 (target ≤ 20 ms) |")
            self.add("|---|---|---|---|---|---|---|---|---|")
            for key, runs in viewers.items():
                n = int(key.split("-", 1)[1])
                rooms = room.get(str(n), [])
                self.add(f"| {n:,} | {n / 3:,.0f} | {spread(runs, 'rps')}"
                         f" | {spread(runs, 'p50_ms', fms)} / {spread(runs, 'p99_ms', fms)}"
                         f" | {spread(runs, 'non2xx')} | {spread(runs, 'socket_errors')}"
                         f" | {spread(runs, 'server_cpu_pct', fpct)}"
                         f" | {spread(runs, 'cpu_us_per_request', lambda v: f'{v:.1f} µs')}"
                         f" | {spread(rooms, 'p50_ms', fms)} / {spread(rooms, 'p99_ms', fms)}{aborted(runs + rooms)} |")
            self.add()
        ladder = {k: v for k, v in feed.items() if k.split("-")[0] in ("roomd", "nginx")}
        if ladder:
            self.add("**Highest rate held with p99 ≤ 50 ms.** wrk with C connections, each as fast as it can, on one"
                     " span's body (cached after the first request: the cost of serving it) against roomd, and the"
                     " same bytes as a static file from nginx (Debian, `worker_processes 1`, as roomd's one service"
                     " thread). Both with keep-alive (`roomd`, `nginx-keepalive`), and both with `Connection: close` on"
                     " every request (`roomd-close`, `nginx`: a new TCP connection per request).")
            self.add()
            self.add("| server | connections | requests/s | p50 / p99 | non-2xx | server CPU | CPU per request |")
            self.add("|---|---|---|---|---|---|---|")
            best = {}
            for key, runs in ladder.items():
                server, conns = key.rsplit("-", 1)
                rps, p99 = median(runs, "rps"), median(runs, "p99_ms")
                if rps is not None and p99 is not None and p99 <= 50.0 and rps > best.get(server, 0):
                    best[server] = rps
                self.add(f"| {server} | {conns} | {spread(runs, 'rps')}"
                         f" | {spread(runs, 'p50_ms', fms)} / {spread(runs, 'p99_ms', fms)} | {spread(runs, 'non2xx')}"
                         f" | {spread(runs, 'server_cpu_pct', fpct)}"
                         f" | {spread(runs, 'cpu_us_per_request', lambda v: f'{v:.1f} µs')}{aborted(runs)} |")
            self.add()
            roomd, nginx_ka = best.get("roomd"), best.get("nginx-keepalive")
            roomd_close, nginx = best.get("roomd-close"), best.get("nginx")
            parts = [f"roomd {fint(roomd)} req/s, nginx {fint(nginx_ka)} req/s with keep-alive"
                     if roomd and nginx_ka else "keep-alive: no rate held by one of them"]
            if roomd and nginx_ka:
                parts.append(f"**roomd ÷ nginx = {roomd / nginx_ka:.2f}** (goal ≥ 0.5)")
            if roomd_close and nginx:
                parts.append(f"with `Connection: close`: roomd {fint(roomd_close)}, nginx {fint(nginx)} req/s,"
                             f" roomd ÷ nginx = {roomd_close / nginx:.2f}")
            self.add("Held (median p99 ≤ 50 ms): " + "; ".join(parts) + ".")
            self.add()
        cost = {k: v for k, v in feed.items() if k.startswith("cost-")}
        if cost:
            self.add("**Cost per request by room size.** roombench's idle room of N peers; wrk with 32 connections"
                     " on one span of that room for the step.")
            self.add()
            self.add("| peers in the room | requests/s | p50 / p99 | roomd CPU | CPU per request |")
            self.add("|---|---|---|---|---|")
            for key, runs in cost.items():
                self.add(f"| {int(key.split('-', 1)[1]):,} | {spread(runs, 'rps')}"
                         f" | {spread(runs, 'p50_ms', fms)} / {spread(runs, 'p99_ms', fms)}"
                         f" | {spread(runs, 'server_cpu_pct', fpct)}"
                         f" | {spread(runs, 'cpu_us_per_request', lambda v: f'{v:.1f} µs')}{aborted(runs)} |")
            self.add()

    def testmode(self):
        runs_by_clock = self.g("testmode", "timing")
        if not runs_by_clock:
            return
        self.add("## (l) Test mode: the timing rules without waiting for them (issue 24)")
        self.add()
        self.add("The same scenario (`scripts/bench/timing_scenario.py`, the Python kit) on the manual clock and in"
                 " real time, the shipped template's times: an invitation nobody answers expires after 60 s"
                 " (`request_ttl_s`), a guest whose network drops is gone after its 20-s grace, a 30-s quiz stops on"
                 " its own; each rule checked both ways. Manual: `roomd.advance(s)`; real: `asyncio.sleep(s)` then"
                 " the push (the real timers fire on their own).")
        self.add()
        self.add("| clock | runs | wall time | simulated time |")
        self.add("|---|---|---|---|")
        for key, runs in runs_by_clock.items():
            self.add(f"| {key} | {len(runs)} | {spread(runs, 'wall_s', lambda v: f'{v:.3f} s')}"
                     f" | {fint(median(runs, 'simulated_s'))} s{aborted(runs)} |")
        self.add()

    def waiting(self):
        runs = self.g("waiting", "waiting").get("rooms", [])
        if not runs:
            return
        self.add("## (n) Rooms that wait (issue 23)")
        self.add()
        self.add("Sessions whose last peer left, waiting out `settings.room.empty_timeout_s` (3600) for the host to come"
                 " back (`scripts/bench/waiting_rooms.py`, the Python kit): for each room a host joins, sets one"
                 " session-store entry and leaves. *Per room* = the daemon's RSS with the rooms waiting minus its RSS"
                 " after the same steps with `empty_timeout_s` 0 (the sessions end), ÷ rooms. *Idle CPU*: the waiting"
                 " daemon over a quiet window. *End*: the manual clock (test mode) jumps an hour; every session ends"
                 " in that one advance (one timer for all of them, a queue by deadline).")
        self.add()
        self.add("| rooms waiting | memory per room | RSS waiting / ended | idle CPU | one 1-h advance ends them in | left |")
        self.add("|---|---|---|---|---|---|")
        self.add(f"| {fint(median(runs, 'waiting'))} | {spread(runs, 'bytes_per_room', lambda v: f'{v / 1024:.1f} KiB')}"
                 f" | {spread(runs, 'rss_waiting', lambda v: f'{v / 2**20:.1f} MiB')}"
                 f" / {spread(runs, 'rss_ended', lambda v: f'{v / 2**20:.1f} MiB')}"
                 f" | {spread(runs, 'idle_cpu_pct', lambda v: f'{v:.2f} %')}"
                 f" | {spread(runs, 'end_advance_s', lambda v: f'{v * 1000:.0f} ms')}"
                 f" | {fint(median(runs, 'left_after_timeout'))}{aborted(runs)} |")
        self.add()

    def chatclear(self):
        by_size = self.g("chatclear", "chat-clear")
        if not by_size:
            return
        self.add("## (o) chat-clear over a full history (issue 34)")
        self.add()
        self.add("`scripts/bench/chat_clear.py`, the Python kit; a fresh roomd per run, test mode on the manual clock"
                 " (no reactions tick: every change is still to be pushed when the history goes, the worst case),"
                 " `chat.history_size` as many messages as the row's. A moderator fills the ring, viewers react until"
                 " the row's (message, type, user) counts exist; then one `chat-clear` while a viewer of another room"
                 " of the node pings in a loop, one ping at a time. *chat-clear*: its answer's round trip; *during*:"
                 " the slowest ping in flight between the clear's send and its answer (how long it held every other"
                 " room); *after*: the slowest ping sent in the second after the answer (the old history is freed"
                 " off the service thread then); *before*: the slowest of the half second before (the noise floor).")
        self.add()
        self.add("| messages | reaction counts | chat-clear | worst ping during it | in the second after | before |")
        self.add("|---:|---:|---|---|---|---|")
        for key, runs in by_size.items():
            self.add(f"| {fint(median(runs, 'messages'))} | {fint(median(runs, 'counts'))}"
                     f" | {spread(runs, 'clear_ms', fms)} | {spread(runs, 'ping_during_ms', fms)}"
                     f" | {spread(runs, 'ping_after_ms', fms)} | {spread(runs, 'ping_before_ms', fms)}{aborted(runs)} |")
        self.add()

    def cluster(self):
        cl = self.g("cluster", "fanout")
        if not cl:
            return
        self.add("## (g) Cluster (issue 10): one room over several roomd nodes")
        self.add()
        self.add("One room, its receivers spread round-robin over the nodes (`roomd --cluster nats://… --node-id nK`,"
                 " nats-server with JetStream as the bus), one sender on the first node; then the same room and rate"
                 " on one roomd without `--cluster`, in the same run. *Bus msgs per broadcast* = nats-server's"
                 " `in_msgs` during the step ÷ broadcasts sent (the spec's bound: at most one per node the room spans,"
                 " plus the bus' own traffic: leases, heartbeats).")
        self.add()
        self.add("| setup | receivers | msg/s | delivered/s | p50 | p99 | loss | bus msgs in per broadcast | server CPU per node |")
        self.add("|---|---|---|---|---|---|---|---|---|")
        for key in sorted(cl, key=lambda k: -len(k)):
            runs = cl[key]
            bus = [r["bus_in_msgs"] / r["sent"] for r in runs if r.get("sent") and "bus_in_msgs" in r]
            nodes = [r["node_cpu_pct"] for r in runs if isinstance(r.get("node_cpu_pct"), list)]
            if nodes:
                cpu = " / ".join(f"{statistics.median(col):.0f} %" for col in zip(*nodes))
            else:
                cpu = spread(runs, "server_cpu_pct", fpct)
            self.add(f"| {key.replace('-', ' ')} | {fint(median(runs, 'receivers'))} | {fint(median(runs, 'rate'))}"
                     f" | {spread(runs, 'delivered_per_s')} | {spread(runs, 'p50_ms', fms)} | {spread(runs, 'p99_ms', fms)}"
                     f" | {spread(runs, 'loss')} | {f'{statistics.median(bus):.2f}' if bus else '–'} | {cpu}{aborted(runs)} |")
        multi = [k for k in cl if k != "1-node"]
        if multi and "1-node" in cl:
            a, b = cl[multi[0]], cl["1-node"]
            self.add()
            self.add(f"{multi[0].replace('-', ' ')} ÷ 1 node: deliveries/s {ratio(median(a, 'delivered_per_s'), median(b, 'delivered_per_s'))},"
                     f" p99 {ratio(median(a, 'p99_ms'), median(b, 'p99_ms'))}.")
            # The cost model (docs/CLUSTER.md): the CPU the nodes spend together on the
            # room's deliveries vs one node at the same rate, and (b)'s one-node knee.
            def cpu(runs, cluster):
                values = [sum(r["node_cpu_pct"]) if cluster else r.get("server_cpu_pct") for r in runs
                          if (isinstance(r.get("node_cpu_pct"), list) if cluster else r.get("server_cpu_pct"))]
                return statistics.median(values) if values else None
            ca, cb = cpu(a, True), cpu(b, False)
            k = len(next((r["node_cpu_pct"] for r in a if isinstance(r.get("node_cpu_pct"), list)), [])) or 3
            rate, runs = knee(self.r, "fanout-roomd")
            single = median(runs, "delivered_per_s") if runs else None
            if ca and cb and single:
                factor = ca / cb
                per_node = single / factor
                self.add()
                self.add(f"**Cost model.** At the same deliveries/s the {k} nodes together used {ca:.0f} % of a core and"
                         f" one node {cb:.0f} %: the bus costs a factor of {factor:.2f} in CPU per delivery (the home's"
                         " publishes, each node's decoding of one message per turn; nats-server's own CPU not counted)."
                         " At this low rate roomd writes each push on its own and its CPU is inflated, so this factor is"
                         f" an upper bound. One node's fan-out ceiling is (b)'s knee, {single / 1e6:.1f}M deliveries/s. A"
                         " room spread over K nodes with a core each is fanned out by K threads: about K ×"
                         f" {per_node / 1e6:.1f}M deliveries/s (K = 3: {3 * per_node / 1e6:.0f}M, K = 6:"
                         f" {6 * per_node / 1e6:.0f}M), until the home's own thread (the sender's calls, one encode and"
                         " K−1 publishes per push: microseconds) or nats-server (K−1 messages per push, fewer when"
                         " pushes batch) is the limit. On this 2-core machine the nodes, nats-server and roombench share"
                         " two cores, so the cluster cannot beat one node here: the figure to watch is the factor.")
        self.add()

    def threads(self):
        th = self.g("fanout-threads", "fanout")
        if not th:
            return
        one = self.g("fanout-roomd", "fanout")
        tk, truns = knee(self.r, "fanout-threads")
        rk, rruns = knee(self.r, "fanout-roomd")
        self.add("## (h) More cores: the fan-out on 1 vs 2 service threads")
        self.add()
        self.add("The fan-out of (b) on `roomd --threads 2 --cluster nats://…`: two service threads in one process,"
                 " each a node of the cluster, both listening on the one port (`SO_REUSEPORT`), so the kernel spreads"
                 " the 1,001 connections over them; a nats-server with JetStream is their bus. The room lives on one"
                 " thread (its home); each push crosses the bus once per turn to the other thread, which writes it to"
                 " its own sockets. Same ladder, same run as (b)'s roomd (1 thread). *roomd CPU* is the process (both"
                 " threads), split into its *busiest / next thread*; the bus' nats-server is measured apart.")
        self.add()
        self.add("| msg/s | held | delivered/s | p50 | p99 | loss | roomd CPU | busiest / next thread | bus nats-server CPU"
                 " | client CPU | 1 thread at this rate (b): delivered/s, p99, CPU |")
        self.add("|---|---|---|---|---|---|---|---|---|---|---|")

        def col(runs, index, field="server_thread_cpu_pct"):
            v = [r[field][index] for r in runs if isinstance(r.get(field), list) and len(r[field]) > index
                 and r[field][index] is not None]
            return statistics.median(v) if v else None

        for key in sorted(th, key=float):
            runs = th[key]
            held = sum(1 for r in runs if run_held(r))
            b, t2 = col(runs, 0), col(runs, 1)
            bus = col(runs, 1, "node_cpu_pct")
            single = one.get(key)
            single_text = (f"{spread(single, 'delivered_per_s')}, {spread(single, 'p99_ms', fms)},"
                           f" {spread(single, 'server_cpu_pct', fpct)}") if single else "not measured"
            self.add(f"| {int(float(key)):,} | {'**yes**' if step_held(runs) else 'no'} ({held}/{len(runs)})"
                     f" | {spread(runs, 'delivered_per_s')} | {spread(runs, 'p50_ms', fms)} | {spread(runs, 'p99_ms', fms)}"
                     f" | {spread(runs, 'loss')} | {spread(runs, 'server_cpu_pct', fpct)}"
                     f" | {fpct(b) if b is not None else '–'} / {fpct(t2) if t2 is not None else '–'}"
                     f" | {fpct(bus) if bus is not None else '–'} | {spread(runs, 'client_cpu_pct', fpct)}"
                     f" | {single_text}{aborted(runs)} |")
        self.add()
        td = median(truns, "delivered_per_s") if truns else None
        rd = median(rruns, "delivered_per_s") if rruns else None
        self.add(f"Knee: 2 threads {self.knee_text(tk, truns) if tk else 'no rate held'}; 1 thread (b)"
                 f" {self.knee_text(rk, rruns) if rk else 'no rate held'}: 2 threads ÷ 1 = **{ratio(td, rd)}**.")
        # CPU per delivery at the highest rate both held (or measured): the price of the split.
        common = [k for k in th if k in one]
        if common:
            key = max(common, key=float)
            a, b = th[key], one[key]
            ca = [(r["server_cpu_pct"] + ((r.get("node_cpu_pct") or [0, 0])[1] or 0)) / r["delivered_per_s"] * 1e4
                  for r in a if r.get("delivered_per_s") and r.get("server_cpu_pct")]
            cb = [r["server_cpu_pct"] / r["delivered_per_s"] * 1e4 for r in b if r.get("delivered_per_s") and r.get("server_cpu_pct")]
            machine = [r.get("server_cpu_pct", 0) + ((r.get("node_cpu_pct") or [0, 0])[1] or 0) + r.get("client_cpu_pct", 0)
                       for r in a]
            if ca and cb:
                self.add()
                self.add(f"At {int(float(key)):,} msg/s: CPU per delivery {statistics.median(ca):.3f} µs with 2 threads"
                         f" (roomd and its bus) against {statistics.median(cb):.3f} µs on 1 thread"
                         f" ({statistics.median(ca) / statistics.median(cb):.2f}×); roomd, its bus and roombench together"
                         f" used {statistics.median(machine):.0f} % of the machine's 200 %.")
        # The CPU budget of 2 × nats-server on this machine: what roomd (1 thread, at its knee) and
        # roombench spend per delivery, times the deliveries the target needs.
        nk, nruns = knee(self.r, "fanout-nats")
        nd = median(nruns, "delivered_per_s") if nruns else None
        if rruns and nd:
            server = statistics.median([r["server_cpu_pct"] / r["delivered_per_s"] for r in rruns
                                        if r.get("delivered_per_s") and r.get("server_cpu_pct")])
            client = statistics.median([r["client_cpu_pct"] / r["delivered_per_s"] for r in rruns
                                        if r.get("delivered_per_s") and r.get("client_cpu_pct")])
            for factor, issue in ((2, "issue 12"), (3, "issue 37")):
                target = factor * nd
                self.add()
                need = target * (server + client)
                if need > 200:
                    verdict = ("and the machine has 200 %: on this machine the target is out of reach of any server that"
                               " spends what roomd spends per delivery, however many threads it runs")
                elif target * server > 100:
                    verdict = ("within the machine's 200 %, but roomd's share alone"
                               f" ({target * server:.0f} % of a core) is more than its one service thread has; a second"
                               " thread (h) costs CPU per delivery of its own and shares the cores with roombench")
                else:
                    verdict = ("within the machine's 200 %, and roomd's share"
                               f" ({target * server:.0f} % of a core) fits its one service thread")
                self.add(f"**The CPU budget of the {factor}× target ({issue}).** {factor} × nats-server is"
                         f" {target / 1e6:.1f}M deliveries/s. At (b)'s knee roomd spends {server * 1e4:.3f} µs of CPU per"
                         f" delivery and roombench, receiving, {client * 1e4:.3f} µs: {target / 1e6:.1f}M/s needs about"
                         f" {need:.0f} % of a core for the two together, {verdict} (at nats-server's knee, nats-server"
                         f" used {fpct(median(nruns, 'server_cpu_pct'))} and roombench"
                         f" {fpct(median(nruns, 'client_cpu_pct'))}).")
        self.add()

    def profile(self):
        d = self.a.profile_dir
        if not d or not os.path.isdir(d):
            return
        names = [n for n in ("fanout", "idle", "taps") if os.path.isdir(os.path.join(d, n))]
        if not names:
            return
        self.add("## Where roomd's time goes: perf in this run")
        self.add()
        self.add("`perf record -F 999 -g` on roomd during a step run for the profile alone (perf's own overhead slows"
                 " it, so its figures are not in the tables above); shares are of roomd's samples. Other scenarios:"
                 " `scripts/bench.sh profile fanout|rooms|idle|storm|speakers`.")
        self.add()
        for name in names:
            def read(file):
                try:
                    return [line.rstrip() for line in open(os.path.join(d, name, file)) if line.strip()]
                except OSError:
                    return []
            what = (read("what") or [name])[0]
            seconds = (read("seconds") or ["?"])[0]
            self.add(f"### {what}, {seconds} s of samples")
            self.add()
            for title, file in (("By library (own samples)", "dso.txt"), ("Top functions by own samples", "self.txt"),
                                ("roomd's functions with everything they call (children, self)", "children.txt")):
                lines = read(file)
                if not lines:
                    continue
                self.add(f"{title}:")
                self.add()
                self.add("```")
                for line in lines:
                    self.add(" ".join(line.split()))
                self.add("```")
                self.add()

    def model(self):
        """The multi-core model (scripts/bench/model.md), written from measured costs; then its
        predictions again from this run's (b): c_d and u re-measured, c_x as model.md gives it."""
        self.include("model.md")
        steps = self.g("fanout-roomd", "fanout")
        rk, rruns = knee(self.r, "fanout-roomd")
        peaks = [(median(runs, "delivered_per_s"), key) for key, runs in steps.items()
                 if median(runs, "delivered_per_s")]
        if not (rruns and peaks):
            return
        peak, peak_key = max(peaks)
        rd = median(rruns, "delivered_per_s")
        c_d = 1e6 / peak  # µs of a core per delivery: the most the pinned core delivered in any step
        u = rd * c_d / 1e6
        c_x, n_receivers = 18.0, 1000

        def knee_at(threads):  # one thread has no hand-over
            return u * 1e6 / (c_d * n_receivers / threads + (c_x if threads > 1 else 0))
        predicted = ", ".join(f"{n} threads **{fint(round(knee_at(n), -2))}** msg/s"
                              f" ({knee_at(n) * n_receivers / 1e6:.1f}M deliveries/s)" for n in (2, 8, 16))
        self.add(f"**With this run's inputs.** `c_d` = one core ÷ the most (b)'s roomd delivered in a step"
                 f" ({fint(peak)}/s at {int(float(peak_key)):,} msg/s, median) = **{c_d:.3f} µs**; u = (b)'s knee"
                 f" × `c_d` = {fint(rd)}/s × {c_d:.3f} µs = **{u:.2f}**; `c_x` = {c_x:.0f} µs as above (not"
                 f" re-measured: a pinned run puts both threads on one core). The knee, R = {n_receivers:,}:"
                 f" {predicted}; on 1 thread it is (b)'s, {rk:,} msg/s.")
        self.add()

    def levers(self):
        self.include("levers.md")

    def include(self, name):
        """A Markdown file beside this script, as it is."""
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name)
        try:
            text = open(path).read().rstrip()
        except OSError:
            return
        self.add(text)
        self.add()

    def micro(self):
        timed = [r for r in self.r if r.get("scenario") == "micro"]
        counted = {r.get("case"): r for r in self.r if r.get("scenario") == "micro-valgrind"}
        if not timed:
            return
        self.add("## Microbenchmarks (hot paths, in-process)")
        self.add()
        self.add("`roombench micro`: roomd's own code called in-process (no sockets); ns/op is the median of the"
                 " timed rounds. Instructions and allocations per op (valgrind) only with `MICRO_VALGRIND=1`.")
        self.add()
        self.add("| case | what | bytes | ns/op | instructions/op | allocations/op |")
        self.add("|---|---|---|---|---|---|")
        for r in timed:
            v = counted.get(r.get("case"))
            ins = alloc = "–"
            if v:
                ops = v["iterations"] - v["baseline_iterations"]
                ins = fint((v["instructions"] - v["instructions_baseline"]) / ops)
                alloc = f"{(v['allocs'] - v['allocs_baseline']) / ops:.2f}"
            ns = r.get("ns_per_op")
            self.add(f"| {r.get('case')} | {r.get('what', '')} | {fint(r.get('bytes'))}"
                     f" | {'–' if ns is None else (f'{ns:,.0f}' if ns >= 100 else f'{ns:.1f}')} | {ins} | {alloc} |")
        self.add()

    def method(self):
        self.add("## How it is measured")
        self.add()
        self.add("- **Load tool**: `roombench` (Sources/roombench), one process, one thread, libwebsockets RAW client"
                 " sockets on libev (epoll); it does the WebSocket framing itself and looks only at frame headers,"
                 " JSON-RPC ids and a `~T<µs><step><sender>` marker at the start of each message text.")
        self.add("- **roomd**: the release build, `config/roles.json` with `messages_per_second`/`message_burst`"
                 " raised to 1,000,000 and `max_outbound_bytes` to 4 MiB; a fresh process per step and run.")
        self.add("- **nats-server** (the competitor): Debian's package, a fresh process per step with"
                 " `websocket { listen: \"127.0.0.1:P\", no_tls: true }` and the monitoring port (`/varz`),"
                 " everything else default. roombench's NATS mode: each receiver opens a WebSocket, sends"
                 " `CONNECT {\"verbose\":false,\"pedantic\":false}`, `SUB room.x <sid>` and `PING`, and counts as"
                 " subscribed at its `PONG`; the sender `PUB`s 100-byte payloads carrying the same marker as roomd's"
                 " broadcast text; receivers parse `MSG` lines across frames and answer server `PING`s."
                 " *bus out ÷ delivered* (nats-server's `out_msgs` over the step ÷ deliveries counted) checks the count.")
        self.add("- **lws mirror** (a floor, not a competitor): `libwebsockets-test-server`, `lws-mirror-protocol`;"
                 " it is a throttled demo server that echoes to every client (echoes to the sender are not counted).")
        self.add("- CPU is % of one core (200 % = both cores); server CPU and RSS come from /proc.")
        self.add("- The fan-out profile above is taken in the run itself; `scripts/bench.sh profile"
                 " fanout|rooms|idle|storm|speakers` profiles one scenario on its own. The written findings of earlier"
                 " profiles are in git history (`scripts/bench-findings.md`); they predate libev and flow control.")
        self.add()

    def commands(self):
        self.add("## Command lines of this run")
        self.add()
        self.add("Per step, the first run's command (later runs differ in ports and pids only).")
        self.add()
        self.add("```sh")
        try:
            for line in open(self.a.commands):
                self.add(line.rstrip("\n"))
        except OSError:
            pass
        self.add("```")
        self.add()

    def render(self):
        self.header()
        self.targets()
        self.summary()
        self.fanout()
        self.deflate()
        self.storm()
        self.rooms()
        self.hooks()
        self.idle()
        self.speakers()
        self.poll()
        self.audience()
        self.stage()
        self.synthetic()
        self.feed()
        self.testmode()
        self.waiting()
        self.chatclear()
        self.cluster()
        self.threads()
        self.model()
        self.profile()
        self.levers()
        self.micro()
        self.method()
        self.commands()
        return "\n".join(self.lines)


def FANOUT_N(records):
    for r in records:
        if r.get("scenario") == "fanout" and "receivers" in r:
            return f"{r['receivers']:,}"
    return "1,000"


def cmd_render(args):
    records = load(args.results)
    text = Doc(records, args).render()
    with open(args.out, "w") as f:
        f.write(text)
    print(f"report.py: wrote {args.out} ({len(records)} results)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("annotate")
    a.add_argument("--section", required=True)
    a.add_argument("--key", required=True)
    a.add_argument("--run", type=int, required=True)
    a.add_argument("--status", type=int, default=0)
    a.add_argument("--varz-before", default="")
    a.add_argument("--varz-after", default="")
    a.add_argument("--scenario", default="")
    a.add_argument("--error", default="")
    ab = sub.add_parser("ab")
    ab.add_argument("--results", required=True)
    ab.add_argument("--a", required=True)
    ab.add_argument("--b", required=True)
    h = sub.add_parser("held")
    h.add_argument("--results", required=True)
    h.add_argument("--section", required=True)
    h.add_argument("--key", required=True)
    k = sub.add_parser("knee")
    k.add_argument("--results", required=True)
    k.add_argument("--section", required=True)
    r = sub.add_parser("render")
    r.add_argument("--results", required=True)
    r.add_argument("--commands", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--elapsed", default="0")
    r.add_argument("--load", default="?")
    r.add_argument("--revision", default="?")
    r.add_argument("--versions", default="?")
    r.add_argument("--runs", default="3")
    r.add_argument("--step-s", default="10")
    r.add_argument("--quick", default="0")
    r.add_argument("--profile-dir", default=None)
    r.add_argument("--pinned", default="0")
    r.add_argument("--note", default="")
    args = p.parse_args()
    {"annotate": cmd_annotate, "ab": cmd_ab, "held": cmd_held, "knee": cmd_knee, "render": cmd_render}[args.command](args)


if __name__ == "__main__":
    main()
