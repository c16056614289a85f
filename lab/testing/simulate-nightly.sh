#!/usr/bin/env bash
# The nightly's shard jobs (.github/workflows/nightly.yml) on this machine, one after another:
# for K in 1..N the shard step's command (SHARD=K/N make lab), its run folder copied as the job
# uploads it (an artifact folder named as in the workflow), then the merge job's command.
# Prints the wall time of each shard and of the whole, and what the nightly's wall time would
# be with the shards in parallel (the longest shard plus the merge).
# usage: lab/testing/simulate-nightly.sh [N]   (env: SCENARIOS to limit the suite, OPENCLAW_VERSION)
# Docker runs are one at a time on shared machines: wrap it, e.g.
#   flock /tmp/fleetlab-docker.lock make nightly-sim SHARDS=2 SCENARIOS="mcp-routing mcp-cancel-call"
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
n="${1:-4}"
[[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] || { echo "simulate-nightly: N must be a positive integer, not '$n'" >&2; exit 2; }
pinned=$(sed -n 's/^export const DEFAULT_OPENCLAW_VERSION = "\(.*\)";$/\1/p' lab/definitions/spec.ts)
version="${FLEETLAB_OPENCLAW_VERSION:-${OPENCLAW_VERSION:-$pinned}}"
sim=".lab/nightly-sim/$(date -u +%Y%m%d-%H%M%S)-$$"
mkdir -p "$sim/artifacts"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }
declare -a wall codes
t_all=$(now)
for k in $(seq 1 "$n"); do
  log="$sim/shard-$k-of-$n.log"
  echo "=== shard $k/$n (openclaw@$version)${SCENARIOS:+ of: $SCENARIOS} ==="
  t0=$(now)
  # The workflow's shard step: env FLEETLAB_SHARD=K/N and FLEETLAB_OPENCLAW_VERSION, then `make lab`.
  FLEETLAB_SHARD="$k/$n" FLEETLAB_OPENCLAW_VERSION="$version" make lab 2>&1 | tee "$log"
  code=${PIPESTATUS[0]}
  wall[$k]=$(secs "$t0" "$(now)")
  codes[$k]=$code
  # The upload: the run folder this shard wrote (its `evidence:` line), under the artifact's name.
  dir=$(sed -n 's/^evidence: //p' "$log" | tail -1)
  artifact="$sim/artifacts/evidence-$version-shard-$k-of-$n"
  if [ -n "$dir" ] && [ -d "$dir" ]; then mkdir -p "$artifact" && cp -r "$dir" "$artifact/"
  else echo "shard $k/$n left no run folder (as a job that died before its upload)"; fi
done
t_merge=$(now)
echo "=== merge ==="
# The merge job's command.
npm run --silent fleetlab -- merge --shards "$n" --versions "$version" "$sim/merged" "$sim"/artifacts/*
merge_code=$?
merge_wall=$(secs "$t_merge" "$(now)")
echo
echo "shard  wall time  make exit"
longest=0
for k in $(seq 1 "$n"); do
  printf "%2d/%-2d  %7s s  %s\n" "$k" "$n" "${wall[$k]}" "${codes[$k]}"
  longest=$(awk -v a="$longest" -v b="${wall[$k]}" 'BEGIN { print (b > a ? b : a) }')
done
printf "merge  %7s s  %s\n" "$merge_wall" "$merge_code"
echo "total (shards one after another + merge): $(secs "$t_all" "$(now)") s"
echo "nightly wall time with the shards in parallel (longest shard + merge): $(awk -v a="$longest" -v b="$merge_wall" 'BEGIN { printf "%.1f", a + b }') s"
echo "merged: $sim/merged (summary.md, $version/report.html)"
exit "$merge_code"
