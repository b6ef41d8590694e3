#!/usr/bin/env bash
# make fuzz: builds the libFuzzer targets (Fuzz/Sources) with
# -sanitize=fuzzer,address in .build-fuzz and runs each for FUZZ_SECONDS.
#
#   scripts/fuzz.sh [target ...]        targets: json template dispatcher http (default: all)
#   FUZZ_SECONDS=600 scripts/fuzz.sh http
#
# Seeds: Fuzz/corpus/<target> (committed). What a run adds to the corpus goes
# to .build-fuzz/corpus/<target> (git-ignored, reused by the next run);
# findings (crash-*, timeout-*, oom-*) to .build-fuzz/findings/<target>; the
# log to .build-fuzz/logs/<target>.log. Reproduce a finding with
#   .build-fuzz/debug/Fuzz<Target> .build-fuzz/findings/<target>/crash-…
# Exits 1 if any target found something.
set -uo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(json template dispatcher http)
scratch=.build-fuzz
export ROOMD_FUZZ=1
# Leak checking at exit would report the state a target keeps on purpose
# (the HTTP target's daemon runs for the whole process).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:handle_abort=1}
# Swift's crash backtracer, run on a finding, trips ASan (it reads other
# threads' stacks) and slows the exit: libFuzzer prints the stack itself.
export SWIFT_BACKTRACE=enable=no

product() {
  case "$1" in
    json) echo FuzzJSON ;; template) echo FuzzTemplate ;;
    dispatcher) echo FuzzDispatcher ;; http) echo FuzzHTTP ;;
    *) echo "fuzz: unknown target $1 (json template dispatcher http)" >&2; exit 64 ;;
  esac
}

for target in "${targets[@]}"; do
  name=$(product "$target") || exit 64
  swift build --scratch-path "$scratch" -Xswiftc -sanitize=fuzzer,address --product "$name" || exit 1
done

failed=0
summary=()
for target in "${targets[@]}"; do
  name=$(product "$target")
  mkdir -p "$scratch/corpus/$target" "$scratch/findings/$target" "$scratch/logs"
  log="$scratch/logs/$target.log"
  before=$(ls "$scratch/findings/$target" | wc -l)
  echo "fuzz: $target for ${seconds}s (log: $log)"
  "$scratch/debug/$name" "$scratch/corpus/$target" "Fuzz/corpus/$target" \
    -dict="Fuzz/dict/$target.dict" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=4096 \
    -max_len=8192 -print_final_stats=1 -artifact_prefix="$scratch/findings/$target/" >"$log" 2>&1
  status=$?
  after=$(ls "$scratch/findings/$target" | wc -l)
  runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1)
  line="$target: status $status, ${runs:-?} executions in ${seconds}s, ${cov:-no coverage line}, findings $((after - before))"
  echo "fuzz: $line"
  summary+=("$line")
  if [ "$status" -ne 0 ] || [ "$after" -gt "$before" ]; then
    failed=1
    grep -E 'fuzz finding|ERROR: AddressSanitizer|ERROR: libFuzzer|Fatal error|SUMMARY' "$log" | head -5
    ls -t "$scratch/findings/$target" | head -3 | sed "s|^|  $scratch/findings/$target/|"
  fi
done
printf '%s\n' "${summary[@]}" > "$scratch/logs/summary.txt"
echo "fuzz: summary in $scratch/logs/summary.txt"
exit $failed
