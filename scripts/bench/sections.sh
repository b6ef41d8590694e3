# shellcheck shell=bash
# The sections of the standard set (sourced by scripts/bench.sh after lib.sh).
# Every step: a fresh server, RUNS runs, results tagged (section, key, run).
# shellcheck disable=SC2046  # the *_args helpers expand to several words on purpose

# (a) N viewers joining one room at once: joins/s, room-state pushes and bytes (section 12: O(N)).
section_storm() {
    local n run
    for n in ${ROOMSTATE_NS//,/ }; do
        log "(a) join storm / room-state: $n viewers into one room, $RUNS run(s)"
        for run in $(seq "$RUNS"); do
            start_roomd "storm-$n-$run"
            # Settle 3 s without a frame: longer than room_state_interval_ms (2 s), so every room-state is counted.
            step storm "$n" "$run" 150 join-storm $(roomd_args) --peers "$n" --join-timeout 60 --settle-quiet 3
        done
    done
    local mirror_n=${ROOMSTATE_NS%%,*}
    log "(a) lws mirror: $mirror_n WebSocket handshakes, $RUNS run(s)"
    for run in $(seq "$RUNS"); do
        start_mirror "storm-mirror-$run"
        step storm-mirror "$mirror_n" "$run" 60 join-storm $(mirror_args) --peers "$mirror_n"
    done
}

# ladder SECTION START_FUNCTION ARGS_FUNCTION RATES: one fan-out step per rate and run,
# up the ladder until a rate is not held in median (no loss, p99 ≤ 200 ms).
ladder() {
    local section=$1 start=$2 args=$3 rates=$4 rate run
    for rate in ${rates//,/ }; do
        log "(b) $section: 1 sender → $FANOUT_RECEIVERS receivers at $rate msg/s, $RUNS × ${STEP_S} s"
        for run in $(seq "$RUNS"); do fanout_step "$section" "$start" "$args" "$rate" "$run"; done
        if ! python3 "$REPORT_PY" held --results "$RESULTS" --section "$section" --key "$rate"; then
            log "(b) $section: $rate msg/s not held in median: the ladder stops here"
            break
        fi
    done
}

# fanout_step SECTION START_FUNCTION ARGS_FUNCTION RATE RUN: one fan-out step on a fresh server.
fanout_step() {
    local section=$1 start=$2 args=$3 rate=$4 run=$5
    "$start" "$section-$rate-$run"
    step "$section" "$rate" "$run" $((STEP_S + DRAIN_S + 90)) fanout $($args) \
        --receivers "$FANOUT_RECEIVERS" --rates "$rate" --duration "$STEP_S" --drain "$DRAIN_S" \
        --connect-timeout 30 --join-timeout 30
}

# (b) fan-out 1 → FANOUT_RECEIVERS: roomd and nats-server (WebSocket) up their
# ladders in lockstep — at each rate the runs alternate roomd, nats-server, roomd…
# so both see the same machine — each ladder stopping after its first rate not
# held in median; then the lws mirror (floor).
section_fanout() {
    local rate run roomd_on=1 nats_on=1
    local rates
    rates=$(printf '%s\n' ${ROOMD_RATES//,/ } ${NATS_RATES//,/ } | sort -n -u)
    for rate in $rates; do
        local do_roomd=0 do_nats=0
        [ "$roomd_on" = 1 ] && [[ ",$ROOMD_RATES," == *",$rate,"* ]] && do_roomd=1
        [ "$nats_on" = 1 ] && [[ ",$NATS_RATES," == *",$rate,"* ]] && do_nats=1
        [ "$do_roomd$do_nats" = 00 ] && continue
        log "(b) 1 sender → $FANOUT_RECEIVERS receivers at $rate msg/s:$([ $do_roomd = 1 ] && echo " roomd")$([ $do_nats = 1 ] && echo " nats-server"), $RUNS × ${STEP_S} s"
        for run in $(seq "$RUNS"); do
            [ "$do_roomd" = 1 ] && fanout_step fanout-roomd start_roomd roomd_args "$rate" "$run"
            [ "$do_nats" = 1 ] && fanout_step fanout-nats start_nats nats_args "$rate" "$run"
        done
        if [ "$do_roomd" = 1 ] && ! python3 "$REPORT_PY" held --results "$RESULTS" --section fanout-roomd --key "$rate"; then
            log "(b) roomd: $rate msg/s not held in median: its ladder stops here"
            roomd_on=0
        fi
        if [ "$do_nats" = 1 ] && ! python3 "$REPORT_PY" held --results "$RESULTS" --section fanout-nats --key "$rate"; then
            log "(b) nats-server: $rate msg/s not held in median: its ladder stops here"
            nats_on=0
        fi
        [ "$roomd_on$nats_on" = 00 ] && break
        if [ $(($(date +%s) - START)) -gt "$FANOUT_BUDGET_S" ]; then
            log "(b) the ladders stop here: past FANOUT_BUDGET_S (${FANOUT_BUDGET_S} s after the start)"
            break
        fi
    done
    ladder fanout-mirror start_mirror mirror_args "$MIRROR_RATES"
}

# (b) overload: roomd at OVERLOAD_FACTORS × its knee for OVERLOAD_S s. The drain
# window is long (2 × OVERLOAD_S): what roomd queued or paused is waited for, so
# loss is what never arrives, not what arrives late.
section_overload() {
    local knee factor rate run
    knee=$(python3 "$REPORT_PY" knee --results "$RESULTS" --section fanout-roomd)
    if [ -z "$knee" ]; then
        knee=${ROOMD_RATES%%,*}
        log "(b) overload: no roomd fan-out rate held; using the ladder's first rate ($knee msg/s) as the knee"
    fi
    for factor in ${OVERLOAD_FACTORS//,/ }; do
        rate=$(python3 -c "print(round($knee * $factor))")
        log "(b) overload: roomd at ${factor}× its knee ($knee) = $rate msg/s for ${OVERLOAD_S} s, $RUNS run(s)"
        for run in $(seq "$RUNS"); do
            start_roomd "overload-$factor-$run"
            step overload "$factor" "$run" $((OVERLOAD_S * 3 + 90)) fanout $(roomd_args) \
                --receivers "$FANOUT_RECEIVERS" --rates "$rate" --duration "$OVERLOAD_S" --drain $((OVERLOAD_S * 2)) \
                --connect-timeout 30 --join-timeout 30
        done
    done
}

# (c) ROOMS rooms × PER_ROOM peers, each sending 1 msg/s.
section_rooms() {
    local run
    log "(c) $ROOMS rooms × $PER_ROOM peers, 1 msg/s each, $RUNS × ${STEP_S} s"
    for run in $(seq "$RUNS"); do
        start_roomd "rooms-$run"
        step rooms "${ROOMS}x$PER_ROOM" "$run" $((STEP_S + DRAIN_S + 90)) rooms $(roomd_args) \
            --rooms "$ROOMS" --per-room "$PER_ROOM" --rate 1 --duration "$STEP_S" --drain "$DRAIN_S" --join-timeout 60
    done
}

# (r) Hooks (issue 35, PROTOCOL.md section 30): step (c) with HOOK_ROOMS rooms (500: 5,000 msg/s, the target) and every broadcast going through the app's hook
# (`roombench hook-server`, answering {"allow":true} after HOOK_DELAY_MS ms; settings.hooks events
# ["message"], timeout_ms 1000): the latency it adds (compare (c)) and the hooked messages/s held. Then the
# same with room-0's hook never answering (its messages go out at timeout_ms, on_error allow): the other
# rooms are 99.9 % of the deliveries, so p99 is theirs. The hook verifies and reads every request in both.
section_hooks() {
    local run mode template="$WORK/roles-hooks.json"
    # Always pinned: roomd on CPU 0, the hook server and roombench on CPU 1. Unpinned, the three
    # share both cores at 5,000 hooked msg/s (roomd ~115 %, the verifying hook server and the load
    # tool the rest) and p99 swung between 23 and 400 ms from run to run, in both rows alike.
    local SERVER_CPU=(taskset -c 0) CLIENT_CPU=(taskset -c 1)
    for mode in ${HOOK_MODES:-answer timeout}; do
        log "(r) hooks: $HOOK_ROOMS rooms × $PER_ROOM peers, 1 msg/s each, a hook answering in ${HOOK_DELAY_MS} ms$([ "$mode" = timeout ] && echo ", room-0's never"), $RUNS × ${STEP_S} s"
        for run in $(seq "$RUNS"); do
            start_hook "$mode"
            python3 - "$TEMPLATE" "$template" "$HOOK_URL" <<'PY'
import json, sys
template = json.load(open(sys.argv[1]))
template.setdefault("settings", {})["hooks"] = {"url": sys.argv[3], "events": ["message"], "timeout_ms": 1000}
json.dump(template, open(sys.argv[2], "w"))
PY
            TEMPLATE=$template start_roomd "hooks-$mode-$run"
            step hooks "$mode" "$run" $((STEP_S + DRAIN_S + 90)) rooms $(roomd_args) \
                --rooms "$HOOK_ROOMS" --per-room "$PER_ROOM" --rate 1 --duration "$STEP_S" --drain "$DRAIN_S" --join-timeout 60
            stop_hook
        done
    done
}

# start_hook MODE: `roombench hook-server` (answer: every call after HOOK_DELAY_MS ms; timeout: room-0's
# never), its stdin a FIFO this shell holds open (closing it ends the server); sets HOOK_URL.
start_hook() {
    local mode=$1 fifo="$WORK/hook.in" out="$WORK/hook.out"
    rm -f "$fifo" && mkfifo "$fifo"
    : >"$out"
    # shellcheck disable=SC2046
    "${CLIENT_CPU[@]}" "$BENCH" hook-server --delay-ms "$HOOK_DELAY_MS" --secret-file "$WORK/secret" \
        $([ "$mode" = timeout ] && echo --silent-room room-0) <"$fifo" >"$out" 2>&1 &
    HOOK_PID=$!
    exec 9>"$fifo"
    local waited=0
    until grep -q "hook listening on" "$out"; do
        sleep 0.1
        waited=$((waited + 1))
        [ "$waited" -lt 100 ] || die "roombench hook-server did not start: $(cat "$out")"
    done
    HOOK_URL=$(sed -n 's/^hook listening on //p' "$out")
}

stop_hook() {
    stop_servers  # first: the hook server's close waits for roomd's kept-alive connections to end
    exec 9>&-
    wait "$HOOK_PID" 2>/dev/null || true
}

# (d) N idle joined peers: idle CPU over IDLE_WINDOW s (it covers a keepalive round:
# pings go out after idle_timeout_s / 3 = 20 s of silence), RSS per peer, then
# PROBE_JOINS more peers join one at a time (join latency into a room of N).
section_idle() {
    local n run
    for n in ${IDLE_NS//,/ }; do
        log "(d) $n idle peers: ${IDLE_WINDOW}-s window, then $PROBE_JOINS joins one at a time, $RUNS run(s)"
        for run in $(seq "$RUNS"); do
            start_roomd "idle-$n-$run"
            step idle "$n" "$run" $((IDLE_WINDOW + 150)) idle $(roomd_args) --peers "$n" --window "$IDLE_WINDOW" \
                --probe-joins "$PROBE_JOINS" --join-timeout 60 --max-server-rss-mib 12288
        done
    done
}

# (e) active speakers.
section_speakers() {
    local run
    log "(e) active speakers: $SPEAKER_PEERS peers, $SPEAKERS speaking at $SPEAKER_RATE Hz, $RUNS run(s)"
    for run in $(seq "$RUNS"); do
        start_roomd "speakers-$run"
        step speakers "$SPEAKER_PEERS" "$run" 120 speakers $(roomd_args) --peers "$SPEAKER_PEERS" \
            --speakers "$SPEAKERS" --rate "$SPEAKER_RATE" --window "$SPEAKER_WINDOW" --quiet-window "$SPEAKER_QUIET" \
            --interval-ms "$SPEAKER_INTERVAL_MS" --join-timeout 30
    done
}

# (f) polls.
section_poll() {
    local run
    log "(f) polls: $POLL_PEERS viewers, $POLL_VOTERS voting within $POLL_SPREAD s, $RUNS run(s)"
    for run in $(seq "$RUNS"); do
        start_roomd "poll-$run"
        step poll "$POLL_PEERS" "$run" 150 poll $(roomd_args) --peers "$POLL_PEERS" --voters "$POLL_VOTERS" \
            --spread "$POLL_SPREAD" --window 3 --join-timeout 60
    done
}

# micro: roomd's hot paths in-process (roombench micro, ns/op); with
# MICRO_VALGRIND=1 also counted under valgrind: instructions (callgrind) and
# allocations (memcheck), each case with N and N/10 ops, (total(N) −
# total(N/10)) ÷ (N − N/10) removing startup, setup, warm-up and printing.
section_micro() {
    log "micro: hot paths in-process (ns/op)"
    step micro all 1 120 micro --case all --iterations "$MICRO_ITERATIONS" --rounds "$MICRO_ROUNDS" --config "$TEMPLATE"
    [ "$MICRO_VALGRIND" = 1 ] || return 0
    if ! command -v valgrind >/dev/null; then
        log "valgrind is not installed: no instruction or allocation counts"
        return 0
    fi
    # valgrind 3.19 cannot read the DWARF of Swift 6 binaries: run a copy without it (the symbol table stays).
    local nodebug="$WORK/roombench-nodebug" spec name n small it args cg mc
    cp "$BENCH" "$nodebug"
    strip --strip-debug "$nodebug" 2>/dev/null || true
    for spec in decode-broadcast:2000 decode-join:2000 encode-broadcast:2000 fanout-enqueue:100 fanout-dispatch:100; do
        name=${spec%%:*}
        n=${spec##*:}
        small=$((n / 10))
        for it in "$small" "$n"; do
            args=(micro --case "$name" --iterations "$it" --rounds 1 --warmup 10 --config "$TEMPLATE")
            echo "valgrind --tool=callgrind --callgrind-out-file=$WORK/cg.$name.$it $nodebug ${args[*]}" >>"$COMMANDS"
            echo "valgrind --tool=memcheck $nodebug ${args[*]}" >>"$COMMANDS"
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
        printf '{"scenario":"micro-valgrind","section":"micro","key":"%s","run":1,"case":"%s","iterations":%d,"baseline_iterations":%d,"instructions":%s,"instructions_baseline":%s,"allocs":%s,"allocs_baseline":%s,"alloc_bytes":%s,"alloc_bytes_baseline":%s}\n' \
            "$name" "$name" "$n" "$small" "$ir1" "$ir0" "${heap1% *}" "${heap0% *}" "${heap1#* }" "${heap0#* }" >>"$RESULTS"
    done
}

# wait_cluster URL...: until every node's /healthz counts them all on a connected bus (30 s).
# WAIT_NODES=N: expect N nodes instead of one per URL (service threads sharing a port).
wait_cluster() {
    local n=${WAIT_NODES:-$#} url ready
    for _ in $(seq 300); do
        ready=0
        for url in "$@"; do
            url=${url#ws://}
            curl -fsS --max-time 2 "http://${url%%/*}/healthz" 2>/dev/null | grep -q "\"nodes\":$n,\"connected\":true" \
                && ready=$((ready + 1))
        done
        [ "$ready" -eq "$#" ] && return 0
        sleep 0.1
    done
    die "the cluster of $n nodes did not come up (logs in $WORK)"
}

# (g) cluster (issue 10): one room of CLUSTER_RECEIVERS receivers spread round-robin
# over CLUSTER_NODES roomd nodes (nats-server with JetStream as the bus), one sender
# on the first node, at CLUSTER_RATE msg/s; then the same room on one roomd without
# --cluster, in the same run: deliveries/s, p99, bus messages per broadcast
# (nats-server's in_msgs over the sending step ÷ broadcasts sent), each node's CPU.
section_cluster() {
    local run i urls pids
    for run in $(seq "$RUNS"); do
        log "(g) cluster: $CLUSTER_RECEIVERS receivers over $CLUSTER_NODES nodes, 1 sender at $CLUSTER_RATE msg/s, run $run"
        start_nats "cluster-nats-$run" -js -sd "$WORK/js-$run"
        urls=(); pids=()
        for i in $(seq "$CLUSTER_NODES"); do
            KEEP_SERVERS=1 start_roomd "cluster-n$i-$run" --cluster "$NATS_URL" --node-id "n$i"
            urls+=(--url "$URL"); pids+=(--server-pid "$SERVER_PID")
        done
        # shellcheck disable=SC2046
        wait_cluster $(printf '%s\n' "${urls[@]}" | grep '^ws://')
        step cluster "${CLUSTER_NODES}-nodes" "$run" $((STEP_S + DRAIN_S + 120)) fanout "${urls[@]}" \
            --secret-file "$WORK/secret" "${pids[@]}" --varz "$NATS_MON" --receivers "$CLUSTER_RECEIVERS" \
            --rates "$CLUSTER_RATE" --duration "$STEP_S" --drain "$DRAIN_S" --connect-timeout 30 --join-timeout 60
        stop_servers

        log "(g) the same room on one roomd (no --cluster), run $run"
        start_roomd "cluster-single-$run"
        step cluster 1-node "$run" $((STEP_S + DRAIN_S + 120)) fanout $(roomd_args) --receivers "$CLUSTER_RECEIVERS" \
            --rates "$CLUSTER_RATE" --duration "$STEP_S" --drain "$DRAIN_S" --connect-timeout 30 --join-timeout 60
    done
}

# (h) cores (issue 12): the fan-out of (b) on `roomd --threads THREADS` — THREADS
# service threads in one process, each a cluster node, sharing the port
# (SO_REUSEPORT), with a nats-server as their bus — up the same ladder as (b)'s
# roomd, in the same run. roombench samples the CPU of roomd (every thread) and
# of the bus' nats-server separately (node_cpu_pct: roomd, nats-server).
start_roomd_threads() {
    start_nats "$1-bus" -js -sd "$WORK/js-$1"
    local bus_pid=$SERVER_PID bus_mon=$NATS_MON
    KEEP_SERVERS=1 start_roomd "$1" --threads "$THREADS" --cluster "$NATS_URL" --node-id t
    BUS_PID=$bus_pid
    NATS_MON=$bus_mon
    WAIT_NODES=$THREADS wait_cluster "$URL"
}
threads_args() { echo --url "$URL" --secret-file "$WORK/secret" --server-pid "$SERVER_PID" --server-pid "$BUS_PID"; }
section_threads() {
    local rates=$THREAD_RATES
    if [ -z "$rates" ]; then
        # From (b)'s knee (or its first rate) up: the rates of ROOMD_RATES from half the knee up.
        local knee
        knee=$(python3 "$REPORT_PY" knee --results "$RESULTS" --section fanout-roomd)
        knee=${knee:-${ROOMD_RATES%%,*}}
        rates=$(printf '%s\n' ${ROOMD_RATES//,/ } | awk -v k="$knee" '$1 >= k * 0.5' | paste -sd, -)
    fi
    log "(h) cores: roomd --threads $THREADS (one cluster node per thread on one port) at $rates msg/s"
    ladder "fanout-threads" start_roomd_threads threads_args "$rates"
    NATS_MON=""
}

# profile: where roomd's time goes, in this run. perf samples roomd (call graphs)
# (1) during a fan-out step at its knee (the ladder's first rate if none held) and
# (2) during the idle step of the largest IDLE_NS, across its keepalive round. The
# report shows, for each, the shares by library, the top functions by own samples,
# and roomd's functions with everything they call.
section_profile() {
    if ! command -v perf >/dev/null; then
        log "profile: perf is not installed (apt-get install linux-perf): no profile in this run"
        return 0
    fi
    local rate n
    rate=$(python3 "$REPORT_PY" knee --results "$RESULTS" --section fanout-roomd)
    rate=${rate:-${ROOMD_RATES%%,*}}
    profile_step fanout "fan-out at $rate msg/s × $FANOUT_RECEIVERS receivers" \
        "$(python3 -c "print(2 if $STEP_S >= 6 else 1.5)")" "$(python3 -c "print(max(1, $STEP_S - 4))")" \
        $((STEP_S + DRAIN_S + 90)) fanout --receivers "$FANOUT_RECEIVERS" --rates "$rate" --duration "$STEP_S" \
        --drain "$DRAIN_S" --connect-timeout 30 --join-timeout 30
    n=$(printf '%s\n' ${IDLE_NS//,/ } | sort -n | tail -1)
    # Sampled for the window's length from when the joins are done (19,000 connect and join in
    # ~8 s here), so that the keepalive round (~20 s after the joins) falls inside.
    profile_step idle "$n idle peers (${IDLE_WINDOW}-s window)" $((n >= 10000 ? 10 : 4)) "$IDLE_WINDOW" \
        $((IDLE_WINDOW + 120)) idle \
        --peers "$n" --window "$IDLE_WINDOW" --join-timeout 60 --max-server-rss-mib 12288
    # (i)'s 5 × 1 taps: 50,000 calls/s, each a read, a parse, an answer and a write (issue 37's p99 target).
    profile_step taps "5 × 1 taps, $TAP_PEERS viewers (i)" $((TAP_S >= 20 ? 8 : 2)) $((TAP_S >= 20 ? TAP_S - 12 : 2)) \
        $((TAP_S + 150)) taps --peers "$TAP_PEERS" --calls-per-s 5 --count 1 --duration "$TAP_S" --join-timeout 60
}

# profile_step NAME WHAT DELAY SECONDS LIMIT ROOMBENCH-ARGS...: a fresh roomd, perf on it
# from DELAY s for SECONDS s while roombench runs; the summaries go to $WORK/profile/NAME/.
profile_step() {
    local name=$1 what=$2 delay=$3 window=$4 limit=$5 demangle dir
    dir="$WORK/profile/$name"
    shift 5
    demangle=$(command -v swift-demangle || echo /opt/swift/usr/bin/swift-demangle)
    [ -x "$demangle" ] && demangle="$demangle --simplified" || demangle=cat
    log "profile: perf record -g on roomd during the $what (${window} s of samples)"
    start_roomd "profile-$name"
    (sleep "$delay"; exec perf record -F 999 -g -p "$SERVER_PID" -o "$WORK/$name.perf" -- sleep "$window") \
        >"$WORK/perf-$name.log" 2>&1 &
    PROFILER_PID=$!
    note_command "perf record -F 999 -g -p ROOMD_PID -o $name.perf -- sleep $window   # from ${delay} s into the $name profile step"
    local scenario=$1
    shift
    step "profile-$name" "$name" 1 "$limit" "$scenario" $(roomd_args) "$@"
    wait "$PROFILER_PID" 2>/dev/null || true
    PROFILER_PID=""
    [ -s "$WORK/$name.perf" ] || { log "profile: perf recorded nothing (see $WORK/perf-$name.log)"; return 0; }
    mkdir -p "$dir"
    echo "$what" >"$dir/what"
    echo "$window" >"$dir/seconds"
    perf report -i "$WORK/$name.perf" --no-children --sort dso --stdio -g none 2>/dev/null \
        | grep -v '^#' | grep '%' | head -8 >"$dir/dso.txt" || true
    perf report -i "$WORK/$name.perf" --no-children --sort dso,symbol --stdio -g none 2>/dev/null \
        | grep -v '^#' | grep '%' | head -20 | $demangle >"$dir/self.txt" || true
    perf report -i "$WORK/$name.perf" --children --sort symbol --stdio -g none 2>/dev/null \
        | grep -v '^#' | grep '%' | grep -E 's10RoomServer|s8RoomWire|s9RoomModel' | head -14 | $demangle \
        >"$dir/children.txt" || true
}

# (i)–(k) the audience (issue 21): reactions, chat history on join, Q&A.
section_audience() {
    local run mode
    for mode in ${TAP_MODES//,/ }; do
        # MODE is CALLS_PER_S x TAPS_PER_CALL: 5x1 sends every tap, 1x5 a second of taps in one call.
        local calls=${mode%x*} count=${mode#*x}
        log "(i) taps: $TAP_PEERS viewers, $calls react/s × $count tap(s) each for ${TAP_S} s, $RUNS run(s)"
        for run in $(seq "$RUNS"); do
            start_roomd "taps-$mode-$run"
            step taps "$mode" "$run" $((TAP_S + 150)) taps $(roomd_args) --peers "$TAP_PEERS" \
                --calls-per-s "$calls" --count "$count" --duration "$TAP_S" --join-timeout 60
        done
    done
    log "(j) history: one more join into $HISTORY_PEERS viewers, empty and with $HISTORY_MESSAGES messages, $RUNS run(s)"
    for run in $(seq "$RUNS"); do
        start_roomd "history-$run"
        step history "$HISTORY_PEERS" "$run" 240 history-join $(roomd_args) --peers "$HISTORY_PEERS" \
            --history "$HISTORY_MESSAGES" --probe-joins "$PROBE_JOINS" --join-timeout 60
    done
    log "(k) Q&A: $QA_QUESTIONS questions, $QA_PEERS viewers voting $QA_VOTES times each over ${QA_SPREAD} s, $RUNS run(s)"
    for run in $(seq "$RUNS"); do
        start_roomd "questions-$run"
        step questions "$QA_PEERS" "$run" 240 questions $(roomd_args) --peers "$QA_PEERS" \
            --questions "$QA_QUESTIONS" --votes-per-voter "$QA_VOTES" --spread "$QA_SPREAD" --join-timeout 60
    done
}

# (p) a large audience that stays quiet (issue 32, PROTOCOL.md sections 26 and 28): STAGE_PEERS viewers,
# a host broadcasting STAGE_HOST_RATE msg/s throughout; one viewer renaming itself at the rate limit
# (100 calls/s), then STAGE_ASKERS viewers asking to come on stage, each for STAGE_WINDOW s.
section_stage() {
    local run to
    log "(p) stage: $STAGE_PEERS viewers, one renaming at 100/s, then $STAGE_ASKERS asking, ${STAGE_WINDOW}-s windows, $RUNS run(s)"
    # The host broadcasts to everyone (a 10,000-push burst each time), then to the moderators only.
    for to in everyone moderator; do
        for run in $(seq "$RUNS"); do
            start_roomd "stage-$to-$run"
            step stage "$to" "$run" $((3 * STAGE_WINDOW + 200)) stage $(roomd_args) --peers "$STAGE_PEERS" \
                --askers "$STAGE_ASKERS" --window "$STAGE_WINDOW" --host-rate "$STAGE_HOST_RATE" --join-timeout 60 \
                $([ "$to" = everyone ] || echo --host-role "$to")
        done
    done
}

# python_step SECTION KEY RUN SCENARIO TIMEOUT [VAR=VALUE...] SCRIPT ARGS...: one run of a Python
# bench script (the Python kit, .venv-test) on a fresh server it starts itself: its rows (JSON
# lines, --json) annotated into $RESULTS, its command noted once in $COMMANDS, its last lines shown.
python_step() {
    local section=$1 key=$2 run=$3 scenario=$4 limit=$5 status=0
    shift 5
    stop_servers
    : >"$WORK/step.jsonl"
    timeout "$limit" env "$@" --json "$WORK/step.jsonl" >"$WORK/last.out" 2>&1 || status=$?
    sed 's/^/    /' "$WORK/last.out" | tail -2 >&2
    grep -qF "# $section $key" "$COMMANDS" || echo "$* --json FILE   # $section $key" >>"$COMMANDS"
    python3 "$REPORT_PY" annotate --section "$section" --key "$key" --run "$run" --status "$status" \
        --scenario "$scenario" --error "$(tail -1 "$WORK/last.out" | cut -c1-200)" --varz-before "" --varz-after "" \
        <"$WORK/step.jsonl" >>"$RESULTS"
}

# (l) test mode (issue 24): the timing rules of a guest call-in (60-s invitation
# expiry, 20-s grace, 30-s quiz) on the manual clock (RUNS runs) and in real time
# (one run: ~110 s), by scripts/bench/timing_scenario.py with the Python kit.
section_testmode() {
    local py=.venv-test/bin/python mode runs run
    if [ ! -x "$py" ]; then
        log "(l) test mode: skipped (no .venv-test; make bench creates it)"
        return
    fi
    for mode in manual real; do
        runs=$RUNS
        [ "$mode" = real ] && runs=${TIMING_REAL_RUNS:-1}
        log "(l) test mode: the timing scenario on the $mode clock, $runs run(s)"
        for run in $(seq "$runs"); do
            python_step testmode "$mode" "$run" timing 300 ROOMD_BIN="$ROOMD" "$py" scripts/bench/timing_scenario.py \
                --clock "$mode"
        done
    done
}

# (m) The audience feed over HTTP (issue 23, PROTOCOL.md section 24), with wrk (Debian) as the load
# tool (scripts/bench/feed.lua, feed_load.py) and the Python kit for the room (feed_room.py):
#   viewers: FEED_VIEWERS connections each polling every 3 s (FEED_VIEWERS / 3 requests/s, one room,
#            the kits' 3-s grid) for FEED_S seconds while the room has chat, taps, a running poll with
#            votes and a live stream; roombench's fan-out in the same room measures the host's
#            broadcast (100 receivers at 20 msg/s): its p99 is the room's own latency under the feed
#   ladder:  the highest request rate held with p99 ≤ 50 ms (wrk connections FEED_CONNS, as fast as
#            each can) on one span's cached body, against nginx (Debian) serving the same body as a
#            static file (one worker: roomd serves HTTP on its one service thread)
#   cost:    roomd CPU per feed request with FEED_PEER_NS peers in the room (joined by roombench idle)
# roomd answers every HTTP request with Connection: close (lws 4.1.6 spins on pipelined keep-alive,
# docs/RELIABILITY.md), so wrk reconnects for each request; nginx is measured the same way
# (wrk -H "Connection: close") and with keep-alive.
feed_token() {  # feed_token ROOM: an app token of a viewer of ROOM
    .venv-test/bin/python -c 'import sys; from roomd import TokenMinter
print(TokenMinter(open(sys.argv[1], "rb").read().strip()).app_token(sys.argv[2], "feed-viewer", "viewer"))' \
        "$WORK/secret" "$1" >"$WORK/feed.token"
}

feed_step() {  # feed_step KEY RUN LABEL ARGS...: one feed_load.py run into $RESULTS
    local key=$1 run=$2 status=0
    shift 2
    : >"$WORK/step.jsonl"
    grep -qF "# feed $key" "$COMMANDS" || echo "scripts/bench/feed_load.py $* --json FILE   # feed $key" >>"$COMMANDS"
    timeout --kill-after=5 $((FEED_S + STEP_S + 90)) "${CLIENT_CPU[@]}" python3 scripts/bench/feed_load.py "$@" \
        --json "$WORK/step.jsonl" >"$WORK/last.out" 2>&1 || status=$?
    grep -E "Requests/sec|99%|Non-2xx|Socket errors" "$WORK/last.out" | sed 's/^/    /' >&2 || true
    python3 "$REPORT_PY" annotate --section feed --key "$key" --run "$run" --status "$status" \
        --scenario feed-wrk --error "$(tail -1 "$WORK/last.out" | cut -c1-200)" --varz-before "" --varz-after "" \
        <"$WORK/step.jsonl" >>"$RESULTS"
}

start_nginx() {  # start_nginx NAME FILE: nginx serving FILE at /feed.json; sets SERVER_PID and HTTP
    local name=$1 file=$2 port dir="$WORK/$1"
    stop_servers
    port=$(free_port)
    mkdir -p "$dir/root"
    cp "$file" "$dir/root/feed.json"
    local user=""
    [ "$(id -u)" -eq 0 ] && user="user root;"  # the work directory is 0700: the worker reads it as its owner
    cat >"$dir/nginx.conf" <<CONF
$user
worker_processes 1;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 20000; }
http {
    access_log off;
    client_body_temp_path $dir; proxy_temp_path $dir; fastcgi_temp_path $dir; uwsgi_temp_path $dir; scgi_temp_path $dir;
    server {
        listen 127.0.0.1:$port;
        root $dir/root;
        location = /feed.json { default_type application/json; add_header Cache-Control "public, max-age=60"; }
    }
}
CONF
    note_command "nginx -c NAME/nginx.conf   # worker_processes 1; a static file with Cache-Control"
    "${SERVER_CPU[@]}" nginx -c "$dir/nginx.conf" >"$dir/out.log" 2>&1 &
    SERVER_PID=$!
    SERVER_PIDS+=("$SERVER_PID")
    wait_port "$port" "$SERVER_PID" "nginx ($(tail -3 "$dir/error.log" 2>/dev/null))"
    HTTP="http://127.0.0.1:$port"
}

http_of() { echo "http://127.0.0.1:${URL#ws://127.0.0.1:}" | sed 's#/ws$##'; }

section_feed() {
    local py=.venv-test/bin/python run conns n span http
    if [ ! -x "$py" ]; then
        log "(m) feed: skipped (no .venv-test; make bench creates it)"
        return
    fi
    log "(m) feed: $FEED_VIEWERS viewers polling every 3 s for ${FEED_S} s while the room runs, $RUNS run(s)"
    for run in $(seq "$RUNS"); do
        start_roomd "feed-viewers-$run"
        http=$(http_of)
        feed_token fanout
        "$py" scripts/bench/feed_room.py --url "$URL" --secret-file "$WORK/secret" --room fanout \
            --duration $((FEED_S + 10)) >"$WORK/feed-room.log" 2>&1 &
        local room_pid=$!
        sleep 4  # the session exists before the first span the viewers ask for
        python3 scripts/bench/feed_load.py --url "$http" --server-pid "$SERVER_PID" --connections "$FEED_VIEWERS" \
            --threads 2 --duration "$FEED_S" --delay-ms 3000 --room fanout --token-file "$WORK/feed.token" \
            --label viewers --json "$WORK/viewers.jsonl" >"$WORK/viewers.out" 2>&1 &
        local wrk_pid=$!
        step feed-room "$FEED_VIEWERS" "$run" $((FEED_S + 90)) fanout $(roomd_args) --receivers 100 --rates 20 \
            --duration "$FEED_S" --drain 2 --connect-timeout 30 --join-timeout 30
        wait "$wrk_pid" || true
        grep -E "Requests/sec|99%|Non-2xx|Socket errors" "$WORK/viewers.out" | sed 's/^/    /' >&2 || true
        python3 "$REPORT_PY" annotate --section feed --key "viewers-$FEED_VIEWERS" --run "$run" --status 0 \
            --scenario feed-wrk --error "" --varz-before "" --varz-after "" <"$WORK/viewers.jsonl" >>"$RESULTS"
        : >"$WORK/viewers.jsonl"
        stop_pid "$room_pid"
    done

    log "(m) feed: the highest rate held with p99 ≤ 50 ms, roomd vs nginx (a static copy), ${STEP_S}-s steps, $RUNS run(s)"
    start_roomd "feed-body"
    "$py" scripts/bench/feed_room.py --url "$URL" --secret-file "$WORK/secret" --room show --prepare --voters 20 \
        >"$WORK/feed-span.txt" 2>"$WORK/feed-room.log" || die "feed_room.py --prepare failed: $(tail -3 "$WORK/feed-room.log")"
    read -r FEED_FROM FEED_TO <"$WORK/feed-span.txt"
    feed_token show
    local path="/v2/rooms/show/feed?from=$FEED_FROM&to=$FEED_TO"
    curl -sf -H "Authorization: Bearer $(cat "$WORK/feed.token")" "$(http_of)$path" >"$WORK/feed-body.json" \
        || die "the feed body could not be read"
    log "    the body: $(wc -c <"$WORK/feed-body.json") bytes ($path)"
    for conns in ${FEED_CONNS//,/ }; do
        for run in $(seq "$RUNS"); do
            # A fresh roomd whose room has the same activity: its body for that span is built on the first request.
            start_roomd "feed-ladder-$conns-$run"
            "$py" scripts/bench/feed_room.py --url "$URL" --secret-file "$WORK/secret" --room show --prepare \
                --voters 20 >"$WORK/feed-span.txt" 2>>"$WORK/feed-room.log" || true
            read -r span_from span_to <"$WORK/feed-span.txt"
            feed_step "roomd-$conns" "$run" --url "$(http_of)" --server-pid "$SERVER_PID" --connections "$conns" \
                --duration "$STEP_S" --path "/v2/rooms/show/feed?from=$span_from&to=$span_to" \
                --token-file "$WORK/feed.token" --label roomd
            feed_step "roomd-close-$conns" "$run" --url "$(http_of)" --server-pid "$SERVER_PID" --connections "$conns" \
                --duration "$STEP_S" --path "/v2/rooms/show/feed?from=$span_from&to=$span_to" \
                --token-file "$WORK/feed.token" --close --label roomd-close
            start_nginx "feed-nginx-$conns-$run" "$WORK/feed-body.json"
            feed_step "nginx-$conns" "$run" --url "$HTTP" --server-pid "$SERVER_PID" --connections "$conns" \
                --duration "$STEP_S" --path /feed.json --close --label nginx
            start_nginx "feed-nginx-ka-$conns-$run" "$WORK/feed-body.json"
            feed_step "nginx-keepalive-$conns" "$run" --url "$HTTP" --server-pid "$SERVER_PID" \
                --connections "$conns" --duration "$STEP_S" --path /feed.json --label nginx-keepalive
        done
    done

    for n in ${FEED_PEER_NS//,/ }; do
        log "(m) feed: CPU per request with $n peers in the room, $RUNS run(s)"
        for run in $(seq "$RUNS"); do
            start_roomd "feed-cost-$n-$run"
            timeout 300 "${CLIENT_CPU[@]}" "$BENCH" idle $(roomd_args) --peers "$n" --window $((STEP_S + 60)) \
                --join-timeout 60 >"$WORK/feed-idle.out" 2>&1 &
            local idle_pid=$!
            http=$(http_of)
            for _ in $(seq 120); do  # until every peer joined
                [ "$(curl -s "$http/healthz" | sed -n 's/.*"peers":\([0-9]*\).*/\1/p')" -ge "$n" ] 2>/dev/null && break
                sleep 0.5
            done
            sleep 2
            feed_token idle
            local now=$(($(date +%s) - 1))
            feed_step "cost-$n" "$run" --url "$http" --server-pid "$SERVER_PID" --connections 32 \
                --duration "$STEP_S" --path "/v2/rooms/idle/feed?from=$((now - 3))&to=$now" \
                --token-file "$WORK/feed.token" --label roomd --peers "$n"
            stop_pid "$idle_pid"
        done
    done
}

# (n) rooms that wait (issue 23): WAITING_ROOMS sessions whose last peer left, waiting out
# empty_timeout_s: memory per room (against the same rooms ending at once) and idle CPU,
# then one manual-clock advance ends them all (scripts/bench/waiting_rooms.py, the Python kit).
section_waiting() {
    local py=.venv-test/bin/python run
    if [ ! -x "$py" ]; then
        log "(n) rooms that wait: skipped (no .venv-test; make bench creates it)"
        return
    fi
    log "(n) rooms that wait: $WAITING_ROOMS empty rooms, ${WAITING_WINDOW}-s idle window, $RUNS run(s)"
    for run in $(seq "$RUNS"); do
        python_step waiting rooms "$run" waiting 600 ROOMD_BIN="$ROOMD" "$py" scripts/bench/waiting_rooms.py \
            --rooms "$WAITING_ROOMS" --window "$WAITING_WINDOW"
    done
}

# (o) chat-clear (issue 34): one `chat-clear` over CLEAR_MESSAGES messages and CLEAR_COUNTS reaction
# counts, every change still to be pushed (test mode, manual clock), while a peer of another room of
# the node pings in a loop: the clear's answer and the worst ping during it (target ≤ 10 ms each), and
# the worst ping in the second after (the old history is freed off the service thread then).
# A fresh server per run (scripts/bench/chat_clear.py, the Python kit).
section_chatclear() {
    local py=.venv-test/bin/python run
    if [ ! -x "$py" ]; then
        log "(o) chat-clear: skipped (no .venv-test; make bench creates it)"
        return
    fi
    log "(o) chat-clear over $CLEAR_MESSAGES messages and $CLEAR_COUNTS reaction counts, $RUNS run(s)"
    for run in $(seq "$RUNS"); do
        python_step chatclear "$CLEAR_MESSAGES" "$run" chat-clear 600 "$py" scripts/bench/chat_clear.py "$ROOMD" \
            --runs 1 --messages "$CLEAR_MESSAGES" --counts "$CLEAR_COUNTS"
    done
}

# (q) The same audience real and synthetic (issue 38): SYNTH_PEERS viewers — WebSocket clients of roombench,
# then test mode's synthetic audience (PROTOCOL.md section 33: socketless peers, each push encoded, counted
# and dropped; roomd --test-mode) — and a host broadcasting a 100-byte chat line to everyone at each rate of
# SYNTH_RATES (msg/s) for SYNTH_S s: roomd's CPU per delivery in both, what the synthetic audience leaves out.
section_synthetic() {
    local rate mode run
    for rate in ${SYNTH_RATES//,/ }; do
        for mode in real synthetic; do
            log "(q) synthetic: $SYNTH_PEERS $mode viewers, the host broadcasting $rate msg/s for ${SYNTH_S} s, $RUNS run(s)"
            for run in $(seq "$RUNS"); do
                if [ "$mode" = synthetic ]; then
                    start_roomd "synthetic-$mode-$rate-$run" --test-mode
                else
                    start_roomd "synthetic-$mode-$rate-$run"
                fi
                step synthetic "$mode-$rate" "$run" $((SYNTH_S + 200)) synthetic $(roomd_args) --mode "$mode" \
                    --peers "$SYNTH_PEERS" --rate "$rate" --duration "$SYNTH_S" --drain "$DRAIN_S" --join-timeout 60
            done
        done
    done
}

# (b′) permessage-deflate (issue 37): the fan-out of (b) plain and compressed (roombench --deflate offers the
# extension as browsers do and inflates what it gets), alternating run by run at each of DEFLATE_RATES (every
# rate, no ladder: the two side by side); then roomd's RSS per compressing connection (deflate_rss.py:
# DEFLATE_RSS_N Python clients that compress what they send, against roomd and roomd --no-permessage-deflate).
deflate_args() { echo $(roomd_args) --deflate --label roomd-deflate; }
section_deflate() {
    local rates=$DEFLATE_RATES rate run mode
    if [ -z "$rates" ]; then
        # (b)'s knee, the ladder's rate below it and the two above (compressed, fewer bytes may hold more;
        # its first two rates if none held).
        local knee
        knee=$(python3 "$REPORT_PY" knee --results "$RESULTS" --section fanout-roomd)
        rates=$(printf '%s\n' ${ROOMD_RATES//,/ } | awk -v k="${knee:-0}" '
            { r[NR] = $1; if ($1 == k) at = NR }
            END { if (!at) { print r[1]; print r[2]; exit } for (i = at - 1; i <= at + 2; i++) if (i in r) print r[i] }' |
            paste -sd, -)
    fi
    log "(b′) permessage-deflate: 1 sender → $FANOUT_RECEIVERS receivers, plain and compressed alternating at $rates msg/s"
    for rate in ${rates//,/ }; do
        for run in $(seq "$RUNS"); do
            fanout_step deflate-plain start_roomd roomd_args "$rate" "$run"
            fanout_step deflate-on start_roomd deflate_args "$rate" "$run"
        done
    done
    local py=.venv-test/bin/python
    if [ ! -x "$py" ]; then
        log "(b′) RSS per compressing connection: skipped (no .venv-test; make bench creates it)"
        return
    fi
    log "(b′) RSS per compressing connection: $DEFLATE_RSS_N Python clients, with and without, $RUNS run(s)"
    for run in $(seq "$RUNS"); do
        for mode in deflate none; do
            if [ "$mode" = deflate ]; then start_roomd "deflate-rss-$run"; else start_roomd "deflate-rss-$run-none" --no-permessage-deflate; fi
            : >"$WORK/step.jsonl"
            note_command "$py scripts/bench/deflate_rss.py URL SECRET ROOMD_PID $DEFLATE_RSS_N $mode --json FILE"
            local status=0
            timeout 180 "${CLIENT_CPU[@]}" "$py" scripts/bench/deflate_rss.py "$URL" "$WORK/secret" "$SERVER_PID" \
                "$DEFLATE_RSS_N" "$mode" --json "$WORK/step.jsonl" >"$WORK/last.out" 2>&1 || status=$?
            sed 's/^/    /' "$WORK/last.out" | tail -1 >&2
            python3 "$REPORT_PY" annotate --section deflate-rss --key "$mode" --run "$run" --status "$status" \
                --scenario deflate-rss --error "$(tail -1 "$WORK/last.out" | cut -c1-200)" --varz-before "" --varz-after "" \
                <"$WORK/step.jsonl" >>"$RESULTS"
        done
    done
}
