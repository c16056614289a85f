// `make findings-docs`: write the README's findings list and findings.md's table again from the
// finding records (each scenario's `findings`, and the lab-wide ones of lab/checks/findings.ts),
// between their `<!-- generated: ... -->` markers (lab/findings/docs.ts). It reads the scenarios,
// so it sits beside them, with the CLI's entry point (main.ts); scenarios/index.ts does not take it
// for a scenario.
import fs from "node:fs";
import path from "node:path";
import { loadScenarios } from "./index.ts";
import { labFindings } from "../lab/checks/findings.ts";
import { ROOT } from "../lab/core/paths.ts";
import { findingsDocs, writeParts, type RecordsOf } from "../lab/findings/docs.ts";

/** Every scenario's records, as the generator reads them. */
export async function recordsOfScenarios(): Promise<RecordsOf[]> {
  return (await loadScenarios()).map((s) => ({ scenario: s.name, proves: s.proves, findings: s.findings ?? [] }));
}

/** Each file's text with its generated parts written from the records (file -> [committed, written]). */
export async function writtenFindingsDocs(root = ROOT): Promise<Map<string, [string, string]>> {
  const out = new Map<string, [string, string]>();
  for (const [file, parts] of Object.entries(findingsDocs(await recordsOfScenarios(), labFindings))) {
    const text = fs.readFileSync(path.join(root, file), "utf8");
    out.set(file, [text, writeParts(text, parts, file)]);
  }
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  for (const [file, [before, after]] of await writtenFindingsDocs()) {
    if (before === after) {
      console.log(`${file}: current`);
      continue;
    }
    fs.writeFileSync(path.join(ROOT, file), after);
    console.log(`${file}: written from the finding records`);
  }
}
