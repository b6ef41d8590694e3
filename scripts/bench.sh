#!/usr/bin/env bash
# The standard benchmark set (`make bench`): roomd, nats-server over WebSocket
# (the competitor baseline) and libwebsockets' mirror server (a floor: a
# throttled demo server, not a competitor), measured by roombench in the same
# run; then docs/BENCHMARKS.md rewritten from scratch from that run alone.
#
#   scripts/bench.sh            the standard set (expects a release build)
#   QUICK=1 scripts/bench.sh    the same steps, 1 run each, shorter and smaller (checks the machinery, ~2 min)
#   scripts/bench.sh profile [fanout|rooms|idle|storm|speakers]
#                               perf profile of roomd during one scenario (scripts/bench/profile.sh)
#   scripts/bench/ab.sh A B     one lever: two roomd builds on the fan-out, runs alternating
#
# The full set takes about 60 minutes on the 2-core machine (52 min at 55046fd
# before (b′) joined it, ~7 min; fan-out ladders stop at the first rate not held,
# and start no new rate 14 min into the run).
#
# Method: every load step lasts STEP_S (10) seconds against a fresh server
# started for that step alone; every step runs RUNS (3) times; the report
# gives the median and min–max of the runs. Everything listens on 127.0.0.1
# only, every step has a timeout, every process started is stopped on exit.
#
# Environment (defaults in brackets; QUICK=1 changes the ones marked *):
#   BUILD_DIR [.build/release]  OUT [docs/BENCHMARKS.md]  KEEP=1 keeps the work directory
#   NOTE [none]                 a file whose text heads the report as a quote: the runner's words on what is new
#   ROOMD_ARGS []               extra flags for every roomd started (scripts/bench/ab.sh compares two settings)
#   PIN [0]                     1: servers on CPU 0, roombench on CPU 1 (one core each) instead of sharing both
#   RUNS* [3]  STEP_S* [10]  DRAIN_S [3]   runs per step, seconds of load per step, seconds to drain
#   WAIT_QUIET [20]             seconds to wait at most for other processes to calm down first
#   FANOUT_RECEIVERS [1000]     (b) receivers; the sender sends 100-byte messages
#   ROOMD_RATES* [3000,5000,7000,8000,9000,10000,11000,12000,13000,14000; PIN=1: 3000,3500,4000,4500,5000,5500,6000,7000,8000]
#   NATS_RATES* [3000,4000,4500,5000,5500,6000,6500,7000,8000,9000,10000; PIN=1: 2000,2500,3000,3500,4000,4500,5000,6000]
#                               (b) msg/s ladders, each finest near its knee in the last run; a ladder
#                               stops after the first rate not held in median
#   FANOUT_BUDGET_S [840]       (b) no new ladder rate after this many seconds since the start (keeps the run ≤ 35 min)
#   MIRROR_RATES* [100,200]     (b) the lws mirror (floor)
#   OVERLOAD_S* [30]  OVERLOAD_FACTORS [1.5,2]   (b) roomd above its knee
#   DEFLATE_RATES [(b)'s knee, the ladder's rate below it and two above]  DEFLATE_RSS_N* [2000]   (b′) the fan-out plain
#                               and with permessage-deflate alternating, every rate; RSS per compressing connection
#   ROOMSTATE_NS* [2000,5000,10000,19000]        (a) N viewers joining one room: room-state bytes, joins/s
#   IDLE_NS* [1000,10000,19000] IDLE_WINDOW* [25] PROBE_JOINS [100]   (d) idle CPU, RSS/peer, one more join
#   ROOMS* [1000] PER_ROOM [10]                  (c) many rooms, 1 msg/s per peer
#   SPEAKER_PEERS [1000] SPEAKERS [10] SPEAKER_RATE [10]   (e)
#   POLL_PEERS* [10000] POLL_VOTERS* [5000] POLL_SPREAD [0.2] (f): 25,000 votes/s offered (target 20,000)
#   MICRO [1] MICRO_VALGRIND [0] MICRO_ITERATIONS* [5000] MICRO_ROUNDS* [7]   microbenchmarks
#   TAP_PEERS* [10000] TAP_S* [30] TAP_MODES [5x1,1x5]   (i) viewers tapping: react calls/s × taps per call
#   HISTORY_PEERS* [10000] HISTORY_MESSAGES [200]        (j) one more join with a full chat history
#   QA_PEERS* [10000] QA_QUESTIONS [500] QA_VOTES [5] QA_SPREAD [10]   (k) Q&A: votes and question-list
#   TIMING_REAL_RUNS [1]        (l) test mode: real-time runs of the timing scenario (~110 s each)
#   CLUSTER_NODES [3] CLUSTER_RECEIVERS [3000] CLUSTER_RATE* [500]   (g) one room over a roomd cluster vs one node
#   THREADS [2] THREAD_RATES [(b)'s rates from 0.5 × its knee]   (h) the fan-out on roomd --threads THREADS
#   FEED_VIEWERS* [10000] FEED_S* [30] FEED_CONNS* [8,32,128] FEED_PEER_NS* [100,10000]   (m) the audience feed over
#                               HTTP: viewers every 3 s, the rate held with p99 ≤ 50 ms vs nginx, CPU per request
#   CLEAR_MESSAGES [10000] CLEAR_COUNTS* [100000]   (o) one chat-clear: its answer, the worst ping in another room
#   STAGE_PEERS* [10000] STAGE_ASKERS [1000] STAGE_WINDOW [10] STAGE_HOST_RATE [2]   (p) a large audience that
#                               stays quiet: one viewer renaming at its rate limit, then viewers asking to come on stage
#   SYNTH_PEERS* [10000] SYNTH_RATES [20,5] SYNTH_S* [10]   (q) the same audience real and synthetic (test mode,
#                               section 33): a host broadcasting to everyone at each rate, roomd's CPU per delivery; ~4.5 min
#   HOOK_ROOMS [500]            (r) hooks: (c)'s rooms of PER_ROOM peers at 1 msg/s each (500: 5,000 hooked msg/s)
#   HOOK_MODES ["answer timeout"] (r) the rows to run: answer (every hook answers), timeout (room-0's never does)
#   HOOK_DELAY_MS [5]           (r) hooks: (c)'s rooms with every broadcast through a hook answering in this
#                               many ms, then with room-0's hook never answering (timeout_ms 1000)
#   SECTIONS [storm,fanout,overload,deflate,threads,profile,rooms,hooks,idle,speakers,poll,audience,stage,synthetic,feed,testmode,waiting,chatclear,cluster,micro]   the sections to run
#   WAITING_ROOMS [1000] WAITING_WINDOW [10]   (n) rooms that wait: how many, the idle CPU window (s)
#                               (profile: perf on roomd during a fan-out at its knee, the largest idle
#                               step and (i)'s 5 × 1 taps; skipped without perf)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-run}" = profile ]; then
    shift
    exec scripts/bench/profile.sh "$@"
fi

QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
    : "${RUNS:=1}" "${STEP_S:=3}" "${OVERLOAD_S:=5}" "${ROOMD_RATES:=2000,5000}" "${NATS_RATES:=2000,5000}"
    : "${MIRROR_RATES:=100}" "${ROOMSTATE_NS:=2000}" "${IDLE_NS:=1000,2000}" "${IDLE_WINDOW:=5}" "${PROBE_JOINS:=20}"
    : "${ROOMS:=100}" "${HOOK_ROOMS:=100}" "${POLL_PEERS:=2000}" "${POLL_VOTERS:=1000}" "${MICRO_ITERATIONS:=500}" "${MICRO_ROUNDS:=3}"
    : "${SPEAKER_WINDOW:=3}" "${SPEAKER_QUIET:=3}" "${TAP_PEERS:=2000}" "${TAP_S:=5}"
    : "${HISTORY_PEERS:=2000}" "${QA_PEERS:=2000}" "${STAGE_PEERS:=2000}" "${SYNTH_PEERS:=2000}" "${SYNTH_S:=3}" "${CLUSTER_RATE:=200}" "${OUT:=/tmp/BENCHMARKS.quick.md}"
    : "${FEED_VIEWERS:=2000}" "${FEED_S:=5}" "${FEED_CONNS:=8,32}" "${FEED_PEER_NS:=100,2000}"
    : "${CLEAR_COUNTS:=20000}" "${DEFLATE_RSS_N:=200}"
fi
OUT=${OUT:-docs/BENCHMARKS.md}
RUNS=${RUNS:-3}
STEP_S=${STEP_S:-10}
DRAIN_S=${DRAIN_S:-3}
WAIT_QUIET=${WAIT_QUIET:-20}
FANOUT_RECEIVERS=${FANOUT_RECEIVERS:-1000}
if [ "${PIN:-0}" = 1 ]; then
    # Pinned, each side has one core: both knees sit lower (3,000–5,000 msg/s), where the ladder is finest.
    ROOMD_RATES=${ROOMD_RATES:-3000,3500,4000,4500,5000,5500,6000,7000,8000}
    NATS_RATES=${NATS_RATES:-2000,2500,3000,3500,4000,4500,5000,6000}
fi
ROOMD_RATES=${ROOMD_RATES:-3000,5000,7000,8000,9000,10000,11000,12000,13000,14000}
NATS_RATES=${NATS_RATES:-3000,4000,4500,5000,5500,6000,6500,7000,8000,9000,10000}
FANOUT_BUDGET_S=${FANOUT_BUDGET_S:-840}
MIRROR_RATES=${MIRROR_RATES:-100,200}
OVERLOAD_S=${OVERLOAD_S:-30}
OVERLOAD_FACTORS=${OVERLOAD_FACTORS:-1.5,2}
DEFLATE_RATES=${DEFLATE_RATES:-}
DEFLATE_RSS_N=${DEFLATE_RSS_N:-2000}
ROOMSTATE_NS=${ROOMSTATE_NS:-2000,5000,10000,19000}
IDLE_NS=${IDLE_NS:-1000,10000,19000}
IDLE_WINDOW=${IDLE_WINDOW:-25}
PROBE_JOINS=${PROBE_JOINS:-100}
ROOMS=${ROOMS:-1000}
PER_ROOM=${PER_ROOM:-10}
SPEAKER_PEERS=${SPEAKER_PEERS:-1000}
SPEAKERS=${SPEAKERS:-10}
SPEAKER_RATE=${SPEAKER_RATE:-10}
SPEAKER_WINDOW=${SPEAKER_WINDOW:-10}
SPEAKER_QUIET=${SPEAKER_QUIET:-5}
POLL_PEERS=${POLL_PEERS:-10000}
POLL_VOTERS=${POLL_VOTERS:-5000}
POLL_SPREAD=${POLL_SPREAD:-0.2}
MICRO=${MICRO:-1}
MICRO_VALGRIND=${MICRO_VALGRIND:-0}
MICRO_ITERATIONS=${MICRO_ITERATIONS:-5000}
MICRO_ROUNDS=${MICRO_ROUNDS:-7}
TAP_PEERS=${TAP_PEERS:-10000}
TAP_S=${TAP_S:-30}
TAP_MODES=${TAP_MODES:-5x1,1x5}
HISTORY_PEERS=${HISTORY_PEERS:-10000}
HISTORY_MESSAGES=${HISTORY_MESSAGES:-200}
QA_PEERS=${QA_PEERS:-10000}
QA_QUESTIONS=${QA_QUESTIONS:-500}
QA_VOTES=${QA_VOTES:-5}
QA_SPREAD=${QA_SPREAD:-10}
FEED_VIEWERS=${FEED_VIEWERS:-10000}
FEED_S=${FEED_S:-30}
FEED_CONNS=${FEED_CONNS:-8,32,128}
FEED_PEER_NS=${FEED_PEER_NS:-100,10000}
CLUSTER_NODES=${CLUSTER_NODES:-3}
CLUSTER_RECEIVERS=${CLUSTER_RECEIVERS:-3000}
CLUSTER_RATE=${CLUSTER_RATE:-500}
THREADS=${THREADS:-2}
THREAD_RATES=${THREAD_RATES:-}
WAITING_ROOMS=${WAITING_ROOMS:-1000}
WAITING_WINDOW=${WAITING_WINDOW:-10}
CLEAR_MESSAGES=${CLEAR_MESSAGES:-10000}
CLEAR_COUNTS=${CLEAR_COUNTS:-100000}
STAGE_PEERS=${STAGE_PEERS:-10000}
STAGE_ASKERS=${STAGE_ASKERS:-1000}
STAGE_WINDOW=${STAGE_WINDOW:-10}
STAGE_HOST_RATE=${STAGE_HOST_RATE:-2}
SYNTH_PEERS=${SYNTH_PEERS:-10000}
SYNTH_RATES=${SYNTH_RATES:-20,5}
SYNTH_S=${SYNTH_S:-10}
HOOK_DELAY_MS=${HOOK_DELAY_MS:-5}
HOOK_ROOMS=${HOOK_ROOMS:-500}
SECTIONS=${SECTIONS:-storm,fanout,overload,deflate,threads,profile,rooms,hooks,idle,speakers,poll,audience,stage,synthetic,feed,testmode,waiting,chatclear,cluster,micro}

# shellcheck source=scripts/bench/lib.sh
. scripts/bench/lib.sh
# shellcheck source=scripts/bench/sections.sh
. scripts/bench/sections.sh

# The largest step must fit under the open-file cap (one process each side).
for n in ${ROOMSTATE_NS//,/ } ${IDLE_NS//,/ } $((ROOMS * PER_ROOM)) "$POLL_PEERS" "$TAP_PEERS" \
    $((HISTORY_PEERS + PROBE_JOINS)) "$QA_PEERS" "$FEED_VIEWERS" $((STAGE_PEERS + 2)) $((SYNTH_PEERS + 1)); do
    [ $((n + PROBE_JOINS + 200)) -le "$FD_HARD" ] \
        || die "a step of $n peers needs more than the open-file cap ($FD_HARD): lower ROOMSTATE_NS / IDLE_NS / ROOMS / POLL_PEERS"
done

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
log "machine: $(nproc) CPUs, load $LOAD; work directory $WORK; ${RUNS} run(s) of ${STEP_S}-s steps"

has() { [[ ",$SECTIONS," == *",$1,"* ]]; }
has storm && section_storm
has fanout && section_fanout
has overload && section_overload
has deflate && section_deflate
has threads && section_threads
has profile && section_profile
has rooms && section_rooms
has hooks && section_hooks
has idle && section_idle
has speakers && section_speakers
has poll && section_poll
has audience && section_audience
has stage && section_stage
has synthetic && section_synthetic
has feed && section_feed
has testmode && section_testmode
has waiting && section_waiting
has chatclear && section_chatclear
has cluster && section_cluster
stop_servers
has micro && [ "$MICRO" = 1 ] && section_micro

ELAPSED=$(($(date +%s) - START))
REVISION=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then REVISION="$REVISION + local changes"; fi
LWS_VERSION=$(dpkg-query -W -f='${Version}' libwebsockets-dev 2>/dev/null || pkg-config --modversion libwebsockets 2>/dev/null || echo ?)
VERSIONS="$("$ROOMD" --version 2>/dev/null | head -1); nats-server $("$NATS_SERVER" --version 2>/dev/null | sed 's/^nats-server: //'); libwebsockets $LWS_VERSION; $(swift --version 2>/dev/null | head -1)"
python3 "$REPORT_PY" render --results "$RESULTS" --commands "$COMMANDS" --out "$OUT" \
    --elapsed "$ELAPSED" --load "$LOAD" --revision "$REVISION" --versions "$VERSIONS" \
    --runs "$RUNS" --step-s "$STEP_S" --quick "$QUICK" --profile-dir "$WORK/profile" --pinned "${PIN:-0}" \
    --note "${NOTE:-}"
[ "${KEEP:-0}" = 1 ] && cp "$RESULTS" "$WORK/results.kept.jsonl"
log "done in ${ELAPSED}s: $OUT"
