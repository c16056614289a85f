// Fault timings: inject -> in effect and heal -> healed of every kind in the fault registry
// (lab/faults/registry.ts: each kind's bench recipes), median and worst over a few trials, on
// the cheap test bed (base-image echo containers) and a loopback wire tap. Beside them, the same
// run's engine round trips (one exec, one inspect) as the baseline: these machines are shared
// and noisy, so compare ratios across runs. Then the wire kinds and killInside, trigger frame
// at the tap -> action (lab/bench/wire-timing.ts; BENCH_WIRE=0 skips it). Partition has a
// target (issue 11: in effect within 200 ms); the rest are reported.
//   benchFaults() -> rows   (lab/bench/main.ts calls it)
//   node_modules/.bin/node lab/bench/faults.ts   prints the table
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TapControl } from "../clients/tap.ts";
import { docker } from "../engine/docker.ts";
import { Run } from "../evidence/run.ts";
import type { Fault } from "../faults/fault.ts";
import { execIn } from "../faults/helper.ts";
import type { BenchBed, Family } from "../faults/kind.ts";
import { allFaults } from "../faults/registry.ts";
import { Testbed } from "../testing/testbed.ts";
import { benchWireTiming, startTapBefore, wireTimingRows, type WireTiming } from "./wire-timing.ts";
import { env } from "../core/settings.ts";

export interface Stat {
  median: number;
  worst: number;
}

export interface FaultBenchRow {
  /** The recipe's label, e.g. "partition one way (out)". */
  fault: string;
  /** Registry name and family of its kind. */
  kind: string;
  family: Family;
  trials: number;
  /** inject() call -> first observation that the fault is in effect (prepare not included). */
  injectToEffectMs: Stat;
  /** heal() call -> first observation that it is healed (clean-up not included). */
  healToHealedMs: Stat;
  prepareMs: number;
  cleanupMs: number;
  /** What "in effect" was observed by. */
  observedBy: string;
}

export interface FaultBench {
  rows: FaultBenchRow[];
  /** Kinds the bench bed cannot have, with the reason (none today: it has a helper image and a tap). */
  skipped: { kind: string; reason: string }[];
  /** Same-run baselines: one engine exec round trip and one inspect, medians. */
  baseline: { execMs: number; inspectMs: number };
  /** Wire kinds and killInside: trigger frame at the tap -> action (lab/bench/wire-timing.ts). */
  wire?: WireTiming;
}

/** Issue 11's targets for inject -> in effect, by kind (the rest are reported). */
export const EFFECT_TARGET_MS: Record<string, number> = { partition: 200 };

const stat = (xs: number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: round(s[Math.floor((s.length - 1) / 2)]!), worst: round(s.at(-1)!) };
};
const median = (xs: number[]) => stat(xs).median;
const round = (x: number) => Math.round(x * 10) / 10;

async function trials(kind: { name: string; family: Family }, label: string, n: number, make: () => Fault, observedBy: string): Promise<FaultBenchRow> {
  const inj: number[] = [];
  const heal: number[] = [];
  const prep: number[] = [];
  const clean: number[] = [];
  for (let i = 0; i < n; i++) {
    const f = make();
    prep.push(await f.prepare());
    inj.push((await f.inject()).totalMs);
    const h = await f.heal();
    heal.push(h.totalMs);
    clean.push(h.cleanupMs);
  }
  const row = { fault: label, kind: kind.name, family: kind.family, trials: n, injectToEffectMs: stat(inj), healToHealedMs: stat(heal), prepareMs: median(prep), cleanupMs: median(clean), observedBy };
  if (env("FLEETLAB_QUIET") !== "1") process.stderr.write(`bench: fault ${label}: inject->in effect ${row.injectToEffectMs.median} ms (worst ${row.injectToEffectMs.worst}), heal->healed ${row.healToHealedMs.median} ms (worst ${row.healToHealedMs.worst})\n`);
  return row;
}

/** A loopback tap (the faultproxy program) in front of an idle upstream: rule round trips only. */
async function loopbackTap(): Promise<{ tap: TapControl; close(): Promise<void> }> {
  const upstream = http.createServer((_q, r) => r.writeHead(404).end());
  const server = await startTapBefore(upstream);
  return {
    tap: new TapControl(`http://127.0.0.1:${server.ready.control}`),
    async close() {
      await server.stop();
      await new Promise((r) => upstream.close(r));
    },
  };
}

export async function benchFaults(opts: { trials?: number } = {}): Promise<FaultBench> {
  const n = opts.trials ?? Number(env("BENCH_FAULT_TRIALS") ?? 5);
  const run = Run.create({ root: fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-fault-bench-")) });
  const bed = await Testbed.up(run, ["a", "b"]);
  const loop = await loopbackTap().catch(async (err) => (await bed.down(), Promise.reject(err)));
  // The bed as a tapped lab: wire faults record in its run and register on its teardown stack.
  const tapped = { id: bed.id, run: bed.run, teardown: bed.teardown, network: bed.network, images: bed.images, member: (a: string) => bed.member(a), tap: () => loop.tap };
  const benchBed: BenchBed = { lab: bed, tap: { lab: tapped, node: "loopback" } };
  try {
    const exec: number[] = [];
    const inspect: number[] = [];
    for (let i = 0; i < 5; i++) {
      let t = performance.now();
      await execIn(bed.member("a").id, ["true"]);
      exec.push(performance.now() - t);
      t = performance.now();
      await docker().getContainer(bed.member("a").id).inspect();
      inspect.push(performance.now() - t);
    }
    const rows: FaultBenchRow[] = [];
    const skipped: FaultBench["skipped"] = [];
    // Every registered kind, in registry order (process faults act on b; a stays up to probe).
    for (const kind of allFaults) {
      const why = kind.available(tapped);
      if (why !== true) {
        skipped.push({ kind: kind.name, reason: why });
        continue;
      }
      for (const r of kind.bench) rows.push(await trials(kind, r.label, n, () => r.make(benchBed), r.observedBy));
    }
    const wire = env("BENCH_WIRE") === "0" ? undefined : await benchWireTiming({ trials: n, bed });
    return { rows, skipped, baseline: { execMs: median(exec), inspectMs: median(inspect) }, wire };
  } finally {
    // Heal what a failed trial left while the tap still runs, then remove the bed.
    await bed.teardown.drain();
    await loop.close();
    await bed.down();
  }
}

/** Rows as lab/bench/main.ts prints them: [figure, value, baseline (same run), ratio, target]. */
export function benchRows(b: FaultBench): string[][] {
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  const target = (r: FaultBenchRow) => EFFECT_TARGET_MS[r.kind];
  return [
    ...b.rows.flatMap((r) => [
      [`fault ${r.fault}: inject -> in effect`, `${ms(r.injectToEffectMs.median)} (worst ${ms(r.injectToEffectMs.worst)})`, `${ms(b.baseline.execMs)} exec`, `${(r.injectToEffectMs.median / b.baseline.execMs).toFixed(1)}x`, target(r) ? `<= ${target(r)} ms` : "reported"],
      [`fault ${r.fault}: heal -> healed`, `${ms(r.healToHealedMs.median)} (worst ${ms(r.healToHealedMs.worst)})`, `${ms(b.baseline.execMs)} exec`, `${(r.healToHealedMs.median / b.baseline.execMs).toFixed(1)}x`, "reported"],
    ]),
    ...(b.wire ? wireTimingRows(b.wire) : []),
  ];
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  benchFaults().then(
    (b) => {
      const head = ["fault", "inject->in effect (median / worst)", "heal->healed (median / worst)", "prepare", "clean-up", "observed by"];
      const lines = b.rows.map((r) => [r.fault, `${r.injectToEffectMs.median} / ${r.injectToEffectMs.worst} ms`, `${r.healToHealedMs.median} / ${r.healToHealedMs.worst} ms`, `${r.prepareMs} ms`, `${r.cleanupMs} ms`, r.observedBy]);
      const w = head.map((h, c) => Math.max(h.length, ...lines.map((l) => l[c]!.length)));
      const fmt = (l: string[]) => l.map((x, c) => x.padEnd(w[c]!)).join("  ");
      process.stdout.write(`\nfault timings, ${b.rows[0]?.trials} trials each; baseline: engine exec ${b.baseline.execMs} ms, inspect ${b.baseline.inspectMs} ms (medians)\n\n`);
      process.stdout.write([fmt(head), fmt(w.map((n) => "-".repeat(n))), ...lines.map(fmt)].join("\n") + "\n");
      for (const s of b.skipped) process.stdout.write(`skipped ${s.kind}: ${s.reason}\n`);
      if (b.wire) {
        process.stdout.write(`\nwire faults, trigger frame -> action (target <= 20 ms); baseline: a plain frame through the tap ${b.wire.passMs.median} ms\n`);
        for (const r of wireTimingRows(b.wire)) process.stdout.write(`  ${r.join("  ")}\n`);
      }
      process.exit(0);
    },
    (err) => {
      process.stderr.write(`fault bench: ${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
}
