#!/usr/bin/env bash
# Base image without any registry: Debian bookworm minbase from Debian's packages
# (mmdebstrap, using this host's apt sources) + the pinned Node binary, imported as an image.
# usage: build.sh <tag> <node binary> <apt sources file>
set -euo pipefail
tag="$1" node="$2" sources="$3"
packages=git,ca-certificates,iproute2,iptables,procps,tini,passwd,strace
command -v mmdebstrap >/dev/null || { echo "mmdebstrap is not installed: run 'make engine' (root on Debian) or 'apt-get install mmdebstrap'" >&2; exit 3; }
# The tar goes to a file first and is imported under a staging tag, which gets the real tag only
# once both steps succeeded: a failed or interrupted mmdebstrap (a pipe would hand docker import
# a truncated tar) never leaves an image under the real tag. The staging file goes on every exit.
tmp="$(mktemp -d "${TMPDIR:-/tmp}/fleetlab-base.XXXXXX")"
staging="${tag%%:*}:staging-$$"
trap 'rm -rf "$tmp"; docker rmi "$staging" >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mmdebstrap --quiet --variant=minbase --include="$packages" \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --customize-hook="copy-in $node /usr/local/bin" \
  bookworm "$tmp/rootfs.tar" "$sources"
docker import -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'LABEL fleetlab.kind=image' "$tmp/rootfs.tar" "$staging" >/dev/null
docker tag "$staging" "$tag"
