#!/usr/bin/env bash
# Make sure a Docker engine answers. Order: an engine that already answers (DOCKER_HOST
# honoured) -> on Debian as root, install Debian's docker.io + iptables and start dockerd
# in the background -> otherwise stop and say what to do. Never pulls an image.
set -euo pipefail
STATE="${FLEETLAB_STATE:-$(cd "$(dirname "$0")/../.." && pwd)/.lab}"
mkdir -p "$STATE"
answers() { command -v docker >/dev/null 2>&1 && timeout 5 docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

# Host tool for the base image (Debian minbase from Debian's packages, no registry).
need_mmdebstrap() { ! command -v mmdebstrap >/dev/null 2>&1; }
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  echo "fleetlab: installing Debian packages: $* (one time) ..." >&2
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "$@"; } >>"$STATE/apt.log" 2>&1 \
    || { echo "fleetlab: apt-get install $* failed, see $STATE/apt.log" >&2; exit 2; }
}
if need_mmdebstrap && [ "$(id -u)" = 0 ] && [ -f /etc/debian_version ]; then apt_install mmdebstrap; fi
if need_mmdebstrap && answers; then
  # Only building the base image needs it (docker/base/build.sh stops with this advice if it
  # must build): an engine that answers, e.g. a CI runner's with the images from its cache, is used as it is.
  echo "fleetlab: note: mmdebstrap is missing; a base image that is not built yet cannot be built ('apt-get install mmdebstrap')." >&2
  exit 0
fi
if need_mmdebstrap; then
  echo "fleetlab: mmdebstrap is missing; the base image is built from Debian's packages with it." >&2
  echo "  Install it (Debian/Ubuntu: 'sudo apt-get install mmdebstrap') and run the command again." >&2
  exit 2
fi

if answers; then exit 0; fi

if [ -n "${DOCKER_HOST:-}" ]; then
  echo "fleetlab: DOCKER_HOST=$DOCKER_HOST is set but no Docker engine answers there." >&2
  echo "  Start that engine, or unset DOCKER_HOST to let fleetlab start a local one." >&2
  exit 2
fi

if [ "$(id -u)" != 0 ] || [ ! -f /etc/debian_version ]; then
  echo "fleetlab: no Docker engine answers and this machine cannot get one automatically" >&2
  echo "  (automatic install needs Debian and root; here: uid $(id -u), $(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown OS}"))." >&2
  echo "  Install and start Docker Engine (e.g. 'sudo apt-get install docker.io iptables && sudo systemctl start docker')," >&2
  echo "  or point DOCKER_HOST at a running engine, then run the command again." >&2
  exit 2
fi

if ! command -v dockerd >/dev/null 2>&1 || ! command -v iptables >/dev/null 2>&1; then
  apt_install docker.io iptables
fi

# A dockerd killed outright (e.g. the machine's previous session) leaves its pid file behind.
if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then rm -f /var/run/docker.pid; fi
echo "fleetlab: starting dockerd in the background (log: $STATE/dockerd.log) ..." >&2
# Without the descriptors this script inherited (a lock held by `flock make ...`, a CI log pipe):
# the daemon outlives the command and must not keep them open.
( for fd in /proc/$BASHPID/fd/*; do fd="${fd##*/}"; [ "$fd" -gt 2 ] 2>/dev/null && eval "exec $fd>&-"; done
  exec setsid nohup dockerd </dev/null >"$STATE/dockerd.log" 2>&1 ) &
for _ in $(seq 1 60); do
  if answers; then echo "fleetlab: Docker engine ready" >&2; exit 0; fi
  sleep 0.5
done
echo "fleetlab: dockerd did not answer within 30 s; see $STATE/dockerd.log" >&2
exit 2
