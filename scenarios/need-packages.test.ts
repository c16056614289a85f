// The fleetlab command before `npm ci`: one line naming what is missing and the command that
// installs it, exit 2 (scenarios/need-packages.mjs, loaded first by fleetlab.mjs and the npm scripts).
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const GUARD = fileURLToPath(new URL("./need-packages.mjs", import.meta.url));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A repository with the guard in scenarios/, a package.json naming `names`, and `installed` in node_modules. */
function repo(names: string[], installed: string[] | undefined): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-guard-"));
  dirs.push(root);
  fs.mkdirSync(path.join(root, "scenarios"));
  fs.copyFileSync(GUARD, path.join(root, "scenarios", "need-packages.mjs"));
  fs.writeFileSync(path.join(root, "package.json"), JSON.stringify({ type: "module", devDependencies: Object.fromEntries(names.map((n) => [n, "1.0.0"])) }));
  for (const n of installed ?? []) {
    fs.mkdirSync(path.join(root, "node_modules", n), { recursive: true });
    fs.writeFileSync(path.join(root, "node_modules", n, "package.json"), "{}");
  }
  return root;
}

function guard(root: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [path.join(root, "scenarios", "need-packages.mjs")], (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr })),
  );
}

describe("the fleetlab command without its npm packages", () => {
  it("no node_modules: one line, the command that fixes it, exit 2", async () => {
    const root = repo(["tsx", "zod"], undefined);
    const r = await guard(root);
    expect(r.stderr).toBe(`fleetlab: the repository's npm packages are not installed (no node_modules): run \`npm ci\` (or \`make deps\`) in ${fs.realpathSync(root)}, then this again\n`);
    expect(r.code).toBe(2);
  });

  it("a package added since the last install is named", async () => {
    const r = await guard(repo(["tsx", "zod", "express", "@types/express", "ws", "dockerode"], ["tsx", "zod"]));
    expect(r.stderr).toMatch(/^fleetlab: npm packages missing from node_modules: express, @types\/express, ws and 1 more: run `npm ci` \(or `make deps`\) in .*, then this again\n$/);
    expect(r.code).toBe(2);
  });

  it("everything installed: silent, and the command goes on", async () => {
    expect(await guard(repo(["tsx", "@types/node"], ["tsx", "@types/node"]))).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});
