// The run's own rows: its labs (run.json, or a lab folder a cut run left), its scenarios with
// their windows (run.json, else verdict.json, else scenario.log), their checks (findings.json,
// else run.json), each lab's span, and the lane of scenario boxes.
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";
import { CheckRow, ScenarioRow } from "../run.ts";
import type { Board } from "./board.ts";
import type { Item, ScenarioView, Tone } from "./types.ts";

/** A scenario's verdict.json is its run.json row with its checks (lab/run/runner.ts): only its bounds are read. */
const VerdictBounds = ScenarioRow.pick({ startedAt: true, endedAt: true });

export function collectLabs(b: Board): void {
  const seen = new Set<string>();
  for (const [key, row] of Object.entries(b.record.labs ?? {})) {
    seen.add(row.evidence);
    b.labs.push({ key, evidence: row.evidence, members: row.members, links: b.filesUnder(row.evidence) });
  }
  // A lab cut before it wrote its run.json row still has its folder.
  const candidates = ["shared-lab", ...b.record.scenarios.map((s) => `${s.evidence ?? `scenarios/${s.name}`}/lab`)];
  for (const ev of candidates) {
    if (!seen.has(ev) && b.exists(ev)) {
      seen.add(ev);
      b.labs.push({ key: ev, evidence: ev, members: [], links: b.filesUnder(ev) });
    }
  }
}

export function collectScenarios(b: Board): void {
  const shared = b.labOf("shared-lab");
  for (const row of b.record.scenarios) {
    const evidence = row.evidence ?? (b.exists(`scenarios/${row.name}`) ? `scenarios/${row.name}` : undefined);
    const v: ScenarioView = { name: row.name, verdict: row.verdict, seconds: row.seconds, detail: row.detail, bounds: "none", evidence, links: [] };
    if (row.startedAt && row.endedAt) Object.assign(v, { t0: Date.parse(row.startedAt), t1: Date.parse(row.endedAt), bounds: "run.json" });
    else if (evidence && b.exists(`${evidence}/verdict.json`)) {
      const ok = VerdictBounds.safeParse(b.readJson(`${evidence}/verdict.json`));
      if (ok.success && ok.data.startedAt && ok.data.endedAt) Object.assign(v, { t0: Date.parse(ok.data.startedAt), t1: Date.parse(ok.data.endedAt), bounds: "verdict.json" });
    }
    if (v.bounds === "none" && evidence && b.exists(`${evidence}/scenario.log`)) {
      const stamps = fs
        .readFileSync(path.join(b.dir, evidence, "scenario.log"), "utf8")
        .split("\n")
        .map((l) => Date.parse(l.slice(0, 24)))
        .filter(Number.isFinite);
      const last = stamps.at(-1);
      if (last !== undefined) Object.assign(v, { t1: last, t0: Math.min(stamps[0]!, last - row.seconds * 1000), bounds: "scenario.log" });
    }
    const own = evidence ? b.labOf(`${evidence}/lab`) : undefined;
    // A merged run (lab/evidence/merge.ts) keeps each shard's folder, its shared-lab/ beside its scenarios/.
    const shardShared = evidence ? b.labOf(evidence.replace(/scenarios\/[^/]+$/, "shared-lab")) : undefined;
    v.lab = (own ?? shardShared ?? shared)?.key;
    if (evidence) v.links = b.filesUnder(evidence, `${evidence}/lab`);
    b.scenarios.push(v);
  }
}

export function checks(b: Board): z.infer<typeof CheckRow>[] {
  const out: z.infer<typeof CheckRow>[] = [];
  for (const s of b.scenarios) {
    const file = s.evidence ? `${s.evidence}/findings.json` : undefined;
    const parsed = file && b.exists(file) ? z.array(CheckRow).safeParse(b.readJson(file)) : undefined;
    if (parsed?.success) out.push(...parsed.data);
    else {
      if (parsed && !parsed.success) b.notices.push({ message: `${file} is not a list of checks; showing run.json's findings of ${s.name}`, file });
      out.push(...(b.record.findings ?? []).filter((c) => c.scenario === s.name));
    }
  }
  return out.map((c) => b.redact.value(c));
}

/** Each lab's span: from its first to its last item. */
export function labWindows(b: Board, items: Item[]): void {
  for (const lab of b.labs) {
    let t0 = Infinity;
    let t1 = -Infinity;
    for (const i of items) {
      if (b.lanes.get(i.lane)?.lab !== lab.key) continue;
      t0 = Math.min(t0, i.t);
      t1 = Math.max(t1, i.end ?? i.t);
    }
    if (t0 <= t1) Object.assign(lab, { t0, t1 });
  }
}

export function scenarioLane(b: Board): void {
  const lane = b.lane("", "scenarios", "scenarios", "scenarios");
  for (const s of b.scenarios) {
    if (s.t0 === undefined || s.t1 === undefined) continue;
    const tone: Tone = s.verdict === "pass" ? "ok" : s.verdict === "fail" ? "error" : s.verdict === "unknown" ? "open" : "warn";
    b.add({ lane, kind: "scenario", t: s.t0, end: s.t1, label: `${s.name}: ${s.verdict}`, tone, key: s.name, detail: { name: s.name, verdict: s.verdict, seconds: s.seconds, detail: s.detail, bounds: s.bounds, lab: s.lab }, source: s.evidence });
  }
}
