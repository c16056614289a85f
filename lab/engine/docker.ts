import { createRequire } from "node:module";
import type { ClientRequest, IncomingMessage } from "node:http";
import Docker from "dockerode";
import { LabError } from "../core/log.ts";
import { deadline } from "../core/pace.ts";
import type { EngineCgroups } from "../core/cpu-share.ts";
import { env, setEnv } from "../core/settings.ts";

// Testcontainers must never reach for ryuk or an alpine helper: no registry here.
setEnv("TESTCONTAINERS_RYUK_DISABLED", env("TESTCONTAINERS_RYUK_DISABLED") ?? "true");
setEnv("TESTCONTAINERS_HOST_OVERRIDE", env("TESTCONTAINERS_HOST_OVERRIDE") ?? "localhost");

/**
 * docker-modem (dockerode's HTTP layer) reads a plain API answer with 'data' and 'end' only: when
 * the engine dies while an answer is coming (dockerd killed mid-scenario, measured), Node destroys
 * that response with `Error: aborted`, which nobody hears. The call then never settles, and the
 * error ends the process as an uncaught exception. So every response of its requests gets an
 * error handler that hands the error to the request, where docker-modem's own handler rejects
 * the call (a stream's reader still gets its own 'error' too). Patched once, in the module
 * instance dockerode (and Testcontainers, which uses it) loads.
 */
export function guardEngineResponses(): void {
  const modemHttp = createRequire(createRequire(import.meta.url).resolve("dockerode"))("docker-modem/lib/http.js") as Record<string, { request: (...a: unknown[]) => ClientRequest; __fleetlabGuard?: true }>;
  for (const proto of ["http", "https"]) {
    const m = modemHttp[proto];
    if (!m || m.__fleetlabGuard) continue;
    const request = m.request;
    m.request = function guarded(this: unknown, ...args: unknown[]) {
      const req = request.apply(this, args);
      req.on("response", (res: IncomingMessage) => {
        res.on("error", (err) => {
          if (req.listenerCount("error") > 0) req.emit("error", err);
        });
      });
      return req;
    };
    m.__fleetlabGuard = true;
  }
}
guardEngineResponses();

let client: Docker | undefined;

/** The dockerode client for the engine the lab uses (DOCKER_HOST honoured by dockerode). */
export function docker(): Docker {
  client ??= new Docker();
  return client;
}

/** Fail with a message that says what to do when no engine answers. */
export async function requireEngine(): Promise<{ version: string; apiVersion: string }> {
  try {
    const v = await docker().version();
    return { version: v.Version, apiVersion: v.ApiVersion };
  } catch (err) {
    const where = env("DOCKER_HOST") ? `DOCKER_HOST=${env("DOCKER_HOST")}` : "/var/run/docker.sock";
    throw new LabError(
      `no Docker engine answers at ${where} (${(err as Error).message}).\n` +
        `  Run 'make engine' (installs Debian's docker.io and starts dockerd when run as root on Debian),\n` +
        `  or start Docker yourself / point DOCKER_HOST at a running engine.`,
    );
  }
}

/** What the engine says of its cgroups (docker info), and whether it runs on this machine: for the lab's CPU share (lab/core/cpu-share.ts). */
export async function engineCgroups(): Promise<EngineCgroups> {
  const host = env("DOCKER_HOST");
  const local = !host || host.startsWith("unix://");
  try {
    const i = (await docker().info()) as { CgroupDriver?: string };
    return { driver: i.CgroupDriver, local };
  } catch {
    return { local };
  }
}

/** Labels every lab resource carries; prune goes by them. */
export const LABEL_RUN = "fleetlab.run";
export const LABEL_KIND = "fleetlab.kind";
export const LABEL_PID = "fleetlab.pid";
/** The owning process's start time (field 22 of /proc/<pid>/stat): a reused pid is told apart. */
export const LABEL_PIDSTART = "fleetlab.pidstart";
export const LABEL_HOST = "fleetlab.host";

/** Docker's multiplexed log stream (no TTY): 8-byte frame headers, the size at bytes 4-7. */
export function demux(buf: Buffer): string {
  const out: Buffer[] = [];
  for (let i = 0; i + 8 <= buf.length; ) {
    const n = buf.readUInt32BE(i + 4);
    out.push(buf.subarray(i + 8, i + 8 + n));
    i += 8 + n;
  }
  return Buffer.concat(out).toString("utf8");
}

/**
 * Why the engine cannot be trusted now (it does not answer a ping within 5 s at the machine's
 * pace, lab/core/pace.ts), or undefined when it answers. Asked when something fails, so a dead
 * engine is never scored as OpenClaw's failure (and a merely loaded one is not called dead).
 */
export async function engineTrouble(timeoutMs = 5_000): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const wallMs = deadline(timeoutMs);
  try {
    await Promise.race([
      docker().ping(),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${(wallMs / 1000).toFixed(1)} s`)), wallMs))), // paced: wallMs is deadline(timeoutMs)
    ]);
    return undefined;
  } catch (err) {
    return `the Docker engine does not answer (${(err as Error).message})`;
  } finally {
    clearTimeout(timer);
  }
}

/** An error the Docker engine's API answered (dockerode puts the HTTP status on it): the engine's, not OpenClaw's. */
export function isEngineApiError(err: unknown): boolean {
  const e = err as { statusCode?: unknown; json?: unknown; reason?: unknown } | undefined;
  return !!e && typeof e === "object" && typeof e.statusCode === "number" && ("json" in e || "reason" in e);
}

/**
 * An error of the lab's talk with the Docker engine: the API's answer (isEngineApiError), or its
 * connection failing (refused, reset, gone) on the engine's socket. Such an error escaping a
 * scenario unawaited (a log or exec stream whose socket broke) is the lab's, not OpenClaw's.
 */
export function isEngineError(err: unknown): boolean {
  if (isEngineApiError(err)) return true;
  const e = err as { code?: unknown; address?: unknown; path?: unknown; message?: unknown } | undefined;
  if (!e || typeof e !== "object" || typeof e.code !== "string") return false;
  if (!/^(ECONNREFUSED|ECONNRESET|EPIPE|ENOENT|EACCES|ETIMEDOUT)$/.test(e.code)) return false;
  const where = [e.address, e.path, e.message].filter((x): x is string => typeof x === "string").join(" ");
  return /docker\.sock\b/.test(where);
}

// ---- inside a runner container (lab/run/runner-container.ts): join and leave each lab network ----

/** The runner container's name, set inside it: the lab joins it to each network it creates. */
export const IN_NETWORK = "FLEETLAB_IN_NETWORK" as const;

/** Join the runner container to a lab network just created (no-op outside a runner). */
export async function joinLabNetwork(networkId: string): Promise<void> {
  const me = env(IN_NETWORK);
  if (me) await docker().getNetwork(networkId).connect({ Container: me });
}

/** Leave a lab network before it is removed (the engine refuses to remove one with endpoints). */
export async function leaveLabNetwork(networkId: string): Promise<void> {
  const me = env(IN_NETWORK);
  if (me) await docker().getNetwork(networkId).disconnect({ Container: me, Force: true }).catch(() => {});
}
