// Readiness over the lab network: "HTTP 200 from http://<ip on network N>:<port><path>".
// Lab networks are internal and publish no ports, so Testcontainers' own strategies (which
// go through mapped host ports) cannot see these containers; the host reaches container IPs
// on the lab network directly. A container that exits ends the wait at once, with its exit
// code and last log lines in the error.
import type Dockerode from "dockerode";
import type { WaitStrategy } from "testcontainers";
import { StopWaiting, waitFor } from "../core/wait.ts";
import { demux } from "../engine/docker.ts";
import { deadline } from "../core/pace.ts";

export interface HttpOnLabNetworkOptions {
  network: string;
  port: number;
  path: string;
  /** What is awaited, for messages (e.g. "gateway /readyz"). */
  what: string;
  /**
   * Called when the wait fails, before Testcontainers removes the container (it does, at a
   * failed start): the place to save its logs as evidence.
   */
  onFail?: (container: Dockerode.Container) => Promise<void>;
}

const LOG_LINES = 15;

export class HttpOnLabNetwork implements WaitStrategy {
  #timeoutMs = 60_000;
  #timeoutSet = false;

  readonly opts: HttpOnLabNetworkOptions;
  constructor(opts: HttpOnLabNetworkOptions) {
    this.opts = opts;
  }

  /** Testcontainers calls this from start(); `boundPorts` is empty on a lab network. */
  async waitUntilReady(container: Dockerode.Container): Promise<void> {
    await this.waitOn(container, { timeoutMs: this.#timeoutMs });
  }

  /** The same wait outside start() (e.g. after a restart); resolves with the milliseconds it took. */
  async waitOn(container: Dockerode.Container, o: { timeoutMs?: number; signal?: AbortSignal } = {}): Promise<number> {
    const { network, port, path, what } = this.opts;
    const t0 = performance.now();
    let last = "";
    try {
      await waitFor(
        what,
        async () => {
          const st = await inspectRunning(container, what);
          const ip = st.NetworkSettings.Networks[network]?.IPAddress;
          if (!ip) {
            last = `no address on ${network}`;
            return false;
          }
          const url = `http://${ip}:${port}${path}`;
          try {
            const r = await fetch(url, { signal: AbortSignal.timeout(deadline(2_000)) }); // paced
            await r.body?.cancel();
            last = `${url} answered ${r.status}`;
            return r.status === 200;
          } catch (err) {
            const e = err as Error & { cause?: { code?: string; message?: string } };
            last = `${url}: ${e.cause?.code ?? e.cause?.message ?? e.message}`;
            return false;
          }
        },
        { timeoutMs: o.timeoutMs ?? this.#timeoutMs, intervalMs: 250, signal: o.signal, lastState: () => last },
      );
    } catch (err) {
      if (!o.signal?.aborted) await this.opts.onFail?.(container).catch(() => {});
      throw err;
    }
    return Math.round(performance.now() - t0);
  }

  /** `ms` as measured on the reference machine: scaled by this machine's pace (lab/core/pace.ts). */
  withStartupTimeout(ms: number): this {
    this.#timeoutMs = ms; // spent at the machine's pace by waitFor
    this.#timeoutSet = true;
    return this;
  }
  isStartupTimeoutSet(): boolean {
    return this.#timeoutSet;
  }
  getStartupTimeout(): number {
    return this.#timeoutMs;
  }
}

/**
 * The container as the engine sees it, for a probe of a wait on it: a container that was removed
 * or is not running ends the wait at once (StopWaiting), with its exit code and last log lines.
 */
export async function inspectRunning(container: Dockerode.Container, what: string): Promise<Dockerode.ContainerInspectInfo> {
  const st = await container.inspect().catch((err: { statusCode?: number }) => {
    throw err.statusCode === 404 ? new StopWaiting(`${what}: the container was removed`) : err;
  });
  if (!st.State.Running) {
    throw new StopWaiting(`${what}: the container exited (code ${st.State.ExitCode})${await logTail(container)}`);
  }
  return st;
}

/** The container's last log lines (stdout and stderr interleaved), or "" if they cannot be read. */
export async function logTail(container: Dockerode.Container): Promise<string> {
  try {
    const raw = (await container.logs({ stdout: true, stderr: true, tail: LOG_LINES, follow: false })) as unknown as Buffer;
    const text = demux(raw).replace(/^(\s*\n)+/, "").trimEnd();
    return text ? `; last log lines:\n${text.replace(/^/gm, "    ")}` : "";
  } catch {
    return "";
  }
}

// demux (Docker's multiplexed log stream) lives beside the Docker client: lab/engine/docker.ts.
export { demux };
