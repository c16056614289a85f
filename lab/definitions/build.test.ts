// OPENCLAW_PACKAGE: a package of one's own checked, named and kept before anything is built;
// judged on its version, named as a build everywhere it is shown.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildsIn, cachedBuild, isBuild, packageVersion, resolveBuild, versionShown } from "./build.ts";
import { parseTopology, topologyFromEnv } from "./spec.ts";
import { compareVersions, inRange } from "../findings/versions.ts";
import { judge, type FindingRecord } from "../findings/findings.ts";
import { matrixTable, resolveVersions } from "../commands/matrix.ts";

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-build-"));

/** A package folder (package/...) packed as npm does: a gzip'd tar with package/ at its root. */
function pack(files: Record<string, string>, dir = tmp(), name = "pkg.tgz"): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-build-src-"));
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, "package", f)), { recursive: true });
    fs.writeFileSync(path.join(root, "package", f), text);
  }
  const out = path.join(dir, name);
  execFileSync("tar", ["-czf", out, "-C", root, "package"]);
  return out;
}

const openclaw = (version = "2026.9.6", extra: Record<string, string> = {}) => ({
  "package.json": JSON.stringify({ name: "openclaw", version, bin: { openclaw: "openclaw.mjs" } }),
  "openclaw.mjs": "#!/usr/bin/env node\n",
  "dist/gateway-run-abc.mjs": "export {};\n",
  ...extra,
});

describe("resolveBuild", () => {
  it("names a build <version>+<10 hex of its sha256> and keeps it in the cache, where its name finds it", () => {
    const cache = tmp();
    const file = pack(openclaw());
    const sha = createHash("sha256").update(fs.readFileSync(file)).digest("hex");
    const b = resolveBuild(file, cache);
    expect(b.label).toBe(`2026.9.6+${sha.slice(0, 10)}`);
    expect(b.sha256).toBe(sha);
    expect(isBuild(b.label)).toBe(true);
    expect(packageVersion(b.label)).toBe("2026.9.6");
    expect(versionShown(b.label)).toBe(`build ${b.label}`);
    expect(fs.readFileSync(b.file).equals(fs.readFileSync(file))).toBe(true);
    expect(cachedBuild(b.label, cache)).toEqual({ file: b.file, sha256: sha, source: file });
    expect(cachedBuild(`2026.9.6+${"0".repeat(10)}`, cache)).toBeUndefined();
  });

  it("two builds of the same version with different content have different names", () => {
    const cache = tmp();
    const a = resolveBuild(pack(openclaw()), cache);
    const b = resolveBuild(pack(openclaw("2026.9.6", { "dist/changed.mjs": "1" })), cache);
    expect(a.version).toBe(b.version);
    expect(a.label).not.toBe(b.label);
  });

  it("takes a folder holding one .tgz (as download-artifact leaves it) and an unpacked package folder (npm pack)", () => {
    const cache = tmp();
    const dir = tmp();
    const file = pack(openclaw(), dir, "openclaw-2026.9.6.tgz");
    expect(resolveBuild(dir, cache).label).toBe(resolveBuild(file, cache).label);
    // A checkout after `pnpm pack`: its package.json and the .tgz beside it; the .tgz is the package.
    fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "openclaw", version: "0.0.0-workspace" }));
    expect(resolveBuild(dir, cache).label).toBe(resolveBuild(file, cache).label);
    const unpacked = tmp();
    execFileSync("tar", ["-xzf", file, "-C", unpacked]);
    const b = resolveBuild(path.join(unpacked, "package"), cache);
    expect(b.version).toBe("2026.9.6");
    expect(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith("fleetlab-pack-")).map((f) => fs.readdirSync(path.join(os.tmpdir(), f)))).not.toContainEqual([expect.stringMatching(/\.tgz$/)]);
  });

  it("refuses bad input in one line naming what is wrong and the fix, writing nothing", () => {
    const cache = tmp();
    const dir = tmp();
    expect(() => resolveBuild(path.join(dir, "nope.tgz"), cache)).toThrow(/OPENCLAW_PACKAGE=.*nope\.tgz: no such file or folder; give the \.tgz that `npm pack` or `pnpm pack` made/);
    fs.writeFileSync(path.join(dir, "notes.txt"), "hello");
    expect(() => resolveBuild(path.join(dir, "notes.txt"), cache)).toThrow(/not an npm package \(not a gzip-compressed tar\)/);
    fs.writeFileSync(path.join(dir, "bad.tgz"), Buffer.from([0x1f, 0x8b, 1, 2, 3]));
    expect(() => resolveBuild(path.join(dir, "bad.tgz"), cache)).toThrow(/not an npm package \(tar cannot read it/);
    expect(() => resolveBuild(pack({ "README.md": "x" }), cache)).toThrow(/not an npm package \(it has no package\/package\.json\)/);
    expect(() => resolveBuild(pack({ "package.json": JSON.stringify({ name: "openclaw", version: "main" }) }), cache)).toThrow(/version "main" is not an exact version/);
    expect(() => resolveBuild(pack({ "package.json": JSON.stringify({ name: "left-pad", version: "1.3.0" }) }), cache)).toThrow(/left-pad@1\.3\.0 has no OpenClaw gateway \(its package\.json has no `openclaw` command in bin\)/);
    const noBin = openclaw() as Record<string, string>;
    delete noBin["openclaw.mjs"];
    expect(() => resolveBuild(pack(noBin), cache)).toThrow(/openclaw@2026\.9\.6 has no OpenClaw gateway \(its bin openclaw\.mjs is not in the package\)/);
    const noGateway = openclaw() as Record<string, string>;
    delete noGateway["dist/gateway-run-abc.mjs"];
    expect(() => resolveBuild(pack(noGateway), cache)).toThrow(/openclaw@2026\.9\.6 has no OpenClaw gateway \(nothing under dist\/ is the gateway's\)/);
    const two = tmp();
    pack(openclaw(), two, "a.tgz");
    pack(openclaw(), two, "b.tgz");
    expect(() => resolveBuild(two, cache)).toThrow(/holds 2 \.tgz files \(a\.tgz, b\.tgz\); name the one to test/);
    expect(() => resolveBuild(tmp(), cache)).toThrow(/holds neither a \.tgz nor a package\.json/);
    expect(fs.existsSync(path.join(cache, "builds"))).toBe(false);
  });
});

describe("a build in the spec and the findings", () => {
  it("OPENCLAW_PACKAGE puts the build under test; with OPENCLAW_VERSION too it is refused", () => {
    const file = pack(openclaw());
    const spec = topologyFromEnv({ FLEETLAB_OPENCLAW_PACKAGE: file, FLEETLAB_CACHE: tmp() });
    expect(isBuild(spec.openclawVersion)).toBe(true);
    expect(spec.openclawBuild?.source).toBe(file);
    expect(spec.openclawBuild?.sha256.startsWith(spec.openclawVersion.split("+")[1]!)).toBe(true);
    expect(() => topologyFromEnv({ FLEETLAB_OPENCLAW_PACKAGE: file, FLEETLAB_OPENCLAW_VERSION: "2026.9.6" })).toThrow(/both name what is under test: give one/);
    // A replayed run.json carries both; a hash that is not the name's is refused.
    expect(() => parseTopology({ openclawVersion: "2026.9.6+0123456789", openclawBuild: { source: "x.tgz", sha256: "f".repeat(64) } })).toThrow(/does not match the build's name/);
  });

  it("a published pre-release is a version like any other", () => {
    expect(topologyFromEnv({ FLEETLAB_OPENCLAW_VERSION: "2026.9.1-beta.1" }).openclawVersion).toBe("2026.9.1-beta.1");
    expect(resolveVersions("2026.9.1-beta.1 2026.9.1", ["2026.9.1-beta.1", "2026.9.1"])).toEqual(["2026.9.1-beta.1", "2026.9.1"]);
    expect(compareVersions("2026.9.1-beta.1", "2026.9.1")).toBeLessThan(0);
  });

  it("compares and ranges a build as its version (semver drops build metadata)", () => {
    expect(compareVersions("2026.9.6+0123456789", "2026.9.6")).toBe(0);
    expect(compareVersions("2026.9.6+0123456789", "2026.9.5")).toBeGreaterThan(0);
    expect(inRange("2026.9.6+0123456789", ">=2026.9.4 <2026.9.6")).toBe(false);
    expect(inRange("2026.9.5+0123456789", ">=2026.9.4 <2026.9.6")).toBe(true);
  });

  it("judges a registered finding on a build: fixed? or known, and says build", () => {
    const rec: FindingRecord = { id: "F-x", expectation: "e", signature: { a: 1 }, versions: ["2026.9.6"], kind: "shortfall", evidence: "fixtures/findings/F-x.json" };
    const label = "2026.9.6+0123456789";
    const held = judge([rec], { id: "F-x", scenario: "s", expectation: "e", holds: true, version: label });
    expect(held.outcome).toBe("fixed?");
    expect(held.note).toBe(`registered finding F-x did not reproduce on build ${label} (the record lists 2026.9.6)`);
    const seen = judge([rec], { id: "F-x", scenario: "s", expectation: "e", holds: false, observed: { a: 1 }, version: label });
    expect(seen.outcome).toBe("known-finding");
    expect(seen.note).toBe(`on build ${label}`);
    const older = judge([rec], { id: "F-x", scenario: "s", expectation: "e", holds: true, version: "2026.9.4+0123456789" });
    expect(older.outcome).toBe("pass");
    expect(older.note).toMatch(/^not affected: build 2026\.9\.4\+0123456789 is older/);
  });

  it("VERSIONS takes a package's path beside published versions; the table says what each build is", () => {
    const file = pack(openclaw());
    const cache = tmp();
    const resolve = (p: string) => resolveBuild(p, cache);
    const versions = resolveVersions(`2026.9.6 ${file}`, ["2026.9.5", "2026.9.6"], resolve);
    expect(versions[0]).toBe("2026.9.6");
    expect(isBuild(versions[1]!)).toBe(true);
    const builds = buildsIn(`2026.9.6 ${file}`, resolve);
    expect([...builds.keys()]).toEqual([versions[1]]);
    const b = builds.get(versions[1]!)!;
    const table = matrixTable({ versions, scenarios: ["smoke"], cells: {}, builds: { [b.label]: { source: b.source, sha256: b.sha256 } } });
    expect(table).toContain(`  ${b.label} = ${file} (sha256 ${b.sha256.slice(0, 16)}...)`);
  });
});
