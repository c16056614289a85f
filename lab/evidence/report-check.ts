// The report checked as a person would see it: report.html opened in headless Chromium, the
// verdicts read back from the page equal to what the runner recorded, a fault and a frame drawn
// on the timeline, and screenshots saved beside it (report.png: the page as it opens;
// report-timeline.png: the timeline of a scenario with a fault). Used by the scenario suite's
// last test on the run it just made; runs as well on any earlier run folder.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { dumpDom, readPage, screenshot, type PageReading } from "./chromium.ts";
import type { RunRecord } from "./run.ts";

export interface ReportLook {
  reading: PageReading;
  screenshots: string[];
}

/** A scenario of this run that had a fault (midturn-node-loss first), for the timeline screenshot. */
export function faultScenario(dir: string, record: RunRecord): string | undefined {
  const withFaults = record.scenarios.filter((s) => {
    const f = path.join(dir, s.evidence ?? `scenarios/${s.name}`, "faults.jsonl");
    return fs.existsSync(f) && fs.statSync(f).size > 0;
  });
  return (withFaults.find((s) => s.name === "midturn-node-loss") ?? withFaults[0])?.name;
}

export async function lookAtReport(file: string, record: RunRecord): Promise<ReportLook> {
  const reading = readPage(await dumpDom(file));
  assert.ok(reading.rendered, `${file}: the page's script did not finish drawing (no data-rendered on <body>)`);
  for (const s of record.scenarios) assert.equal(reading.verdicts[s.name], s.verdict, `${file}: the verdict of ${s.name} on the page`);
  const shown = Object.entries(reading.verdicts).filter(([, v]) => v !== "not-run");
  assert.equal(shown.length, record.scenarios.length, `${file}: verdict rows on the page (${shown.map(([n]) => n).join(", ")})`);
  assert.ok((reading.items.fault ?? 0) > 0, `${file}: no fault drawn on the timeline (items: ${JSON.stringify(reading.items)})`);
  assert.ok((reading.items.frame ?? 0) > 0, `${file}: no frame drawn on the timeline (items: ${JSON.stringify(reading.items)})`);

  const dir = path.dirname(file);
  const shots = [await screenshot(file, path.join(dir, "report.png"))];
  const scenario = faultScenario(dir, record);
  if (scenario) shots.push(await screenshot(file, path.join(dir, "report-timeline.png"), { hash: `scenario=${scenario}` }));
  return { reading, screenshots: shots };
}
