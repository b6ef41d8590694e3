#!/usr/bin/env bash
# Builds and runs the README's Swift harness snippets, verbatim, in a separate
# package that depends on roomd by path — as a user's package would.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/harness/Tests/MyShowTests"
ln -s "$root" "$work/roomd"   # the dependency's identity is its folder's name
# The Nth ```swift block under a README heading.
block() {
  awk -v heading="$1" -v n="$2" 'index($0, heading) == 1 {s=1} s&&/^```swift/{k++; if (k==n) {c=1; next}} c&&/^```/{exit} c{print}' "$root/README.md"
}
# Under "### From Swift": the user's Package.swift, then the test.
block "### From Swift" 1 > "$work/harness/Package.swift"
grep -q 'package(path: "../roomd")' "$work/harness/Package.swift" || { echo "no Package.swift block in README.md"; exit 1; }
block "### From Swift" 2 > "$work/harness/Tests/MyShowTests/Snippet.swift"
test -s "$work/harness/Tests/MyShowTests/Snippet.swift" || { echo "no snippet found in README.md"; exit 1; }
# And the first under "### Testing guest call-in without sleeping" (test mode).
block "### Testing guest call-in without sleeping" 1 > "$work/harness/Tests/MyShowTests/TestModeSnippet.swift"
test -s "$work/harness/Tests/MyShowTests/TestModeSnippet.swift" || { echo "no test-mode snippet in README.md"; exit 1; }
# A scratch folder of its own inside the repo (git-ignored): kept between local runs.
# No ROOMD_BIN: RoomdTesting finds the checkout's .build/debug/roomd, as the README says.
if ! env -u ROOMD_BIN swift test --package-path "$work/harness" \
  --scratch-path "$root/.build-snippet" > "$work/log" 2>&1; then
  cat "$work/log"
  echo "readme-snippet-test: the README's Swift snippet failed"
  exit 1
fi
grep -E "^(✔|✘) Test run" "$work/log"
