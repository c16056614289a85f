// The names the README and docs/ give a user to type: every flag (`--nodes`), every variable
// (`FLEETLAB_*`, and the make variables after `make <target>`) and every make target, checked
// against where they are declared: the CLI's options (lab/commands/usage.ts), the settings
// (lab/core/settings.ts), the Makefile, and the code that reads an environment variable.
// And the other way: every setting, option, make target and make variable is in cli.md. A stale
// name fails naming the file, the line and the nearest real name.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";
import { docFiles } from "./sources.ts";
import { SETTINGS } from "../core/settings.ts";
import { OPTIONS } from "../commands/usage.ts";

/** Flags of other tools that the docs quote, each with its tool: never fleetlab's. */
const FOREIGN_FLAGS: Record<string, string> = {
  silent: "npm run",
  prefix: "npx, npm",
  import: "node",
  "ignore-scripts": "npm pack",
  "pack-destination": "pnpm pack",
  "frozen-lockfile": "pnpm install",
  filter: "docker ps",
  json: "npm view, openclaw config validate",
  "max-warnings": "eslint",
  config: "eslint",
  project: "vitest run",
  omit: "npm ci",
  noEmit: "tsc",
  "session-host": "openclaw node run",
  bind: "openclaw gateway run",
  host: "openclaw node run",
  port: "openclaw node run",
  arg: "jq",
  inject: "strace",
  follow: "openclaw logs (in an error text OpenClaw prints)",
};

/** Make variables that are make's own or the Makefile's internals, not set by a user. */
const MAKE_INTERNAL = new Set(["SHELL", "MAKECMDGOALS", "HOME", "SCENARIO_NAMES", "SCENARIO_ARGS", "SCENARIO_PATTERNS", "SCENARIO_UNKNOWN", "SCENARIO_UNMATCHED", "BISECT_MISSING"]);

/** Make targets that are steps of others, not run by a user. */
const INTERNAL_TARGETS = new Set(["node_modules/.fleetlab-deps"]);

export interface Known {
  flags: Set<string>;
  targets: Set<string>;
  /** Variables a user may give make (make lab NODES=4). */
  makeVars: Set<string>;
  /** Every environment variable the code reads or sets (FLEETLAB_* and others). */
  envVars: Set<string>;
}

/** Every file of the repository that is not documentation (what the code and its configuration say). */
function codeText(): string {
  const files = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter((f) => f && !f.endsWith(".md") && !f.startsWith("fixtures/") && !/^lab\/ci\/docs?(-names)?\.test\.ts$/.test(f) && f !== "lab/ci/doc-names.test.ts");
  return files.map((f) => (fs.existsSync(path.join(ROOT, f)) ? fs.readFileSync(path.join(ROOT, f), "utf8") : "")).join("\n");
}

export function knownNames(): Known {
  const makefile = fs.readFileSync(path.join(ROOT, "Makefile"), "utf8");
  const targets = new Set([...makefile.matchAll(/^([A-Za-z0-9_.\/-]+):(?!=)/gm)].map((m) => m[1]!).filter((t) => t !== ".PHONY"));
  const makeVars = new Set<string>();
  for (const m of makefile.matchAll(/\$\(([A-Z][A-Z0-9_]*)\)|\borigin ([A-Z][A-Z0-9_]*)|^([A-Z][A-Z0-9_]*) *[:?]?=/gm)) makeVars.add(m[1] ?? m[2] ?? m[3]!);
  // Names passed as FLEETLAB_<NAME> or checked by form: $(foreach v,NODES ...,...) and check_form,NAME.
  for (const m of makefile.matchAll(/foreach v,([A-Z0-9_ ]+),|check_form,([A-Z][A-Z0-9_]*),/g)) for (const n of (m[1] ?? m[2]!).split(/\s+/)) if (n) makeVars.add(n);
  for (const s of SETTINGS) makeVars.add(s.name);
  for (const n of MAKE_INTERNAL) makeVars.delete(n);
  const code = codeText();
  // Read as environment: process.env.X, env.X, env["X"], a shell's $X or ${X}, setting("X"), env("X"); and every FLEETLAB_* name.
  const envVars = new Set(
    [...code.matchAll(/\b(?:process\.env|env)(?:\.|\[["'])([A-Z][A-Z0-9_]*)|\$\{?([A-Z][A-Z0-9_]*)|\b(?:setting|env|envVar|setEnv)\("([A-Z][A-Z0-9_]*)"|\b(FLEETLAB_[A-Z0-9_]*[A-Z0-9])/g)].map((m) => (m[1] ?? m[2] ?? m[3] ?? m[4])!),
  );
  for (const s of SETTINGS) envVars.add(s.env);
  const flags = new Set([...Object.keys(OPTIONS), ...SETTINGS.flatMap((s) => (s.flag ? [s.flag] : []))]);
  return { flags, targets, makeVars, envVars };
}

/** Edit distance (for the nearest real name). */
function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) for (let j = 1; j <= b.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
  return d[a.length]![b.length]!;
}

export function nearest(name: string, among: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of among) {
    const d = distance(name, c);
    if (d < bestD) (best = c), (bestD = d);
  }
  return best;
}

/** The code spans of a markdown text with the line each starts on: `inline` ones and the lines of fenced blocks. */
function spans(text: string): { text: string; line: number }[] {
  const lines = text.split("\n");
  const out: { text: string; line: number }[] = [];
  let fenced = false;
  const prose: string[] = [];
  lines.forEach((l, i) => {
    if (/^\s*```/.test(l)) {
      fenced = !fenced;
      prose.push("");
      return;
    }
    if (fenced) {
      out.push({ text: l.replace(/\s#\s.*$/, ""), line: i + 1 });
      prose.push("");
    } else prose.push(l);
  });
  const rest = prose.join("\n");
  for (const m of rest.matchAll(/`([^`]+)`/g)) out.push({ text: m[1]!, line: rest.slice(0, m.index).split("\n").length });
  return out;
}

/** What a markdown text names that is not declared: one line per stale name, with file, line and the nearest real name. */
export function staleNames(file: string, text: string, known: Known): string[] {
  const problems: string[] = [];
  const at = (line: number) => `${file}:${line}`;
  // Flags, anywhere (prose or code): fleetlab's, or another tool's that the docs quote.
  text.split("\n").forEach((l, i) => {
    for (const m of l.matchAll(/(?<![\w-])--([a-zA-Z][a-zA-Z0-9-]*)/g)) {
      const f = m[1]!;
      if (known.flags.has(f) || FOREIGN_FLAGS[f]) continue;
      problems.push(`${at(i + 1)}: --${f} is no option of fleetlab (lab/commands/usage.ts, lab/core/settings.ts); nearest: --${nearest(f, known.flags)}`);
    }
    for (const m of l.matchAll(/\bFLEETLAB_[A-Z0-9_]*[A-Z0-9]/g)) {
      if (known.envVars.has(m[0])) continue;
      problems.push(`${at(i + 1)}: ${m[0]} is read nowhere in the code (lab/core/settings.ts, the Makefile, lab/, docker/, scenarios/); nearest: ${nearest(m[0], [...known.envVars].filter((v) => v.startsWith("FLEETLAB_")))}`);
    }
  });
  for (const s of spans(text)) {
    // make <target> [VAR=...]...: the target and each variable given to it.
    for (const m of s.text.matchAll(/(?:^|[\s(;&|])make ([a-z0-9][a-z0-9-]*)((?:[^`;&|#]*))/g)) {
      if (!known.targets.has(m[1]!)) problems.push(`${at(s.line)}: make ${m[1]} is no target of the Makefile; nearest: make ${nearest(m[1]!, known.targets)}`);
      for (const v of m[2]!.matchAll(/(?<![\w$])([A-Z][A-Z0-9_]*)=/g)) {
        const name = v[1]!;
        if (known.makeVars.has(name) || known.envVars.has(name)) continue;
        problems.push(`${at(s.line)}: ${name}= (make ${m[1]}) is no variable of the Makefile or lab/core/settings.ts; nearest: ${nearest(name, known.makeVars)}=`);
      }
    }
  }
  const lineOf = (p: string) => Number(/^[^:]+:(\d+):/.exec(p)?.[1]);
  return problems.sort((a, b) => lineOf(a) - lineOf(b));
}


const known = knownNames();
const read = (f: string) => fs.readFileSync(path.join(ROOT, f), "utf8");

describe("the names the docs give a user exist where they are declared", () => {
  for (const file of docFiles()) {
    it(`${file}: every flag, FLEETLAB_* variable, make target and make variable`, () => {
      expect(staleNames(file, read(file), known)).toEqual([]);
    });
  }

  it("a stale name fails naming the file, the line and the nearest real name", () => {
    const doc = ["intro", "run `fleetlab run --nodez 4`, or `make lab NODEZ=4`,", "```sh", "FLEETLAB_NODEZ=4 make labb", "```"].join("\n");
    expect(staleNames("docs/x.md", doc, known)).toEqual([
      "docs/x.md:2: --nodez is no option of fleetlab (lab/commands/usage.ts, lab/core/settings.ts); nearest: --nodes",
      "docs/x.md:2: NODEZ= (make lab) is no variable of the Makefile or lab/core/settings.ts; nearest: NODES=",
      "docs/x.md:4: FLEETLAB_NODEZ is read nowhere in the code (lab/core/settings.ts, the Makefile, lab/, docker/, scenarios/); nearest: FLEETLAB_NODES",
      "docs/x.md:4: make labb is no target of the Makefile; nearest: make lab",
    ]);
  });
});

describe("cli.md documents every setting, option, make target and make variable", () => {
  const cli = read("docs/reference/cli.md");
  const named = (re: RegExp) => re.test(cli);

  it("every setting of lab/core/settings.ts: its flag, its environment variable and its make name", () => {
    const missing = SETTINGS.flatMap((s) => [
      ...(s.flag && !named(new RegExp(`\`--${s.flag}\\b`)) ? [`--${s.flag} (${s.name})`] : []),
      ...(!named(new RegExp(`\`${s.env}\\b`)) ? [s.env] : []),
      ...(!named(new RegExp(`\`${s.name}\\b`)) ? [`${s.name}=`] : []),
    ]);
    expect(missing).toEqual([]);
  });

  it("every option of the CLI (lab/commands/usage.ts)", () => {
    expect(Object.keys(OPTIONS).filter((o) => !named(new RegExp(`--${o}\\b`)))).toEqual([]);
  });

  it("every make target but the internal ones", () => {
    expect([...known.targets].filter((t) => !INTERNAL_TARGETS.has(t) && !named(new RegExp(`\`make ${t}\\b`)))).toEqual([]);
  });

  it("every variable the Makefile reads from its command line", () => {
    expect([...known.makeVars].filter((v) => !named(new RegExp(`\\b${v}\\b`)))).toEqual([]);
  });
});
