// The README and docs/ promise paths, make targets and links: each must exist, so a new user
// who follows them never meets a file that is not there or a target make does not know.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";
import { docFiles } from "./sources.ts";


const targets = new Set([...fs.readFileSync(path.join(ROOT, "Makefile"), "utf8").matchAll(/^([A-Za-z0-9_-]+):/gm)].map((m) => m[1]!));
/** Top-level folders a backticked path may start with. */
const ROOTS = ["lab/", "scenarios/", "docker/", "fixtures/", "docs/", ".ci/", ".github/"];

describe("what the README and docs/ name exists", () => {
  for (const file of docFiles()) {
    const text = fs.readFileSync(path.join(ROOT, file), "utf8");
    it(`${file}: every make target, repository path and relative link`, () => {
      const problems: string[] = [];
      for (const m of text.matchAll(/`make ([a-z0-9][a-z0-9-]*)/g)) if (!targets.has(m[1]!)) problems.push(`make ${m[1]}: no such target`);
      for (const m of text.matchAll(/`([^`\s]+)`/g)) {
        const p = m[1]!.replace(/[:,.]$/, "").replace(/#.*$/, "");
        if (!ROOTS.some((r) => p.startsWith(r)) || /[<>*{}$]|\.\.\./.test(p)) continue;
        if (!fs.existsSync(path.join(ROOT, p))) problems.push(`${p}: no such path`);
      }
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const link = m[1]!;
        if (/^[a-z]+:/.test(link) || link.startsWith("#")) continue;
        const p = path.join(ROOT, path.dirname(file), link.replace(/#.*$/, ""));
        if (!fs.existsSync(p)) problems.push(`link ${link}: no such file`);
      }
      expect(problems).toEqual([]);
    });
  }

  it("the README is a front door (under 250 lines) that links to docs/", () => {
    const text = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
    expect(text.split("\n").length).toBeLessThan(250);
    expect(text).toMatch(/\]\(docs\//);
  });

  it("make help names every target", () => {
    const help = execFileSync("make", ["--no-print-directory", "help"], { cwd: ROOT, encoding: "utf8" });
    const internal = new Set(["node_modules/.fleetlab-deps"]);
    const missing = [...targets].filter((t) => !internal.has(t) && !new RegExp(`make ${t}\\b|/ ${t}\\b`).test(help));
    expect(missing).toEqual([]);
  });
});
