#!/bin/sh
# Starts the gateway or a node host. The config template is copied into the writable state
# dir on every start (OpenClaw writes .bak/.last-good beside its config, so it must not be a
# read-only mount); identity and pairing state stay on the state volume.
set -eu
mkdir -p "$OPENCLAW_STATE_DIR"
if [ -f /etc/fleetlab/openclaw.json ]; then cp /etc/fleetlab/openclaw.json "$OPENCLAW_CONFIG_PATH"; fi
case "${FLEETLAB_ROLE:-}" in
  gateway)
    exec openclaw gateway run --port "${GATEWAY_PORT:-18789}" --bind lan --allow-unconfigured ;;
  node)
    # FLEETLAB_NODE_ARGS: what this version's `node run` offers beyond these (lab/engine/capabilities.ts:
    # "--session-host" from 2026.9.6; before it, worker runs come from nodeHost.workerRuns).
    # shellcheck disable=SC2086
    exec openclaw node run --host "${GATEWAY_HOST:?}" --port "${GATEWAY_PORT:-18789}" \
      --display-name "${NODE_NAME:?}" ${FLEETLAB_NODE_ARGS:-} ;;
  *)
    echo "fleetlab entrypoint: FLEETLAB_ROLE must be gateway or node (got '${FLEETLAB_ROLE:-}')" >&2; exit 64 ;;
esac
