#!/usr/bin/env bash
# scripts/bench.sh profile [fanout|rooms|hooks|idle|storm|speakers]: where does roomd's
# time go? perf samples roomd (call graphs) during one scenario; the top symbols
# go to $PROFILE_DIR/<scenario>.txt. Without perf (or PROFILER=callgrind):
# valgrind --tool=callgrind on a small fan-out.
#   PROFILE_DIR [/tmp/roombench-profile]  FANOUT_RECEIVERS [1000] FANOUT_RATE [4000]
#   ROOMS [1000] PER_ROOM [10] IDLE_PEERS [10000] STORM_PEERS [5000] SPEAKER_PEERS [1000]
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/bench/lib.sh
. scripts/bench/lib.sh
# shellcheck disable=SC2046

SCENARIO=${1:-fanout}
PROFILE_DIR=${PROFILE_DIR:-/tmp/roombench-profile}
FANOUT_RECEIVERS=${FANOUT_RECEIVERS:-1000}
FANOUT_RATE=${FANOUT_RATE:-4000}
ROOMS=${ROOMS:-1000}
PER_ROOM=${PER_ROOM:-10}
IDLE_PEERS=${IDLE_PEERS:-10000}
STORM_PEERS=${STORM_PEERS:-5000}
SPEAKER_PEERS=${SPEAKER_PEERS:-1000}
HOOK_DELAY_MS=${HOOK_DELAY_MS:-5}
mkdir -p "$PROFILE_DIR"

bench() {  # bench SECONDS ARGS...: one bounded roombench run
    local limit=$1
    shift
    timeout --kill-after=5 "$limit" "$BENCH" "$@" || log "roombench exited with $? (continuing)"
}

if [ "${PROFILER:-perf}" = perf ] && command -v perf >/dev/null; then
    if [ "$SCENARIO" = hooks ]; then  # (r)'s rooms: every broadcast through a hook answering in HOOK_DELAY_MS
        # shellcheck source=scripts/bench/sections.sh
        . scripts/bench/sections.sh
        start_hook answer
        python3 - "$TEMPLATE" "$WORK/roles-hooks.json" "$HOOK_URL" <<'PY'
import json, sys
template = json.load(open(sys.argv[1]))
template.setdefault("settings", {})["hooks"] = {"url": sys.argv[3], "events": ["message"], "timeout_ms": 1000}
json.dump(template, open(sys.argv[2], "w"))
PY
        TEMPLATE="$WORK/roles-hooks.json"
    fi
    start_roomd "profile-$SCENARIO"
    # profile_window DELAY SECONDS: perf on roomd from DELAY s for SECONDS s, in the background.
    profile_window() {
        (sleep "$1"; exec perf record -g -p "$SERVER_PID" -o "$PROFILE_DIR/$SCENARIO.data" -- sleep "$2") \
            >/dev/null 2>&1 &
        PROFILER_PID=$!
    }
    # shellcheck disable=SC2046
    case "$SCENARIO" in
        fanout) profile_window 3 8
            bench 60 fanout $(roomd_args) --receivers "$FANOUT_RECEIVERS" --rates "$FANOUT_RATE" --duration 10 ;;
        rooms) profile_window 5 6  # inside the sending window, before the teardown
            bench 70 rooms $(roomd_args) --rooms "$ROOMS" --per-room "$PER_ROOM" --rate 1 --duration 12 ;;
        hooks) profile_window 5 6
            bench 70 rooms $(roomd_args) --rooms "$ROOMS" --per-room "$PER_ROOM" --rate 1 --duration 12
            stop_hook ;;
        idle) profile_window 16 10  # the keepalive pings fall 20 s after each join
            bench 120 idle $(roomd_args) --peers "$IDLE_PEERS" --window 30 --join-timeout 40 --max-server-rss-mib 14000 ;;
        storm) profile_window 0 15
            bench 70 join-storm $(roomd_args) --peers "$STORM_PEERS" --join-timeout 40 ;;
        speakers) profile_window 12 5  # inside the silent window (audio-level calls, no pushes)
            bench 90 speakers $(roomd_args) --peers "$SPEAKER_PEERS" --speakers 10 --rate 10 \
                --window 5 --quiet-window 8 --interval-ms "$SPEAKER_INTERVAL_MS" ;;
        *) die "profile: unknown scenario $SCENARIO (fanout, rooms, hooks, idle, storm, speakers)" ;;
    esac
    wait "$PROFILER_PID" 2>/dev/null || true
    PROFILER_PID=""
    perf report -i "$PROFILE_DIR/$SCENARIO.data" --no-children --sort dso,symbol --stdio 2>/dev/null \
        | grep -v '^#' | grep '%' | grep -v '^ *[-|]' | head -40 | tee "$PROFILE_DIR/$SCENARIO.txt" || true
else
    command -v valgrind >/dev/null || die "neither perf nor valgrind is installed"
    log "valgrind --tool=callgrind on a small fan-out (slow)"
    # valgrind 3.19 cannot read the DWARF of Swift 6 binaries: profile a copy without it.
    cp "$ROOMD" "$WORK/roomd-nodebug"
    strip --strip-debug "$WORK/roomd-nodebug" 2>/dev/null || true
    : >"$WORK/cg.out"
    valgrind --tool=callgrind --callgrind-out-file="$PROFILE_DIR/callgrind.out" \
        "$WORK/roomd-nodebug" --config "$TEMPLATE" --port 0 --secret-file "$WORK/secret" --log-level warning \
        >"$WORK/cg.out" 2>"$WORK/cg.err" &
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    for _ in $(seq 600); do grep -q listening "$WORK/cg.out" && break; sleep 0.1; done
    URL=$(sed -n 's#^roomd listening on \(ws://.*\)$#\1#p' "$WORK/cg.out")
    [ -n "$URL" ] || die "roomd under valgrind did not start"
    bench 120 fanout --url "$URL" --secret-file "$WORK/secret" --server-pid "$SERVER_PID" --receivers 200 \
        --rates 100,200 --duration 4 --connect-timeout 30 --join-timeout 30
    stop_servers
    callgrind_annotate "$PROFILE_DIR/callgrind.out" 2>/dev/null | head -40 | tee "$PROFILE_DIR/callgrind.txt" || true
fi
