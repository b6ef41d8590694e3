#!/usr/bin/env bash
# make test-asan / make test-tsan: runs the already built sanitized tests.
#   scripts/sanitized-test.sh address|thread SCRATCH
# The integration tests start $ROOMD_BIN, the roomd of the same sanitized
# build. Reports go to SCRATCH/reports/<sanitizer>.<pid> (log_path), so a
# report from a daemon whose stderr a test discards is not lost; the run fails
# if a test fails or if any report was written.
#
# The unit test modules run in one go; RoomServerTests runs one suite at a
# time: a sanitized daemon is 2-5x slower, and 180 of them starting at once on
# a 2-core machine miss the 10 s join deadline (1008) before their first call.
set -uo pipefail
cd "$(dirname "$0")/.."
sanitizer=$1
scratch=$2
reports=$PWD/$scratch/reports
rm -rf "$reports"
mkdir -p "$reports"
export ROOMD_BIN=$PWD/$scratch/debug/roomd
# Swift's own crash backtracer reads other threads' stacks, which ASan reports
# as a stack-buffer-underflow, and it can hang a dying sanitized process: the
# sanitizer's report is the one wanted.
export SWIFT_BACKTRACE=enable=no
case "$sanitizer" in
  address)
    export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0"
    export LSAN_OPTIONS="suppressions=$PWD/scripts/sanitizers/lsan.supp:print_suppressions=0"
    ;;
  thread)
    export TSAN_OPTIONS="log_path=$reports/tsan:halt_on_error=0:second_deadlock_stack=1:suppressions=$PWD/scripts/sanitizers/tsan.supp"
    ;;
  *) echo "usage: $0 address|thread SCRATCH" >&2; exit 64 ;;
esac
run() { swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" "$@"; }

log=$scratch/test.log
: > "$log"
suites=$(run list 2>/dev/null | sed -E 's|/.*||' | sort -u)
[ -n "$suites" ] || { echo "no tests found in $scratch (build with --build-tests first)"; exit 1; }
failed=()
run --filter '^(RoomWireTests|RoomConfigTests|RoomModelTests)\.' >>"$log" 2>&1 || failed+=("RoomWireTests RoomConfigTests RoomModelTests")
count=0
for suite in $(grep -v -E '^(RoomWireTests|RoomConfigTests|RoomModelTests)\.' <<<"$suites"); do
  count=$((count + 1))
  if ! run --filter "^${suite}/" >>"$log" 2>&1; then failed+=("$suite"); fi
done
grep -E '^(✔|✘) Test run' "$log" | sed 's/ after [0-9.]* seconds//' | sort | uniq -c
echo "$sanitizer sanitizer: unit modules and $count RoomServerTests suites run; failed: ${failed[*]:-none} (log: $log)"
status=0
[ ${#failed[@]} -eq 0 ] || { grep '✘' "$log" | head -20; status=1; }
reported=$(find "$reports" -type f | wc -l)
if [ "$reported" -gt 0 ]; then
  echo "$sanitizer sanitizer: $reported report(s) in $reports:"
  grep -h -E '^(SUMMARY|WARNING|ERROR)' "$reports"/* | sort | uniq -c | head -20
  exit 1
fi
echo "$sanitizer sanitizer: no reports"
exit $status
