// Fault timings: inject -> in effect and heal -> healed per kind, median and worst over a few
// trials, on the cheap testbed (base-image echo containers) and a loopback wire tap. Beside
// them, the same run's engine round trips (one exec, one inspect) as the baseline: these
// machines are shared and noisy, so compare ratios across runs.
//   benchFaults() -> rows   (lab/bench.ts calls it)
//   node --import tsx lab/faults/bench.ts   prints the table
import { spawn } from "node:child_process";
import { once } from "node:events";
import fs from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { TapControl } from "../clients/tap.ts";
import { docker } from "../docker.ts";
import { Run } from "../evidence/run.ts";
import { DOCKER_DIR } from "../paths.ts";
import { healAll, type Fault } from "./fault.ts";
import { execIn } from "./helper.ts";
import { faults } from "./index.ts";
import { Testbed } from "./testbed.ts";

export interface Stat {
  median: number;
  worst: number;
}

export interface FaultBenchRow {
  fault: string;
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
  /** Same-run baselines: one engine exec round trip and one inspect, medians. */
  baseline: { execMs: number; inspectMs: number };
}

const stat = (xs: number[]): Stat => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: round(s[Math.floor((s.length - 1) / 2)]!), worst: round(s.at(-1)!) };
};
const median = (xs: number[]) => stat(xs).median;
const round = (x: number) => Math.round(x * 10) / 10;

async function trials(name: string, n: number, make: () => Fault, observedBy: string, between?: () => Promise<void>): Promise<FaultBenchRow> {
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
    await between?.();
  }
  const row = { fault: name, trials: n, injectToEffectMs: stat(inj), healToHealedMs: stat(heal), prepareMs: median(prep), cleanupMs: median(clean), observedBy };
  if (process.env.FLEETLAB_QUIET !== "1") process.stderr.write(`bench: fault ${name}: inject->in effect ${row.injectToEffectMs.median} ms (worst ${row.injectToEffectMs.worst}), heal->healed ${row.healToHealedMs.median} ms (worst ${row.healToHealedMs.worst})\n`);
  return row;
}

/** A loopback tap (the faultproxy program) in front of an idle upstream: rule round trips only. */
async function loopbackTap(): Promise<{ tap: TapControl; close(): Promise<void> }> {
  const upstream = http.createServer((_q, r) => r.writeHead(404).end());
  upstream.listen(0, "127.0.0.1");
  await once(upstream, "listening");
  const child = spawn(process.execPath, [path.join(DOCKER_DIR, "faultproxy", "server.mjs")], {
    env: { ...process.env, TAP_UPSTREAM: `127.0.0.1:${(upstream.address() as AddressInfo).port}`, TAP_HOST: "127.0.0.1", TAP_LISTEN_PORT: "0", TAP_CONTROL_PORT: "0", TAP_STDOUT: "none" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const control = await new Promise<number>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.includes('"listening"'));
      if (line) resolve((JSON.parse(line) as { control: number }).control);
    });
    child.once("exit", (code) => reject(new Error(`tap exited (${code})`)));
  });
  return {
    tap: new TapControl(`http://127.0.0.1:${control}`),
    async close() {
      child.kill("SIGTERM");
      await once(child, "exit");
      await new Promise((r) => upstream.close(r));
    },
  };
}

export async function benchFaults(opts: { trials?: number } = {}): Promise<FaultBench> {
  const n = opts.trials ?? Number(process.env.BENCH_FAULT_TRIALS ?? 5);
  const run = Run.create({ root: fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-fault-bench-")) });
  const bed = await Testbed.up(run, ["a", "b"]);
  const wireTap = await loopbackTap();
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
    // Process faults act on b; a stays up to probe.
    rows.push(await trials("kill (SIGKILL; heal: start)", n, () => faults.kill(bed, "b"), "engine: not running / running"));
    rows.push(await trials("stop (SIGTERM, graceful; heal: start)", n, () => faults.stop(bed, "b", { timeoutSeconds: 10 }), "engine: not running / running"));
    rows.push(await trials("pause (freeze; heal: unpause)", n, () => faults.pause(bed, "b"), "engine: paused / not paused"));
    rows.push(await trials("restart (heal: nothing left)", n, () => faults.restart(bed, "b", { timeoutSeconds: 10 }), "engine: running with a new start time"));
    rows.push(await trials("disconnect (heal: reconnect, same aliases)", n, () => faults.disconnect(bed, "b"), "engine: endpoint gone / back with its aliases"));
    rows.push(await trials("partition both ways", n, () => faults.partition(bed, "a", "b"), "iptables -S + TCP probe from inside (250 ms probe timeout)"));
    rows.push(await trials("partition one way (out)", n, () => faults.partition(bed, "a", "b", { direction: "out" }), "iptables -S + TCP probe from inside (250 ms probe timeout)"));
    rows.push(await trials("partition, rules only (probe: false)", n, () => faults.partition(bed, "a", "b", { probe: false }), "iptables -S"));
    rows.push(await trials("packet loss 30 %", n, () => faults.loss(bed, "a", 0.3), "iptables -S"));
    rows.push(await trials("bandwidth 1mbit (tbf)", n, () => faults.bandwidth(bed, "a", "1mbit"), "tc qdisc show"));
    rows.push(await trials("wire: close 1006 at a frame", n, () => faults.wire.close(wireTap.tap, 1006, { match: { method: "worker.launch.v1" } }), "tap lists the rule (loopback tap)"));
    rows.push(await trials("wire: half-open", n, () => faults.wire.halfOpen(wireTap.tap, { path: "/" }), "tap lists the rule (loopback tap)"));
    rows.push(await trials("wire: freeze (immediate)", n, () => faults.wire.freeze(wireTap.tap), "the rule fired (loopback tap)"));
    return { rows, baseline: { execMs: median(exec), inspectMs: median(inspect) } };
  } finally {
    await healAll();
    await wireTap.close();
    await bed.down();
  }
}

/** Rows as lab/bench.ts prints them: [figure, value, baseline (same run), ratio, target]. */
export function benchRows(b: FaultBench): string[][] {
  const ms = (x: number) => `${x.toFixed(0)} ms`;
  return b.rows.flatMap((r) => [
    [`fault ${r.fault}: inject -> in effect`, `${ms(r.injectToEffectMs.median)} (worst ${ms(r.injectToEffectMs.worst)})`, `${ms(b.baseline.execMs)} exec`, `${(r.injectToEffectMs.median / b.baseline.execMs).toFixed(1)}x`, "reported"],
    [`fault ${r.fault}: heal -> healed`, `${ms(r.healToHealedMs.median)} (worst ${ms(r.healToHealedMs.worst)})`, `${ms(b.baseline.execMs)} exec`, `${(r.healToHealedMs.median / b.baseline.execMs).toFixed(1)}x`, "reported"],
  ]);
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
      process.exit(0);
    },
    (err) => {
      process.stderr.write(`fault bench: ${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
}
