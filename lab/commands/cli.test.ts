// Bad input at the command line: one line naming what is wrong and the fix, exit 2, and no run
// folder created (the CLI as a process, with a state folder of its own; nothing here needs Docker).
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";

const state = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-cli-"));

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", path.join(ROOT, "scenarios", "main.ts"), ...args], { cwd: ROOT, env: { ...process.env, FLEETLAB_STATE: state, FLEETLAB_QUIET: "1", ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

describe("the CLI refuses bad input in one line, exit 2, before a run folder exists", () => {
  for (const [args, env, says] of [
    [["run", "--node", "4"], {}, /^fleetlab: unknown option --node for 'run'; see 'fleetlab run --help'/],
    [["run", "--version", "2026.9.6"], {}, /^fleetlab: unknown option --version for 'run': did you mean --openclaw-version 2026\.9\.6/],
    [["run", "smoke", "--lanes", "abc"], {}, /^fleetlab: LANES=abc: give a whole number/],
    [["run", "smoke"], { FLEETLAB_LANES: "0" }, /^fleetlab: LANES=0: give a whole number/],
    [["frob"], {}, /^fleetlab: unknown command 'frob'; commands: run, repro/],
    [["report", "--n", "3"], {}, /^fleetlab: option --n does not apply to 'report'/],
    [["run", "smoke"], { LANES: "abc" }, /^fleetlab: LANES=abc: give a whole number/],
    [["run", "smoke"], { FLEETLAB_RUN_ID: "../x" }, /^fleetlab: FLEETLAB_RUN_ID="..\/x": a run id is 1-64 of/],
    [["run", "--replay", path.join(ROOT, "package.json")], { NODES: "4" }, /^fleetlab: --replay .* runs that run's own topology and version, so NODES=4 would be ignored/],
    [["run", "no-such-scenario"], {}, /^fleetlab: unknown scenario: no-such-scenario\. Known scenarios: /],
    [["soak", "smoke", "--rounds", "0"], {}, /^fleetlab: --rounds 0: must be a whole number of rounds from 1 to 100 \(make soak ROUNDS=5\)/],
    [["soak", "--from", "no-such-run"], {}, /^fleetlab: soak --from no-such-run: neither a soak folder \(soak\.json\) nor a run folder/],
    [["repro", "smoke", "--aim-off", "--n", "1"], {}, /^fleetlab: --aim-off: scenario smoke declares no premise it can aim its fault off \(Premise\.aimOff\); scenarios that can: repro-138564, repro-139421, repro-148693, repro-155359, repro-50219, repro-68187/],
  ] as [string[], Record<string, string>, RegExp][]) {
    it(`${Object.entries(env).map(([k, v]) => `${k}=${v} `).join("")}fleetlab ${args.join(" ")}`, { timeout: 60_000 }, async () => {
      const r = await cli(args, env);
      expect(r.code).toBe(2);
      expect(r.stderr.split("\n").filter((l) => !/is read from the environment as FLEETLAB_/.test(l)).join("\n")).toMatch(says);
      // One line (an unprefixed setting read from the environment adds its notice above it).
      expect(r.stderr.trim().split("\n").filter((l) => !/is read from the environment as FLEETLAB_/.test(l))).toHaveLength(1);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(fs.existsSync(path.join(state, "runs")) ? fs.readdirSync(path.join(state, "runs")) : []).toEqual([]);
    });
  }

  it("help and COMMAND --help print that command's usage, exit 0", { timeout: 60_000 }, async () => {
    const a = await cli(["help", "repro"]);
    const b = await cli(["repro", "--help"]);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/^usage: fleetlab repro SCENARIO/);
    expect(b.stdout).toBe(a.stdout);
    expect((await cli(["help"])).stdout).toMatch(/^usage: fleetlab <command>/);
  });

  it("a setting's flag and its FLEETLAB_ variable are the same setting; the unprefixed name is read with a notice", { timeout: 60_000 }, async () => {
    const flag = await cli(["run", "--nodes", "abc", "smoke"]);
    const env = await cli(["run", "smoke"], { FLEETLAB_NODES: "abc" });
    const old = await cli(["run", "smoke"], { NODES: "abc" });
    for (const r of [flag, env, old]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/nodes\.count = "abc": Invalid input: expected number/);
    }
    expect(old.stderr).toMatch(/NODES=abc is read from the environment as FLEETLAB_NODES; set FLEETLAB_NODES/);
    expect(flag.stderr).not.toMatch(/is read from the environment/);
  });
});
