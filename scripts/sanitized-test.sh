#!/usr/bin/env bash
# make test-asan / make test-tsan: runs the already built sanitized tests.
#   scripts/sanitized-test.sh address|thread SCRATCH
# The integration tests start $ROOMD_BIN, the roomd of the same sanitized
# build. Reports go to SCRATCH/reports/<sanitizer>.<pid> (log_path), so a
# report from a daemon whose stderr a test discards is not lost; the run fails
# if the tests fail or if any report was written.
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
swift test --skip-build --sanitize="$sanitizer" --scratch-path "$scratch" 2>&1 | tee "$scratch/test.log"
status=${PIPESTATUS[0]}
count=$(find "$reports" -type f | wc -l)
if [ "$count" -gt 0 ]; then
  echo "$sanitizer sanitizer: $count report(s) in $reports:"
  grep -h -E '^(SUMMARY|WARNING|ERROR)' "$reports"/* | sort | uniq -c | head -20
  exit 1
fi
echo "$sanitizer sanitizer: no reports; tests exit status $status"
exit "$status"
