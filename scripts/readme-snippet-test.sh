#!/usr/bin/env bash
# Builds and runs the README's Swift harness snippets, verbatim, in a separate
# package that depends on roomd by path — as a user's package would.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/harness/Tests/HarnessTests"
ln -s "$root" "$work/roomd"   # the dependency's identity is its folder's name
# The first ```swift block under "### From Swift".
awk '/^### From Swift/{s=1} s&&/^```swift/{c=1;next} c&&/^```/{exit} c{print}' "$root/README.md" \
  > "$work/harness/Tests/HarnessTests/Snippet.swift"
test -s "$work/harness/Tests/HarnessTests/Snippet.swift" || { echo "no snippet found in README.md"; exit 1; }
# And the first under "### Testing guest call-in without sleeping" (test mode).
awk '/^### Testing guest call-in without sleeping/{s=1} s&&/^```swift/{c=1;next} c&&/^```/{exit} c{print}' "$root/README.md" \
  > "$work/harness/Tests/HarnessTests/TestModeSnippet.swift"
test -s "$work/harness/Tests/HarnessTests/TestModeSnippet.swift" || { echo "no test-mode snippet in README.md"; exit 1; }
cat > "$work/harness/Package.swift" <<'SWIFT'
// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "harness",
    platforms: [.macOS(.v14)],
    dependencies: [.package(path: "../roomd")],
    targets: [
        .testTarget(name: "HarnessTests", dependencies: [
            .product(name: "RoomClient", package: "roomd"),
            .product(name: "RoomdTesting", package: "roomd"),
        ]),
    ]
)
SWIFT
# A scratch folder of its own inside the repo (git-ignored): kept between local runs.
if ! ROOMD_BIN="$root/.build/debug/roomd" swift test --package-path "$work/harness" \
  --scratch-path "$root/.build-snippet" > "$work/log" 2>&1; then
  cat "$work/log"
  echo "readme-snippet-test: the README's Swift snippet failed"
  exit 1
fi
grep -E "^(✔|✘) Test run" "$work/log"
