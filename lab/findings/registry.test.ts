// The finding registry as a maintainer reads it: every record's signatures are sound, and every
// committed excerpt carries the raw evidence that decided it (frames, RPC results or container
// log lines, not only the lab's own "check ...: known-finding" line) with the signature's
// deciding value in it (lab/findings/excerpt.ts decidingProblems). No allow-list.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { loadScenarios } from "../../scenarios/index.ts";
import { labFindings } from "../checks/findings.ts";
import { ROOT } from "../core/paths.ts";
import { decidingProblems, excerptPath, type Excerpt } from "./excerpt.ts";
import { recordProblems } from "./findings.ts";
import { upstreamProblems } from "./upstream.ts";

const scenarios = await loadScenarios();
const records = [...scenarios.flatMap((s) => s.findings ?? []), ...labFindings];
/** The field-bug repros (scenarios/repro/), each named for the upstream thread it reproduces. */
const repros = scenarios.filter((s) => fs.existsSync(path.join(ROOT, "scenarios", "repro", `${s.name}.ts`)));

const excerptOf = (id: string): Excerpt | undefined => {
  const file = path.join(ROOT, excerptPath(id));
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as Excerpt) : undefined;
};

describe("finding registry", () => {
  it("every record's variants have a version range that parses and a signature of their own", () => {
    expect(records.flatMap(recordProblems)).toEqual([]);
  });

  it("every committed excerpt carries raw evidence and the signature's deciding value, nothing cut away (no allow-list)", () => {
    const problems = records.flatMap((r) => {
      const ex = excerptOf(r.id);
      return ex ? decidingProblems(ex).map((p) => `${r.id} (${excerptPath(r.id)}): ${p}. Cut it again from a run that saw it: make excerpt RUN=<run id> IDS="${r.id}"`) : [];
    });
    expect(problems).toEqual([]);
  });
});

describe("the repros know their upstream thread (what the bug reports lead with)", () => {
  it("there are repros to check", () => {
    expect(repros.length).toBeGreaterThan(0);
  });

  it("every repro declares its upstream thread: sound (status, fix PR, fixedIn with its source), read on a stated day", () => {
    const problems = repros.flatMap((s) => (s.upstream ? upstreamProblems(s.upstream).map((p) => `${s.name}: ${p}`) : [`${s.name}: no upstream (defineScenario({ upstream }))`]));
    expect(problems).toEqual([]);
  });

  it("the thread it declares is the one its header names, and its name's number is that thread or a related one", () => {
    const wrong = repros.flatMap((s) => {
      const u = s.upstream;
      if (!u) return [];
      const header = fs.readFileSync(path.join(ROOT, "scenarios", "repro", `${s.name}.ts`), "utf8").split("\n").filter((l) => l.startsWith("//")).join("\n");
      const named = Number(/(\d+)$/.exec(s.name)?.[1]);
      return [
        ...(header.includes(`#${u.issue}`) ? [] : [`${s.name}: its header never names #${u.issue}`]),
        ...(u.fixPr && !header.includes(`#${u.fixPr}`) ? [`${s.name}: its header never names the fix PR #${u.fixPr}`] : []),
        ...(named === u.issue || u.related?.includes(named) ? [] : [`${s.name}: upstream #${u.issue} is neither #${named} nor lists it as related`]),
      ];
    });
    expect(wrong).toEqual([]);
  });

  it("a repro with registered findings declares its steps at the protocol level (the report's first steps)", () => {
    expect(repros.filter((s) => s.findings?.length && !s.protocolSteps?.length).map((s) => s.name)).toEqual([]);
  });
});
