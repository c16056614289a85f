// The registry as a user meets it: every file is a scenario named after it, every finding
// sits beside the scenario that checks it and is complete enough to be judged and retired.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import os from "node:os";
import { loadScenarios, scenarioFiles, sourcesHash } from "./index.ts";
import { labFindings } from "../lab/checks/findings.ts";
import { excerptPath } from "../lab/findings/excerpt.ts";
import { ROOT } from "../lab/core/paths.ts";

const scenarios = await loadScenarios();

/**
 * The places a scenario's source names a finding id (a static read, comments left out): each
 * string literal equal to it, and each use of a `const NAME = "<id>"` after its declaration.
 * A registered id named only once is named only by its record: no check judges it.
 */
function idReferences(source: string, id: string): number {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
  const esc = id.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const literal = new RegExp(`(["'\`])${esc}\\1`, "g");
  let refs = 0;
  for (const m of code.matchAll(literal)) {
    const before = code.slice(Math.max(0, m.index - 80), m.index);
    if (!/const\s+[A-Za-z_$][\w$]*\s*(:\s*[\w.]+\s*)?=\s*$/.test(before)) refs++; // the declaration is not a use
  }
  const decl = new RegExp(`const\\s+([A-Za-z_$][\\w$]*)\\s*(?::\\s*[\\w.]+\\s*)?=\\s*(["'\`])${esc}\\2`, "g");
  for (const d of code.matchAll(decl)) refs += [...code.matchAll(new RegExp(`(?<![\\w$.])${d[1]!.replace(/\$/g, "\\$")}(?![\\w$])`, "g"))].length - 1;
  // A check id built from a template (`id: \`R-x-${variant}\``) names every id its fixed parts match.
  for (const t of code.matchAll(/\bid:\s*`([^`]*\$\{[^`]*)`/g)) {
    const shape = t[1]!.split(/\$\{[^}]*\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[\\w.-]+");
    if (new RegExp(`^${shape}$`).test(id)) refs++;
  }
  return refs;
}

describe("premises are visible and proven in code", () => {
  const docs = fs.readFileSync(path.join(ROOT, "docs", "reference", "scenarios.md"), "utf8");
  it("every declared premise is named in its scenario's header, in docs/reference/scenarios.md, and proven by a ctx.premise call or its own judge over the observations", () => {
    const missing: string[] = [];
    for (const s of scenarios) {
      const file = scenarioFiles().find((f) => path.basename(f, ".ts") === s.name)!;
      const source = fs.readFileSync(file, "utf8");
      const header = source.split("\n").filter((l) => l.startsWith("//")).join("\n");
      for (const p of s.premises ?? []) {
        if (!header.includes(p.id)) missing.push(`${s.name}: ${p.id} not in its header comment`);
        if (!docs.includes(`\`${p.id}\``)) missing.push(`${s.name}: ${p.id} not in docs/reference/scenarios.md`);
        if (!p.judge && idReferences(source, p.id) < 2) missing.push(`${s.name}: ${p.id} declared with no judge, and no ctx.premise call names it`);
        // A premise that says how its fault is aimed off: the body reads ctx.aimOff, the header
        // tells how to run the self-test, and the docs' table names it.
        if (p.aimOff) {
          if (!/\baimOff\b[^:]/.test(source.replace(/aimOff: `[^`]*`|aimOff: "[^"]*"/g, ""))) missing.push(`${s.name}: ${p.id} has an aimOff but the body never reads ctx.aimOff`);
          if (!header.includes("AIM_OFF=1")) missing.push(`${s.name}: ${p.id} has an aimOff but the header does not say how to run the self-test (AIM_OFF=1)`);
          if (!docs.includes(`\`${p.id}\``) || !docs.split("\n").some((l) => l.includes(`\`${p.id}\``) && l.split("|").length >= 6)) missing.push(`${s.name}: ${p.id} not in the premises table with its aim-off column`);
          // Several premises: each attempt aims off one, so the body tells them apart by id
          // (a bare truthiness test would aim every premise off at once and hide one behind another).
          if ((s.premises ?? []).length > 1 && !source.includes(`aimOff === "${p.id}"`)) missing.push(`${s.name}: ${p.id} is one of several premises but the body never compares aimOff === "${p.id}"`);
        } else if (!docs.split("\n").some((l) => l.includes(`\`${p.id}\``) && /\| not self-tested \(no aim-off\) \|\s*$/.test(l))) {
          missing.push(`${s.name}: ${p.id} has no aim-off but its row in docs/reference/scenarios.md's premises table does not end "| not self-tested (no aim-off) |"`);
        }
      }
    }
    expect(missing).toEqual([]);
  });
});

describe("a scenario's body drives and observes; only its declared checks and premises decide", () => {
  it("no scenario file asserts (node:assert, assertTurnOnNode) or judges in its body (ctx.check, ctx.premise): a step the rest needs is ctx.proceed on a declared check", () => {
    const deciding: string[] = [];
    for (const file of scenarioFiles()) {
      const code = fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
      const rel = path.relative(ROOT, file);
      if (/from\s+["']node:assert/.test(code)) deciding.push(`${rel}: imports node:assert`);
      if (/\bassertTurnOnNode\b/.test(code)) deciding.push(`${rel}: assertTurnOnNode`);
      if (/(?<![\w$])(ctx\.)?(check|premise)\(\s*\{/.test(code)) deciding.push(`${rel}: ctx.check/ctx.premise in its body`);
    }
    expect(deciding).toEqual([]);
  });
});

describe("scenario registry", () => {
  it("finds every scenario file, each named after its file", () => {
    expect(scenarios.length).toBe(scenarioFiles().length);
    for (const [i, s] of scenarios.entries()) expect(path.basename(scenarioFiles()[i]!, ".ts")).toBe(s.name);
  });

  it("every finding record is complete", () => {
    for (const s of scenarios)
      for (const f of s.findings ?? []) {
        expect(f.versions.length, f.id).toBeGreaterThan(0);
        expect(f.expectation.length, f.id).toBeGreaterThan(10);
        expect(f.signature, f.id).not.toBeUndefined();
      }
  });

  it("no two scenarios register the same finding id", () => {
    const owner = new Map<string, string>();
    const twice: string[] = [];
    for (const s of scenarios)
      for (const f of s.findings ?? []) {
        const other = owner.get(f.id);
        if (other) twice.push(`${f.id} (${other} and ${s.name})`);
        owner.set(f.id, s.name);
      }
    expect(twice).toEqual([]);
  });

  it("every registered finding id is also a check id in its scenario's source (a record no check judges proves nothing)", () => {
    const unchecked: string[] = [];
    for (const [i, s] of scenarios.entries()) {
      const source = fs.readFileSync(scenarioFiles()[i]!, "utf8");
      for (const f of s.findings ?? []) if (idReferences(source, f.id) < 2) unchecked.push(`${f.id} [${s.name}]`);
    }
    expect(unchecked).toEqual([]);
  });

  it("the static read tells a record with a check from a record alone", () => {
    const record = `const findings = [{ id: "F-a", expectation: "e" }];`;
    expect(idReferences(record, "F-a")).toBe(1);
    expect(idReferences(`${record}\ncheck({ id: "F-a", holds });`, "F-a")).toBe(2);
    // Through a constant: the declaration is not a use; the record and the check are.
    expect(idReferences(`const ID = "F-a";\nconst findings = [{ id: ID }];`, "F-a")).toBe(1);
    expect(idReferences(`const ID = "F-a";\nconst findings = [{ id: ID }];\ncheck({ id: ID });`, "F-a")).toBe(2);
    expect(idReferences(`const findings = [{ id: "F-a" }];\n// check({ id: "F-a" }) once the kit exists\n/* "F-a" */`, "F-a")).toBe(1);
    expect(idReferences(`const findings = [{ id: "F-a" }];\ncheck({ id: "F-ab" });`, "F-a")).toBe(1);
    // A template id names the ids its fixed parts match.
    expect(idReferences("const findings = [{ id: \"R-x-removed\" }];\nfor (const v of vs) check({ id: `R-x-${v}` });", "R-x-removed")).toBe(2);
    expect(idReferences("const findings = [{ id: \"R-y-removed\" }];\nfor (const v of vs) check({ id: `R-x-${v}` });", "R-y-removed")).toBe(1);
  });

  it("every finding record points at its excerpt kept in the repository (fixtures/findings, a few KB, its own id)", () => {
    const wrong: string[] = [];
    for (const f of [...scenarios.flatMap((s) => s.findings ?? []), ...labFindings]) {
      const want = excerptPath(f.id);
      if (f.evidence !== want) {
        wrong.push(`${f.id}: evidence is "${f.evidence}", not ${want}`);
        continue;
      }
      const file = path.join(ROOT, want);
      if (!fs.existsSync(file)) {
        wrong.push(`${f.id}: ${want} is missing (fleetlab excerpt RUN ${f.id})`);
        continue;
      }
      const text = fs.readFileSync(file, "utf8");
      const ex = JSON.parse(text) as { id: string; observed: unknown; version: string };
      if (ex.id !== f.id) wrong.push(`${f.id}: ${want} is the excerpt of ${ex.id}`);
      // Every frame carrying the signature's deciding values is kept (#37), each cut around them: a
      // few KB, up to ~20 KB for a signature spread over many frames (R-mcp-policy-untrusted-place).
      if (text.length > 24_000) wrong.push(`${f.id}: ${want} is ${text.length} bytes (keep it under 24 KB)`);
      if (!f.versions.includes(ex.version)) wrong.push(`${f.id}: the excerpt is from ${ex.version}, which the record does not list`);
    }
    expect(wrong).toEqual([]);
  });
});

describe("the list's key (sourcesHash)", () => {
  it("changes when a scenario or lab source changes, and not for a test file", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-hash-"));
    try {
      fs.mkdirSync(path.join(root, "scenarios", "repro"), { recursive: true });
      fs.mkdirSync(path.join(root, "lab", "kits"), { recursive: true });
      fs.writeFileSync(path.join(root, "scenarios", "a.ts"), "proves: 'x'");
      fs.writeFileSync(path.join(root, "lab", "kits", "k.ts"), "export const P = 'y';");
      const first = sourcesHash(root);
      fs.writeFileSync(path.join(root, "scenarios", "a.test.ts"), "test");
      expect(sourcesHash(root)).toBe(first);
      fs.writeFileSync(path.join(root, "lab", "kits", "k.ts"), "export const P = 'z';");
      const second = sourcesHash(root);
      expect(second).not.toBe(first);
      fs.writeFileSync(path.join(root, "scenarios", "repro", "b.ts"), "proves: 'w'");
      expect(sourcesHash(root)).not.toBe(second);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
