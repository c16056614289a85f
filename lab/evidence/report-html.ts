// report.html in a run folder: one self-contained file that opens from disk with no server and
// no network. The page (report-page.html, with its stylesheet) and its renderer
// (report-page.js) are static files beside this module; the run's data (lab/evidence/timeline.ts)
// is embedded as JSON in a <script type="application/json"> and the renderer builds every
// element with DOM APIs (textContent, createElement), so nothing is escaped by hand: the one
// rewrite is "<" as \u003c inside the JSON (still the same JSON), so "</script>" cannot occur.
import fs from "node:fs";
import path from "node:path";
import { readRunRecord, type RunRecord } from "./run.ts";
import { buildReportData, type ReportData } from "./timeline.ts";

export const REPORT_FILE = "report.html";

const asset = (name: string) => fs.readFileSync(new URL(`./${name}`, import.meta.url), "utf8");

/** The page for this data, as one HTML string. */
export function reportHtml(data: ReportData, redactText: (s: string) => string = (s) => s): string {
  const page = asset("report-page.html");
  const script = asset("report-page.js");
  if (/<\/script/i.test(script)) throw new Error("report-page.js must not contain '</script' (it is inlined in a script element)");
  const json = redactText(JSON.stringify(data)).replace(/</g, "\\u003c");
  const parts = page.split(/<!--(DATA|SCRIPT)-->/);
  const fill: Record<string, string> = { DATA: json, SCRIPT: script };
  // split() with a capture group interleaves text and placeholder names: fill each name.
  return parts.map((p, i) => (i % 2 === 1 ? fill[p]! : p)).join("");
}

export interface ReportWritten {
  file: string;
  bytes: number;
  ms: number;
  frames: { total: number; embedded: number };
}

/** Build report.html for a run folder (run.json read with its schema when no record is given). */
export function writeReportHtml(dir: string, record?: RunRecord, out = dir): ReportWritten {
  const t0 = performance.now();
  const rec = record ?? readRunRecord(path.join(dir, "run.json"));
  const { data, redactor } = buildReportData(dir, rec);
  const html = reportHtml(data, (s) => redactor.known(s));
  const file = path.join(out, REPORT_FILE);
  fs.writeFileSync(file, html);
  return { file, bytes: Buffer.byteLength(html), ms: Math.round(performance.now() - t0), frames: { total: data.caps.framesTotal, embedded: data.caps.framesEmbedded } };
}
