#!/usr/bin/env bash
# scripts/bench/ab.sh ROOMD_A ROOMD_B: one fan-out lever, measured (issue 12 item 2: "measure
# one by one"). The fan-out 1 → FANOUT_RECEIVERS at each rate of RATES for both binaries, the
# runs alternating A, B, A, B… on a fresh roomd per step so both see the same machine; then
# the medians (min–max) side by side as Markdown: delivered/s, p99, loss, roomd CPU per delivery.
#
#   RATES [4000,5000,6000] RUNS [3] STEP_S [10] DRAIN_S [3] FANOUT_RECEIVERS [1000]
#   ROOMD_ARGS_A, ROOMD_ARGS_B   extra roomd flags for each side (e.g. the same binary with another setting)
#   KEEP=1 keeps the work directory (results.jsonl)
#
# e.g.  git stash; swift build -c release; cp .build/release/roomd /tmp/roomd-before; git stash pop
#       swift build -c release; scripts/bench/ab.sh /tmp/roomd-before .build/release/roomd
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -eq 2 ] || { echo "usage: $0 ROOMD_A ROOMD_B" >&2; exit 64; }
A=$(realpath "$1")
B=$(realpath "$2")
RATES=${RATES:-4000,5000,6000}
RUNS=${RUNS:-3}
STEP_S=${STEP_S:-10}
DRAIN_S=${DRAIN_S:-3}
FANOUT_RECEIVERS=${FANOUT_RECEIVERS:-1000}
ROOMD_ARGS_A=${ROOMD_ARGS_A:-}
ROOMD_ARGS_B=${ROOMD_ARGS_B:-}
# shellcheck source=scripts/bench/lib.sh
. scripts/bench/lib.sh
# shellcheck source=scripts/bench/sections.sh
. scripts/bench/sections.sh
for binary in "$A" "$B"; do [ -x "$binary" ] || die "$binary is not an executable"; done

# shellcheck disable=SC2086  # the extra flags are words on purpose
start_a() { ROOMD=$A start_roomd "$1" $ROOMD_ARGS_A; }
# shellcheck disable=SC2086
start_b() { ROOMD=$B start_roomd "$1" $ROOMD_ARGS_B; }

START=$(date +%s)
for rate in ${RATES//,/ }; do
    log "A/B: 1 sender → $FANOUT_RECEIVERS receivers at $rate msg/s, $RUNS × ${STEP_S} s each"
    for run in $(seq "$RUNS"); do
        fanout_step ab-a start_a roomd_args "$rate" "$run"
        fanout_step ab-b start_b roomd_args "$rate" "$run"
    done
done
stop_servers
python3 "$REPORT_PY" ab --results "$RESULTS" --a "$A $ROOMD_ARGS_A" --b "$B $ROOMD_ARGS_B"
log "done in $(($(date +%s) - START)) s"
