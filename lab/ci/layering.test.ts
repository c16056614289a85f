// The house's floors (DESIGN.md): a module imports only from its own floor or below, and no two
// files import each other, directly or around a circle. Read from the code's own import lines
// (static `import ... from "./x.ts"` and `export ... from`), tests left out as they sit beside
// what they test. When a new room is added, give it a floor here.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";
import { labSources } from "./sources.ts";

/** Lowest first. A key is a file or a folder (every file below it). */
const FLOORS: string[][] = [
  // The rooms of lab/ are named by role (core, definitions, engine, run, commands); a room may span
  // floors (engine/ holds the Docker client low and the runner container above the clients), so
  // their files are placed one by one.
  ["lab/core/errors.ts", "lab/core/log.ts", "lab/core/paths.ts", "lab/core/stalls.ts", "lab/core/escapes.ts", "lab/core/waits.ts", "lab/definitions/settings.ts", "lab/core/cpu-share.ts", "lab/core/pace.ts", "lab/ci/sources.ts"],
  ["lab/core/wait.ts", "lab/engine/docker.ts"],
  // The evidence records (every format a producer writes, lab/evidence/records/) sit on the spec's
  // floor: below the producers (clients, members, faults) and readers (checks, findings) that
  // import them; the report beside them in lab/evidence/ reads them too.
  ["lab/definitions/spec.ts", "lab/definitions/build.ts", "lab/definitions/verdict.ts", "lab/engine/cleanup.ts", "lab/engine/lock.ts", "lab/engine/child.ts", "lab/evidence/records/", "lab/evidence/", "lab/definitions/phases.ts", "lab/commands/json.ts"],
  ["lab/findings/", "lab/run/judging.ts", "lab/run/history.ts", "lab/run/admission.ts", "lab/clients/", "lab/engine/capabilities.ts", "lab/run/shard.ts", "lab/engine/images.ts"],
  ["lab/members/", "lab/engine/runner-container.ts"],
  ["lab/topology/"],
  ["lab/faults/", "lab/checks/", "lab/scenario.ts"],
  // The test beds (a fault's target without OpenClaw, a loopback server) serve tests and the bench.
  ["lab/kits/", "lab/testing/testbed.ts", "lab/testing/server-process.ts"],
  ["lab/run/runner.ts"],
  // The bug report reads matrix.json and repro loops, so it sits beside them, above the other findings modules.
  ["lab/commands/repro.ts", "lab/commands/judge.ts", "lab/commands/matrix.ts", "lab/commands/soak.ts", "lab/commands/bisect.ts", "lab/bench/", "lab/commands/issue-report.ts"],
  ["lab/commands/usage.ts", "lab/commands/inputs.ts"],
  ["lab/commands/cli.ts"],
  // findings-docs reads every scenario's records to write the docs' findings, so it sits beside them.
  ["lab/testing/", "scenarios/", "lab/commands/findings-docs.ts"],
];

function floorOf(file: string): number {
  let best = -1;
  let len = -1;
  FLOORS.forEach((keys, i) => {
    for (const k of keys) if ((file === k || (k.endsWith("/") && file.startsWith(k))) && k.length > len) (best = i), (len = k.length);
  });
  return best;
}

function sources(): string[] {
  return labSources((p, isDir) => isDir || !/\.scenario\.ts$/.test(p));
}

/** The repository files a file imports (relative specifiers only; packages are not rooms). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), "utf8");
  const out = new Set<string>();
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"/gms)) out.add(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!)));
  return [...out].filter((f) => f.endsWith(".ts"));
}

const files = sources();
const graph = new Map(files.map((f) => [f, importsOf(f)]));

describe("the house's floors (DESIGN.md)", () => {
  it("every module has a floor", () => {
    expect(files.filter((f) => floorOf(f) < 0)).toEqual([]);
  });

  it("no module imports from a higher floor", () => {
    const up: string[] = [];
    for (const [f, deps] of graph) for (const d of deps) if (floorOf(d) > floorOf(f)) up.push(`${f} (floor ${floorOf(f)}) -> ${d} (floor ${floorOf(d)})`);
    expect(up).toEqual([]);
  });

  it("no circle between files", () => {
    const circles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (f: string) => {
      state.set(f, "open");
      stack.push(f);
      for (const d of graph.get(f) ?? []) {
        if (state.get(d) === "open") circles.push([...stack.slice(stack.indexOf(d)), d].join(" -> "));
        else if (!state.has(d) && graph.has(d)) visit(d);
      }
      stack.pop();
      state.set(f, "done");
    };
    for (const f of files) if (!state.has(f)) visit(f);
    expect(circles).toEqual([]);
  });

  it("the check can fail: an import from a higher floor and a circle are seen", () => {
    const g = new Map([["lab/core/log.ts", ["lab/commands/cli.ts"]]]);
    const up = [...g].flatMap(([f, ds]) => ds.filter((d) => floorOf(d) > floorOf(f)));
    expect(up).toEqual(["lab/commands/cli.ts"]);
    expect(importsOf("lab/run/runner.ts")).toContain("lab/definitions/verdict.ts");
  });
});
