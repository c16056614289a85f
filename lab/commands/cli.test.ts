// Bad input at the command line: one line naming what is wrong and the fix, exit 2, and no run
// folder created (the CLI as a process, with a state folder of its own; nothing here needs Docker).
// Every bad input docs/reference/cli.md lists is here; those the settings and the scenarios' names
// show are refused before the lab loads (scenarios/main.ts): they run with a hook that makes any
// import of the lab's command code or runner throw (lab/testing/no-lab-load.mjs), so a refusal
// that loads the lab after all fails here, without a timing.
import { execFile, execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";
import { JsonDocument, SCHEMA_VERSION } from "./json.ts";

const state = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-cli-"));

/** An npm package with no OpenClaw in it (OPENCLAW_PACKAGE must refuse it by name). */
const notOpenclaw = (() => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-cli-pkg-"));
  fs.mkdirSync(path.join(d, "package"));
  fs.writeFileSync(path.join(d, "package", "package.json"), JSON.stringify({ name: "left-pad", version: "1.3.0", main: "index.js" }));
  fs.writeFileSync(path.join(d, "package", "index.js"), "module.exports = 1;\n");
  execFileSync("tar", ["-czf", path.join(d, "left-pad-1.3.0.tgz"), "-C", d, "package"]);
  return path.join(d, "left-pad-1.3.0.tgz");
})();

/** A run that exists already, in a state folder of its own (FLEETLAB_RUN_ID must not name it). */
const taken = (() => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-cli-taken-"));
  fs.mkdirSync(path.join(d, "runs", "taken-run"), { recursive: true });
  return d;
})();

const NO_LAB = path.join(ROOT, "lab", "testing", "no-lab-load.mjs");

function cli(args: string[], env: Record<string, string> = {}, noLab = false): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...(noLab ? ["--import", NO_LAB] : []), path.join(ROOT, "scenarios", "main.ts"), ...args], { cwd: ROOT, env: { ...process.env, FLEETLAB_STATE: state, FLEETLAB_QUIET: "1", ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? -1) : 0, stdout, stderr }),
    );
  });
}

describe("the CLI refuses bad input in one line, exit 2, before a run folder exists", () => {
  for (const [args, env, says, needs] of [
    [["run", "--node", "4"], {}, /^fleetlab: unknown option --node for 'run'; see 'fleetlab run --help'/],
    [["run", "--version", "2026.9.6"], {}, /^fleetlab: --version is fleetlab's own version .*did you mean --openclaw-version 2026\.9\.6/],
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
    [["run", "smoke", "--openclaw-package", "./no-such-openclaw.tgz"], {}, /^fleetlab: OPENCLAW_PACKAGE=\.\/no-such-openclaw\.tgz: no such file or folder; give the \.tgz that `npm pack`/],
    [["run", "smoke"], { FLEETLAB_OPENCLAW_PACKAGE: path.join(ROOT, "package.json") }, /^fleetlab: OPENCLAW_PACKAGE=.*package\.json: not an npm package \(not a gzip-compressed tar\)/],
    [["run", "smoke", "--openclaw-package", notOpenclaw], {}, /^fleetlab: OPENCLAW_PACKAGE=.*left-pad-1\.3\.0\.tgz: left-pad@1\.3\.0 has no OpenClaw gateway \(its package\.json has no `openclaw` command in bin\)/],
    [["matrix", "smoke", "--versions", `2026.9.6 ${notOpenclaw}`], {}, /^fleetlab: OPENCLAW_PACKAGE=.*left-pad-1\.3\.0\.tgz: left-pad@1\.3\.0 has no OpenClaw gateway/],
    [["run", "smoke", "--openclaw-package", notOpenclaw, "--openclaw-version", "2026.9.6"], {}, /^fleetlab: OPENCLAW_VERSION=2026\.9\.6 and OPENCLAW_PACKAGE=.* both name what is under test: give one/],
    [["bisect", "smoke"], {}, /^fleetlab: bisect needs --good and --bad: fleetlab bisect SCENARIO --good 2026\.9\.4 --bad 2026\.9\.6/],
    [["bisect", "--good", "2026.9.4", "--bad", "2026.9.6"], {}, /^fleetlab: bisect needs exactly one scenario: .*Known scenarios: /],
    [["bisect", "no-such-scenario", "--good", "2026.9.4", "--bad", "2026.9.6"], {}, /^fleetlab: unknown scenario: no-such-scenario\. Known scenarios: /],
    [["bisect", "smoke", "--good", "2026.9.4", "--bad", "2026.9.6", "--n", "21"], {}, /^fleetlab: --n 21: must be a whole number of attempts per step from 1 to 20/],
    [["bisect", "smoke", "--good", "2026.9.6", "--bad", "2026.9.4"], {}, /^fleetlab: GOOD=2026\.9\.6 is newer than BAD=2026\.9\.4: .*swap them/],
    [["bisect", "smoke", "--good", "2026.9.4", "--bad", "2026.9.6-rc.1"], {}, /^fleetlab: BAD=2026\.9\.6-rc\.1 is a pre-release: add --pre \(make bisect PRE=1\)/],
    [["bisect", "smoke", "--good", "2026.9.4", "--bad", "2026.9.6"], { FLEETLAB_OPENCLAW_VERSION: "2026.9.5" }, /^fleetlab: OPENCLAW_VERSION=2026\.9\.5 would be ignored: bisect runs the versions from GOOD to BAD/],
    [["bisect", "smoke", "--good", "2026.9.4", "--bad", "2026.9.6", "--openclaw-version", "2026.9.5"], {}, /^fleetlab: option --openclaw-version does not apply to 'bisect'/],
    [["run", "smoke", "--nodes", "9"], {}, /^fleetlab: topology spec .* is invalid:\n\s+nodes\.count = 9: must be at most 8/],
    [["run", "smoke"], { FLEETLAB_TOPOLOGY: "{nodes" }, /^fleetlab: TOPOLOGY is not valid JSON \(.*\); example: TOPOLOGY=/],
    [["run", "smoke", "--topology", '{"nodes":{"capacity":"x"}}'], {}, /^fleetlab: topology spec .* is invalid:\n\s+nodes\.capacity = "x"/],
    [["run", "smoke", "--openclaw-version", "latest"], {}, /^fleetlab: topology spec .* is invalid:\n\s+openclawVersion = "latest": must be an exact version/],
    [["run", "smoke", "--seed", "x"], {}, /^fleetlab: topology spec .* is invalid:\n\s+seed = "x": Invalid input: expected number/],
    [["run", "smoke", "--shard", "3/2"], {}, /^fleetlab: SHARD=3\/2: K must be between 1 and 2/],
    [["run", "smoke"], { FLEETLAB_SHARD: "half" }, /^fleetlab: SHARD=half: /],
    [["run", "smoke"], { FLEETLAB_RUN_ID: "taken-run", FLEETLAB_STATE: taken }, /^fleetlab: FLEETLAB_RUN_ID=taken-run: a run with this id exists already/],
    [["run", "--replay", "./no-such-run.json"], {}, /^fleetlab: --replay \.\/no-such-run\.json: no such file \(give the run\.json of an earlier run\)/],
    [["repro", "smoke", "--n", "0"], {}, /^fleetlab: --n 0: must be a whole number of attempts from 1 to 1000/],
    [["repro"], {}, /^fleetlab: repro needs exactly one scenario: .*Known scenarios: bundle-reuse, /],
    [["repro", "smoke", "--aim-off", "--until"], {}, /^fleetlab: --aim-off with --until: a premise self-test runs every attempt/],
    [["soak", "smoke", "--lanes", "9"], {}, /^fleetlab: LANES=9: give a whole number/],
    [["matrix", "smoke"], {}, /^fleetlab: matrix needs versions: --versions/],
    [["merge", "--shards", "x"], {}, /^fleetlab: --shards x: must be a positive integer/],
    [["up", "--nodes", "-1"], {}, /^fleetlab: (?:topology spec .* is invalid:\n\s+nodes\.count|Option '--nodes' argument is ambiguous)/],
    [["bisect", "smoke", "--good", "latest", "--bad", "2026.9.6"], {}, /^fleetlab: GOOD=latest is not an exact version/],
    [["bisect", "smoke", "--good", "2026.9.4", "--bad", "2026.9.6"], { FLEETLAB_OPENCLAW_PACKAGE: notOpenclaw }, /^fleetlab: OPENCLAW_PACKAGE=.*left-pad-1\.3\.0\.tgz: left-pad@1\.3\.0 has no OpenClaw gateway/],
    [["run", "smoke", "zz-*"], {}, /^fleetlab: no scenario matches 'zz-\*' \(a pattern: \* any characters, \? one, \[ab\] one of them\); see 'fleetlab list' for the names/],
    [["list", "zz-*"], {}, /^fleetlab: no scenario matches 'zz-\*'/],
    [["repro", "repro-13*", "--n", "1"], {}, /^fleetlab: repro needs exactly one scenario: 'repro-13\*' matches \d+ scenarios \(repro-137088, repro-137355, /],
    [["run", "smoke"], { FLEETLAB_RUN_ID: "latest" }, /^fleetlab: FLEETLAB_RUN_ID=latest: that name is the link to the newest run/],
    [["report", "latest"], {}, /^fleetlab: .*runs\/latest: no run yet \(the link to the newest run is made when a run starts\)/, "lab"],
    [["repro", "repro-78351", "--premise", "P-78351-second-connection", "--n", "1"], {}, /^fleetlab: --premise P-78351-second-connection without --aim-off: it names the one premise the self-test aims off/],
    [["repro", "repro-144922", "--aim-off", "--premise", "P-144922-nope", "--n", "1"], {}, /^fleetlab: --premise P-144922-nope: scenario repro-144922 declares no premise P-144922-nope; the ones it can aim off: P-144922-effect-before-hold, P-144922-held-past-bound/, "lab"],
    [["repro", "smoke", "--aim-off", "--n", "1"], {}, /^fleetlab: --aim-off: scenario smoke declares no premise it can aim its fault off \(Premise\.aimOff\); scenarios that can: restart-queued-followup, (repro-\d+, )*repro-148693, (repro-\d+, )*repro-68187/, "lab"],
  ] as [string[], Record<string, string>, RegExp, "lab"?][]) {
    // "lab": the refusal needs the scenarios themselves (their premises, a soak folder's rounds), so the lab loads first.
    const noLab = needs !== "lab";
    it(`${Object.entries(env).map(([k, v]) => `${k}=${v} `).join("")}fleetlab ${args.join(" ")}${noLab ? " (before the lab loads)" : ""}`, { timeout: 60_000 }, async () => {
      const r = await cli(args, env, noLab);
      if (noLab) expect(r.stderr).not.toMatch(/the lab was loaded/);
      expect(r.code).toBe(2);
      expect(r.stderr.split("\n").filter((l) => !/is read from the environment as FLEETLAB_/.test(l)).join("\n")).toMatch(says);
      // One line (an unprefixed setting read from the environment adds its notice above it; an invalid spec lists its fields indented below it).
      expect(r.stderr.trim().split("\n").filter((l) => !/is read from the environment as FLEETLAB_/.test(l) && !/^\s/.test(l))).toHaveLength(1);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(fs.existsSync(path.join(state, "runs")) ? fs.readdirSync(path.join(state, "runs")) : []).toEqual([]);
    });
  }

  it("list --json: one JSON document on stdout that parses against the schema, before the lab loads; a pattern selects", { timeout: 120_000 }, async () => {
    // The first list in a state folder loads the scenarios to keep what it says of them (.lab/list.json); then none is loaded.
    expect((await cli(["list"])).code).toBe(0);
    const all = await cli(["list", "--json"], {}, true);
    expect(all.stderr).toBe("");
    expect(all.code).toBe(0);
    const doc = JsonDocument.parse(JSON.parse(all.stdout));
    expect(doc).toMatchObject({ schemaVersion: SCHEMA_VERSION, command: "list", exitCode: 0 });
    const names = (doc as { scenarios: { name: string }[] }).scenarios.map((s) => s.name);
    expect(names).toContain("smoke");
    const mcp = JsonDocument.parse(JSON.parse((await cli(["list", "mcp-*", "--json"], {}, true)).stdout)) as { scenarios: { name: string }[] };
    expect(mcp.scenarios.map((s) => s.name)).toEqual(names.filter((n) => n.startsWith("mcp-")));
    expect((await cli(["list", "mcp-*"], {}, true)).stdout.trim().split("\n")).toHaveLength(mcp.scenarios.length);
  });

  it("report: a run folder that never ran is unknown, exit 3 (cli.md); latest is that folder; --json carries the same code", { timeout: 60_000 }, async () => {
    const st = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-cli-report-"));
    const id = "20261203-072500-b7d7453a26bdd606";
    fs.mkdirSync(path.join(st, "runs", id), { recursive: true });
    fs.copyFileSync(path.join(ROOT, "fixtures", "runs", id, "run.json"), path.join(st, "runs", id, "run.json"));
    fs.symlinkSync(id, path.join(st, "runs", "latest"));
    const r = await cli(["report", "latest"], { FLEETLAB_STATE: st });
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/run\.json: partial: the run never recorded its end/);
    const j = await cli(["report", "latest", "--json"], { FLEETLAB_STATE: st });
    expect(j.code).toBe(3);
    expect(JsonDocument.parse(JSON.parse(j.stdout))).toMatchObject({ command: "report", exitCode: 3, run: { id, scenarios: [] } });
    expect(j.stderr).toMatch(/^run 20261203-072500-b7d7453a26bdd606/);
    fs.rmSync(st, { recursive: true, force: true });
  });

  it("help and COMMAND --help print that command's usage, exit 0", { timeout: 60_000 }, async () => {
    const a = await cli(["help", "repro"]);
    const b = await cli(["repro", "--help"]);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/^usage: fleetlab repro SCENARIO/);
    expect(b.stdout).toBe(a.stdout);
    expect((await cli(["help"])).stdout).toMatch(/^usage: fleetlab <command>/);
    const bisect = await cli(["help", "bisect"]);
    expect(bisect.stdout).toMatch(/^usage: fleetlab bisect SCENARIO --good V --bad V \[--n N\] \[--pre\]/);
    expect(bisect.stdout).toMatch(/exit 0 found, 1 GOOD and\s+BAD read the same \(refused: nothing to bisect\), 3 could not tell/);
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
