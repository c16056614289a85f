// The house's floors (DESIGN.md), room by room: a folder is a room and sits on one floor; a module
// imports only from its own floor or below, and no two files import each other, directly or
// around a circle. Read from the code's own import lines: static imports and re-exports with
// either quote, side-effect imports, import() of a literal, and import() of a path the code builds
// from the checkout's root (`path.join(ROOT, "scenarios", "index.ts")`); tests left out as they
// sit beside what they test; docker/ (the lab's own servers, whose wire types the clients import)
// on the lowest floor. When a new room is added, give it a floor here.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";
import { labSources } from "./sources.ts";

/** Lowest first: rooms (folders, and the one file lab/scenario.ts). */
const FLOORS: string[][] = [
  // The lab's own servers (model, MCP, tap, git-http): their wire types are what the clients call.
  ["docker/"],
  ["lab/core/"],
  ["lab/definitions/", "lab/ci/"],
  ["lab/engine/"],
  // The evidence: run.json, the records every producer writes, the reports that read them.
  ["lab/evidence/"],
  ["lab/findings/", "lab/clients/"],
  // Judging: a recorded history to a verdict (lab/judge/history.ts), below the scenario that declares its checks.
  ["lab/judge/", "lab/members/"],
  ["lab/topology/"],
  ["lab/scenario.ts", "lab/checks/", "lab/faults/"],
  ["lab/run/", "lab/kits/"],
  ["lab/commands/"],
  // The suite and its entry points (scenarios/main.ts hands it to the CLI), and the test programs.
  ["scenarios/", "lab/testing/"],
  ["lab/bench/"],
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
  const out = labSources((p, isDir) => isDir || !/\.scenario\.ts$/.test(p));
  const walk = (d: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      const p = path.posix.join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== "node_modules") walk(p);
      } else if (/\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name)) out.push(p);
    }
  };
  walk("docker");
  return out;
}

/** The repository files a file imports (relative specifiers and root-built paths; packages are not rooms). */
export function importsOf(file: string, text = fs.readFileSync(path.join(ROOT, file), "utf8")): string[] {
  const out = new Set<string>();
  const rel = (spec: string) => path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
  // Template strings hold scripts run elsewhere (inside a container): not this file's imports.
  const code = text.replace(/`(?:\\.|[^`\\])*`/g, "``");
  for (const m of code.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+(["'])(\.{1,2}\/[^"']+)\1/gms)) out.add(rel(m[2]!));
  for (const m of code.matchAll(/^\s*import\s+(["'])(\.{1,2}\/[^"']+)\1/gm)) out.add(rel(m[2]!));
  for (const m of code.matchAll(/\bimport\(\s*(["'])(\.{1,2}\/[^"']+)\1\s*\)/g)) out.add(rel(m[2]!));
  for (const m of code.matchAll(/\bimport\([^;]*?path\.join\(\s*ROOT\s*,\s*((?:["'][^"']+["']\s*,?\s*)+)\)/g)) {
    out.add(path.posix.join(...[...m[1]!.matchAll(/["']([^"']+)["']/g)].map((x) => x[1]!)));
  }
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

  it("reads every import form: either quote, side effects, import() of a literal or of a path built from the root; not a script in a template string", () => {
    const text = [
      "import { a } from '../core/log.ts';",
      'import "./side.ts";',
      'export { b } from "../definitions/verdict.ts";',
      'const m = await import("../run/runner.ts");',
      'const s = await import(pathToFileURL(path.join(ROOT, "scenarios", "index.ts")).href);',
      "const script = `import { x } from \"../elsewhere.ts\";`;",
    ].join("\n");
    expect(importsOf("lab/bench/x.ts", text).sort()).toEqual(["lab/bench/side.ts", "lab/core/log.ts", "lab/definitions/verdict.ts", "lab/run/runner.ts", "scenarios/index.ts"]);
    // The bench's own import of the suite is read, and it runs down (the bench sits above the scenarios).
    expect(importsOf("lab/bench/main.ts")).toContain("scenarios/index.ts");
  });

  it("each room sits on one floor (a folder is never split between floors)", () => {
    const rooms = FLOORS.flat();
    expect(rooms.filter((k) => rooms.some((o) => o !== k && o.endsWith("/") && k.startsWith(o)))).toEqual([]);
  });
});
