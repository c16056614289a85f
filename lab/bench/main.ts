// make bench: figures with a baseline measured in the same run beside each (these machines
// are shared and noisy, so ratios, not absolute times, are what to compare across runs). Every
// row: figure, value, baseline (same run), ratio, target (issue 11's goals where it has one).
//   images     cold build (every image, package already installed) vs warm (all cached)
//   ready      default topology: gateway ready + every node approved and connected, pairing
//              from scratch (both device-pairing modes), vs the same gateway and node hosts as
//              bare processes on loopback, pairing from scratch too
//   snapshot   default topology (and each shape of BENCH_SCALE) restored from a snapshot of
//              paired state vs bare processes restored from the same snapshot (bare.ts,
//              restore.ts), trial by trial in turn, medians of at least 3; and vs pairing
//   teardown   lab down (logs saved, everything removed) vs killing the bare processes
//   memory     peak memory per node host, containers vs bare processes
//   scale      NODES = each of BENCH_SCALE: ready pairing from scratch against the bare
//              gateway's own ready time, the snapshot rows of that shape, peak memory per node
//              host; plotted (bench-scale.png)
//   order      on each shape of BENCH_SCALE: the default start order (as many node hosts as
//              cores beside the gateway, the rest once it answers) and node hosts only after it,
//              against every member at once (FLEETLAB_START_ORDER=all)
//   faults     inject -> in effect and heal -> healed of every kind in the fault registry
//              (lab/bench/faults.ts), wire kinds and killInside trigger frame -> action
//              (lab/bench/wire-timing.ts)
//   suite      the `make test` scenario suite in-process (lab/bench/suite.ts): wall time,
//              per-scenario seconds and verdicts, the labs' bring-ups
//   first-time `fleetlab run smoke` with an empty cache and every image built again (as a new
//              user meets it; lab/bench/first-time.ts) vs the same with this machine's caches
// Env: BENCH_TRIALS (default 2), BENCH_COLD=0 (skip the cold image build), BENCH_FIRST=0 (skip the first-time set-up), BENCH_FAULTS=0,
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
import { Lab, nodesBesideGateway, startOrder, type StartOrder } from "../topology/lab.ts";
import { LabOperator, NotPairedAfterRestore } from "../topology/operator.ts";
import { SnapshotStore } from "../topology/snapshot.ts";
import { WaitTimeout } from "../core/wait.ts";
import { nodeAliases, parseTopology, topologyFromEnv, type TopologySpec } from "../definitions/spec.ts";
import { startTimes } from "./warm-start.ts";
import { benchFirstTime, FIRST_TIME_TARGET_S } from "./first-time.ts";
import { BareTopology } from "./bare.ts";
import { benchFaults, benchRows } from "./faults.ts";
import { containerPeakMiB, treePeakMiB } from "./memory.ts";
import { scalePlotHtml, type ScalePoint } from "./plot.ts";
import { benchSuite, suiteScenarios, suiteTable, SUITE_HEAD, SUITE_TARGET_S, type SuiteBench } from "./suite.ts";
import { env, setEnv, setting } from "../core/settings.ts";
import { LabError } from "../core/log.ts";

setEnv("FLEETLAB_QUIET", env("FLEETLAB_QUIET") ?? "1");

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

/** One shape's snapshot trials: ready (and gateway /readyz) of restored labs and of bare processes restored from the same snapshot, in seconds. */
export interface SnapshotTrials {
  lab: number[];
  bare: number[];
  labGw: number[];
  bareGw: number[];
  /** Ready of the lab that paired and took the snapshot, when there was none yet. */
  takenReady?: number;
  /** Trials not counted, and why. */
  notes: string[];
  /** What restoring rewrote in the bare members' state (values per member and table), from the first bare trial. */
  rewritten?: Record<string, Record<string, number>>;
}

/**
 * The rows of one shape's snapshot trials: the restored lab against bare processes restored from
 * the same snapshot (medians, with how many trials each), its gateway /readyz the same way, then
 * against the lab pairing from scratch (`pairing`, same run), and trials not counted.
 */
export function snapshotRows(label: string, t: SnapshotTrials, pairing: number, target: string): string[][] {
  const rows: string[][] = [];
  const lab = median(t.lab);
  const bare = median(t.bare);
  const bareCell = t.bare.length ? `${secs(bare)} bare restored (median of ${t.bare.length})` : "- (bare restored not measured)";
  if (!t.lab.length) rows.push([`ready, ${label}, snapshot restored`, "not measured", bareCell, "-", target]);
  else {
    rows.push([`ready, ${label}, snapshot restored (median of ${t.lab.length})`, secs(lab), bareCell, ratio(lab, bare), target]);
    rows.push([`  gateway /readyz, ${label}, snapshot restored`, secs(median(t.labGw)), t.bare.length ? `${secs(median(t.bareGw))} bare restored` : "-", ratio(median(t.labGw), median(t.bareGw)), "reported"]);
    rows.push([`  snapshot path vs pairing path, ${label}`, secs(lab), `${secs(pairing)} lab pairing from scratch, same run`, ratio(lab, pairing), "< 1x"]);
  }
  if (t.takenReady !== undefined) rows.push([`  pairing + taking the snapshot, ${label}`, secs(t.takenReady), `${secs(pairing)} lab pairing from scratch, same run`, ratio(t.takenReady, pairing), "reported"]);
  if (t.notes.length) rows.push([`  not counted, ${label}`, t.notes.join("; "), "-", "-", "-"]);
  return rows;
}

export async function runBench(opts: BenchOptions = {}): Promise<{ failed: string[] }> {
  const t0 = performance.now();
  const trials = Number(env("BENCH_TRIALS") ?? 2);
  const scaleTrials = Number(env("BENCH_SCALE_TRIALS") ?? 1);
  const scale = scaleFromEnv(env("BENCH_SCALE"));
  const snapshots = env("BENCH_SNAPSHOT") !== "0";
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
    if (env("BENCH_COLD") === "0") row("openclaw package, cached (warm)", secs(warmS), "- (BENCH_COLD=0)", "-", "< 1 s");
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
    if (env("BENCH_COLD") === "0") {
      row("image step, warm (all cached)", secs(median(warm)), "- (BENCH_COLD=0)", "-", "< 2 s");
    } else {
      setEnv("FLEETLAB_IMAGE_SALT", `-bench-${Date.now()}`);
      const t = performance.now();
      const cold = await ensureImages(version);
      const coldS = (performance.now() - t) / 1000;
      setEnv("FLEETLAB_IMAGE_SALT", undefined);
      for (const img of Object.values(cold).reverse()) await docker().getImage(img.tag).remove().catch(() => {});
      row("image step, warm (all cached)", secs(median(warm)), `${secs(coldS)} cold`, `${((median(warm) / coldS) * 100).toFixed(2)} %`, "< 2 s");
      for (const img of Object.values(cold)) row(`  cold build: ${img.name}`, secs(img.seconds), `${secs(coldS)} all images`, `${((img.seconds / coldS) * 100).toFixed(0)} %`, "reported");
    }
  });

  // ---- the first-time set-up, to the smoke verdict (lab/bench/first-time.ts), against the same warm
  if (env("BENCH_FIRST") !== "0") {
    await part("first-time set-up", async () => {
      const { first, warm } = await benchFirstTime(log);
      raw.firstTime = { first, warm };
      const said = (t: { verdict: string; exitCode: number }) => `${t.verdict.toUpperCase()}, exit ${t.exitCode}`;
      row(`first-time set-up to the smoke verdict (empty cache, every image built; ${said(first)})`, secs(first.seconds), `${secs(warm.seconds)} warm (${said(warm)})`, ratio(first.seconds, warm.seconds), `<= ${FIRST_TIME_TARGET_S} s`);
      if (first.setUpS !== undefined) row("  of it the set-up step (npm install, images)", secs(first.setUpS), `${secs(first.seconds)} first-time`, ratio(first.setUpS, first.seconds), "reported");
    });
  }

  // ---- OpenClaw's starts in a container: the compile cache the image ships against the same
  // image made cold (lab/bench/warm-start.ts), and the bare gateway on this host beside them.
  if (env("BENCH_STARTS") !== "0") {
    await part("OpenClaw starts, compile cache warm and cold", async () => {
      const images = await ensureImages(version);
      const st = await startTimes({ image: images.openclaw.tag, runId: run.id, trials: Math.max(3, trials | 1), log, packageDir: pkg });
      raw.starts = st;
      const g = st.gateway;
      const n = st.node;
      const b = st.bare;
      row("gateway start to /readyz, warm compile cache (image)", secs(median(g.warm)), `${secs(median(g.cold))} cold`, ratio(median(g.warm), median(g.cold)), "< 1.00x cold");
      row("  the same, warm: container against the bare process", secs(median(g.warm)), `${secs(median(b.warm))} bare warm`, ratio(median(g.warm), median(b.warm)), "reported");
      row("  the same, cold: container against the bare process", secs(median(g.cold)), `${secs(median(b.cold))} bare cold`, ratio(median(g.cold), median(b.cold)), "reported");
      row("node host start to asking the gateway for pairing, warm compile cache", secs(median(n.warm)), `${secs(median(n.cold))} cold`, ratio(median(n.warm), median(n.cold)), "< 1.00x cold");
    });
  }

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
      // Same orchestration as the lab: its start order, then readiness.
      await bare.startInOrder(nodesBesideGateway(startOrder(), spec.nodes.count));
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
  row("gateway /readyz, containers, pairing from scratch", secs(median(labGw)), `${secs(median(bareGw))} bare, pairing from scratch`, ratio(median(labGw), median(bareGw)), "reported");
  row("ready, default topology, pairing from scratch (operator approves)", secs(median(labReady)), `${secs(bareR)} bare, pairing from scratch`, ratio(median(labReady), bareR), goal1);
  row("ready, default topology, pairing from scratch (subnet auto-approve)", secs(median(labReadySubnet)), `${secs(bareR)} bare, pairing from scratch`, ratio(median(labReadySubnet), bareR), goal1);

  // ---- snapshot of paired state: a restored lab against bare processes restored from the same
  // snapshot (BareTopology.restore), trial by trial in turn (the lab first in odd trials, the
  // bare processes first in even ones, so a change in the shared machine's load falls on both).
  const snapshotTrials = async (s: TopologySpec, name: string, n: number): Promise<SnapshotTrials> => {
    const r: SnapshotTrials = { lab: [], bare: [], labGw: [], bareGw: [], notes: [] };
    // A first lab of this shape makes sure there is a snapshot (pairing and taking it when there is none).
    let key: string | undefined;
    await part(`${name}: a snapshot of this shape`, async () => {
      const first = await Lab.up(s, run, name, { snapshot: "use" });
      const rec = first.snapshot;
      const ready = first.timings.ready;
      await first.down();
      if (!rec) throw new Error("this Lab.up keeps no snapshot record");
      if (rec.path === "fresh") return void r.notes.push(`no snapshot: ${rec.reason ?? "paired from scratch"}`);
      if (rec.path === "taken") r.takenReady = ready;
      key = rec.key;
    });
    if (!key) return r;
    for (let i = 1; i <= n; i++) {
      for (const side of i % 2 ? (["lab", "bare"] as const) : (["bare", "lab"] as const)) {
        await part(`${name}: ${side} restored, trial ${i}`, async () => {
          if (side === "lab") {
            const lab = await Lab.up(s, run, `${name}-lab-${i}`, { snapshot: "use" });
            const rec = lab.snapshot;
            const t = lab.timings;
            await lab.down();
            if (rec?.path !== "restored") return void r.notes.push(`lab trial ${i} ${rec?.path ?? "?"}${rec?.reason ? `: ${rec.reason}` : ""}`);
            r.lab.push(t.ready!);
            r.labGw.push(t.gatewayReady!);
            return;
          }
          const b = await bareRestoredUp(s, pkg, key!, path.join(run.dir, `${name}-bare-${i}.jsonl`));
          if (b.ready === undefined) return void r.notes.push(`bare trial ${i}: ${b.reason}`);
          r.bare.push(b.ready);
          r.bareGw.push(b.gatewayReady!);
          if (b.operatorApprovedByCli) r.notes.push(`bare trial ${i}: the restored gateway did not know the operator (approved through its CLI)`);
          r.rewritten ??= b.rewritten;
        });
      }
    }
    return r;
  };
  let bareRestoredR = NaN;
  if (snapshots) {
    const st = await snapshotTrials(spec, "bench-snapshot", Math.max(3, trials));
    raw.snapshotDefault = st;
    bareRestoredR = median(st.bare);
    for (const r of snapshotRows("default topology", st, median(labReady), goal1)) row(...(r as [string, string, string, string, string]));
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
    const points: (ScalePoint & { snapshot?: SnapshotTrials; fresh: number[]; mem: number[] })[] = [];
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
      const su = snapshots ? await snapshotTrials(s, `bench-scale-${n}-snapshot`, Math.max(3, scaleTrials)) : undefined;
      const sorted = [...mem].sort((a, b) => a - b);
      points.push({ nodes: n, freshReady: median(fresh), snapshotReady: su?.lab.length ? median(su.lab) : undefined, memMedianMiB: median(mem), memMaxMiB: sorted.at(-1) ?? NaN, snapshot: su, fresh, mem });
      log(`scale ${n}: ready ${median(fresh)} s (pairing)${su?.lab.length ? `, ${median(su.lab)} s (snapshot; bare restored ${median(su.bare)} s)` : ""}, node host memory ${median(mem).toFixed(0)} MiB`);
    });
    raw.scale = { bareGatewayAlone: bareAlone, points };
    row("bare gateway alone, /readyz (the scale baseline)", secs(base), `${secs(median(bareGw))} bare gateway beside ${spec.nodes.count} nodes`, ratio(base, median(bareGw)), "reported");
    for (const p of points) {
      const target = p.nodes === 8 ? `<= ${TARGETS.eightNodesReadyRatio}x` : "reported";
      row(`ready, NODES=${p.nodes}, pairing from scratch`, secs(p.freshReady), `${secs(base)} bare gateway alone`, ratio(p.freshReady, base), target);
      if (p.snapshot) for (const r of snapshotRows(`NODES=${p.nodes}`, p.snapshot, p.freshReady, target)) row(...(r as [string, string, string, string, string]));
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
  if (scale.length && env("BENCH_ORDER") !== "0") {
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
  if (env("BENCH_FAULTS") !== "0") {
    await part("fault timings", async () => {
      log("fault timings ...");
      const fb = await benchFaults({ trials: Number(env("BENCH_FAULT_TRIALS") ?? 5) });
      raw.faults = fb;
      rows.push(...benchRows(fb));
    });
  }

  // ---- the scenario suite
  let suite: SuiteBench | undefined;
  if (env("BENCH_SUITE") !== "0" && opts.loadScenarios) {
    const chosen = suiteScenarios(await opts.loadScenarios(), env("BENCH_SUITE_SCENARIOS"));
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
    const all = !env("BENCH_SUITE_SCENARIOS")?.trim();
    row(
      `scenario suite wall time (${suite.results.length} scenarios${all ? "" : `: BENCH_SUITE_SCENARIOS, not the whole suite`}, ${suite.lanes} lane(s))`,
      secs(suite.wallS),
      `${secs(sum)} sum of scenario times`,
      `${(suite.wallS / SUITE_TARGET_S).toFixed(2)} of target`,
      `<= ${SUITE_TARGET_S / 60} min`,
    );
    const shared = suite.labs.find((l) => l.name.startsWith("shared-lab"));
    if (shared) {
      // A restored shared lab against bare processes restored the same way, when the bench measured them.
      const [base, what] = shared.snapshot === "restored" && Number.isFinite(bareRestoredR) ? [bareRestoredR, "bare restored"] : [bareR, "bare, pairing from scratch"];
      row(`  shared lab bring-up (${shared.snapshot ?? "?"})`, secs(shared.ready), `${secs(base)} ${what}, default topology`, ratio(shared.ready, base), goal1);
    }
    row(`  report.html read back in Chromium (${suite.reportCheck})`, secs(suite.reportCheckS ?? NaN), `${secs(suite.wallS)} suite`, ratio(suite.reportCheckS ?? NaN, suite.wallS), "reported");
  }

  const totalS = (performance.now() - t0) / 1000;
  row("bench wall time", secs(totalS), "-", "-", "reported");
  const out: string[] = [];
  out.push(`\nfleetlab bench: openclaw@${version}, default topology ${spec.nodes.count} node hosts, ${trials} trial(s), medians\n`);
  out.push(table(HEAD, rows));
  if (suite) {
    out.push(`\nscenario suite: run ${suite.run}, wall ${secs(suite.wallS)} (scenarios ${secs(suite.scenariosS)}), evidence ${suite.dir}\n`);
    out.push(table(SUITE_HEAD, suiteTable(suite)));
  }
  if (typeof raw.plot === "string") out.push(`\nplot (ready and memory per node host vs NODES): ${raw.plot}`);
  writeJson(run.file("bench.json"), { rows, ...raw });
  out.push(`raw figures: ${path.join(run.dir, "bench.json")}\n`);
  if (failed.length) out.push(`\n${failed.length} part(s) of the bench FAILED (their rows say why):\n${failed.map((f) => `  ${f}`).join("\n")}\n`);
  process.stdout.write(out.join("\n") + "\n");
  fs.writeFileSync(run.file("bench.txt"), out.join("\n") + "\n");
  return { failed };
}

/** How long restored nodes get to connect as paired (RESTORED_PAIRING_MS in lab/topology/lab.ts, scaled by the machine's pace the same way). */
const RESTORED_PAIRING_MS = 60_000;

interface BareRestoredUp {
  ready?: number;
  gatewayReady?: number;
  reason?: string;
  operatorApprovedByCli?: boolean;
  rewritten?: Record<string, Record<string, number>>;
}

/**
 * Bare processes restored from snapshot `key`, timed as Lab.up times a restored lab: from before
 * the snapshot is read until every node host is connected as the paired device it is, through
 * the same operator code (the lab's operator identity, known to the restored gateway state; the
 * same approveNodes with `restored`, the same deadline). A node that asks for pairing, or does
 * not come in time, is a restore that did not hold: no time, the reason instead.
 */
async function bareRestoredUp(s: TopologySpec, pkg: string, key: string, transcript: string): Promise<BareRestoredUp> {
  const bare = new BareTopology(s, pkg);
  try {
    const t = performance.now();
    const found = new SnapshotStore().find(key, [s.gateway.alias, ...nodeAliases(s)]);
    if (!found) return { reason: `snapshot ${key.slice(0, 8)} is gone (a restore that did not hold removes it)` };
    const rewritten = bare.restore(found.archive);
    await bare.startInOrder(nodesBesideGateway(startOrder(), s.nodes.count));
    const gatewayReady = (performance.now() - t) / 1000;
    const op = await LabOperator.connect(bare.operatorHost(), OPERATOR_DIR, transcript);
    try {
      if (s.nodes.count > 0) await op.approveNodes(nodeAliases(s), { timeoutMs: RESTORED_PAIRING_MS, host: bare.operatorHost(), restored: true });
      return { ready: (performance.now() - t) / 1000, gatewayReady, operatorApprovedByCli: op.approvedByCli, rewritten };
    } catch (err) {
      if (err instanceof NotPairedAfterRestore || err instanceof WaitTimeout) return { reason: `the restore did not hold: ${(err as Error).message.split("\n")[0]}` };
      throw err;
    } finally {
      await op.close();
    }
  } finally {
    await bare.down();
  }
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
      process.stderr.write(`fleetlab bench: ${(err as Error).message ?? err}${env("FLEETLAB_DEBUG") ? `\n${(err as Error).stack}` : ""}\n`);
      process.exit(err instanceof LabError ? err.exitCode : 1);
    },
  );
}
