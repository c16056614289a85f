// `npm ci` at the root is the whole set-up for typecheck and the unit tests: the root pins
// docker/mcp's packages as its own devDependencies, so tsc (docker/mcp/server.ts) and the MCP
// tests resolve them without docker/mcp's own install. docker/mcp keeps its package.json and
// lockfile: they alone build the MCP image (`make deps`, lab/engine/images.ts). This keeps the
// two sets of pins equal, so the tests run the versions the image ships.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../core/paths.ts";

type Pkg = { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
type Lock = { packages: Record<string, { version?: string }> };
const json = <T>(rel: string): T => JSON.parse(readFileSync(join(ROOT, rel), "utf8")) as T;

/** Each of docker/mcp's dependencies whose pin at the root differs (or is missing), in words. */
export function pinsApart(mcp: Pkg, root: Pkg): string[] {
  const ours = { ...root.dependencies, ...root.devDependencies };
  return Object.entries(mcp.dependencies ?? {})
    .filter(([name, want]) => ours[name] !== want)
    .map(([name, want]) => `${name}: docker/mcp/package.json pins ${want}, package.json ${ours[name] === undefined ? "does not list it" : `pins ${ours[name]}`}`);
}

/** Each of docker/mcp's dependencies that the two lockfiles install at different versions. */
export function locksApart(mcp: Pkg, mcpLock: Lock, rootLock: Lock): string[] {
  return Object.keys(mcp.dependencies ?? {})
    .map((name) => [name, mcpLock.packages[`node_modules/${name}`]?.version, rootLock.packages[`node_modules/${name}`]?.version] as const)
    .filter(([, a, b]) => a !== b)
    .map(([name, a, b]) => `${name}: docker/mcp/package-lock.json has ${a ?? "nothing"}, package-lock.json ${b ?? "nothing"}`);
}

describe("docker/mcp's packages, pinned at the root too", () => {
  const mcp = json<Pkg>("docker/mcp/package.json");

  it("package.json pins every docker/mcp dependency at docker/mcp's exact version (change both together)", () => {
    expect(Object.keys(mcp.dependencies ?? {}).length).toBeGreaterThan(0);
    expect(pinsApart(mcp, json<Pkg>("package.json"))).toEqual([]);
  });

  it("the two lockfiles install those packages at the same versions (run `npm install` at the root after changing a pin)", () => {
    expect(locksApart(mcp, json<Lock>("docker/mcp/package-lock.json"), json<Lock>("package-lock.json"))).toEqual([]);
  });

  it("the check can fail: a pin that moved and one that is missing are named", () => {
    const m = { dependencies: { express: "5.3.0", zod: "4.6.7" } };
    expect(pinsApart(m, { devDependencies: { express: "5.2.0" } })).toEqual([
      "express: docker/mcp/package.json pins 5.3.0, package.json pins 5.2.0",
      "zod: docker/mcp/package.json pins 4.6.7, package.json does not list it",
    ]);
    const lock = (v: string): Lock => ({ packages: { "node_modules/express": { version: v }, "node_modules/zod": { version: "4.6.7" } } });
    expect(locksApart(m, lock("5.3.0"), lock("5.3.1"))).toEqual(["express: docker/mcp/package-lock.json has 5.3.0, package-lock.json 5.3.1"]);
  });
});
