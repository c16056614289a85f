// The answers the CLI gives before it loads the lab (scenarios/main.ts): help in every form, and a
// mistyped command or option refused in one line; anything else is left to the commands.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";
import { DEFAULT_OPENCLAW_VERSION } from "../definitions/spec.ts";
import { answerAtOnce, refuseUnknownScenarios } from "./usage.ts";
import { namePattern, selectNames } from "../core/settings.ts";

function ask(argv: string[]) {
  let out = "";
  let err = "";
  const code = answerAtOnce(argv, (t) => void (out += t), (t) => void (err += t));
  return { code, out, err };
}

describe("answerAtOnce", () => {
  it("answers help, COMMAND --help and help COMMAND with the usage, exit 0; no command at all with the usage, exit 2", () => {
    expect(ask(["help"])).toMatchObject({ code: 0, out: expect.stringMatching(/^usage: fleetlab <command>/) });
    expect(ask(["--help"]).code).toBe(0);
    expect(ask(["repro", "--help"]).out).toBe(ask(["help", "repro"]).out);
    expect(ask(["help", "bisect"]).out).toMatch(/^usage: fleetlab bisect SCENARIO/);
    expect(ask([])).toMatchObject({ code: 2, out: expect.stringMatching(/^usage: fleetlab <command>/) });
  });

  it("refuses a command or option that does not exist or does not apply in one line, exit 2", () => {
    expect(ask(["frob"])).toMatchObject({ code: 2, out: "", err: expect.stringMatching(/^fleetlab: unknown command 'frob'; commands: run, repro/) });
    expect(ask(["help", "frob"]).err).toMatch(/^fleetlab: unknown command 'frob'/);
    expect(ask(["run", "--node", "4"]).err).toBe("fleetlab: unknown option --node for 'run'; see 'fleetlab run --help'\n");
    expect(ask(["report", "--n", "3"]).err).toMatch(/^fleetlab: option --n does not apply to 'report'/);
  });

  it("leaves every other command line to the commands", () => {
    expect(ask(["run", "smoke", "--lanes", "abc"]).code).toBeUndefined();
    expect(ask(["list"]).code).toBeUndefined();
  });

  it("needs nothing but the usage and the settings table: its module imports no more of the lab", () => {
    const imports = [...fs.readFileSync(path.join(ROOT, "lab/commands/usage.ts"), "utf8").matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(imports.sort()).toEqual(["../core/log.ts", "../core/settings.ts", "node:fs", "node:util"]);
    const main = fs.readFileSync(path.join(ROOT, "scenarios/main.ts"), "utf8");
    expect([...main.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]).sort()).toEqual(["../lab/commands/inputs.ts", "../lab/commands/json.ts", "../lab/commands/usage.ts", "../lab/core/log.ts", "../lab/core/paths.ts", "../lab/core/settings.ts", "./index.ts", "node:fs", "node:module", "node:path"]);
    // The --json schema it prints `list` with is zod and the evidence's report (lab/commands/json.ts), none of the lab.
    const json = fs.readFileSync(path.join(ROOT, "lab/commands/json.ts"), "utf8");
    expect([...json.matchAll(/^import (?!type ).* from "([^"]+)";$/gm)].map((m) => m[1]).sort()).toEqual(["../definitions/verdict.ts", "../evidence/report.ts", "node:path", "zod"]);
    // Its input checks (lab/commands/inputs.ts) reach none of the lab's engine, runner or topology (lab/commands/cli.test.ts proves it with a hook).
    // The scenario index it reads the names from loads no scenario and none of the lab until asked.
    const index = fs.readFileSync(path.join(ROOT, "scenarios/index.ts"), "utf8");
    const indexImports = [...index.matchAll(/^import (type )?.* from "([^"]+)";$/gm)].filter((m) => !m[1]).map((m) => m[2]);
    expect(indexImports.every((i) => i!.startsWith("node:"))).toBe(true);
  });
});

describe("--version", () => {
  it("says fleetlab's version and the OpenClaw version it tests by default, exit 0; with a command it points at --openclaw-version", () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { version: string };
    const r = ask(["--version"]);
    expect(r.code).toBe(0);
    expect(r.out).toBe(`fleetlab ${pkg.version} (openclaw@${DEFAULT_OPENCLAW_VERSION} by default; Node ${process.versions.node})\n`);
    const run = ask(["run", "--version"]);
    expect(run.code).toBe(2);
    expect(run.err).toMatch(/did you mean --openclaw-version/);
  });
});

describe("refuseUnknownScenarios", () => {
  const known = ["smoke", "pair-and-run", "repro-50219"];
  const refuse = (argv: string[]) => {
    let err = "";
    const code = refuseUnknownScenarios(argv, known, (t) => void (err += t));
    return { code, err };
  };

  it("refuses a scenario name no scenario file carries, in the runner's words, exit 2, for every command that takes names", () => {
    for (const cmd of ["run", "repro", "soak", "matrix", "bisect"]) {
      const r = refuse([cmd, "smoke", "no-such"]);
      expect(r.code).toBe(2);
      expect(r.err).toBe("fleetlab: unknown scenario: no-such. Known scenarios: smoke, pair-and-run, repro-50219\n");
    }
  });

  it("tells how names are separated when a comma joins known ones", () => {
    expect(refuse(["run", "smoke,pair-and-run"]).err).toMatch(/unknown scenario: smoke,pair-and-run \(names are separated by spaces: SCENARIOS="smoke pair-and-run"\)/);
    expect(refuse(["run", "smoke,nope"]).err).not.toMatch(/separated/);
  });

  it("leaves known names, no names, other commands and soak --from's folders alone", () => {
    expect(refuse(["run", "smoke", "repro-50219"]).code).toBeUndefined();
    expect(refuse(["run"]).code).toBeUndefined();
    expect(refuse(["report", "20261203-070928-abc"]).code).toBeUndefined();
    expect(refuse(["soak", "--from", ".lab/runs/soak-1"]).code).toBeUndefined();
    expect(refuse(["run", "--help"]).code).toBeUndefined();
  });
});

describe("selection by name pattern", () => {
  const known = ["smoke", "mcp-routing", "mcp-policy", "repro-137355", "repro-137379", "repro-50219"];

  it("a pattern selects every name it matches, in the known order, once; names stay names", () => {
    expect(selectNames(["mcp-*"], known)).toEqual({ names: ["mcp-routing", "mcp-policy"], unknown: [], unmatched: [] });
    expect(selectNames(["repro-13*", "smoke", "repro-137355"], known).names).toEqual(["repro-137355", "repro-137379", "smoke"]);
    expect(selectNames(["repro-1373?9", "mcp-[pq]*"], known).names).toEqual(["repro-137379", "mcp-policy"]);
    expect(selectNames(["mcp-[!p]*"], known).names).toEqual(["mcp-routing"]);
    expect(selectNames(["nope", "zz*"], known)).toEqual({ names: [], unknown: ["nope"], unmatched: ["zz*"] });
    expect(namePattern("a.b*").test("axb")).toBe(false); // only *, ? and [...] are special
  });

  it("a pattern that matches nothing is refused naming it and pointing to fleetlab list, exit 2; an unknown name as before", () => {
    let err = "";
    expect(refuseUnknownScenarios(["run", "smoke", "zz-*"], known, (t) => void (err += t))).toBe(2);
    expect(err).toBe("fleetlab: no scenario matches 'zz-*' (a pattern: * any characters, ? one, [ab] one of them); see 'fleetlab list' for the names\n");
    err = "";
    expect(refuseUnknownScenarios(["list", "zz-*"], known, (t) => void (err += t))).toBe(2);
    expect(refuseUnknownScenarios(["run", "mcp-*", "smoke"], known, () => {})).toBeUndefined();
    err = "";
    refuseUnknownScenarios(["run", "nope"], known, (t) => void (err += t));
    expect(err).toBe(`fleetlab: unknown scenario: nope. Known scenarios: ${known.join(", ")}\n`);
  });
});
