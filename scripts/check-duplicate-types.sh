#!/bin/sh
# One definition per wire type (issue #31, docs/ARCHITECTURE.md "Wire types").
# Fails when
#   1. RoomClient declares a public type whose name RoomModel or RoomConfig
#      also declares (a wire object is defined once, in RoomProtocol, and
#      RoomClient re-exports it; the model keeps its own types only under
#      names of their own);
#   2. RoomClient declares a type whose name RoomProtocol declares (the kit
#      re-exports the wire's types, it does not copy them);
#   3. RoomProtocol and RoomModel, RoomConfig or RoomServer declare the same
#      top-level name (the server imports them together: it would be
#      ambiguous there).
# Typealiases do not count: `typealias Peer = WirePeer` is how RoomClient
# keeps its names. Run by `make lint`.
set -eu
cd "$(dirname "$0")/.."

decl='(struct|enum|class|actor|protocol) +[A-Za-z_][A-Za-z0-9_]*'
# Every declared type name (nested ones too) in the given directories.
all() { grep -rhoE "^ *(@[A-Za-z]+ +)*((public|package|internal|fileprivate|private) +)?(final +)?$decl" "$@" | awk '{print $NF}' | sort -u; }
# Public ones only.
public() { grep -rhoE "^ *(@[A-Za-z]+ +)*public +(final +)?$decl" "$@" | awk '{print $NF}' | sort -u; }
# Top-level ones only (column 0).
top() { grep -rhoE "^(@[A-Za-z]+ +)*((public|package|internal|fileprivate|private) +)?(final +)?$decl" "$@" | awk '{print $NF}' | sort -u; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
check() {  # what, names-a file, names-b file
    dups=$(comm -12 "$2" "$3")
    if [ -n "$dups" ]; then
        echo "check-duplicate-types: $1:" $dups >&2
        status=1
    fi
}

public Sources/RoomClient >"$tmp/client-public"
all Sources/RoomClient >"$tmp/client-all"
all Sources/RoomModel Sources/RoomConfig >"$tmp/model-all"
all Sources/RoomProtocol >"$tmp/protocol-all"
top Sources/RoomProtocol >"$tmp/protocol-top"
top Sources/RoomModel Sources/RoomConfig Sources/RoomServer >"$tmp/server-top"

check "public in RoomClient and declared in RoomModel/RoomConfig" "$tmp/client-public" "$tmp/model-all"
check "declared in RoomClient and in RoomProtocol" "$tmp/client-all" "$tmp/protocol-all"
check "top-level in RoomProtocol and in RoomModel/RoomConfig/RoomServer" "$tmp/protocol-top" "$tmp/server-top"
exit $status
