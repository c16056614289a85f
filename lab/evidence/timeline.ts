// What report.html shows, built from a run folder alone (after Jepsen's timeline.html: a lane
// per process, a box per operation coloured by outcome, faults drawn across): per lab a lane
// per member (container starts, stops, kills, restarts), its faults, its turns, its tool calls
// and approvals per MCP server, and a lane per connection (operator and wire tap) with every
// frame; the scenarios as boxes on top; the verdicts, checks and findings; links to every
// file. Everything embedded is redacted (lab/evidence/redact.ts). Big runs stay usable: at
// most FRAME_CAP frames per connection and scenario are embedded (the first and the last
// halves; fewer when the run would pass FRAMES_TOTAL), each frame's content at most
// FRAME_CONTENT_LIMIT characters; what was left out is an item on its lane and a notice naming
// the full transcript.
// Every evidence file is read as its format declares it (lab/evidence/records/), by one reader
// per source beside this file (lab/evidence/timeline/: runs, containers, operator with its tool
// calls, taps, faults, mcp, frames); this module runs them in order over one board.
import type { RunRecord } from "./run.ts";
import type { Redactor } from "./redact.ts";
import { Board } from "./timeline/board.ts";
import { drawContainers } from "./timeline/containers.ts";
import { drawFaults } from "./timeline/faults.ts";
import { capFrames } from "./timeline/frames.ts";
import { drawMcpServers } from "./timeline/mcp.ts";
import { drawOperator } from "./timeline/operator.ts";
import { checks, collectLabs, collectScenarios, labWindows, scenarioLane } from "./timeline/runs.ts";
import { drawTaps } from "./timeline/taps.ts";
import { drawScenarioEvents } from "./timeline/tools.ts";
import type { Lane, LaneGroup, ReportData } from "./timeline/types.ts";

export type { Item, ItemKind, LabView, Lane, LaneGroup, Link, Notice, ReportData, ScenarioView, Tone } from "./timeline/types.ts";

/** Frames embedded per connection and scenario window (half from its start, half from its end). */
export const FRAME_CAP = 600;
/** Frames embedded in all (the per-connection cap is lowered for runs that would pass it). */
export const FRAMES_TOTAL = 20_000;
/** Characters of one frame's content embedded (JSON text); past that it is cut with a pointer to the transcript. */
export const FRAME_CONTENT_LIMIT = 4096;

/**
 * Build the report's data from a run folder and its (validated) run.json, with the redactor that
 * made it: pass the serialized data through `redactor.known` too (a secret first seen in a later
 * frame is then also replaced where an earlier item held it).
 */
export function buildReportData(dir: string, record: RunRecord, opts: { frameCap?: number; framesTotal?: number; contentLimit?: number } = {}): { data: ReportData; redactor: Redactor } {
  // A copy: redaction works in place, and the record may be the live one of a running run.
  const b = new Board(dir, structuredClone(record), opts.frameCap ?? FRAME_CAP, opts.framesTotal ?? FRAMES_TOTAL, opts.contentLimit ?? FRAME_CONTENT_LIMIT);
  return { data: build(b), redactor: b.redact };
}

/** The readers in order (lanes are numbered as they are met, so the order is the page's), then the page's data. */
function build(b: Board): ReportData {
  const r = b.record;
  collectLabs(b);
  collectScenarios(b);
  for (const lab of b.labs) {
    drawContainers(b, lab);
    drawOperator(b, lab);
    drawTaps(b, lab);
  }
  drawScenarioEvents(b);
  labWindows(b, b.items);
  drawFaults(b);
  drawMcpServers(b);
  scenarioLane(b);
  const items = capFrames(b);
  let t0 = Date.parse(r.startedAt);
  let t1 = r.endedAt ? Date.parse(r.endedAt) : t0 + 1000;
  for (const i of items) {
    if (Number.isFinite(i.t)) t0 = Math.min(t0, i.t);
    t1 = Math.max(t1, i.end ?? i.t);
  }
  labWindows(b, items);
  const versions = new Set(Object.values(r.labs ?? {}).map((l) => (l.spec as { openclawVersion?: string } | undefined)?.openclawVersion).filter(Boolean));
  const topVersion = (r.topology as { openclawVersion?: string } | undefined)?.openclawVersion;
  // A build of one's own (OPENCLAW_PACKAGE): its name is the version, and where it came from is said beside it.
  const build = (r.topology as { openclawBuild?: { source: string; sha256: string } } | undefined)?.openclawBuild;
  // Lanes in display order: the run's, then each lab's by group (members, faults, turns, tool
  // calls, MCP servers, connections), in the order they were met within a group.
  const groups: LaneGroup[] = ["scenarios", "member", "faults", "turns", "tools", "mcp", "connection"];
  const labRank = (l: Lane) => (l.lab === "" ? -1 : b.labs.findIndex((x) => x.key === l.lab));
  const laneOrder = [...b.lanes.values()].map((l, i) => ({ l, i })).sort((x, y) => labRank(x.l) - labRank(y.l) || groups.indexOf(x.l.group) - groups.indexOf(y.l.group) || x.i - y.i).map((x) => x.l);
  const used = new Set(items.map((i) => i.lane));
  return {
    generatedAt: new Date().toISOString(),
    run: {
      id: r.id,
      seed: r.seed,
      startedAt: r.startedAt,
      endedAt: r.endedAt,
      openclawVersion: topVersion ?? ([...versions].join(", ") || undefined),
      ...(build ? { openclawBuild: build } : {}),
      host: r.host,
      engine: r.engine,
      plan: r.plan ?? r.scenarios.map((s) => s.name),
      neverRan: (r.plan ?? []).filter((n) => !r.scenarios.some((s) => s.name === n)),
      links: b.links(["run.json", "junit.xml", r.faults?.timeline ?? "faults.jsonl", "report.png", "report-timeline.png"]),
    },
    scenarios: b.scenarios,
    checks: checks(b),
    labs: b.labs,
    lanes: laneOrder.filter((l) => used.has(l.id) || l.group === "member"),
    items,
    notices: b.notices,
    caps: { framesPerConnectionAndScenario: b.frameCap, frameContentChars: b.contentLimit, framesTotal: b.framesTotal, framesEmbedded: items.filter((i) => i.kind === "frame").length },
    range: { t0, t1 },
  };
}
