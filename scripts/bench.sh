#!/usr/bin/env bash
# The standard benchmark set (`make bench`): roomd against libwebsockets'
# mirror server, measured by roombench in the same run, then
# docs/BENCHMARKS.md rewritten from scratch with the figures.
#
#   scripts/bench.sh            run the standard set (expects a release build)
#   scripts/bench.sh profile [fanout|rooms|idle|storm|speakers]
#                               perf profile of roomd during one scenario (PROFILER=callgrind,
#                               or no perf: valgrind --tool=callgrind on a small fan-out)
#
# Environment (defaults in brackets):
#   BUILD_DIR [.build/release]  where roomd and roombench are
#   OUT [docs/BENCHMARKS.md]    the report
#   KEEP=1                      keep the work directory (logs, results.jsonl)
#   WAIT_QUIET [20]             seconds to wait at most for other processes to calm down first
#   IDLE_WINDOW [31]            seconds of idleness measured on roomd (covers a whole keepalive round)
#   IDLE_RSS_LIMIT_MIB [12288]  stop the idle scenario if roomd's RSS goes above this (safety)
#   STORM_PEERS [5000] FANOUT_RECEIVERS [1000] FANOUT_RATES [250,500,1000,2000,3000,4000,5000,6000,8000]
#   MIRROR_RATES [25,50,100,150,200,300] ROOMS [1000] PER_ROOM [10] IDLE_PEERS [10000]
#   SPEAKER_PEERS [1000] SPEAKERS [10] SPEAKER_RATE [10]   (e): room size, speakers, audio-level calls/s each
#   POLL_PEERS [10000] POLL_VOTERS [5000] POLL_SPREAD [1]    (f): viewers in the room, voters, seconds to vote in
#   MICRO [1]                   0 skips the microbenchmarks (roombench micro, then under valgrind)
#   MICRO_ITERATIONS [5000] MICRO_ROUNDS [7]   ops per timed round, rounds (ns/op is the median)
#
# Every process started here is stopped on exit (trap); everything listens on
# 127.0.0.1 only; every step has a timeout.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-.build/release}
OUT=${OUT:-docs/BENCHMARKS.md}
STORM_PEERS=${STORM_PEERS:-5000}
FANOUT_RECEIVERS=${FANOUT_RECEIVERS:-1000}
FANOUT_RATES=${FANOUT_RATES:-250,500,1000,2000,3000,4000,5000,6000,8000}
MIRROR_RATES=${MIRROR_RATES:-25,50,100,150,200,300}
ROOMS=${ROOMS:-1000}
PER_ROOM=${PER_ROOM:-10}
IDLE_PEERS=${IDLE_PEERS:-10000}
WAIT_QUIET=${WAIT_QUIET:-20}
IDLE_RSS_LIMIT_MIB=${IDLE_RSS_LIMIT_MIB:-12288}
IDLE_WINDOW=${IDLE_WINDOW:-31}
SPEAKER_PEERS=${SPEAKER_PEERS:-1000}
SPEAKERS=${SPEAKERS:-10}
SPEAKER_RATE=${SPEAKER_RATE:-10}
MICRO=${MICRO:-1}
POLL_PEERS=${POLL_PEERS:-10000}
POLL_VOTERS=${POLL_VOTERS:-5000}
POLL_SPREAD=${POLL_SPREAD:-1}
MICRO_ITERATIONS=${MICRO_ITERATIONS:-5000}
MICRO_ROUNDS=${MICRO_ROUNDS:-7}
MODE=${1:-run}

ROOMD="$BUILD_DIR/roomd"
BENCH="$BUILD_DIR/roombench"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

for binary in "$ROOMD" "$BENCH"; do
    [ -x "$binary" ] || die "$binary not found: run 'swift build -c release' (or make bench)"
done

# The lws mirror server is the baseline.
if ! command -v libwebsockets-test-server >/dev/null; then
    log "installing libwebsockets-test-server with apt"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libwebsockets-test-server >/dev/null
fi
MIRROR=$(command -v libwebsockets-test-server) || die "libwebsockets-test-server is not installed"

# Thousands of sockets on each side: raise the open-file limit (inherited by children).
need=$((IDLE_PEERS > ROOMS * PER_ROOM ? IDLE_PEERS : ROOMS * PER_ROOM))
need=$((need > POLL_PEERS + 1 ? need : POLL_PEERS + 1))
need=$((need + 1024))
hard=$(ulimit -Hn)
if [ "$hard" != unlimited ] && [ "$hard" -lt "$need" ]; then
    die "open-file hard limit $hard < $need; raise it (e.g. /etc/security/limits.conf) or lower IDLE_PEERS/ROOMS"
fi
ulimit -n "$need"

WORK=$(mktemp -d /tmp/roombench.XXXXXX)
RESULTS="$WORK/results.jsonl"
COMMANDS="$WORK/commands.txt"
: >"$RESULTS"
echo "ulimit -n $need" >"$COMMANDS"
SERVER_PID=""
PROFILER_PID=""
VALGRIND_PIDS=()

stop_pid() {  # stop_pid PID: TERM, up to 5 s, then KILL
    local pid=$1
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    local status=$?
    stop_pid "$PROFILER_PID"
    stop_pid "$SERVER_PID"
    for pid in "${VALGRIND_PIDS[@]}"; do stop_pid "$pid"; done
    if [ "${KEEP:-0}" = 1 ] || [ "$status" -ne 0 ]; then
        log "work directory kept: $WORK"
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The secret (>= 32 bytes) and the bench template: the shipped roles with the
# rate limit raised (one sender sends thousands of broadcasts/s) and 4 MiB of
# outbound queue per connection.
head -c 48 /dev/urandom | base64 | tr -d '\n' >"$WORK/secret"
chmod 600 "$WORK/secret"
TEMPLATE="$WORK/bench-roles.json"
if command -v jq >/dev/null; then
    jq '.settings.limits.messages_per_second = 1000000 | .settings.limits.message_burst = 1000000
        | .settings.limits.max_outbound_bytes = 4194304' config/roles.json >"$TEMPLATE"
else
    python3 - config/roles.json "$TEMPLATE" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
limits = t.setdefault("settings", {}).setdefault("limits", {})
limits.update(messages_per_second=1000000, message_burst=1000000, max_outbound_bytes=4194304)
json.dump(t, open(sys.argv[2], "w"), indent=2)
PY
fi
"$ROOMD" check-config "$TEMPLATE" >/dev/null 2>&1 || die "the bench template does not validate"
SPEAKER_INTERVAL_MS=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("settings", {}).get("active_speakers", {}).get("interval_ms", 1000))' \
    "$TEMPLATE" 2>/dev/null || echo 1000)

# start_roomd NAME: starts roomd on a free port; sets SERVER_PID and URL.
start_roomd() {
    local name=$1 out="$WORK/$1.out"
    stop_pid "$SERVER_PID"
    echo "$ROOMD --config $TEMPLATE --port 0 --secret-file $WORK/secret --log-level warning" >>"$COMMANDS"
    : >"$out"  # exists before the child opens it
    "$ROOMD" --config "$TEMPLATE" --port 0 --secret-file "$WORK/secret" --log-level warning \
        >"$out" 2>"$WORK/$name.err" &
    SERVER_PID=$!
    local port=""
    for _ in $(seq 100); do
        port=$(sed -n 's#^roomd listening on ws://127\.0\.0\.1:\([0-9]*\)/ws$#\1#p' "$out" || true)
        [ -n "$port" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || die "roomd exited: $(cat "$WORK/$name.err")"
        sleep 0.1
    done
    [ -n "$port" ] || die "roomd did not print its listening line within 10 s"
    URL="ws://127.0.0.1:$port/ws"
    log "roomd (pid $SERVER_PID) on $URL"
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null \
        || echo $((20000 + RANDOM % 30000))
}

# start_mirror NAME: libwebsockets-test-server on a free port; sets SERVER_PID and URL.
start_mirror() {
    local name=$1 port
    stop_pid "$SERVER_PID"
    port=$(free_port)
    echo "$MIRROR --port=$port" >>"$COMMANDS"
    "$MIRROR" --port="$port" >"$WORK/$name.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        kill -0 "$SERVER_PID" 2>/dev/null || die "the mirror server exited: $(tail -3 "$WORK/$name.log")"
        sleep 0.1
    done
    URL="ws://127.0.0.1:$port/"
    log "lws mirror (pid $SERVER_PID) on $URL"
}

# bench SECONDS ARGS...: one roombench run, bounded, recorded.
bench() {
    local limit=$1
    shift
    echo "$BENCH $* --json $RESULTS" >>"$COMMANDS"
    timeout --kill-after=5 "$limit" "$BENCH" "$@" --json "$RESULTS" || log "roombench exited with $? (continuing)"
}

roomd_args() { echo --url "$URL" --secret-file "$WORK/secret" --server-pid "$SERVER_PID"; }

# micro: roomd's hot paths in-process (roombench micro), timed (ns/op), then
# counted under valgrind: instructions (callgrind, total Ir) and allocations
# (memcheck, "total heap usage: X allocs"). Each case runs twice under each
# tool, with N and N/10 ops; (total(N) − total(N/10)) ÷ (N − N/10) removes
# startup, setup, warm-up and printing. One JSON line per case goes to the results.
micro() {
    bench 60 micro --case all --iterations "$MICRO_ITERATIONS" --rounds "$MICRO_ROUNDS" --config "$TEMPLATE"
    if ! command -v valgrind >/dev/null; then
        log "valgrind is not installed: no instruction or allocation counts"
        return 0
    fi
    # valgrind 3.19 cannot read the DWARF of Swift 6 binaries: run a copy without it
    # (the symbol table stays).
    local nodebug="$WORK/roombench-nodebug" spec name n small it args cg mc
    cp "$BENCH" "$nodebug"
    strip --strip-debug "$nodebug" 2>/dev/null || true
    # case:N — N ops under valgrind (~50x slower than native; the fan-out cases are 1,000 enqueues per op).
    for spec in decode-broadcast:2000 decode-join:2000 encode-broadcast:2000 fanout-enqueue:100 fanout-dispatch:100; do
        name=${spec%%:*}
        n=${spec##*:}
        small=$((n / 10))
        for it in "$small" "$n"; do
            args=(micro --case "$name" --iterations "$it" --rounds 1 --warmup 10 --config "$TEMPLATE")
            echo "valgrind --tool=callgrind --callgrind-out-file=$WORK/cg.$name.$it $nodebug ${args[*]}" >>"$COMMANDS"
            echo "valgrind --tool=memcheck $nodebug ${args[*]}" >>"$COMMANDS"
            # The two tools in parallel (one core each).
            timeout --kill-after=5 120 valgrind --tool=callgrind --callgrind-out-file="$WORK/cg.$name.$it" \
                "$nodebug" "${args[@]}" >/dev/null 2>"$WORK/cg.$name.$it.log" &
            cg=$!
            timeout --kill-after=5 120 valgrind --tool=memcheck "$nodebug" "${args[@]}" \
                >/dev/null 2>"$WORK/mc.$name.$it.log" &
            mc=$!
            VALGRIND_PIDS=("$cg" "$mc")
            wait "$cg" || log "callgrind on micro $name exited with $?"
            wait "$mc" || log "memcheck on micro $name exited with $?"
            VALGRIND_PIDS=()
        done
        local ir0 ir1 heap0 heap1
        ir0=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$WORK/cg.$name.$small" 2>/dev/null | head -1)
        ir1=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$WORK/cg.$name.$n" 2>/dev/null | head -1)
        heap0=$(sed -n 's/.*total heap usage: \([0-9,]*\) allocs, [0-9,]* frees, \([0-9,]*\) bytes allocated.*/\1 \2/p' \
            "$WORK/mc.$name.$small.log" | tr -d , | head -1)
        heap1=$(sed -n 's/.*total heap usage: \([0-9,]*\) allocs, [0-9,]* frees, \([0-9,]*\) bytes allocated.*/\1 \2/p' \
            "$WORK/mc.$name.$n.log" | tr -d , | head -1)
        if [ -z "$ir0" ] || [ -z "$ir1" ] || [ -z "$heap0" ] || [ -z "$heap1" ]; then
            log "micro $name: no valgrind totals (see $WORK/*.$name.*); skipped"
            continue
        fi
        printf '{"scenario":"micro-valgrind","case":"%s","iterations":%d,"baseline_iterations":%d,"instructions":%s,"instructions_baseline":%s,"allocs":%s,"allocs_baseline":%s,"alloc_bytes":%s,"alloc_bytes_baseline":%s}\n' \
            "$name" "$n" "$small" "$ir1" "$ir0" "${heap1% *}" "${heap0% *}" "${heap1#* }" "${heap0#* }" >>"$RESULTS"
        log "micro $name: $(( (ir1 - ir0) / (n - small) )) instructions/op," \
            "$(( (${heap1% *} - ${heap0% *}) * 100 / (n - small) ))/100 allocations/op"
    done
}
mirror_args() { echo --raw --url "$URL" --server-pid "$SERVER_PID" --label lws-mirror; }

if [ "$MODE" = profile ]; then
    # Where does roomd's time go? scripts/bench.sh profile [fanout|rooms|idle|storm|speakers]
    # perf samples roomd (call graphs) during one scenario; the top symbols go to
    # $PROFILE_DIR/<scenario>.txt. Without perf: valgrind --tool=callgrind on a small fan-out.
    SCENARIO=${2:-fanout}
    PROFILE_DIR=${PROFILE_DIR:-/tmp/roombench-profile}
    mkdir -p "$PROFILE_DIR"
    if [ "${PROFILER:-perf}" = perf ] && command -v perf >/dev/null; then
        start_roomd "profile-$SCENARIO"
        # profile_window DELAY SECONDS: perf on roomd from DELAY s for SECONDS s, in the background.
        profile_window() {
            (sleep "$1"; exec perf record -g -p "$SERVER_PID" -o "$PROFILE_DIR/$SCENARIO.data" -- sleep "$2") \
                >/dev/null 2>&1 &
            PROFILER_PID=$!
        }
        # shellcheck disable=SC2046
        case "$SCENARIO" in
            fanout) profile_window 2 10
                bench 60 fanout $(roomd_args) --receivers "$FANOUT_RECEIVERS" --rates 2000,4000 --duration 4 ;;
            rooms) profile_window 5 6  # inside the sending window, before the teardown
                bench 70 rooms $(roomd_args) --rooms "$ROOMS" --per-room "$PER_ROOM" --rate 1 --duration 12 ;;
            idle) profile_window 26 14  # the keepalive pings of every connection fall 30 s after its join
                bench 120 idle $(roomd_args) --peers "$IDLE_PEERS" --window 40 --join-timeout 40 --max-server-rss-mib 14000 ;;
            storm) profile_window 0 15
                bench 70 join-storm $(roomd_args) --peers "$STORM_PEERS" --join-timeout 40 ;;
            speakers) profile_window 12 5  # inside the silent window (audio-level calls, no pushes)
                bench 90 speakers $(roomd_args) --peers "$SPEAKER_PEERS" --speakers "$SPEAKERS" --rate "$SPEAKER_RATE" \
                    --window 5 --quiet-window 8 --interval-ms "$SPEAKER_INTERVAL_MS" ;;
            *) die "profile: unknown scenario $SCENARIO (fanout, rooms, idle, storm, speakers)" ;;
        esac
        wait "$PROFILER_PID" 2>/dev/null || true
        PROFILER_PID=""
        perf report -i "$PROFILE_DIR/$SCENARIO.data" --no-children --sort dso,symbol --stdio 2>/dev/null \
            | grep -v '^#' | grep '%' | grep -v '^ *[-|]' | head -40 | tee "$PROFILE_DIR/$SCENARIO.txt" || true
    else
        command -v valgrind >/dev/null || die "neither perf nor valgrind is installed"
        log "valgrind --tool=callgrind on a small fan-out (slow)"
        # valgrind 3.19 cannot read the DWARF of Swift 6 binaries: profile a copy without it
        # (the symbol table stays, so functions keep their names).
        cp "$ROOMD" "$WORK/roomd-nodebug"
        strip --strip-debug "$WORK/roomd-nodebug" 2>/dev/null || true
        : >"$WORK/cg.out"
        valgrind --tool=callgrind --callgrind-out-file="$PROFILE_DIR/callgrind.out" \
            "$WORK/roomd-nodebug" --config "$TEMPLATE" --port 0 --secret-file "$WORK/secret" --log-level warning \
            >"$WORK/cg.out" 2>"$WORK/cg.err" &
        SERVER_PID=$!
        for _ in $(seq 600); do grep -q listening "$WORK/cg.out" && break; sleep 0.1; done
        URL=$(sed -n 's#^roomd listening on \(ws://.*\)$#\1#p' "$WORK/cg.out")
        [ -n "$URL" ] || die "roomd under valgrind did not start"
        bench 120 fanout --url "$URL" --secret-file "$WORK/secret" --server-pid "$SERVER_PID" --receivers 200 \
            --rates 100,200 --duration 4 --connect-timeout 30 --join-timeout 30
        stop_pid "$SERVER_PID"
        SERVER_PID=""
        callgrind_annotate "$PROFILE_DIR/callgrind.out" 2>/dev/null | head -40 | tee "$PROFILE_DIR/callgrind.txt" || true
    fi
    exit 0
fi

# machine_busy: CPU used by the whole machine over one second, in % of one core.
machine_busy() {
    local a b
    a=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat)
    sleep 1
    b=$(awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat)
    echo $(((b - a) * 100 / $(getconf CLK_TCK)))
}

# Other processes share the 2 cores: wait (bounded) until they calm down.
waited=0
busy=$(machine_busy)
while [ "$busy" -gt 25 ] && [ "$waited" -lt "$WAIT_QUIET" ]; do
    [ "$waited" -eq 0 ] && log "the machine is busy (${busy}% CPU); waiting up to ${WAIT_QUIET}s for it to calm down"
    busy=$(machine_busy)
    waited=$((waited + 1))
done

START=$(date +%s)
LOAD="$(cut -d' ' -f1-3 /proc/loadavg), ${busy}% CPU busy just before"
log "machine: $(nproc) CPUs, load $LOAD; work directory $WORK"

# shellcheck disable=SC2046  # the *_args helpers expand to several words on purpose
{
    log "(a) join storm: $STORM_PEERS peers"
    start_roomd storm
    bench 70 join-storm $(roomd_args) --peers "$STORM_PEERS" --join-timeout 40
    start_mirror storm-mirror
    bench 40 join-storm $(mirror_args) --peers "$STORM_PEERS"

    log "(b) fan-out into $FANOUT_RECEIVERS receivers"
    start_roomd fanout
    bench 120 fanout $(roomd_args) --receivers "$FANOUT_RECEIVERS" --rates "$FANOUT_RATES" --duration 3 --drain 3
    start_mirror fanout-mirror
    bench 90 fanout $(mirror_args) --receivers "$FANOUT_RECEIVERS" --rates "$MIRROR_RATES" --duration 3 --drain 3

    log "(c) $ROOMS rooms x $PER_ROOM peers"
    start_roomd rooms
    bench 70 rooms $(roomd_args) --rooms "$ROOMS" --per-room "$PER_ROOM" --rate 1 --duration 10 --join-timeout 30

    log "(d) $IDLE_PEERS idle peers"
    start_roomd idle
    bench $((IDLE_WINDOW + 90)) idle $(roomd_args) --peers "$IDLE_PEERS" --window "$IDLE_WINDOW" --join-timeout 40 \
        --max-server-rss-mib "$IDLE_RSS_LIMIT_MIB"
    start_mirror idle-mirror
    bench 40 idle $(mirror_args) --peers "$IDLE_PEERS" --window 10

    log "(e) active speakers: $SPEAKER_PEERS peers, $SPEAKERS speaking at $SPEAKER_RATE Hz"
    start_roomd speakers
    bench 90 speakers $(roomd_args) --peers "$SPEAKER_PEERS" --speakers "$SPEAKERS" --rate "$SPEAKER_RATE" \
        --window 10 --quiet-window 5 --interval-ms "$SPEAKER_INTERVAL_MS" --join-timeout 30

    log "(f) polls: $POLL_PEERS viewers, $POLL_VOTERS voting within $POLL_SPREAD s"
    start_roomd poll
    bench 120 poll $(roomd_args) --peers "$POLL_PEERS" --voters "$POLL_VOTERS" --spread "$POLL_SPREAD" --window 3 \
        --join-timeout 40
}
stop_pid "$SERVER_PID"
SERVER_PID=""

if [ "$MICRO" = 1 ]; then
    log "micro: hot paths in-process (ns/op), then instructions and allocations under valgrind"
    micro
fi

ELAPSED=$(($(date +%s) - START))
REVISION=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then REVISION="$REVISION + local changes"; fi
FINDINGS_ARGS=()
[ -f scripts/bench-findings.md ] && FINDINGS_ARGS=(--findings scripts/bench-findings.md)
"$BENCH" report --results "$RESULTS" --commands "$COMMANDS" --out "$OUT" \
    --elapsed "$ELAPSED" --load "$LOAD" --revision "$REVISION" "${FINDINGS_ARGS[@]}"
log "done in ${ELAPSED}s: $OUT"
