// A package of your own under test (OPENCLAW_PACKAGE): a .tgz packed from OpenClaw (npm pack /
// pnpm pack in its checkout), or a folder holding one, or an unpacked package folder (packed
// here with `npm pack --ignore-scripts`). It stands where a published version would, named as a
// build: `<version from its package.json>+<first 10 hex of the tarball's sha256>`, e.g.
// `2026.9.6+1a2b3c4d5e`, so two builds with the same version string never share an image, a
// snapshot or a capability probe (they are keyed by that label), and no report mistakes a build
// for the published version of the same number. Findings judge a build on its version (the part
// before `+`, lab/findings/versions.ts drops build metadata as semver does).
//
// The tarball is checked before anything is built or written (one line, exit 2: no such path,
// not an npm package, no OpenClaw gateway in it), then copied into the shared cache as
// builds/<sha256>.tgz, where the image build finds it by the label's hash (a replay of the run
// needs nothing else while the cache holds it).
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { LabError } from "../core/log.ts";
import { CACHE } from "../core/paths.ts";

/** `<exact version>+<10 hex>`: a build's name wherever a version is shown or keyed. */
export const BUILD_LABEL = /^(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\+([0-9a-f]{10})$/;

export interface Build {
  /** `2026.9.6+1a2b3c4d5e` */
  label: string;
  /** The version its package.json gives. */
  version: string;
  /** The tarball's sha256 (hex). */
  sha256: string;
  /** Where it came from, as given (a path). */
  source: string;
  /** The tarball in the cache. */
  file: string;
}

export const isBuild = (v: string): boolean => BUILD_LABEL.test(v);

/** The package version of a version or build label (a published version is its own). */
export function packageVersion(v: string): string {
  return BUILD_LABEL.exec(v)?.[1] ?? v;
}

/** How a version is said to a reader: a build says it is one. */
export function versionShown(v: string): string {
  return isBuild(v) ? `build ${v}` : v;
}

const buildsDir = (cache: string) => path.join(cache, "builds");

/** The cached tarball of a build label, or undefined when this machine's cache lacks it. */
export function cachedBuild(label: string, cache = CACHE): { file: string; sha256: string; source?: string } | undefined {
  const m = BUILD_LABEL.exec(label);
  if (!m) return undefined;
  const dir = buildsDir(cache);
  const hit = fs.existsSync(dir) ? fs.readdirSync(dir).find((f) => f.startsWith(m[2]!) && f.endsWith(".tgz")) : undefined;
  if (!hit) return undefined;
  const sha256 = hit.slice(0, -4);
  const meta = path.join(dir, `${sha256}.json`);
  const source = fs.existsSync(meta) ? (JSON.parse(fs.readFileSync(meta, "utf8")) as { source?: string }).source : undefined;
  return { file: path.join(dir, hit), sha256, source };
}

const memo = new Map<string, Build>();

/**
 * OPENCLAW_PACKAGE resolved: checked, hashed and kept in the cache. Bad input is a LabError
 * (exit 2) naming what is wrong and the fix, before anything else happens.
 */
export function resolveBuild(source: string, cache = CACHE): Build {
  const given = `OPENCLAW_PACKAGE=${source}`;
  const abs = path.resolve(source);
  if (!fs.existsSync(abs)) throw new LabError(`${given}: no such file or folder; give the .tgz that \`npm pack\` or \`pnpm pack\` made in your OpenClaw checkout (or a folder holding it)`);
  const st = fs.statSync(abs);
  const key = `${abs}\0${st.size}\0${st.mtimeMs}\0${cache}`;
  const seen = memo.get(key);
  if (seen) return seen;
  const tgz = st.isDirectory() ? tarballIn(abs, given) : abs;
  // A folder packed here leaves its tarball in a temporary folder: gone once it is in the cache.
  const packed = tgz !== abs && path.basename(path.dirname(tgz)).startsWith("fleetlab-pack-");
  try {
    return keep(tgz, source, cache, key);
  } finally {
    if (packed) fs.rmSync(path.dirname(tgz), { recursive: true, force: true });
  }
}

function keep(tgz: string, source: string, cache: string, key: string): Build {
  const pkg = readPackage(tgz, `OPENCLAW_PACKAGE=${source}`);
  const sha256 = fileSha256(tgz);
  const label = `${pkg.version}+${sha256.slice(0, 10)}`;
  const dir = buildsDir(cache);
  const file = path.join(dir, `${sha256}.tgz`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(dir, { recursive: true });
    const partial = `${file}.partial-${process.pid}`;
    fs.copyFileSync(tgz, partial);
    fs.renameSync(partial, file);
  }
  fs.writeFileSync(path.join(dir, `${sha256}.json`), JSON.stringify({ label, version: pkg.version, name: pkg.name, source, keptAt: new Date().toISOString() }, null, 2) + "\n");
  const build = { label, version: pkg.version, sha256, source, file };
  memo.set(key, build);
  return build;
}

/**
 * The tarball a folder stands for: the one .tgz it holds (an OpenClaw checkout after `pnpm pack`
 * holds its package.json too, and re-packing it with npm would leave pnpm's workspace: ranges),
 * else the package it is, packed.
 */
function tarballIn(dir: string, given: string): string {
  const tgzs = fs.readdirSync(dir).filter((f) => f.endsWith(".tgz"));
  if (tgzs.length === 1) return path.join(dir, tgzs[0]!);
  if (tgzs.length > 1) throw new LabError(`${given}: the folder holds ${tgzs.length} .tgz files (${tgzs.slice(0, 4).join(", ")}); name the one to test`);
  if (fs.existsSync(path.join(dir, "package.json"))) {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-pack-"));
    try {
      // --ignore-scripts: the folder is packed as it is (a build step is the user's, before this).
      const json = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", out], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 26 });
      const name = (JSON.parse(json) as { filename: string }[])[0]?.filename;
      if (!name) throw new Error("npm pack named no file");
      return path.join(out, path.basename(name));
    } catch (err) {
      const e = err as { stderr?: string; message?: string };
      throw new LabError(`${given}: \`npm pack --ignore-scripts\` in that folder failed: ${(e.stderr || e.message || String(err)).trim().split("\n").slice(-1)[0]}`);
    }
  }
  throw new LabError(`${given}: the folder holds neither a .tgz nor a package.json; give the .tgz that \`npm pack\` or \`pnpm pack\` made, or the unpacked package's folder`);
}

interface PackageJson {
  name?: string;
  version?: string;
  bin?: string | Record<string, string>;
}

/** The package.json of an npm tarball, checked for OpenClaw's CLI and gateway. */
function readPackage(tgz: string, given: string): { name: string; version: string } {
  const notPackage = (why: string) => new LabError(`${given}: not an npm package (${why}); give the .tgz that \`npm pack\` or \`pnpm pack\` made in your OpenClaw checkout`);
  const head = Buffer.alloc(2);
  const fd = fs.openSync(tgz, "r");
  try {
    fs.readSync(fd, head, 0, 2, 0);
  } finally {
    fs.closeSync(fd);
  }
  if (head[0] !== 0x1f || head[1] !== 0x8b) throw notPackage("not a gzip-compressed tar");
  let listing: string;
  try {
    listing = execFileSync("tar", ["-tzf", tgz], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 28 });
  } catch (err) {
    throw notPackage(`tar cannot read it: ${String((err as { stderr?: string }).stderr ?? err).trim().split("\n")[0]}`);
  }
  const files = new Set(listing.split("\n").filter(Boolean).map((f) => f.replace(/^\.\//, "")));
  if (!files.has("package/package.json")) throw notPackage("it has no package/package.json");
  let pkg: PackageJson;
  try {
    pkg = JSON.parse(execFileSync("tar", ["-xzOf", tgz, "package/package.json"], { encoding: "utf8", maxBuffer: 1 << 24 })) as PackageJson;
  } catch (err) {
    throw notPackage(`its package.json does not parse: ${(err as Error).message.split("\n")[0]}`);
  }
  const version = pkg.version ?? "";
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) throw notPackage(`its package.json version ${JSON.stringify(pkg.version)} is not an exact version such as 2026.9.6`);
  const what = `${pkg.name ?? "(no name)"}@${version}`;
  const bin = typeof pkg.bin === "string" ? pkg.bin : pkg.bin?.openclaw;
  const noGateway = (why: string) => new LabError(`${given}: ${what} has no OpenClaw gateway (${why}); give a package packed from OpenClaw's checkout`);
  if (!bin || (typeof pkg.bin === "string" && pkg.name !== "openclaw")) throw noGateway("its package.json has no `openclaw` command in bin");
  if (!files.has(path.posix.join("package", bin))) throw noGateway(`its bin ${bin} is not in the package`);
  if (![...files].some((f) => /^package\/dist\/.*gateway/i.test(f))) throw noGateway("nothing under dist/ is the gateway's");
  return { name: pkg.name ?? "openclaw", version };
}

function fileSha256(file: string): string {
  const h = createHash("sha256");
  const fd = fs.openSync(file, "r");
  const buf = Buffer.alloc(1 << 22);
  try {
    for (let n; (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0; ) h.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return h.digest("hex");
}

/** A VERSIONS word that names a package of one's own (a path: it has a slash or ends in .tgz), not a version. */
export const isPackagePath = (w: string): boolean => w.includes("/") || w.endsWith(".tgz");

/** The builds VERSIONS names by path, by their names (`<version>+<hash>`, lab/definitions/build.ts). */
export function buildsIn(text: string, resolve: (p: string) => Build = resolveBuild): Map<string, Build> {
  const out = new Map<string, Build>();
  for (const w of text.split(/[\s,]+/).filter(isPackagePath)) {
    const b = resolve(w);
    out.set(b.label, b);
  }
  return out;
}
