#!/usr/bin/env bash
# A second Docker engine on this machine, beside the first, to prove the lab runs on an engine
# it is not local to (`make engine2`, `make engine2-stop`; see docs/guides/nightly-and-engines.md).
# Everything of its own: socket, data root, exec root (its containerd lives there), pid file,
# a bridge of its own and an address pool that never overlaps the first engine's (172.17-31.x,
# 192.168.x). Both engines share the host's iptables, and a starting dockerd flushes and
# re-creates the chains DOCKER and DOCKER-ISOLATION-STAGE-1/2 (measured with 20.10.24: the
# first engine's docker0 isolation rules were gone after it started): the rules of those chains
# are saved before the start and whatever went missing is put back right after.
# usage: engine2.sh start | stop | status
set -euo pipefail
STATE="${FLEETLAB_STATE:-$(cd "$(dirname "$0")/.." && pwd)/.lab}"
NAME=fleetlab-engine2
SOCK="${FLEETLAB_ENGINE2_SOCK:-/run/$NAME.sock}"
DATA="${FLEETLAB_ENGINE2_DATA:-/var/lib/$NAME}"
EXEC="/run/$NAME"
PIDFILE="/run/$NAME.pid"
BRIDGE=fl-engine2
BRIDGE_IP=10.213.255.1/24          # its default bridge (builds' RUN steps use it)
POOL=base=10.214.0.0/16,size=24    # its networks: 256 labs' worth, disjoint from the first engine's
LOG="$STATE/engine2.log"
mkdir -p "$STATE"

answers() { timeout 5 docker -H "unix://$SOCK" version --format '{{.Server.Version}}' >/dev/null 2>&1; }
CHAINS="filter:DOCKER filter:DOCKER-ISOLATION-STAGE-1 filter:DOCKER-ISOLATION-STAGE-2 nat:DOCKER"
# "table -A chain rule..." for each rule of those chains.
chain_rules() {
  for tc in $CHAINS; do iptables -t "${tc%%:*}" -S "${tc#*:}" 2>/dev/null | grep '^-A ' | sed "s/^/${tc%%:*} /" || true; done
}
# Put back (at the top of their chain, before the final RETURN) rules that are gone.
restore_rules() {
  local now table rule chain
  now="$(chain_rules)"
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    grep -qxF -- "$line" <<<"$now" && continue
    table="${line%% *}" rule="${line#* -A }" chain="${rule%% *}"
    # shellcheck disable=SC2086 # the rule is iptables' own words
    iptables -t "$table" -I "$chain" 1 ${rule#* } && echo "fleetlab: put back iptables rule: -t $table -A $rule" >&2
  done <<<"$1"
}
running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

start() {
  if answers; then echo "fleetlab: engine2 already answers at unix://$SOCK" >&2; return 0; fi
  if [ "$(id -u)" != 0 ]; then echo "fleetlab: engine2 needs root (a dockerd of its own)" >&2; exit 2; fi
  command -v dockerd >/dev/null || { echo "fleetlab: dockerd is missing: run 'make engine' first" >&2; exit 2; }
  # A pid file of a dockerd killed outright would make the new one refuse to start.
  if [ -f "$PIDFILE" ] && ! running; then rm -f "$PIDFILE"; fi
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add name "$BRIDGE" type bridge
    ip addr add "$BRIDGE_IP" dev "$BRIDGE"
  fi
  ip link set "$BRIDGE" up
  mkdir -p "$DATA" "$EXEC"
  local before; before="$(chain_rules)"
  echo "fleetlab: starting engine2 (unix://$SOCK, data $DATA, log $LOG) ..." >&2
  # Close every inherited descriptor but stdio first: a daemon keeping one would hold what its
  # caller held (a flock on a lock file held by engine2's dockerd blocked every other run).
  ( for fd in /proc/$BASHPID/fd/*; do fd="${fd##*/}"; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done
    exec setsid nohup dockerd --host "unix://$SOCK" --data-root "$DATA" --exec-root "$EXEC" --pidfile "$PIDFILE" \
    --bridge "$BRIDGE" --default-address-pool "$POOL" </dev/null >"$LOG" 2>&1 ) &
  for _ in $(seq 1 60); do
    if answers; then
      restore_rules "$before"
      echo "fleetlab: engine2 ready: DOCKER_HOST=unix://$SOCK" >&2
      return 0
    fi
    sleep 0.5
  done
  echo "fleetlab: engine2 did not answer within 30 s; see $LOG" >&2
  exit 2
}

stop() {
  if running; then
    local pid; pid="$(cat "$PIDFILE")"
    # Its lab containers go first (prune --all on that engine is the caller's choice; here the
    # engine stops them itself), then dockerd, which stops its own containerd.
    kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$pid" 2>/dev/null; then echo "fleetlab: engine2 (pid $pid) did not stop within 30 s" >&2; exit 2; fi
    echo "fleetlab: engine2 stopped" >&2
  else
    echo "fleetlab: engine2 is not running" >&2
  fi
  rm -f "$PIDFILE"
  if ip link show "$BRIDGE" >/dev/null 2>&1; then ip link del "$BRIDGE"; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if answers; then echo "engine2 answers at unix://$SOCK"; else echo "engine2 is not running"; exit 1; fi ;;
  *) echo "usage: $0 start | stop | status" >&2; exit 2 ;;
esac
