#!/usr/bin/env bash
# A second Docker engine on this machine, beside the first, to prove the lab runs on an engine
# it is not local to (`make engine2`, `make engine2-stop`; see docs/guides/nightly-and-engines.md).
# Everything of its own: socket, data root, exec root (its containerd lives there), pid file,
# daemon config, and a NETWORK NAMESPACE of its own (`fleetlab-engine2`) with its bridge and
# address pool inside. A starting dockerd flushes and re-creates its iptables chains (measured
# with 20.10.24: in the host's namespace it dropped the first engine's isolation rules); in a
# namespace of its own it has its own iptables and routes, so the host's firewall and the first
# engine's rules are never touched (lab/host/engine2.docker.test.ts compares `iptables-save` before
# and after three starts and stops, one of them failing). The namespace has no link out: its
# containers reach nothing but each other. Its socket is a file, so the host (and a runner
# container on it) drives it as usual; a lab process on the host cannot reach its containers'
# addresses, so the lab runs in a runner container there (`RUNNER=container`) or in the
# namespace itself (`ip netns exec fleetlab-engine2 ...`).
# usage: engine2.sh start | stop | status
set -euo pipefail
STATE="${FLEETLAB_STATE:-$(cd "$(dirname "$0")/../.." && pwd)/.lab}"
NAME="${FLEETLAB_ENGINE2_NAME:-fleetlab-engine2}"  # names its socket, data, exec root, pid file and namespace
NETNS="$NAME"
SOCK="${FLEETLAB_ENGINE2_SOCK:-/run/$NAME.sock}"
DATA="${FLEETLAB_ENGINE2_DATA:-/var/lib/$NAME}"
EXEC="/run/$NAME"
PIDFILE="/run/$NAME.pid"
WAIT_S="${FLEETLAB_ENGINE2_WAIT_S:-30}"   # how long a start waits for the engine to answer
BRIDGE=fl-engine2
BRIDGE_IP=10.213.255.1/24          # its default bridge (builds' RUN steps use it)
POOL=base=10.214.0.0/16,size=24    # its networks: 256 labs' worth
LOG="$STATE/${NAME#fleetlab-}.log"
CONFIG="$STATE/${NAME#fleetlab-}-daemon.json"  # its own daemon config: never the first engine's
mkdir -p "$STATE"

answers() { timeout 5 docker -H "unix://$SOCK" version --format '{{.Server.Version}}' >/dev/null 2>&1; }
running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }
in_ns() { ip netns exec "$NETNS" "$@"; }
has_ns() { ip netns list 2>/dev/null | grep -qE "^$NETNS( |$)"; }

# Rules an engine2 of an older lab left in the host's tables (it ran in the host's namespace):
# only lines naming its bridge, deleted one by one; nothing else of the host's is touched.
legacy_rules() {
  local table line
  for table in filter nat; do
    while IFS= read -r line; do
      [ -n "$line" ] || continue
      # shellcheck disable=SC2086 # the rule is iptables' own words
      iptables -t "$table" -D ${line#-A } && echo "fleetlab: removed a stale host iptables rule of an older engine2: -t $table $line" >&2
    done < <(iptables -t "$table" -S 2>/dev/null | grep -E -- "^-A .*\b$BRIDGE\b" || true)
  done
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE"; fi
}

# Stop its dockerd (its containers and containerd go with it) and remove its namespace. Every
# exit path of start and stop ends here; says and returns 1 if the daemon would not stop.
teardown() {
  local rc=0
  if running; then
    local pid; pid="$(cat "$PIDFILE")"
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "fleetlab: engine2 (pid $pid) did not stop within 30 s after SIGTERM; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
      sleep 1
      if kill -0 "$pid" 2>/dev/null; then echo "fleetlab: engine2 (pid $pid) is still running" >&2; rc=1; fi
    fi
  fi
  # A containerd (or container shim) still running in the namespace would keep it alive.
  if has_ns; then
    local left; left="$(ip netns pids "$NETNS" 2>/dev/null || true)"
    if [ -n "$left" ]; then
      # shellcheck disable=SC2086 # pids, one word each
      kill -KILL $left 2>/dev/null || true
      sleep 0.5
    fi
    ip netns del "$NETNS" 2>/dev/null || { echo "fleetlab: could not remove network namespace $NETNS" >&2; rc=1; }
  fi
  [ "$rc" = 0 ] && rm -f "$PIDFILE"
  return "$rc"
}

start() {
  if answers; then echo "fleetlab: engine2 already answers at unix://$SOCK" >&2; return 0; fi
  if [ "$(id -u)" != 0 ]; then echo "fleetlab: engine2 needs root (a dockerd and a network namespace of its own)" >&2; exit 2; fi
  command -v dockerd >/dev/null || { echo "fleetlab: dockerd is missing: run 'make engine' first" >&2; exit 2; }
  # Left by a dockerd killed outright, or by an older engine2: cleared before a new start.
  teardown || exit 2
  legacy_rules
  ip netns add "$NETNS"
  # From here on, a failed start leaves nothing: no daemon, no namespace.
  trap 'echo "fleetlab: engine2 start failed; removing what it started" >&2; teardown || true' ERR
  in_ns ip link set lo up
  in_ns ip link add name "$BRIDGE" type bridge
  in_ns ip addr add "$BRIDGE_IP" dev "$BRIDGE"
  in_ns ip link set "$BRIDGE" up
  mkdir -p "$DATA" "$EXEC"
  printf '{}\n' >"$CONFIG"
  echo "fleetlab: starting engine2 (unix://$SOCK, network namespace $NETNS, data $DATA, log $LOG) ..." >&2
  # Close every inherited descriptor but stdio first: a daemon keeping one would hold what its
  # caller held (a flock on a lock file held by engine2's dockerd blocked every other run).
  ( for fd in /proc/$BASHPID/fd/*; do fd="${fd##*/}"; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
    exec setsid nohup nsenter --net="/run/netns/$NETNS" dockerd --config-file "$CONFIG" --host "unix://$SOCK" \
    --data-root "$DATA" --exec-root "$EXEC" --pidfile "$PIDFILE" \
    --bridge "$BRIDGE" --default-address-pool "$POOL" </dev/null >"$LOG" 2>&1 ) &
  local daemon=$! waited=0
  while [ "$waited" -lt $((WAIT_S * 2)) ]; do
    if answers; then
      trap - ERR
      echo "fleetlab: engine2 ready: DOCKER_HOST=unix://$SOCK" >&2
      return 0
    fi
    if ! kill -0 "$daemon" 2>/dev/null; then
      echo "fleetlab: engine2's dockerd exited during its start; its log ($LOG) ends:" >&2
      tail -n 5 "$LOG" >&2 || true
      trap - ERR; teardown || true; exit 2
    fi
    sleep 0.5; waited=$((waited + 1))
  done
  echo "fleetlab: engine2 did not answer within $WAIT_S s (FLEETLAB_ENGINE2_WAIT_S); stopping it. See $LOG" >&2
  trap - ERR
  # It may not have written its pid file yet: the launcher's pid is the daemon's (exec).
  [ -f "$PIDFILE" ] || echo "$daemon" >"$PIDFILE"
  teardown || true
  exit 2
}

stop() {
  if running || has_ns; then
    teardown || exit 2
    echo "fleetlab: engine2 stopped" >&2
  else
    echo "fleetlab: engine2 is not running" >&2
  fi
  legacy_rules
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if answers; then echo "engine2 answers at unix://$SOCK"; else echo "engine2 is not running"; exit 1; fi ;;
  *) echo "usage: $0 start | stop | status" >&2; exit 2 ;;
esac
