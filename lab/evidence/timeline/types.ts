// The report's data: what report-page.js draws (lanes, items on them, notices), as the
// timeline's readers (one per evidence source, beside this file) build it.
import type { z } from "zod";
import type { CheckRow, RunRecord } from "../run.ts";

export type Tone = "ok" | "error" | "warn" | "fault" | "info" | "in" | "out" | "muted" | "open";
export type ItemKind = "scenario" | "container" | "fault" | "armed" | "turn" | "tool" | "approval" | "mcp" | "frame" | "conn" | "http" | "omitted";
export type LaneGroup = "scenarios" | "member" | "faults" | "turns" | "tools" | "mcp" | "connection";

export interface Lane {
  id: string;
  /** Lab key (run.json labs), "" for the run-level lane. */
  lab: string;
  group: LaneGroup;
  label: string;
  /** Where its items come from (relative to the run folder). */
  source?: string;
}

export interface Item {
  lane: string;
  kind: ItemKind;
  /** Epoch milliseconds; `end` for items with a duration. */
  t: number;
  end?: number;
  label: string;
  tone: Tone;
  /** What the frame filter matches: the method, event or command. */
  key?: string;
  /** Points inside the box (fault steps). */
  marks?: { t: number; label: string }[];
  /** Drawn across every lane of its lab (faults in force). */
  band?: boolean;
  /** The full content, shown when the item is opened (redacted). */
  detail?: unknown;
  /** Where it was read: file relative to the run folder, with line or seq. */
  source?: string;
}

export interface Link {
  label: string;
  href: string;
}

export interface Notice {
  lab?: string;
  lane?: string;
  message: string;
  file?: string;
  /** The time it concerns (a view shows the notices of its window). */
  t?: number;
  end?: number;
}

export interface ScenarioView {
  name: string;
  verdict: string;
  seconds: number;
  detail?: string;
  t0?: number;
  t1?: number;
  /** Where the boundaries come from: run.json, verdict.json, scenario.log (approximate: end = last log line, start = end - seconds), or none. */
  bounds: "run.json" | "verdict.json" | "scenario.log" | "none";
  evidence?: string;
  lab?: string;
  links: Link[];
}

export interface LabView {
  key: string;
  evidence: string;
  members: { alias: string; kind: string; container: string; ip: string }[];
  links: Link[];
  t0?: number;
  t1?: number;
}

export interface ReportData {
  generatedAt: string;
  run: {
    id: string;
    seed: number;
    startedAt: string;
    endedAt?: string;
    openclawVersion?: string;
    /** Set when the version is a build of one's own: where its package came from and its sha256. */
    openclawBuild?: { source: string; sha256: string };
    host: RunRecord["host"];
    engine?: RunRecord["engine"];
    plan: string[];
    neverRan: string[];
    links: Link[];
  };
  scenarios: ScenarioView[];
  checks: z.infer<typeof CheckRow>[];
  labs: LabView[];
  lanes: Lane[];
  items: Item[];
  notices: Notice[];
  caps: { framesPerConnectionAndScenario: number; frameContentChars: number; framesTotal: number; framesEmbedded: number };
  range: { t0: number; t1: number };
}
