// The gateway's curve under a fleet: one lab per OpenClaw version with the largest N of the
// sweep as scripted nodes (paired at bring-up, from a snapshot after the first time), the gateway
// restarted so it starts the sweep with nothing connected, then N = each of the sweep in turn
// (ascending: nodes are only added, so memory is not a leftover of a larger N). At every N,
// after the nodes connected and a settle:
//   memory     the gateway container's memory (cgroup usage without inactive file pages), MiB
//   cpu idle   its CPU over 5 s with N connected and nothing asked, cores
//   views      node.list and health, 15 and 10 reads one after another: latency percentiles
//   fan-out    node.invoke to all N at once (each node answers with its own name): latency
//              percentiles, how many were routed to their caller, and the gateway's CPU
//              over the fan-out, cores
//   event loop what OpenClaw itself publishes: health's eventLoop (its own sampler: delay
//              p99/max, utilization, cpuCoreRatio; docs/gateway/health.md)
// The baseline is N = 0 in the same lab (the gateway with no fleet connected, right after its
// restart): each figure is also given as a ratio to it. "Where the curve bends": the first N
// whose cost per added node (memory, fan-out p95) is more than twice the step before it's.
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { docker, requireEngine } from "../engine/docker.ts";
import { pruneDeadRuns } from "../engine/cleanup.ts";
import { screenshot } from "../evidence/chromium.ts";
import { writeJson } from "../evidence/write.ts";
import { Run } from "../evidence/run.ts";
import { env, setEnv, setting } from "../core/settings.ts";
import { DEFAULT_OPENCLAW_VERSION } from "../definitions/spec.ts";
import { LabError } from "../core/log.ts";
import { fleetPlotHtml } from "./plot.ts";
import { Lab } from "../topology/lab.ts";
import { parseTopology } from "../definitions/spec.ts";
import { connectPatiently, mapLimit } from "../topology/fleet.ts";
import { fanOut, percentiles } from "../kits/fleet.ts";
import { listNodes } from "../clients/operator.ts";
import { sleep, waitFor } from "../core/wait.ts";

export type Pct = ReturnType<typeof percentiles>;

export interface FleetPoint {
  version: string;
  n: number;
  /** Seconds to connect the nodes added at this step (as paired devices). */
  connectS: number;
  memMiB: number;
  cpuIdleCores: number;
  cpuFanoutCores: number;
  nodeList: Pct;
  health: Pct;
  fanout: Pct;
  routed: number;
  /** health's eventLoop as OpenClaw published it at this N, nothing asked (absent: not published). */
  eventLoop?: Record<string, unknown>;
  /** The same, for the sampler's window right after the fan-out. */
  eventLoopAfterFanout?: Record<string, unknown>;
  /** node.list's answer in bytes (JSON). */
  nodeListBytes: number;
  /** The operator's connection closed while this step's nodes connected: its close, as the transcript says. */
  operatorDropped?: string;
  /** The fan-out's invokes not routed to their caller, by the operator's error (code: message) or "misrouted". */
  notRouted: Record<string, number>;
}

/** BENCH_FLEET: the sweep's N, ascending ("0" or "" = none). Default 10 50 100 200 500. */
export function fleetSweep(raw: string | undefined): number[] {
  const v = (raw ?? "10 50 100 200 500").trim();
  if (v === "" || v === "0") return [];
  const ns = v.split(/[\s,]+/).map(Number);
  const bad = ns.find((n) => !Number.isInteger(n) || n < 1 || n > 1000);
  if (bad !== undefined) throw new Error(`BENCH_FLEET=${raw}: give whole numbers of scripted nodes from 1 to 1000, e.g. "10 50 100 200 500"`);
  return [...new Set(ns)].sort((a, b) => a - b);
}

/** The gateway container's CPU time (s) and memory without inactive file pages (MiB), from the engine. */
async function containerUse(id: string): Promise<{ cpuS: number; memMiB: number }> {
  const s = (await docker().getContainer(id).stats({ stream: false })) as unknown as {
    cpu_stats: { cpu_usage: { total_usage: number } };
    memory_stats: { usage?: number; stats?: Record<string, number> };
  };
  const st = s.memory_stats.stats ?? {};
  const inactive = st.inactive_file ?? st.total_inactive_file ?? 0;
  return { cpuS: s.cpu_stats.cpu_usage.total_usage / 1e9, memMiB: ((s.memory_stats.usage ?? 0) - inactive) / 1024 / 1024 };
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t = performance.now();
  const value = await fn();
  return { ms: Math.round(performance.now() - t), value };
}

/** The eventLoop figures of a health answer (wherever the version puts them), if any. */
export function eventLoopOf(health: unknown): Record<string, unknown> | undefined {
  const h = health as { eventLoop?: unknown; diagnostics?: { eventLoop?: unknown } } | undefined;
  const e = h?.eventLoop ?? h?.diagnostics?.eventLoop;
  return e && typeof e === "object" ? (e as Record<string, unknown>) : undefined;
}

/** One version's sweep: its own lab, the baseline at N = 0, then each N; each point is pushed to `points` as it is measured (a failure at a larger N keeps the smaller ones). */
export async function sweepVersion(version: string, ns: number[], run: Run, log: (s: string) => void, points: FleetPoint[] = []): Promise<FleetPoint[]> {
  const max = Math.max(...ns);
  const spec = parseTopology({
    openclawVersion: version,
    nodes: { count: 0 },
    scripted: { count: max, prefix: "bench", paired: true },
    gateway: { authRateLimit: { maxAttempts: 100_000 } },
    tap: { enabled: false },
    git: { enabled: false },
    mcp: { servers: [] },
  });
  const lab = await Lab.up(spec, run, `bench-fleet-${version.replace(/[^0-9a-z]+/gi, "-")}`);
  try {
    log(`fleet ${version}: ${max} scripted nodes up (${JSON.stringify(lab.fleetUp)}); restarting the gateway so the sweep starts with none connected`);
    await lab.restart(spec.gateway.alias, 10);
    await lab.reconnectOperator({ timeoutMs: 120_000 });
    await Promise.all(lab.scriptedAliases.map((a) => lab.scripted(a).closeAll()));
    const gw = lab.member(spec.gateway.alias).id;
    const client = lab.operator.client;
    // Settle after the restart: OpenClaw's own sampler (health's eventLoop) says the gateway's
    // event loop is mostly idle again (utilization under 0.3), or 90 s passed; then a few reads
    // of each view unmeasured, so N = 0 is the gateway at rest, not still starting.
    await waitFor("the restarted gateway at rest (health eventLoop utilization < 0.3)", async () => {
      const u = eventLoopOf(await client.request<unknown>("health", {}))?.utilization;
      return typeof u === "number" && u < 0.3;
    }, { timeoutMs: 90_000, intervalMs: 2_000 }).catch(() => log(`fleet ${version}: the gateway's event loop did not settle under 0.3 utilization within 90 s; measuring anyway`));
    for (let i = 0; i < 5; i++) await Promise.all([client.request("node.list", {}), client.request("health", {})]);
    let connected = 0;
    for (const n of [0, ...ns]) {
      const adding = lab.scriptedAliases.slice(connected, n);
      const tc = performance.now();
      const outcomes = await mapLimit(adding, 16, (a) => connectPatiently(lab.fleet, a, Date.now(), 60_000));
      const refused = outcomes.filter((o) => !o.admitted);
      if (refused.length) throw new Error(`fleet ${version} N=${n}: ${refused.length} of ${adding.length} nodes not admitted (${[...new Set(refused.map((o) => (!o.admitted ? `${o.code}${o.detailsCode ? `/${o.detailsCode}` : ""}` : "")))].join(", ")})`);
      connected = n;
      // The operator's connection can go while the fleet connects (2026.9.4, 500 nodes: closed
      // 1006 after a stream of presence events each listing every device, bench run
      // 20261204-155500): said in the point, and the operator connected again to measure on.
      const dropped = client.connected ? undefined : lastClose(client);
      if (dropped !== undefined) {
        log(`fleet ${version} N=${n}: the operator's connection was closed while the nodes connected (${dropped}); connecting it again`);
        await lab.operator.reconnect({}, { timeoutMs: 60_000 });
      }
      await waitFor(`node.list showing ${n} scripted nodes connected`, async () => (await listNodes(client)).filter((e) => e.connected && String(e.displayName ?? "").startsWith("bench-")).length >= n, { timeoutMs: 120_000, intervalMs: 500 });
      const connectS = Math.round(performance.now() - tc) / 1000;
      await sleep(5_000);
      const a = await containerUse(gw);
      await sleep(5_000);
      const b = await containerUse(gw);
      const cpuIdleCores = (b.cpuS - a.cpuS) / 5;
      const nl: number[] = [];
      let nodeListBytes = 0;
      for (let i = 0; i < 15; i++) {
        const r = await timed(() => client.request<unknown>("node.list", {}));
        nl.push(r.ms);
        nodeListBytes = JSON.stringify(r.value).length;
      }
      const hl: number[] = [];
      let lastHealth: unknown;
      for (let i = 0; i < 10; i++) {
        const r = await timed(() => client.request<unknown>("health", {}));
        hl.push(r.ms);
        lastHealth = r.value;
      }
      let fan = { pct: percentiles([]), routed: 0, cores: 0 };
      let afterFanout: Record<string, unknown> | undefined;
      const refusals: Record<string, number> = {};
      if (n > 0) {
        const c0 = await containerUse(gw);
        const tf = performance.now();
        const fanned = await fanOut(lab.fleet, client, lab.scriptedAliases.slice(0, n), { timeoutMs: 30_000 });
        const c1 = await containerUse(gw);
        fan = { pct: percentiles(fanned.map((f) => f.ms)), routed: fanned.filter((f) => f.end === "routed").length, cores: (c1.cpuS - c0.cpuS) / ((performance.now() - tf) / 1000) };
        for (const f of fanned) {
          if (f.end === "routed") continue;
          const k = f.end === "refused" ? `${f.code ?? "refused"}: ${(f.message ?? "").slice(0, 80)}` : "misrouted";
          refusals[k] = (refusals[k] ?? 0) + 1;
        }
        // The sampler's window that closes next covers the fan-out's end.
        await sleep(1_200);
        afterFanout = eventLoopOf(await client.request<unknown>("health", {}));
      }
      const p: FleetPoint = { version, n, connectS, memMiB: Math.round(b.memMiB), cpuIdleCores: round2(cpuIdleCores), cpuFanoutCores: round2(fan.cores), nodeList: percentiles(nl), health: percentiles(hl), fanout: fan.pct, routed: fan.routed, eventLoop: eventLoopOf(lastHealth), eventLoopAfterFanout: afterFanout, nodeListBytes, notRouted: refusals, ...(dropped !== undefined ? { operatorDropped: dropped } : {}) };
      points.push(p);
      log(`fleet ${version} N=${n}: mem ${p.memMiB} MiB, cpu idle ${p.cpuIdleCores} / fan-out ${p.cpuFanoutCores} cores, node.list p95 ${p.nodeList.p95} ms (${nodeListBytes} B), health p95 ${p.health.p95} ms, fan-out ${p.fanout.text} (${p.routed}/${n} routed${p.routed < n ? `; not routed: ${JSON.stringify(p.notRouted)}` : ""}), event loop ${elText(p.eventLoop)} (after the fan-out: ${elText(p.eventLoopAfterFanout)})`);
    }
  } finally {
    await lab.down();
  }
  return points;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** The last close of a client's connection, as its transcript notes it ("code 1006", "code 1012 reason ..."). */
function lastClose(client: { transcript(): readonly { dir: string; kind: string; note?: string }[] }): string {
  return [...client.transcript()].reverse().find((e) => e.dir === "meta" && e.kind === "close")?.note ?? "closed, no close noted";
}

/** OpenClaw's event-loop figures in one phrase: delay p99, utilization, process CPU (cores). */
export function elText(e: Record<string, unknown> | undefined): string {
  if (!e) return "not published";
  const n = (k: string) => (typeof e[k] === "number" ? round2(e[k]) : "?");
  return `delay p99 ${n("delayP99Ms")} ms, utilization ${n("utilization")}, cpu ${n("cpuCoreRatio")} cores`;
}

/** The first N whose cost per added node (of `pick`) is more than twice the step before it's; undefined: no bend in the sweep. */
export function bendAt(points: readonly { n: number }[], pick: (p: never) => number): number | undefined {
  const ps = points as { n: number }[];
  let prev: number | undefined;
  for (let i = 1; i < ps.length; i++) {
    const dn = ps[i]!.n - ps[i - 1]!.n;
    if (dn <= 0) continue;
    const slope = (pick(ps[i] as never) - pick(ps[i - 1] as never)) / dn;
    if (prev !== undefined && prev > 0 && slope > 2 * prev) return ps[i]!.n;
    if (slope > 0) prev = slope;
  }
  return undefined;
}

/** The fleet table: one row per version and N, each figure with its ratio to N = 0 of the same lab. */
export function fleetTable(points: readonly FleetPoint[]): string[] {
  const head = "| version | N | connect s | memory MiB (x N=0) | CPU idle cores | CPU fan-out cores | node.list p50/p95 ms (x N=0) | node.list KiB | health p95 ms | fan-out p50/p95/p99/max ms | routed | event loop (OpenClaw's health) |";
  const lines = [head, "|---|---|---|---|---|---|---|---|---|---|---|---|"];
  for (const p of points) {
    const base = points.find((b) => b.version === p.version && b.n === 0);
    const x = (v: number, b: number | undefined) => (b && b > 0 ? ` (${(v / b).toFixed(2)}x)` : "");
    const el = `${elText(p.eventLoop)}; after fan-out: ${p.n ? elText(p.eventLoopAfterFanout) : "-"}`;
    lines.push(`| ${p.version} | ${p.n} | ${p.connectS} | ${p.memMiB}${x(p.memMiB, base?.memMiB)} | ${p.cpuIdleCores} | ${p.n ? p.cpuFanoutCores : "-"} | ${p.nodeList.p50}/${p.nodeList.p95}${x(p.nodeList.p95, base?.nodeList.p95)} | ${(p.nodeListBytes / 1024).toFixed(1)} | ${p.health.p95} | ${p.n ? `${p.fanout.p50}/${p.fanout.p95}/${p.fanout.p99}/${p.fanout.max}` : "-"} | ${p.n ? `${p.routed}/${p.n}` : "-"} | ${el} |`);
  }
  return lines;
}

/**
 * The fleet part: every version's sweep in `run`, the table (markdown) and the plot (HTML,
 * screenshotted into bench-fleet.png beside the scale plot), raw figures in bench-fleet.json.
 * A version whose sweep fails is a line saying why; the others go on.
 */
export async function benchFleet(run: Run, versions: string[], ns: number[], log: (s: string) => void): Promise<{ points: FleetPoint[]; table: string[]; failed: string[]; plot: string }> {
  const points: FleetPoint[] = [];
  const failed: string[] = [];
  for (const v of versions) {
    try {
      await sweepVersion(v, ns, run, log, points);
    } catch (err) {
      failed.push(`fleet sweep of openclaw@${v}: ${((err as Error).message ?? String(err)).split("\n")[0]}`);
      log(failed.at(-1)!);
    }
  }
  const table = fleetTable(points);
  const bends = versions.map((v) => {
    const ps = points.filter((p) => p.version === v);
    if (ps.length < 3) return `openclaw@${v}: too few points to tell a bend (${ps.length})`;
    const mem = bendAt(ps, (p: FleetPoint) => p.memMiB);
    const fan = bendAt(ps.filter((p) => p.n > 0), (p: FleetPoint) => p.fanout.p95);
    return `openclaw@${v}: memory per added node ${mem === undefined ? "does not bend" : `bends at N=${mem}`}; fan-out p95 per added node ${fan === undefined ? "does not bend" : `bends at N=${fan}`} (a bend: more than twice the step before's cost per node)`;
  });
  const drops = points.filter((p) => p.operatorDropped).map((p) => `openclaw@${p.version} N=${p.n}: the operator's connection closed while the nodes connected (${p.operatorDropped}); it was connected again to measure`);
  const notRouted = points.filter((p) => p.n && p.routed < p.n).map((p) => `openclaw@${p.version} N=${p.n}: ${p.n - p.routed} not routed: ${Object.entries(p.notRouted).map(([k, c]) => `${c}x ${k}`).join("; ")}`);
  table.push("", ...bends, ...drops, ...notRouted, ...failed.map((f) => `${f} (the points before it are kept)`));
  writeJson(run.file("bench-fleet.json"), { versions, ns, points });
  fs.writeFileSync(run.file("bench-fleet.md"), `${table.join("\n")}\n`);
  const html = run.file("bench-fleet.html");
  fs.writeFileSync(html, fleetPlotHtml({ title: `fleetlab bench: the gateway under a fleet of scripted nodes (${versions.map((v) => `openclaw@${v}`).join(", ")})`, caption: `Run ${run.id}.`, points: points.map((p) => ({ version: p.version, n: p.n, memMiB: p.memMiB, fanoutP95: p.fanout.p95, nodeListP95: p.nodeList.p95, cpuFanoutCores: p.cpuFanoutCores })) }));
  let plot: string;
  try {
    plot = await screenshot(html, run.file("bench-fleet.png"), { width: 1140, height: 880 });
  } catch (err) {
    plot = `not drawn: ${(err as Error).message}`;
  }
  return { points, table, failed, plot };
}

/** `make bench-fleet`: the fleet part alone, over VERSIONS (default the pinned version) and BENCH_FLEET. */
async function main(): Promise<number> {
  setEnv("FLEETLAB_QUIET", env("FLEETLAB_QUIET") ?? "1");
  const versions = (setting("VERSIONS") ?? DEFAULT_OPENCLAW_VERSION).split(/[\s,]+/).filter(Boolean);
  const ns = fleetSweep(env("BENCH_FLEET"));
  if (!ns.length) throw new LabError("BENCH_FLEET is 0: nothing to sweep (give e.g. BENCH_FLEET=\"10 50 100 200 500\")");
  await requireEngine();
  await pruneDeadRuns();
  const run = Run.create({});
  const log = (s: string) => process.stderr.write(`bench: ${s}\n`);
  log(`fleet sweep N = ${ns.join(", ")} on ${versions.map((v) => `openclaw@${v}`).join(", ")} (run ${run.id})`);
  const r = await benchFleet(run, versions, ns, log);
  process.stdout.write(`\n${r.table.join("\n")}\n\nplot: ${r.plot}\nraw figures: ${path.join(run.dir, "bench-fleet.json")}\n`);
  if (r.failed.length) process.stdout.write(`\n${r.failed.length} sweep(s) FAILED:\n${r.failed.map((f) => `  ${f}`).join("\n")}\n`);
  return r.failed.length ? 1 : 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`fleetlab bench-fleet: ${(err as Error).message ?? err}\n`);
      process.exit(err instanceof LabError ? err.exitCode : 1);
    },
  );
}
