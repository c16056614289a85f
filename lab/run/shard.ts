// Shards: the scenario suite split across CI runners (`make lab SHARD=2/4`, the vitest suite
// with SHARD=2/4). The split goes by measured cost (scenarios/costs.json: seconds per
// scenario from a real run, refreshed with `fleetlab costs RUN...`), not by count, and it is
// deterministic: the same scenarios, shard count and costs give the same shards on every
// runner, so each shard computes the whole partition itself and runs its own part.
//
// Shared-lab scenarios share one lab's bring-up (~36-76 s measured before the first of them
// runs), so they are never spread one by one: they go in groups, each group on its own shard
// paying one bring-up. How many groups is chosen by cost: every group count from 1 to
// min(shards, shared scenarios) is tried (groups filled longest first), own-lab scenarios fill
// the shards around them, and the split with the shortest longest shard wins; on a tie, fewer
// groups (fewer bring-ups). An own-lab scenario's measured time already holds its own bring-up
// and teardown (the runner times it from Lab.up to the checks after Lab.down).
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { LabError } from "../core/log.ts";
import { ROOT } from "../core/paths.ts";
import type { RunRecord } from "../evidence/run.ts";

export const COSTS_FILE = path.join(ROOT, "scenarios", "costs.json");

export interface Shard {
  /** 1-based. */
  index: number;
  total: number;
}

/** "2/4" -> shard 2 of 4. Anything else (0/3, 5/4, x) is bad input: exit 2 with the fix. */
export function parseShard(text: string): Shard {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  const index = m ? Number(m[1]) : NaN;
  const total = m ? Number(m[2]) : NaN;
  if (!m || total < 1 || index < 1 || index > total) {
    const why = !m ? "is not K/N" : total < 1 ? "N must be at least 1" : `K must be between 1 and ${total}`;
    throw new LabError(`SHARD=${text}: ${why} (e.g. SHARD=2/4: the second of four shards)`);
  }
  return { index, total };
}

export const CostsSchema = z.strictObject({
  /** What these numbers are and how to refresh them (kept in the file for a reader). */
  about: z.string().optional(),
  /** The runs they were measured in. */
  measured: z.object({ runs: z.array(z.string()), at: z.string(), openclawVersion: z.string().optional() }).optional(),
  /** Seconds assumed for a scenario with no measurement yet. */
  defaultSeconds: z.number().positive(),
  /** One shared lab: bring-up before its first scenario plus teardown after its last. */
  sharedLab: z.object({ seconds: z.number().nonnegative() }),
  /** Seconds per scenario as the runner measured it (a shared one without the bring-up). */
  scenarios: z.record(z.string(), z.number().nonnegative()),
});
export type Costs = z.infer<typeof CostsSchema>;

/** Used when scenarios/costs.json is missing: every scenario costs the same. */
export const DEFAULT_COSTS: Costs = { defaultSeconds: 90, sharedLab: { seconds: 60 }, scenarios: {} };

export function loadCosts(file = COSTS_FILE): Costs {
  if (!fs.existsSync(file)) return DEFAULT_COSTS;
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (err) {
    throw new LabError(`${path.relative(process.cwd(), file)} is not readable JSON (${(err as Error).message})`);
  }
  const ok = CostsSchema.safeParse(raw);
  if (!ok.success) throw new LabError(`${path.relative(process.cwd(), file)}: ${ok.error.issues.map((i) => `${i.path.join(".") || "(top)"}: ${i.message}`).join("; ")}`);
  return ok.data;
}

/** What the splitter needs of a scenario. */
export interface Splittable {
  name: string;
  topology: "shared" | "own";
}

export interface ShardPlan {
  /** The scenario names of each shard (index 0 = shard 1), sorted by name. */
  shards: string[][];
  /** Estimated seconds per shard (a shard with shared scenarios includes one bring-up). */
  seconds: number[];
  /** How many shards bring up a shared lab. */
  sharedGroups: number;
}

const costOf = (costs: Costs, name: string) => costs.scenarios[name] ?? costs.defaultSeconds;
const byCostThenName = (cost: (n: string) => number) => (a: string, b: string) => cost(b) - cost(a) || a.localeCompare(b);

/** Split into `total` shards by cost (see the top of this file). Every scenario lands in exactly one shard. */
export function planShards(list: Splittable[], total: number, costs: Costs): ShardPlan {
  const names = list.map((s) => s.name);
  const dup = names.find((n, i) => names.indexOf(n) !== i);
  if (dup) throw new Error(`scenario ${dup} is listed twice`);
  const cost = (n: string) => costOf(costs, n);
  const shared = list.filter((s) => s.topology === "shared").map((s) => s.name).sort(byCostThenName(cost));
  const own = list.filter((s) => s.topology === "own").map((s) => s.name);
  let best: ShardPlan | undefined;
  for (let groups = shared.length ? 1 : 0; groups <= Math.min(total, shared.length); groups++) {
    const plan = split(shared, own, groups, total, cost, costs.sharedLab.seconds);
    const longest = (p: ShardPlan) => Math.max(0, ...p.seconds);
    // Strictly shorter only: on a tie the fewer groups (tried first) stay.
    if (!best || longest(plan) < longest(best) - 1e-9) best = plan;
  }
  return best ?? { shards: Array.from({ length: total }, () => []), seconds: Array(total).fill(0), sharedGroups: 0 };
}

function split(shared: string[], own: string[], groups: number, total: number, cost: (n: string) => number, bringUp: number): ShardPlan {
  // Shared scenarios into `groups` groups, longest first, each to the lightest group.
  const sharedGroups: string[][] = Array.from({ length: groups }, () => []);
  const groupLoad = Array(groups).fill(0) as number[];
  for (const n of shared) {
    const g = lightest(groupLoad, () => true);
    sharedGroups[g]!.push(n);
    groupLoad[g]! += cost(n);
  }
  // Units: each group (plus its bring-up) and each own scenario; longest first, each to the
  // lightest shard (a group only to a shard without one: a shard has one shared lab).
  const units = [
    ...sharedGroups.map((names, i) => ({ names, seconds: groupLoad[i]! + bringUp, shared: true })),
    ...own.map((n) => ({ names: [n], seconds: cost(n), shared: false })),
  ].sort((a, b) => b.seconds - a.seconds || Number(b.shared) - Number(a.shared) || [...a.names].sort()[0]!.localeCompare([...b.names].sort()[0]!));
  const shards: string[][] = Array.from({ length: total }, () => []);
  const load = Array(total).fill(0) as number[];
  const hasShared = Array(total).fill(false) as boolean[];
  for (const u of units) {
    const i = lightest(load, (k) => !u.shared || !hasShared[k]);
    shards[i]!.push(...u.names);
    load[i]! += u.seconds;
    if (u.shared) hasShared[i] = true;
  }
  return { shards: shards.map((s) => s.sort()), seconds: load.map((s) => Math.round(s * 10) / 10), sharedGroups: groups };
}

/** Index of the smallest load among the eligible ones; the lowest index on a tie. */
function lightest(load: number[], eligible: (i: number) => boolean): number {
  let best = -1;
  for (let i = 0; i < load.length; i++) if (eligible(i) && (best < 0 || load[i]! < load[best]!)) best = i;
  if (best < 0) throw new Error("no shard can take this unit"); // cannot happen: groups <= shards
  return best;
}

/** The part of `list` that shard `shard` runs (in the order given), and the whole plan. */
export function selectShard<T extends Splittable>(list: T[], shard: Shard, costs: Costs = loadCosts()): { chosen: T[]; plan: ShardPlan } {
  const plan = planShards(list, shard.total, costs);
  const mine = new Set(plan.shards[shard.index - 1]);
  return { chosen: list.filter((s) => mine.has(s.name)), plan };
}

/** What a shard run records in run.json (`shard`): enough for the merge to name what a missing shard would have run. */
export function shardRecord(shard: Shard, plan: ShardPlan): NonNullable<RunRecord["shard"]> {
  return { index: shard.index, total: shard.total, partition: plan.shards, estimatedSeconds: plan.seconds, sharedGroups: plan.sharedGroups };
}

/**
 * Costs measured in run folders (run.json with its schema), merged over `previous`: a
 * scenario's seconds as the runner recorded them, except that the first shared scenario on a
 * shared lab also paid the lab's bring-up (Lab.up runs inside its timing), which is taken off
 * and counted as the shared lab's cost (its up plus down). Unknown verdicts (the lab itself
 * broke) are not measurements. A later run overrides an earlier one.
 */
export function costsFromRuns(runs: RunRecord[], previous: Costs, topologyOf: (name: string) => "shared" | "own" | undefined): Costs {
  const scenarios = { ...previous.scenarios };
  const bringUps: number[] = [];
  for (const rec of [...runs].sort((a, b) => a.startedAt.localeCompare(b.startedAt))) {
    // Each shared lab of this run (a merged run holds one per shard, under shards/<k>/).
    const sharedLabs = Object.values(rec.labs ?? {}).filter((l) => /(^|\/)shared-lab$/.test(l.evidence));
    const firstOn = new Map<string, string>(); // shared lab evidence -> its first scenario
    // A scenario the suite no longer has: shared unless it had a lab of its own.
    const ownLab = (r: RunRecord["scenarios"][number]) => Object.values(rec.labs ?? {}).some((l) => l.evidence === `${r.evidence}/lab`);
    const sharedRows = rec.scenarios.filter((r) => (topologyOf(r.name) ?? (ownLab(r) ? "own" : "shared")) === "shared");
    for (const r of [...sharedRows].sort((a, b) => (a.startedAt ?? "").localeCompare(b.startedAt ?? ""))) {
      const lab = `${(r.evidence ?? "").replace(/scenarios\/[^/]+$/, "")}shared-lab`;
      if (!firstOn.has(lab)) firstOn.set(lab, r.name);
    }
    for (const l of sharedLabs) if (l.timings.up !== undefined) bringUps.push(l.timings.up + (l.timings.down ?? 0));
    for (const r of rec.scenarios) {
      if (r.verdict === "unknown") continue;
      let s = r.seconds;
      const lab = [...firstOn].find(([, name]) => name === r.name)?.[0];
      const up = lab ? sharedLabs.find((l) => l.evidence === lab)?.timings.up : undefined;
      if (up !== undefined) s = Math.max(0, s - up);
      scenarios[r.name] = Math.round(s * 10) / 10;
    }
  }
  const sorted = [...bringUps].sort((a, b) => a - b);
  const median = sorted.length ? sorted[Math.floor((sorted.length - 1) / 2)]! : undefined;
  return {
    ...previous,
    measured: { runs: runs.map((r) => r.id), at: new Date().toISOString(), openclawVersion: (runs[0]?.topology as { openclawVersion?: string } | undefined)?.openclawVersion },
    sharedLab: { seconds: median !== undefined ? Math.round(median * 10) / 10 : previous.sharedLab.seconds },
    scenarios: Object.fromEntries(Object.entries(scenarios).sort(([a], [b]) => a.localeCompare(b))),
  };
}
