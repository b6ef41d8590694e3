#!/usr/bin/env bash
# natsvarz.sh http://127.0.0.1:MONITOR_PORT  ->  "in_msgs out_msgs" of that nats-server (/varz).
# Read before and after a step: the differences are the messages the bus carried
# (for a cluster step: bus messages per broadcast = Δin_msgs ÷ broadcasts sent).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 http://127.0.0.1:MONITOR_PORT" >&2; exit 64; }
curl -fsS --max-time 5 "$1/varz" \
    | python3 -c 'import json, sys; v = json.load(sys.stdin); print(v["in_msgs"], v["out_msgs"])'
