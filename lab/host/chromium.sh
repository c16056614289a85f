#!/usr/bin/env bash
# Make sure a headless Chromium is there for the report check (the scenario suite opens each
# run's report.html in it). Order: /usr/bin/chromium (or CHROMIUM=path) when present -> on
# Debian as root, install Debian's chromium package -> otherwise stop and say what to install.
# Never downloads a browser build of its own.
set -euo pipefail
STATE="${FLEETLAB_STATE:-$(cd "$(dirname "$0")/../.." && pwd)/.lab}"
mkdir -p "$STATE"
works() { [ -x "$1" ] && timeout 20 "$1" --headless --no-sandbox --version >/dev/null 2>&1; }

if [ -n "${CHROMIUM:-}" ]; then
  if works "$CHROMIUM"; then exit 0; fi
  echo "fleetlab: CHROMIUM=$CHROMIUM is set but does not run; unset it or point it at a working chromium." >&2
  exit 2
fi
if works /usr/bin/chromium; then exit 0; fi

if [ "$(id -u)" != 0 ] || [ ! -f /etc/debian_version ]; then
  echo "fleetlab: Chromium is missing (the scenario suite opens the run's report.html in headless Chromium)" >&2
  echo "  and this machine cannot get it automatically (that needs Debian and root; here: uid $(id -u), $(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown OS}"))." >&2
  echo "  Install it (Debian/Ubuntu: 'sudo apt-get install chromium') or set CHROMIUM=/path/to/chromium, then run the command again." >&2
  exit 2
fi

export DEBIAN_FRONTEND=noninteractive
echo "fleetlab: installing Debian's chromium (one time) ..." >&2
{ apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core; } >>"$STATE/apt.log" 2>&1 \
  || { echo "fleetlab: apt-get install chromium failed, see $STATE/apt.log" >&2; exit 2; }
if works /usr/bin/chromium; then exit 0; fi
echo "fleetlab: chromium was installed but /usr/bin/chromium does not run; see $STATE/apt.log" >&2
exit 2
