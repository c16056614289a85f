#!/bin/sh
# Run once, as the lab user, while the openclaw-pkg image is built (lab/engine/images.ts,
# buildPackageImage): the CLI help and config check the capability probe asks for, a gateway
# to "ready" and a node host until it has reached that gateway, then both stopped. OpenClaw
# turns on Node's compile cache under <tmp>/node-compile-cache/openclaw/<version>/..., keyed by
# the Node version and the uid, and Node writes it when the process exits: the image ships it,
# and every container started from it (each gateway, node host, restart and restore) starts
# warm instead of compiling OpenClaw's modules again.
# Best effort: whatever fails here leaves a colder cache, never a broken image (exit 0, and the
# lines it prints say what happened). No network: the container runs with none; the node host
# reaches the gateway on loopback. Everything but the cache is removed at the end.
set -u
W=/tmp/fleetlab-warm
mkdir -p "$W/home"
export HOME="$W/home" OPENCLAW_STATE_DIR="$W/state" OPENCLAW_CONFIG_PATH="$W/state/openclaw.json" \
  OPENCLAW_NO_AUTO_UPDATE=1 OPENCLAW_DISABLE_BONJOUR=1 OPENCLAW_SKIP_GMAIL_WATCHER=1 \
  OPENCLAW_SKIP_CANVAS_HOST=1 OPENCLAW_SKIP_BROWSER_CONTROL_SERVER=1 OPENCLAW_NO_RESPAWN=1 \
  OPENCLAW_ALLOW_INSECURE_PRIVATE_WS=1 OPENCLAW_GATEWAY_TOKEN=fleetlab-warm-up NO_COLOR=1 TERM=dumb
now() { date +%s; }
# Everything the runs left in the temp folder but the cache (their logs, state, lock folders:
# a lock folder shipped in the image would be every container's stale lock).
clean() { find /tmp -mindepth 1 -maxdepth 1 ! -name node-compile-cache -exec rm -rf {} +; }
t0=$(now)
node_args=""
if timeout 120 openclaw node run --help 2>&1 | grep -q -- "--session-host"; then node_args="--session-host"; fi
timeout 120 openclaw gateway run --help >/dev/null 2>&1
echo '{}' > "$W/empty.json"
OPENCLAW_CONFIG_PATH="$W/empty.json" timeout 120 openclaw config validate --json >/dev/null 2>&1
echo "warm-up: CLI help and config check $(($(now) - t0)) s"

# Stop a process with SIGTERM (Node writes the cache as it exits), SIGKILL after 60 s.
stop() {
  kill -TERM "$1" 2>/dev/null || return 0
  i=0
  while kill -0 "$1" 2>/dev/null; do
    sleep 0.5; i=$((i + 1))
    if [ "$i" -ge 120 ]; then kill -KILL "$1" 2>/dev/null; echo "warm-up: $2 did not stop within 60 s (killed; its cache is lost)"; break; fi
  done
  wait "$1" 2>/dev/null || true
}

t1=$(now)
openclaw gateway run --port 18789 --bind lan --allow-unconfigured >"$W/gateway.log" 2>&1 &
gw=$!
i=0
until grep -q "\[gateway\] ready" "$W/gateway.log"; do
  sleep 0.5; i=$((i + 1))
  if ! kill -0 "$gw" 2>/dev/null || [ "$i" -ge 480 ]; then
    echo "warm-up: the gateway did not become ready ($(($(now) - t1)) s; the image is built with a partial cache); its log ends:"
    tail -5 "$W/gateway.log"
    stop "$gw" gateway
    clean
    exit 0
  fi
done
echo "warm-up: gateway ready in $(($(now) - t1)) s"

t2=$(now)
# shellcheck disable=SC2086
openclaw node run --host 127.0.0.1 --port 18789 --display-name fleetlab-warm-up $node_args >"$W/node.log" 2>&1 &
nh=$!
# The node host has started and reached the gateway once it asks for pairing or approval.
i=0
until grep -qiE "pairing|approval|approve|connected" "$W/node.log"; do
  sleep 0.5; i=$((i + 1))
  if ! kill -0 "$nh" 2>/dev/null || [ "$i" -ge 240 ]; then echo "warm-up: the node host did not reach the gateway ($(($(now) - t2)) s)"; break; fi
done
sleep 2
echo "warm-up: node host ran $(($(now) - t2)) s"
stop "$nh" "the node host"
stop "$gw" "the gateway"
echo "warm-up: compile cache $(du -sm /tmp/node-compile-cache 2>/dev/null | cut -f1) MB in $(($(now) - t0)) s"
clean
exit 0
