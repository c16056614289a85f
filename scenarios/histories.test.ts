// Each scenario's checks judged again on a history recorded in a real run (fixtures/histories/,
// kept with `make judge RUN=<id> KEEP=<name>`): today's checks and finding records must read it
// as the run read it. A registered finding or a changed check that changes a verdict shows here
// first; keep the history again from a run that shows the new reading.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadScenarios } from "./index.ts";
import { labFindings } from "../lab/checks/findings.ts";
import { HISTORY_FIXTURES, type HistoryFixture } from "../lab/commands/judge.ts";
import { isDeepStrictEqual } from "node:util";
import { asRecorded, judgeHistory } from "../lab/judge/history.ts";

const scenarios = await loadScenarios(undefined, { repro: true });
const fixtures = fs.existsSync(HISTORY_FIXTURES) ? fs.readdirSync(HISTORY_FIXTURES).filter((f) => f.endsWith(".json")).sort() : [];

describe("registered signatures are what a history keeps", () => {
  it("every registered signature (and variant) is a JSON value: an observation is kept as JSON, so a signature with undefined, a Date or a Map could never match", () => {
    const bad: string[] = [];
    for (const s of scenarios) for (const f of s.findings ?? []) for (const sig of [f.signature, ...(f.variants ?? []).map((v) => v.signature)]) if (!isDeepStrictEqual(sig, asRecorded(sig))) bad.push(`${s.name}: ${f.id}`);
    for (const f of labFindings) if (!isDeepStrictEqual(f.signature, asRecorded(f.signature))) bad.push(`lab-wide: ${f.id}`);
    expect(bad).toEqual([]);
  });
});

describe("recorded histories judged again (fixtures/histories/)", () => {
  it("there are recorded histories to judge", () => {
    expect(fixtures.length).toBeGreaterThan(0);
  });

  for (const f of fixtures) {
    it(`${f}: today's checks and records read it as its run did`, () => {
      const fx = JSON.parse(fs.readFileSync(path.join(HISTORY_FIXTURES, f), "utf8")) as HistoryFixture;
      expect(path.basename(f, ".json")).toBe(fx.scenario);
      const s = scenarios.find((x) => x.name === fx.scenario);
      expect(s, `no scenario ${fx.scenario} in the suite`).toBeDefined();
      const j = judgeHistory(fx.history, s!, labFindings);
      expect({ verdict: j.verdict, detail: j.detail }, `judged again from run ${fx.run}; if a record or a check changed on purpose, keep the history again`).toEqual({ verdict: fx.verdict, detail: fx.detail });
    });
  }
});
