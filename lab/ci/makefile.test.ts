// `make lab` exits 2 for any failed recipe (make's own code); the lab's code is reachable all the
// same: the recipe's last line says it and LAST_EXIT (default .lab/last-exit) keeps it.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";

const dir = mkdtempSync(join(tmpdir(), "fleetlab-make-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `make lab` without its set-up prerequisites (-o: taken as done; nothing here needs Docker). */
function makeLab(vars: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const args = ["--no-print-directory", "-o", "deps", "-o", "engine", "lab", ...Object.entries(vars).map(([k, v]) => `${k}=${v}`)];
  return new Promise((resolve) => {
    execFile("make", args, { cwd: ROOT, env: { ...process.env, MAKEFLAGS: "" } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

describe("make lab exit codes", () => {
  it("bad input the lab refuses (a replay file that is not there): make exits 2 and the lab's 2 is the last line and in LAST_EXIT", { timeout: 60_000 }, async () => {
    const file = join(dir, "bad-input");
    const r = await makeLab({ REPLAY: join(dir, "no-such-run.json"), LAST_EXIT: file });
    expect(r.stderr).toMatch(/--replay .*no-such-run\.json: no such file/);
    expect(r.stdout.trim().split("\n").at(-1)).toBe(`fleetlab: exit 2 (bad input or set-up; kept in ${file})`);
    expect(readFileSync(file, "utf8").trim()).toBe("2");
    expect(r.code).toBe(2);
  });

  for (const [code, meaning, makeCode] of [
    [0, "every verdict accepted: pass, known finding or fixed?", 0],
    [1, "a scenario failed", 2],
    [3, "unknown: the lab could not tell", 2],
    [130, "interrupted", 2],
  ] as const) {
    it(`the run's ${code} (${meaning}) survives make's ${makeCode}`, async () => {
      const file = join(dir, `code-${code}`);
      const r = await makeLab({ FLEETLAB_RUN: `sh -c 'exit ${code}'`, LAST_EXIT: file });
      expect(r.stdout.trim().split("\n").at(-1)).toBe(`fleetlab: exit ${code} (${meaning}; kept in ${file})`);
      expect(readFileSync(file, "utf8").trim()).toBe(String(code));
      expect(r.code).toBe(makeCode);
    });
  }
});

/** make with these arguments, nothing assumed done. */
function make(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("make", ["--no-print-directory", ...args], { cwd: ROOT, env: { ...process.env, MAKEFLAGS: "" } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

describe("make bisect", () => {
  it("a missing NAME, GOOD or BAD: one line naming the fix, exit 2, before any set-up (deps, engine)", { timeout: 60_000 }, async () => {
    for (const [vars, missing] of [
      [["NAME=smoke"], "GOOD BAD"],
      [["GOOD=2026.9.4", "BAD=2026.9.6"], "NAME"],
      [[], "NAME GOOD BAD"],
    ] as const) {
      const r = await make(["bisect", ...vars]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toContain(`make bisect needs NAME, GOOD and BAD (missing: ${missing}): make bisect NAME=<scenario> GOOD=`);
    }
  });

  it("runs fleetlab bisect with --n (default 3) and --pre for PRE=1, keeping its exit code like make lab", { timeout: 60_000 }, async () => {
    const dry = (vars: string[]) => make(["-n", "-o", "deps", "-o", "engine", "bisect", ...vars]);
    const a = await dry(["NAME=smoke", "GOOD=2026.9.4", "BAD=2026.9.6"]);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/npm run --silent fleetlab -- bisect smoke --good 2026\.9\.4 --bad 2026\.9\.6 --n 3 +\|\| rc=\$\?/);
    expect(a.stdout).toContain("echo \"fleetlab: exit $rc (kept in .lab/last-exit)\"");
    const b = await dry(["NAME=smoke", "GOOD=2026.9.1-beta.1", "BAD=2026.9.6", "N=5", "PRE=1"]);
    expect(b.stdout).toMatch(/fleetlab -- bisect smoke --good 2026\.9\.1-beta\.1 --bad 2026\.9\.6 --n 5 --pre \|\| rc=/);
  });
});

describe("make checks the forms of its settings before deps and engine", () => {
  for (const [v, says] of [
    ["LANES=abc", /LANES=abc: give a whole number of scenarios to run at once, 1 to 8/],
    ["NODES=12", /NODES=12: give a whole number of node hosts from 0 to 8/],
    ["SEED=x", /SEED=x: give a non-negative integer/],
    ["SHARD=2", /SHARD=2: is not K\/N/],
    ["SCENARIOS=no-such-scenario", /unknown scenario\(s\): no-such-scenario\. Known scenarios: .*\bsmoke\b/],
    ["SCENARIOS=smoke,pair-and-run", /unknown scenario\(s\): smoke,pair-and-run \(names are separated by spaces: SCENARIOS="smoke pair-and-run"\)/],
  ] as const) {
    it(`make lab ${v}: one line, exit 2, no recipe run`, async () => {
      // -n: had the check let it through, make would only print the recipes (deps, engine, the run).
      const r = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile("make", ["--no-print-directory", "-n", "lab", v], { cwd: ROOT, env: { ...process.env, MAKEFLAGS: "" } }, (err, stdout, stderr) =>
          resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
        ),
      );
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(says);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stdout).toBe("");
    });
  }
});
