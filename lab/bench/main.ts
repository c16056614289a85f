// make bench: figures with a baseline measured in the same run beside each (these machines
// are shared and noisy, so ratios, not absolute times, are what to compare across runs). Every
// row: figure, value, baseline (same run), ratio, target (issue 11's goals where it has one).
//   images     cold build (every image, package already installed) vs warm (all cached)
//   ready      default topology: gateway ready + every node approved and connected, pairing
//              from scratch (both device-pairing modes) and restored from a snapshot of paired
//              state, vs the same gateway and node hosts as bare processes on loopback
//   teardown   lab down (logs saved, everything removed) vs killing the bare processes
//   memory     peak memory per node host, containers vs bare processes
//   scale      NODES = each of BENCH_SCALE: ready (pairing; snapshot restored) against the bare
//              gateway's own ready time, peak memory per node host; plotted (bench-scale.png)
//   order      on each shape of BENCH_SCALE: the default start order (as many node hosts as
//              cores beside the gateway, the rest once it answers) and node hosts only after it,
//              against every member at once (FLEETLAB_START_ORDER=all)
//   faults     inject -> in effect and heal -> healed of every kind in the fault registry
//              (lab/bench/faults.ts), wire kinds and killInside trigger frame -> action
//              (lab/bench/wire-timing.ts)
//   suite      the `make test` scenario suite in-process (lab/bench/suite.ts): wall time,
//              per-scenario seconds and verdicts, the labs' bring-ups
// Env: BENCH_TRIALS (default 2), BENCH_COLD=0 (skip the cold image build), BENCH_FAULTS=0,
// BENCH_FAULT_TRIALS (5), BENCH_WIRE=0, BENCH_SCALE ("1 2 4 8"; "0" skips), BENCH_SCALE_TRIALS (1),
// BENCH_SNAPSHOT=0 (no snapshot rows), BENCH_ORDER=0 (no start-order rows), BENCH_SUITE=0 (skip the suite), BENCH_SUITE_SCENARIOS
// ("smoke mcp-routing": only those), NODES (the default topology's node hosts).
// A part that fails is a row saying why; the bench goes on and exits 1 at the end.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { docker, requireEngine } from "../engine/docker.ts";
import { pruneDeadRuns } from "../engine/cleanup.ts";
import { screenshot } from "../evidence/chromium.ts";
import { Run } from "../evidence/run.ts";
import { writeJson } from "../evidence/write.ts";
import { ensureImages, openclawPackage } from "../engine/images.ts";
import { OPERATOR_DIR, ROOT, STATE } from "../core/paths.ts";
import type { Scenario } from "../scenario.ts";
import { Lab, type StartOrder } from "../topology/lab.ts";
import { LabOperator } from "../topology/operator.ts";
import { nodeAliases, parseTopology, topologyFromEnv, type TopologySpec } from "../definitions/spec.ts";
import { BareTopology } from "./bare.ts";
import { benchFaults, benchRows } from "./faults.ts";
import { containerPeakMiB, treePeakMiB } from "./memory.ts";
import { scalePlotHtml, type ScalePoint } from "./plot.ts";
import { benchSuite, suiteScenarios, suiteTable, SUITE_TARGET_S, type SuiteBench } from "./suite.ts";
import { setting } from "../definitions/settings.ts";
import { LabError } from "../core/log.ts";

process.env.FLEETLAB_QUIET ??= "1";

/** Issue 11's targets. */
export const TARGETS = { defaultReadyRatio: 1.1, eightNodesReadyRatio: 1.3 };

export const median = (xs: number[]): number => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]! : NaN);
export const secs = (x: number): string => (!Number.isFinite(x) ? "-" : x < 1 ? `${(x * 1000).toFixed(0)} ms` : `${x.toFixed(2)} s`);
export const ratio = (a: number, b: number): string => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${(a / b).toFixed(2)}x` : "-");
/** BENCH_SCALE: node counts, "0"/"" = none. */
export function scaleFromEnv(v: string | undefined): number[] {
  if (v === undefined) return [1, 2, 4, 8];
  return v
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0 && n <= 8);
}

/** A fixed-width table. */
export function table(head: string[], rows: string[][]): string {
  const w = head.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (r: string[]) => r.map((x, c) => (x ?? "").padEnd(w[c]!)).join("  ").trimEnd();
  return [line(head), line(w.map((n) => "-".repeat(n))), ...rows.map(line)].join("\n");
}

const HEAD = ["figure", "value", "baseline (same run)", "ratio", "target"];

export interface BenchOptions {
  /** The scenarios the suite part runs (the lab never imports them; the entry point hands them in). */
  loadScenarios?: () => Promise<Scenario[]>;
}

interface SnapshotUp {
  ready?: number;
  path: string;
  reason?: string;
  /** Ready of the lab that took the snapshot (pairing + capture), when one had to be taken first. */
  takenReady?: number;
}

export async function runBench(opts: BenchOptions = {}): Promise<{ failed: string[] }> {
  const t0 = performance.now();
  const trials = Number(process.env.BENCH_TRIALS ?? 2);
  const scaleTrials = Number(process.env.BENCH_SCALE_TRIALS ?? 1);
  const scale = scaleFromEnv(process.env.BENCH_SCALE);
  const snapshots = process.env.BENCH_SNAPSHOT !== "0";
  const rows: string[][] = [];
  const row = (what: string, value: string, baseline: string, r: string, target: string) => {
    rows.push([what, value, baseline, r, target]);
    process.stderr.write(`bench: ${what}: ${value} (baseline ${baseline})\n`);
  };
  const log = (s: string) => process.stderr.write(`bench: ${s}\n`);
  // A part that fails is a row saying why, and the bench goes on with the rest (exit 1 at the end).
  const failed: string[] = [];
  const part = benchPart(row, failed);

  await requireEngine();
  await pruneDeadRuns();
  const spec = topologyFromEnv();
  const version = spec.openclawVersion;
  // ---- set-up steps cold and warm: the openclaw package (installed into a throwaway cache
  // folder, cold; then from the per-user cache, warm) and, below, the images.
  let pkg = "";
  await part("openclaw package", async () => {
    const tw = performance.now();
    pkg = await openclawPackage(version);
    const warmS = (performance.now() - tw) / 1000;
    if (process.env.BENCH_COLD === "0") row("openclaw package, cached (warm)", secs(warmS), "- (BENCH_COLD=0)", "-", "< 1 s");
    else {
      const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-bench-pkg-"));
      try {
        const tc = performance.now();
        await openclawPackage(version, scratch);
        const coldS = (performance.now() - tc) / 1000;
        row(`openclaw@${version} package: cached (warm) against npm install (cold)`, secs(warmS), `${secs(coldS)} cold`, `${((warmS / coldS) * 100).toFixed(2)} %`, "< 1 s warm");
      } finally {
        fs.rmSync(scratch, { recursive: true, force: true });
      }
    }
  });
  if (!pkg) throw new LabError(`the openclaw@${version} package could not be installed, and every bare baseline needs it: ${failed.join("; ")}`);
  const run = Run.create({ seed: spec.seed });
  const raw: Record<string, unknown> = { version, trials, scale, scaleTrials };

  // ---- images
  await part("image step", async () => {
    const warm: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = performance.now();
      await ensureImages(version);
      warm.push((performance.now() - t) / 1000);
    }
    if (process.env.BENCH_COLD === "0") {
      row("image step, warm (all cached)", secs(median(warm)), "- (BENCH_COLD=0)", "-", "< 2 s");
    } else {
      process.env.FLEETLAB_IMAGE_SALT = `-bench-${Date.now()}`;
      const t = performance.now();
      const cold = await ensureImages(version);
      const coldS = (performance.now() - t) / 1000;
      delete process.env.FLEETLAB_IMAGE_SALT;
      for (const img of Object.values(cold).reverse()) await docker().getImage(img.tag).remove().catch(() => {});
      row("image step, warm (all cached)", secs(median(warm)), `${secs(coldS)} cold`, `${((median(warm) / coldS) * 100).toFixed(2)} %`, "< 2 s");
      for (const img of Object.values(cold)) row(`  cold build: ${img.name}`, secs(img.seconds), `${secs(coldS)} all images`, `${((img.seconds / coldS) * 100).toFixed(0)} %`, "reported");
    }
  });

  // ---- the default topology: bare processes vs containers (pairing from scratch)
  const labReady: number[] = [];
  const labReadySubnet: number[] = [];
  const bareReady: number[] = [];
  const bareGw: number[] = [];
  const labGw: number[] = [];
  const labDown: number[] = [];
  const bareDown: number[] = [];
  const labMem: number[] = [];
  const bareMem: number[] = [];
  for (let i = 0; i < trials; i++) await part(`default topology, trial ${i + 1}`, async () => {
    const bare = new BareTopology(spec, pkg);
    try {
      const t = performance.now();
      // Same orchestration as the lab: everything started at once, then readiness.
      bare.startGateway();
      for (const n of nodeAliases(spec)) bare.startNode(n);
      await bare.waitReady();
      bareGw.push((performance.now() - t) / 1000);
      const op = await LabOperator.connect(bare.operatorHost(), OPERATOR_DIR, path.join(run.dir, `bare-${i}.jsonl`));
      await op.approveNodes(nodeAliases(spec), { timeoutMs: 120_000, host: bare.operatorHost() });
      bareReady.push((performance.now() - t) / 1000);
      for (const n of nodeAliases(spec)) bareMem.push(treePeakMiB(bare.pid(n)!));
      await op.close();
    } finally {
      const t = performance.now();
      await bare.down();
      bareDown.push((performance.now() - t) / 1000);
    }
    for (const mode of ["operator", "subnet"] as const) {
      const lab = await Lab.up(parseTopology({ ...spec, nodes: { ...spec.nodes, devicePairing: mode } }), run, `bench-${i}-${mode}`, { snapshot: "fresh" });
      (mode === "operator" ? labReady : labReadySubnet).push(lab.timings.ready!);
      labGw.push(lab.timings.gatewayReady!);
      if (mode === "operator") for (const m of lab.nodes) labMem.push(await containerPeakMiB(m.id));
      await lab.down();
      labDown.push(lab.timings.down!);
    }
  });
  Object.assign(raw, { labReady, labReadySubnet, bareReady, bareGw, labGw, labDown, bareDown, labMem, bareMem });
  const bareR = median(bareReady);
  const goal1 = `<= ${TARGETS.defaultReadyRatio}x`;
  row("gateway /readyz, containers", secs(median(labGw)), `${secs(median(bareGw))} bare`, ratio(median(labGw), median(bareGw)), "reported");
  row("ready, default topology, pairing from scratch (operator approves)", secs(median(labReady)), `${secs(bareR)} bare`, ratio(median(labReady), bareR), goal1);
  row("ready, default topology, pairing from scratch (subnet auto-approve)", secs(median(labReadySubnet)), `${secs(bareR)} bare`, ratio(median(labReadySubnet), bareR), goal1);

  // ---- snapshot of paired state vs pairing, default topology
  // A lab that fails to come up from a snapshot is a row saying so, not the end of the bench.
  const snapUp = (s: TopologySpec, name: string): Promise<SnapshotUp> =>
    snapUpOnce(s, name).catch((err: unknown) => ({ path: "failed", reason: (err as Error).message.split("\n")[0] }));
  const snapUpOnce = async (s: TopologySpec, name: string): Promise<SnapshotUp> => {
    const first = await Lab.up(s, run, name, { snapshot: "use" });
    const rec = first.snapshot;
    const ready1 = first.timings.ready;
    await first.down();
    if (!rec) return { path: "not recorded (this Lab.up keeps no snapshot record)" };
    if (rec.path === "restored") return { ready: ready1, path: "restored" };
    if (rec.path === "fresh") return { path: "fresh", reason: rec.reason ?? "paired from scratch" };
    // Taken just now: the next lab of this shape restores it.
    const again = await Lab.up(s, run, `${name}-restore`, { snapshot: "use" });
    const rec2 = again.snapshot;
    const ready2 = again.timings.ready;
    await again.down();
    return rec2?.path === "restored" ? { ready: ready2, path: "restored", takenReady: ready1 } : { path: rec2?.path ?? "?", reason: rec2?.reason ?? "the snapshot just taken was not restored", takenReady: ready1 };
  };
  const snapRow = (label: string, su: SnapshotUp, pairing: number, base: number, baseLabel: string, target: string) => {
    if (su.ready === undefined) {
      row(`ready, ${label}, snapshot restored`, `not measured: ${su.path}${su.reason ? ` (${su.reason})` : ""}`, `${secs(base)} ${baseLabel}`, "-", target);
      return;
    }
    row(`ready, ${label}, snapshot restored`, secs(su.ready), `${secs(base)} ${baseLabel}`, ratio(su.ready, base), target);
    row(`  snapshot path vs pairing path, ${label}`, secs(su.ready), `${secs(pairing)} pairing, same run`, ratio(su.ready, pairing), "< 1x");
    if (su.takenReady !== undefined) row(`  pairing + taking the snapshot, ${label}`, secs(su.takenReady), `${secs(pairing)} pairing, same run`, ratio(su.takenReady, pairing), "reported");
  };
  if (snapshots) {
    const su = await snapUp(spec, "bench-snapshot"); // never rejects: a failure is its row
    raw.snapshotDefault = su;
    snapRow("default topology", su, median(labReady), bareR, "bare", goal1);
  }
  row("teardown (logs saved, all removed)", secs(median(labDown)), `${secs(median(bareDown))} bare kill`, ratio(median(labDown), median(bareDown)), "< 3 s");
  row("peak memory per node host", `${median(labMem).toFixed(0)} MiB`, `${median(bareMem).toFixed(0)} MiB bare`, ratio(median(labMem), median(bareMem)), "reported");

  // ---- scaling sweep: NODES = 1, 2, 4, 8 against the bare gateway's own ready time
  if (scale.length) {
    const bareAlone: number[] = [];
    for (let i = 0; i < Math.max(1, trials); i++) await part(`bare gateway alone, trial ${i + 1}`, async () => {
      const bare = new BareTopology(spec, pkg);
      try {
        const t = performance.now();
        bare.startGateway();
        await bare.waitReady();
        bareAlone.push((performance.now() - t) / 1000);
      } finally {
        await bare.down();
      }
    });
    const base = median(bareAlone);
    const points: (ScalePoint & { snapshot?: SnapshotUp; fresh: number[]; mem: number[] })[] = [];
    for (const n of scale) await part(`NODES=${n}`, async () => {
      const s = parseTopology({ ...spec, nodes: { ...spec.nodes, count: n } });
      const fresh: number[] = [];
      const mem: number[] = [];
      for (let i = 0; i < scaleTrials; i++) {
        const lab = await Lab.up(s, run, `bench-scale-${n}-${i}`, { snapshot: "fresh" });
        fresh.push(lab.timings.ready!);
        for (const m of lab.nodes) mem.push(await containerPeakMiB(m.id));
        await lab.down();
      }
      const su = snapshots ? await snapUp(s, `bench-scale-${n}-snapshot`) : undefined;
      const sorted = [...mem].sort((a, b) => a - b);
      points.push({ nodes: n, freshReady: median(fresh), snapshotReady: su?.ready, memMedianMiB: median(mem), memMaxMiB: sorted.at(-1) ?? NaN, snapshot: su, fresh, mem });
      log(`scale ${n}: ready ${median(fresh)} s (pairing)${su?.ready !== undefined ? `, ${su.ready} s (snapshot)` : ""}, node host memory ${median(mem).toFixed(0)} MiB`);
    });
    raw.scale = { bareGatewayAlone: bareAlone, points };
    row("bare gateway alone, /readyz (the scale baseline)", secs(base), `${secs(median(bareGw))} bare gateway beside ${spec.nodes.count} nodes`, ratio(base, median(bareGw)), "reported");
    for (const p of points) {
      const target = p.nodes === 8 ? `<= ${TARGETS.eightNodesReadyRatio}x` : "reported";
      row(`ready, NODES=${p.nodes}, pairing from scratch`, secs(p.freshReady), `${secs(base)} bare gateway alone`, ratio(p.freshReady, base), target);
      if (p.snapshot) snapRow(`NODES=${p.nodes}`, p.snapshot, p.freshReady, base, "bare gateway alone", target);
      row(`peak memory per node host, NODES=${p.nodes} (median; largest)`, `${p.memMedianMiB.toFixed(0)} MiB; ${p.memMaxMiB.toFixed(0)} MiB`, `${median(bareMem).toFixed(0)} MiB bare node host`, ratio(p.memMedianMiB, median(bareMem)), "reported");
    }
    // The plot: a self-contained page, screenshotted by headless Chromium.
    const html = run.file("bench-scale.html");
    fs.writeFileSync(html, scalePlotHtml({ title: `fleetlab bench: openclaw@${version}, ready and memory per node host vs NODES`, caption: `Run ${run.id}.`, points, bareGatewayReady: base, targetRatio: TARGETS.eightNodesReadyRatio, bareNodeMiB: Number.isFinite(median(bareMem)) ? median(bareMem) : undefined }));
    try {
      raw.plot = await screenshot(html, run.file("bench-scale.png"), { width: 1140, height: 640 });
    } catch (err) {
      raw.plot = `not drawn: ${(err as Error).message}`;
    }
  }

  // ---- start order: node hosts once the gateway answers (the default) against everything at
  // once, on each shape of the sweep, paired state restored (the path most labs take).
  if (scale.length && process.env.BENCH_ORDER !== "0") {
    const orders: Record<string, Record<StartOrder, { ready: number; gateway: number }[]>> = {};
    for (const n of scale) {
      const s = parseTopology({ ...spec, nodes: { ...spec.nodes, count: n } });
      const byOrder = (orders[n] = { cores: [], "gateway-first": [], all: [] } as Record<StartOrder, { ready: number; gateway: number }[]>);
      // Both orders restore the same snapshot: a first lab of the shape makes sure there is one.
      await part(`NODES=${n}, snapshot for the start-order rows`, async () => {
        const warm = await Lab.up(s, run, `bench-order-${n}-warm`, { snapshot: "use" });
        await warm.down();
      });
      for (let i = 0; i < scaleTrials; i++) {
        for (const order of ["all", "cores", "gateway-first"] as const) {
          await part(`NODES=${n}, start order ${order}`, async () => {
            const lab = await Lab.up(s, run, `bench-order-${n}-${order}-${i}`, { snapshot: "use", startOrder: order });
            byOrder[order].push({ ready: lab.timings.ready!, gateway: lab.timings.gatewayReady! });
            await lab.down();
          });
        }
      }
      const m = (o: StartOrder, k: "ready" | "gateway") => median(byOrder[o].map((x) => x[k]));
      for (const o of ["cores", "gateway-first"] as const) {
        const label = o === "cores" ? `${os.cpus().length} node hosts with the gateway, the rest after it (default)` : "node hosts after the gateway";
        row(`ready, NODES=${n}: ${label} vs all at once`, secs(m(o, "ready")), `${secs(m("all", "ready"))} all at once`, ratio(m(o, "ready"), m("all", "ready")), o === "cores" ? "<= 1x" : "reported");
        row(`  gateway /readyz, NODES=${n}: same two orders`, secs(m(o, "gateway")), `${secs(m("all", "gateway"))} all at once`, ratio(m(o, "gateway"), m("all", "gateway")), "reported");
      }
    }
    raw.startOrder = orders;
  }

  // ---- faults
  if (process.env.BENCH_FAULTS !== "0") {
    await part("fault timings", async () => {
      log("fault timings ...");
      const fb = await benchFaults({ trials: Number(process.env.BENCH_FAULT_TRIALS ?? 5) });
      raw.faults = fb;
      rows.push(...benchRows(fb));
    });
  }

  // ---- the scenario suite
  let suite: SuiteBench | undefined;
  if (process.env.BENCH_SUITE !== "0" && opts.loadScenarios) {
    const chosen = suiteScenarios(await opts.loadScenarios(), process.env.BENCH_SUITE_SCENARIOS);
    log(`suite: ${chosen.length} scenario(s) ...`);
    const suiteRun = Run.create({ seed: spec.seed });
    suite = await benchSuite(chosen, spec, suiteRun, { log }).catch((err: unknown) => {
      row("scenario suite", `failed: ${(err as Error).message.split("\n")[0]}`, "-", "-", `<= ${SUITE_TARGET_S / 60} min`);
      return undefined;
    });
  }
  if (suite) {
    raw.suite = suite;
    const sum = suite.results.reduce((a, r) => a + r.seconds, 0);
    const all = !process.env.BENCH_SUITE_SCENARIOS?.trim();
    row(
      `scenario suite wall time (${suite.results.length} scenarios${all ? "" : `: BENCH_SUITE_SCENARIOS, not the whole suite`}, ${suite.lanes} lane(s))`,
      secs(suite.wallS),
      `${secs(sum)} sum of scenario times`,
      `${(suite.wallS / SUITE_TARGET_S).toFixed(2)} of target`,
      `<= ${SUITE_TARGET_S / 60} min`,
    );
    const shared = suite.labs.find((l) => l.name.startsWith("shared-lab"));
    if (shared) row(`  shared lab bring-up (${shared.snapshot ?? "?"})`, secs(shared.ready), `${secs(bareR)} bare default topology`, ratio(shared.ready, bareR), goal1);
    row(`  report.html read back in Chromium (${suite.reportCheck})`, secs(suite.reportCheckS ?? NaN), `${secs(suite.wallS)} suite`, ratio(suite.reportCheckS ?? NaN, suite.wallS), "reported");
  }

  const totalS = (performance.now() - t0) / 1000;
  row("bench wall time", secs(totalS), "-", "-", "reported");
  const out: string[] = [];
  out.push(`\nfleetlab bench: openclaw@${version}, default topology ${spec.nodes.count} node hosts, ${trials} trial(s), medians\n`);
  out.push(table(HEAD, rows));
  if (suite) {
    out.push(`\nscenario suite: run ${suite.run}, wall ${secs(suite.wallS)} (scenarios ${secs(suite.scenariosS)}), evidence ${suite.dir}\n`);
    out.push(table(["scenario", "seconds", "verdict"], suiteTable(suite)));
  }
  if (typeof raw.plot === "string") out.push(`\nplot (ready and memory per node host vs NODES): ${raw.plot}`);
  writeJson(run.file("bench.json"), { rows, ...raw });
  out.push(`raw figures: ${path.join(run.dir, "bench.json")}\n`);
  if (failed.length) out.push(`\n${failed.length} part(s) of the bench FAILED (their rows say why):\n${failed.map((f) => `  ${f}`).join("\n")}\n`);
  process.stdout.write(out.join("\n") + "\n");
  fs.writeFileSync(run.file("bench.txt"), out.join("\n") + "\n");
  return { failed };
}

/**
 * A guarded part of the bench: run `fn`; if it throws, add a row `FAILED: <one line>` and the
 * failure to `failed`, and return normally so the bench goes on.
 */
export function benchPart(row: (what: string, value: string, baseline: string, r: string, target: string) => void, failed: string[]) {
  return async (what: string, fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      const why = oneLine(err);
      failed.push(`${what}: ${why}`);
      row(what, `FAILED: ${why}`, "-", "-", "-");
    }
  };
}

/** An error as one line for a table cell (no stack: the bench reports, it does not crash). */
function oneLine(err: unknown): string {
  return ((err as Error)?.message ?? String(err)).split("\n")[0]!.slice(0, 300);
}

/** The scenarios folder's loader (the bench's entry point hands the scenarios to the suite part). */
async function loadRepoScenarios(): Promise<Scenario[]> {
  const mod = (await import(pathToFileURL(path.join(ROOT, "scenarios", "index.ts")).href)) as { loadScenarios(dir?: string, o?: { repro?: boolean }): Promise<Scenario[]> };
  return mod.loadScenarios(undefined, { repro: setting("REPROS") === "1" });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  runBench({ loadScenarios: loadRepoScenarios }).then(
    ({ failed }) => process.exit(failed.length ? 1 : 0),
    (err) => {
      // Only what ends the whole bench gets here (no engine, no package): said in one line.
      process.stderr.write(`fleetlab bench: ${(err as Error).message ?? err}${process.env.FLEETLAB_DEBUG ? `\n${(err as Error).stack}` : ""}\n`);
      process.exit(err instanceof LabError ? err.exitCode : 1);
    },
  );
}
