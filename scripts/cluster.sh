#!/bin/sh
# A local roomd cluster to try (docs/CLUSTER.md): nats-server with JetStream
# and 3 roomd nodes on loopback, one shared secret. Prints the URLs and
# ready-to-paste `roomd join` and `roomd token` lines that carry the
# cluster's secret file (a dev secret of an earlier `make run` on the same
# port would not verify: 40109); Ctrl-C stops everything.
#
#   scripts/cluster.sh                       (make cluster builds first)
#   PORT=7890 NATS_PORT=4333 scripts/cluster.sh
#   READY_TIMEOUT=60 scripts/cluster.sh      (a loaded machine: wait longer for the nodes)
#   DRAIN_TIMEOUT=30 scripts/cluster.sh      (--drain-timeout of every node: SIGTERM drains)
#
# A room lives on one node (its home) and peers may join it on any node:
# the others relay (docs/CLUSTER.md).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
roomd=${ROOMD_BIN:-$root/.build/debug/roomd}
config=${CONFIG:-$root/config/roles.json}
port=${PORT:-7880}
nats_port=${NATS_PORT:-4222}
nats=$(command -v nats-server || echo /usr/sbin/nats-server)
[ -x "$roomd" ] || { echo "no roomd at $roomd: run make build (or set ROOMD_BIN)" >&2; exit 1; }
[ -x "$nats" ] || { echo "no nats-server: run make deps (apt-get install nats-server)" >&2; exit 1; }

# Fail fast on a taken port (e.g. `make run` holds 7880), naming it and its holder.
for p in "$nats_port" "$port" $((port + 1)) $((port + 2)); do
  if command -v ss >/dev/null && [ -n "$(ss -Hltn "sport = :$p" 2>/dev/null)" ]; then
    holder=$(ss -Hltnp "sport = :$p" 2>/dev/null | sed -n 's/.*users:(("\([^"]*\)",pid=\([0-9]*\).*/\1, pid \2/p' | head -n 1)
    echo "port $p is taken${holder:+ (by $holder)}: stop it (make run holds 7880), or pick free ones:" \
      "PORT=7890 NATS_PORT=4333 make cluster (the nodes take PORT..PORT+2, nats-server NATS_PORT)" >&2
    exit 1
  fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/roomd-cluster.XXXXXX")
pids=""
nodes=""
cleanup() {
  trap - INT TERM EXIT
  # The nodes first (SIGTERM: each drains, the last saves its rooms), then the bus.
  for pid in $nodes; do kill "$pid" 2>/dev/null || true; done
  for pid in $nodes; do wait "$pid" 2>/dev/null || true; done
  for pid in $pids; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
  echo "stopped"
}
trap cleanup INT TERM EXIT

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$work/secret"
"$nats" -a 127.0.0.1 -p "$nats_port" -js -sd "$work/nats" > "$work/nats.log" 2>&1 &
pids="$pids $!"
drain=${DRAIN_TIMEOUT:-10}
start_node() {
  "$roomd" --config "$config" --port $((port + $1 - 1)) --secret-file "$work/secret" \
    --cluster "nats://127.0.0.1:$nats_port" --node-id "node$1" --drain-timeout "$drain" >> /dev/null 2>> "$work/node$1.log" &
  echo $! > "$work/node$1.pid"
  nodes="$nodes $!"
}
for i in 1 2 3; do start_node "$i"; done

# Ready when every node counts 3 nodes on a connected bus (at most READY_TIMEOUT s, default 15).
ready=0
for _ in $(seq $(( ${READY_TIMEOUT:-15} * 10 ))); do
  ready=0
  for i in 1 2 3; do
    if curl -s "http://127.0.0.1:$((port + i - 1))/healthz" 2>/dev/null | grep -q '"nodes":3,"connected":true'; then
      ready=$((ready + 1))
    fi
  done
  [ "$ready" -eq 3 ] && break
  # A node or the bus that exited will not come up: say which, at once.
  for i in 1 2 3; do
    if ! kill -0 "$(cat "$work/node$i.pid")" 2>/dev/null; then
      echo "node$i exited before the cluster came up; its log:" >&2
      tail -n 5 "$work/node$i.log" >&2
      exit 1
    fi
  done
  for pid in $pids; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "nats-server exited before the cluster came up; its log:" >&2
      tail -n 5 "$work/nats.log" >&2
      exit 1
    fi
  done
  sleep 0.1
done
if [ "$ready" -ne 3 ]; then
  echo "the cluster did not come up; logs:" >&2
  tail -n 5 "$work"/*.log >&2
  exit 1
fi

echo "nats-server  nats://127.0.0.1:$nats_port (JetStream, store in $work/nats)"
for i in 1 2 3; do
  echo "node$i        ws://127.0.0.1:$((port + i - 1))/ws   http://127.0.0.1:$((port + i - 1))/healthz   log $work/node$i.log"
done
echo "secret:      $work/secret  (export ROOMD_SECRET_FILE=$work/secret for roomd token / join)"
echo "join, one line per node, each a peer of room demo:"
echo "  $roomd join --url ws://127.0.0.1:$port/ws --secret-file $work/secret --room demo --role host --name Ada"
echo "  $roomd join --url ws://127.0.0.1:$((port + 1))/ws --secret-file $work/secret --room demo --role viewer --name Bob"
echo "  $roomd join --url ws://127.0.0.1:$((port + 2))/ws --secret-file $work/secret --room demo --role guest --name Cy"
echo "token:       $roomd token --secret-file $work/secret --room demo --user ada --role host"
echo "rolling restart (docs/CLUSTER.md): kill -TERM \$(cat $work/node1.pid), wait for its exit, start it again"
echo "  with the same --node-id; it drains (its rooms move, its peers get 1012 and resume elsewhere)."
echo "Ctrl-C stops everything."
wait
