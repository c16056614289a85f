// Every setting and environment variable is read through lab/core/settings.ts: the run
// settings by setting(), everything else by env() from its ENVIRONMENT table, so one file says
// what the lab's process reads from its environment and what each variable is for.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";
import { ENVIRONMENT, SETTINGS } from "../core/settings.ts";
import { labSources } from "./sources.ts";

/**
 * Where `process.env` may still stand: settings.ts itself, and code that is not the lab's process
 * (a script the lab runs inside a container; lab/testing/ holds test programs and is left out).
 */
const ELSEWHERE: Record<string, string> = {
  "scenarios/repro/repro-139098.ts": "a script it runs with node inside the node container (its HOME there)",
};

describe("the environment is read in one place (lab/core/settings.ts)", () => {
  const files = labSources((p) => !p.startsWith("lab/testing")).filter((f) => f !== "lab/core/settings.ts");

  it("no module of the lab reads process.env itself", () => {
    const reads: string[] = [];
    for (const f of files) {
      const code = fs.readFileSync(path.join(ROOT, f), "utf8").replace(/^\s*(\/\/|\*).*$/gm, "");
      const n = (code.match(/\bprocess\.env\b/g) ?? []).length;
      if (n && !ELSEWHERE[f]) reads.push(`${f}: ${n} read(s) of process.env (use setting() or env() from lab/core/settings.ts, adding the variable to its ENVIRONMENT table)`);
    }
    expect(reads).toEqual([]);
  });

  it("every variable the code names with env() is in ENVIRONMENT, and every one there is read somewhere", () => {
    const named = new Set<string>();
    for (const f of [...files, "lab/core/settings.ts"]) for (const m of fs.readFileSync(path.join(ROOT, f), "utf8").matchAll(/\b(?:env|envVar|setEnv)\("([A-Z0-9_]+)"/g)) named.add(m[1]!);
    // FLEETLAB_IN_NETWORK is read through its constant (lab/engine/docker.ts IN_NETWORK).
    named.add("FLEETLAB_IN_NETWORK");
    const known = new Set(Object.keys(ENVIRONMENT));
    expect([...named].filter((n) => !known.has(n))).toEqual([]);
    expect([...known].filter((n) => !named.has(n) && !/^(FLEETLAB_START_ORDER|FLEETLAB_SNAPSHOT|FLEETLAB_PACE|FLEETLAB_CPU_SHARE)$/.test(n))).toEqual([]);
    // A run setting is not also an environment entry.
    expect(SETTINGS.filter((s) => known.has(s.env))).toEqual([]);
  });
});
