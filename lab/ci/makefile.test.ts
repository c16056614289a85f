// `make lab` exits 2 for any failed recipe (make's own code); the lab's code is reachable all the
// same: the recipe's last line says it and LAST_EXIT (default .lab/last-exit) keeps it.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
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

describe("make lab SCENARIOS takes patterns", () => {
  const dry = (v: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile("make", ["--no-print-directory", "-n", "-o", "deps", "-o", "engine", "lab", v], { cwd: ROOT, env: { ...process.env, MAKEFLAGS: "" } }, (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
      ),
    );

  it("a pattern that matches reaches the lab quoted (the recipe's shell leaves it alone), beside plain names", async () => {
    const r = await dry("SCENARIOS=mcp-* smoke");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/fleetlab -- run +'mcp-\*' 'smoke' \|\| rc=/);
  });

  it("a pattern that matches nothing: one line naming it and pointing to fleetlab list, exit 2, no recipe run", async () => {
    const r = await dry("SCENARIOS=smoke zz-*");
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(/no scenario matches 'zz-\*' \(a pattern: \* any characters, \? one, \[ab\] one of them\); see npx fleetlab list for the names/);
  });
});

describe("make clean asks first", () => {
  /** A state folder and a cache of their own, and a `docker` that lists no image (the engine is never asked). */
  function scratch() {
    const d = mkdtempSync(join(tmpdir(), "fleetlab-clean-"));
    for (const sub of ["bin", "state/runs", "cache/openclaw-2026.9.6"]) mkdirSync(join(d, sub), { recursive: true });
    writeFileSync(join(d, "bin", "docker"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    return { d, env: { ...process.env, MAKEFLAGS: "", PATH: `${join(d, "bin")}:${process.env.PATH}`, FLEETLAB_STATE: join(d, "state"), FLEETLAB_CACHE: join(d, "cache") } };
  }
  const run = (file: string, args: string[], env: NodeJS.ProcessEnv, input?: string) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(file, args, { cwd: ROOT, env }, (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }));
      child.stdin?.end(input ?? "");
    });

  it("without a terminal: says what it would remove, removes nothing and exits 2 naming YES=1", { timeout: 60_000 }, async () => {
    const { d, env } = scratch();
    const r = await run("make", ["--no-print-directory", "clean"], env);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/make clean removes:\n.*state\/ \(run folders[\s\S]*cache\/ \(shared by every clone on this machine/);
    expect(r.stderr).toMatch(/make clean: not on a terminal, so nothing removed; make clean YES=1 removes it without asking/);
    expect([existsSync(join(d, "state")), existsSync(join(d, "cache"))]).toEqual([true, true]);
    rmSync(d, { recursive: true, force: true });
  });

  it("YES=1: removes the state folder and the cache without asking", { timeout: 60_000 }, async () => {
    const { d, env } = scratch();
    const r = await run("make", ["--no-print-directory", "clean", "YES=1"], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/make clean: done/);
    expect([existsSync(join(d, "state")), existsSync(join(d, "cache"))]).toEqual([false, false]);
    rmSync(d, { recursive: true, force: true });
  });

  it.skipIf(!existsSync("/usr/bin/script"))("on a terminal: asks y/N; anything but y removes nothing, y removes it", { timeout: 60_000 }, async () => {
    const { d, env } = scratch();
    // script(1) gives make a terminal, fed from our stdin.
    const no = await run("script", ["-qec", "make --no-print-directory clean", "/dev/null"], env, "n\n");
    expect(no.stdout).toMatch(/remove all of this\? \[y\/N\] make clean: nothing removed/);
    expect(existsSync(join(d, "cache"))).toBe(true);
    const yes = await run("script", ["-qec", "make --no-print-directory clean", "/dev/null"], env, "y\n");
    expect(yes.stdout).toMatch(/make clean: done/);
    expect(existsSync(join(d, "cache"))).toBe(false);
    rmSync(d, { recursive: true, force: true });
  });
});
