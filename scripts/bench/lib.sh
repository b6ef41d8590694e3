# shellcheck shell=bash
# Shared by scripts/bench.sh and scripts/bench/*.sh: the work directory, the
# bench template, starting and stopping servers (roomd, nats-server, the lws
# mirror) on 127.0.0.1, and one bounded roombench run whose JSON lines are
# tagged (section, key, run) into $RESULTS. Every process started here is
# stopped on exit (trap cleanup EXIT).

BUILD_DIR=${BUILD_DIR:-.build/release}
ROOMD="$BUILD_DIR/roomd"
BENCH="$BUILD_DIR/roombench"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPORT_PY="$LIB_DIR/report.py"

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

for binary in "$ROOMD" "$BENCH"; do
    [ -x "$binary" ] || die "$binary not found: run 'swift build -c release' (or make bench)"
done

# apt_install PACKAGE COMMAND-PATH...: installs PACKAGE when none of the paths is executable.
apt_install() {
    local package=$1 path
    shift
    for path in "$@"; do [ -x "$path" ] && return 0; done
    log "installing $package with apt"
    $SUDO apt-get update -qq
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$package" >/dev/null
}

# curl reads nats-server's /varz (roombench --varz, natsvarz.sh) and roomd's /healthz.
apt_install curl /usr/bin/curl
# The competitor (nats-server over WebSocket; Debian puts it in /usr/sbin) and the floor (lws mirror).
apt_install nats-server /usr/sbin/nats-server /usr/bin/nats-server "$(command -v nats-server 2>/dev/null || echo /nonexistent)"
NATS_SERVER=$(command -v nats-server 2>/dev/null || echo /usr/sbin/nats-server)
[ -x "$NATS_SERVER" ] || die "nats-server is not installed"
apt_install libwebsockets-test-server "$(command -v libwebsockets-test-server 2>/dev/null || echo /nonexistent)"
MIRROR=$(command -v libwebsockets-test-server) || die "libwebsockets-test-server is not installed"

# The feed section (m): wrk is its load tool, nginx the static-file baseline (Debian's both).
apt_install wrk /usr/bin/wrk
apt_install nginx /usr/sbin/nginx

# Thousands of sockets on each side: the open-file limit up to the hard limit
# (20,000 in this sandbox: a cap per process, so at most ~19,000 peers per step).
FD_HARD=$(ulimit -Hn)
[ "$FD_HARD" = unlimited ] && FD_HARD=1048576
ulimit -n "$FD_HARD"

WORK=$(mktemp -d /tmp/roombench.XXXXXX)
RESULTS="$WORK/results.jsonl"
COMMANDS="$WORK/commands.txt"
: >"$RESULTS"
echo "ulimit -n $FD_HARD" >"$COMMANDS"
# PIN=1: every server on CPU 0, roombench on CPU 1 (one core each, as "pinned" in issue 12);
# by default both share both cores.
SERVER_CPU=(env)
CLIENT_CPU=(env)
if [ "${PIN:-0}" = 1 ]; then
    command -v taskset >/dev/null || die "PIN=1 needs taskset (util-linux)"
    SERVER_CPU=(taskset -c 0)
    CLIENT_CPU=(taskset -c 1)
    echo "# PIN=1: servers under taskset -c 0, roombench under taskset -c 1" >>"$COMMANDS"
fi
SERVER_PIDS=()   # everything serving the current step
PROFILER_PID=""
VALGRIND_PIDS=()
NATS_MON=""      # http://127.0.0.1:P of the current nats-server (monitoring: /varz)

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

stop_servers() {
    local pid
    for pid in "${SERVER_PIDS[@]}"; do stop_pid "$pid"; done
    SERVER_PIDS=()
    NATS_MON=""
}

cleanup() {
    local status=$?
    stop_pid "$PROFILER_PID"
    stop_servers
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
# rate limit raised (one sender sends thousands of broadcasts/s), 4 MiB of
# outbound queue per connection, and no per-address cap of unjoined
# connections (roombench opens every connection from 127.0.0.1, then joins).
head -c 48 /dev/urandom | base64 | tr -d '\n' >"$WORK/secret"
chmod 600 "$WORK/secret"
TEMPLATE="$WORK/bench-roles.json"
python3 - config/roles.json "$TEMPLATE" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
limits = t.setdefault("settings", {}).setdefault("limits", {})
limits.update(messages_per_second=1000000, message_burst=1000000, max_outbound_bytes=4194304,
              max_unjoined_per_address=1000000)
json.dump(t, open(sys.argv[2], "w"), indent=2)
PY
"$ROOMD" check-config "$TEMPLATE" >/dev/null 2>&1 || die "the bench template does not validate"
SPEAKER_INTERVAL_MS=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("settings", {}).get("active_speakers", {}).get("interval_ms", 1000))' \
    "$TEMPLATE" 2>/dev/null || echo 1000)

# note_command LINE: a server command line for the report, once.
note_command() { grep -qxF -- "$1" "$COMMANDS" || echo "$1" >>"$COMMANDS"; }

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_port PORT PID WHAT: until 127.0.0.1:PORT accepts (10 s), or the process died.
wait_port() {
    local port=$1 pid=$2 what=$3
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        kill -0 "$pid" 2>/dev/null || die "$what exited"
        sleep 0.1
    done
    die "$what does not accept on 127.0.0.1:$port after 10 s"
}

# start_roomd NAME [ARGS...]: a fresh roomd on a free port (stops the previous
# servers unless KEEP_SERVERS=1); sets SERVER_PID and URL.
start_roomd() {
    local name=$1 out="$WORK/$1.out"
    shift
    [ "${KEEP_SERVERS:-0}" = 1 ] || stop_servers
    # ROOMD_ARGS: extra flags for every roomd of the run (e.g. a service thread count).
    # shellcheck disable=SC2086
    set -- "$@" ${ROOMD_ARGS:-}
    note_command "$ROOMD --config $TEMPLATE --port 0 --secret-file $WORK/secret --log-level warning $*"
    : >"$out"  # exists before the child opens it
    "${SERVER_CPU[@]}" "$ROOMD" --config "$TEMPLATE" --port 0 --secret-file "$WORK/secret" --log-level warning "$@" \
        >"$out" 2>"$WORK/$name.err" &
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    local port=""
    for _ in $(seq 100); do
        port=$(sed -n 's#^roomd listening on ws://127\.0\.0\.1:\([0-9]*\)/ws$#\1#p' "$out" || true)
        [ -n "$port" ] && break
        kill -0 "$SERVER_PID" 2>/dev/null || die "roomd exited: $(tail -5 "$WORK/$name.err")"
        sleep 0.1
    done
    [ -n "$port" ] || die "roomd did not print its listening line within 10 s"
    URL="ws://127.0.0.1:$port/ws"
}

# start_nats NAME [ARGS...]: a fresh nats-server with its WebSocket listener on
# 127.0.0.1 (no TLS), client and monitoring ports on 127.0.0.1 too; sets
# SERVER_PID, URL (the WebSocket), NATS_URL (nats://, for roomd --cluster) and NATS_MON.
start_nats() {
    local name=$1 ws client mon conf="$WORK/$1.conf"
    shift
    [ "${KEEP_SERVERS:-0}" = 1 ] || stop_servers
    ws=$(free_port); client=$(free_port); mon=$(free_port)
    cat >"$conf" <<CONF
listen: "127.0.0.1:$client"
http: "127.0.0.1:$mon"
websocket {
    listen: "127.0.0.1:$ws"
    no_tls: true
}
CONF
    note_command "$NATS_SERVER -c NAME.conf $*   # NAME.conf: $(sed 's/[0-9]\{4,5\}"/PORT"/' "$conf" | tr -s '\n ' ' ')"
    "${SERVER_CPU[@]}" "$NATS_SERVER" -c "$conf" "$@" >"$WORK/$name.log" 2>&1 &
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    wait_port "$ws" "$SERVER_PID" "nats-server ($(tail -3 "$WORK/$name.log"))"
    wait_port "$mon" "$SERVER_PID" "nats-server monitoring"
    URL="ws://127.0.0.1:$ws/"
    NATS_URL="nats://127.0.0.1:$client"
    NATS_MON="http://127.0.0.1:$mon"
}

# start_mirror NAME: libwebsockets-test-server on a free port; sets SERVER_PID and URL.
start_mirror() {
    local name=$1 port
    [ "${KEEP_SERVERS:-0}" = 1 ] || stop_servers
    port=$(free_port)
    note_command "$MIRROR --port=PORT --interface=lo"
    "${SERVER_CPU[@]}" "$MIRROR" --port="$port" --interface=lo >"$WORK/$name.log" 2>&1 &  # lo: 127.0.0.1 only (without it, every interface)
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    wait_port "$port" "$SERVER_PID" "the mirror server"
    URL="ws://127.0.0.1:$port/"
}

# nats_varz: "in_msgs out_msgs" of the current nats-server (scripts/bench/natsvarz.sh).
nats_varz() { "$LIB_DIR/natsvarz.sh" "$NATS_MON"; }

# step SECTION KEY RUN LIMIT ARGS...: one roombench run (bounded by LIMIT s),
# its JSON lines tagged with section, key and run appended to $RESULTS (with
# nats-server's in/out message counts before and after when one is running).
step() {
    local section=$1 key=$2 run=$3 limit=$4 varz0="" varz1="" status=0
    shift 4
    local tmp="$WORK/step.jsonl"
    : >"$tmp"
    [ -n "$NATS_MON" ] && varz0=$(nats_varz || true)
    # The command line, once per (section, key): later runs differ only in ports and pids.
    grep -qF "# $section $key" "$COMMANDS" || echo "$BENCH $* --json FILE   # $section $key" >>"$COMMANDS"
    timeout --kill-after=5 "$limit" "${CLIENT_CPU[@]}" "$BENCH" "$@" --json "$tmp" >"$WORK/last.out" 2>&1 || status=$?
    [ -n "$NATS_MON" ] && varz1=$(nats_varz || true)
    sed 's/^/    /' "$WORK/last.out" | tail -4 >&2
    cat "$WORK/last.out" >>"$WORK/roombench.log"
    [ "$status" -eq 0 ] || log "roombench exited with $status ($section $key run $run; continuing)"
    # A server that died during the step is a failed run, whatever roombench made of it.
    local pid crashed=""
    for pid in "${SERVER_PIDS[@]}"; do kill -0 "$pid" 2>/dev/null || crashed+="${crashed:+, }pid $pid"; done
    local error
    error=$(grep -h '^roombench: ' "$WORK/last.out" | tail -1 | cut -c12-200 || true)
    if [ -n "$crashed" ]; then
        log "a server died during the step ($crashed): logs in $WORK"
        error="a server died during the step${error:+; $error}"
        [ "$status" -ne 0 ] || status=99
    fi
    python3 "$REPORT_PY" annotate --section "$section" --key "$key" --run "$run" --status "$status" \
        --scenario "$1" --error "$error" --varz-before "$varz0" --varz-after "$varz1" <"$tmp" >>"$RESULTS"
}

roomd_args() { echo --url "$URL" --secret-file "$WORK/secret" --server-pid "$SERVER_PID"; }
mirror_args() { echo --raw --url "$URL" --server-pid "$SERVER_PID" --label lws-mirror; }
nats_args() { echo --protocol nats --url "$URL" --server-pid "$SERVER_PID" --label nats-server --varz "$NATS_MON"; }
