// make bench: figures with a baseline measured in the same run beside each (these machines
// are shared and noisy, so ratios, not absolute times, are what to compare across runs).
//   images     cold build (every image, package already installed) vs warm (all cached)
//   ready      container topology: gateway ready + every node approved and connected,
//              vs the same gateway and node hosts as bare processes on loopback
//   teardown   lab down (logs saved, everything removed) vs killing the bare processes
//   memory     peak memory per node host, containers vs bare processes
//   faults     inject -> in effect and heal -> healed of every kind in the fault registry
//              (lab/bench/faults.ts; median / worst of BENCH_FAULT_TRIALS, default 5), against
//              one engine exec round trip
// Env: BENCH_TRIALS (default 2), BENCH_COLD=0 to skip the cold image build, BENCH_FAULTS=0, NODES.
import path from "node:path";
import { docker, requireEngine } from "../docker.ts";
import { pruneDeadRuns } from "../cleanup.ts";
import { Run } from "../evidence/run.ts";
import { writeJson } from "../evidence/write.ts";
import { ensureImages, openclawPackage } from "../images.ts";
import { STATE } from "../paths.ts";
import { Lab } from "../topology/lab.ts";
import { LabOperator } from "../topology/operator.ts";
import { nodeAliases, parseTopology, topologyFromEnv } from "../topology/spec.ts";
import { BareTopology } from "./bare.ts";
import { benchFaults, benchRows } from "./faults.ts";
import { containerPeakMiB, treePeakMiB } from "./memory.ts";

process.env.FLEETLAB_QUIET ??= "1";
const trials = Number(process.env.BENCH_TRIALS ?? 2);
const rows: string[][] = [];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const s = (x: number) => (x < 1 ? `${(x * 1000).toFixed(0)} ms` : `${x.toFixed(2)} s`);
const row = (what: string, value: string, baseline: string, ratio: string, target: string) => {
  rows.push([what, value, baseline, ratio, target]);
  process.stderr.write(`bench: ${what}: ${value} (baseline ${baseline})\n`);
};

async function images(version: string) {
  const warm: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await ensureImages(version);
    warm.push((performance.now() - t) / 1000);
  }
  if (process.env.BENCH_COLD === "0") {
    row("image step, warm (all cached)", s(median(warm)), "-", "-", "< 2 s");
    return;
  }
  process.env.FLEETLAB_IMAGE_SALT = `-bench-${Date.now()}`;
  const t = performance.now();
  const cold = await ensureImages(version);
  const coldS = (performance.now() - t) / 1000;
  delete process.env.FLEETLAB_IMAGE_SALT;
  for (const img of Object.values(cold).reverse()) await docker().getImage(img.tag).remove().catch(() => {});
  row("image step, warm (all cached)", s(median(warm)), `${s(coldS)} cold`, `${((median(warm) / coldS) * 100).toFixed(2)} %`, "< 2 s");
  for (const img of Object.values(cold)) row(`  cold build: ${img.name}`, s(img.seconds), "-", "-", "");
}

async function main() {
  await requireEngine();
  await pruneDeadRuns();
  const spec = topologyFromEnv();
  const version = spec.openclawVersion;
  const pkg = await openclawPackage(version);
  await images(version);

  const labReady: number[] = [];
  const labReadySubnet: number[] = [];
  const bareReady: number[] = [];
  const bareGw: number[] = [];
  const labGw: number[] = [];
  const labDown: number[] = [];
  const bareDown: number[] = [];
  const labMem: number[] = [];
  const bareMem: number[] = [];
  const run = Run.create({ seed: spec.seed });
  for (let i = 0; i < trials; i++) {
    // Bare processes on loopback.
    const bare = new BareTopology(spec, pkg);
    try {
      const t = performance.now();
      // Same orchestration as the lab: everything started at once, then readiness.
      bare.startGateway();
      for (const n of nodeAliases(spec)) bare.startNode(n);
      await bare.waitReady();
      bareGw.push((performance.now() - t) / 1000);
      const op = await LabOperator.connect(bare.operatorHost(), path.join(STATE, "operator"), path.join(run.dir, `bare-${i}.jsonl`));
      await op.approveNodes(nodeAliases(spec), { timeoutMs: 120_000, host: bare.operatorHost() });
      bareReady.push((performance.now() - t) / 1000);
      for (const n of nodeAliases(spec)) bareMem.push(treePeakMiB(bare.pid(n)!));
      await op.close();
    } finally {
      const t = performance.now();
      await bare.down();
      bareDown.push((performance.now() - t) / 1000);
    }
    // The container topology, both ways of approving device pairing.
    for (const mode of ["operator", "subnet"] as const) {
      const lab = await Lab.up(parseTopology({ ...spec, nodes: { ...spec.nodes, devicePairing: mode } }), run, `bench-${i}-${mode}`);
      (mode === "operator" ? labReady : labReadySubnet).push(lab.timings.ready);
      labGw.push(lab.timings.gatewayReady);
      if (mode === "operator") {
        for (const m of lab.nodes) labMem.push(await containerPeakMiB(m.id));
      }
      await lab.down();
      labDown.push(lab.timings.down);
    }
  }
  if (process.env.BENCH_FAULTS !== "0") {
    process.stderr.write("bench: fault timings ...\n");
    rows.push(...benchRows(await benchFaults({ trials: Number(process.env.BENCH_FAULT_TRIALS ?? 5) })));
  }
  const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;
  row("gateway /readyz, containers", s(median(labGw)), `${s(median(bareGw))} bare`, ratio(median(labGw), median(bareGw)), "");
  row("ready, containers (operator approves device pairing)", s(median(labReady)), `${s(median(bareReady))} bare`, ratio(median(labReady), median(bareReady)), "<= 1.25x");
  row("ready, containers (device pairing auto-approved for the lab subnet)", s(median(labReadySubnet)), `${s(median(bareReady))} bare`, ratio(median(labReadySubnet), median(bareReady)), "<= 1.25x");
  row("teardown (logs saved, all removed)", s(median(labDown)), `${s(median(bareDown))} bare kill`, ratio(median(labDown), median(bareDown)), "< 3 s");
  row("peak memory per node host", `${median(labMem).toFixed(0)} MiB`, `${median(bareMem).toFixed(0)} MiB bare`, ratio(median(labMem), median(bareMem)), "reported");

  const w = [0, 1, 2, 3, 4].map((c) => Math.max(...rows.map((r) => r[c].length), ["figure", "value", "baseline (same run)", "ratio", "target"][c].length));
  const line = (r: string[]) => r.map((x, c) => x.padEnd(w[c])).join("  ");
  process.stdout.write(`\nfleetlab bench: openclaw@${version}, ${spec.nodes.count} node hosts, ${trials} trial(s), medians\n\n`);
  process.stdout.write([line(["figure", "value", "baseline (same run)", "ratio", "target"]), line(w.map((n) => "-".repeat(n))), ...rows.map(line)].join("\n") + "\n");
  writeJson(run.file("bench.json"), { rows, labReady, labReadySubnet, bareReady, labDown, bareDown, labMem, bareMem });
  process.stdout.write(`\nraw figures: ${path.join(run.dir, "bench.json")}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`fleetlab bench: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
