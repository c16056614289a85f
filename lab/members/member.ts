// What every member kind shares: the Member record a scenario sees, the base recipe (a
// container on the lab's internal network only, labelled, named, optionally on a state
// volume) and its start. One module per kind beside this one adds image, environment, files,
// readiness wait and handle.
import { Readable } from "node:stream";
import { GenericContainer, type StartedTestContainer, type WaitStrategy } from "testcontainers";
import { runLabels } from "../engine/cleanup.ts";
import { docker } from "../engine/docker.ts";
import type { ImageSet } from "../engine/images.ts";
import type { Capabilities } from "../engine/capabilities.ts";
import type { TopologySpec } from "../definitions/spec.ts";
import { HttpOnLabNetwork, inspectRunning, logTail } from "./wait-http.ts";
import { LabError } from "../core/log.ts";
import { cpuShare } from "../core/cpu-share.ts";
import { LabInfraError, SystemUnderTestError } from "../definitions/verdict.ts";
import { StopWaiting, WaitTimeout } from "../core/wait.ts";

export type MemberKind = "gateway" | "node" | "model" | "git" | "mcp" | "tap";

export interface Member {
  alias: string;
  kind: MemberKind;
  container: StartedTestContainer;
  id: string;
  ip: string;
  volume?: string;
}

/** What a recipe needs to know about the lab it joins. */
export interface LabContext {
  id: string;
  runId: string;
  spec: TopologySpec;
  images: ImageSet;
  /** What the OpenClaw version offers (lab/engine/capabilities.ts): members start accordingly. */
  capabilities: Capabilities;
  network: { name: string; subnet: string };
  /** Save a container's logs as evidence (a container that fails its wait is removed at once). */
  keepLogs(alias: string, containerId: string): Promise<void>;
  /**
   * Paired state restored from a snapshot (lab/topology/snapshot.ts): a tar of `.openclaw/` for
   * this gateway or node host, extracted into its state volume before the container starts.
   */
  stateArchive?(alias: string): Buffer | undefined;
}

/** What a handle needs: the spec and the members by alias (Lab has this shape). */
export interface LabMembers {
  spec: TopologySpec;
  member(alias: string): Member;
}

/** Labels of every lab resource: run (for prune), kind, lab, and the alias when it has one. */
export function labLabels(lab: Pick<LabContext, "id" | "runId">, kind: string, alias?: string): Record<string, string> {
  return { ...runLabels(lab.runId, kind), "fleetlab.lab": lab.id, ...(alias ? { "fleetlab.alias": alias } : {}) };
}

/**
 * A member's container: joins the lab's internal network only, under its alias.
 * (GenericContainer.withNetworkAliases would also attach it to the default bridge network,
 * which has egress; here the alias goes into the create call itself.) Unknown names fail in
 * 1 s, not 20 s. Every recipe sets its wait strategy: with no ports exposed, Testcontainers'
 * default (host ports) would wait for nothing.
 */
export class MemberContainer extends GenericContainer {
  #volume = false;
  #running = deferred();

  readonly lab: LabContext;
  readonly kind: MemberKind;
  readonly alias: string;
  constructor(
    lab: LabContext,
    kind: MemberKind,
    alias: string,
    image: string,
  ) {
    super(image);
    this.lab = lab;
    this.kind = kind;
    this.alias = alias;
    this.withLabels(labLabels(lab, kind, alias)).withName(`fleetlab-${lab.id}-${alias}`).withNetworkMode(lab.network.name);
    this.createOpts.NetworkingConfig = { EndpointsConfig: { [lab.network.name]: { Aliases: [alias] } } };
    this.hostConfig.DnsOptions = ["timeout:1", "attempts:1"];
    // Under the lab's CPU share when the run claimed it (lab/core/cpu-share.ts).
    const parent = cpuShare().parent;
    if (parent) this.hostConfig.CgroupParent = parent;
  }

  /** A named volume on /home/lab (OpenClaw's state and identity), created at start, kept across restarts. */
  withStateVolume(): this {
    this.#volume = true;
    return this;
  }

  /** "HTTP 200 on this member's address on the lab network", for withWaitStrategy. */
  protected httpReady(port: number, path: string): HttpOnLabNetwork {
    return new HttpOnLabNetwork({
      network: this.lab.network.name,
      port,
      path,
      what: `${this.alias} ${path}`,
      onFail: (c) => this.lab.keepLogs(this.alias, c.id),
    });
  }

  /** Resolves when the container runs (before its readiness wait); rejects if it never does. */
  get running(): Promise<void> {
    return this.#running.promise;
  }

  protected override async containerStarting(): Promise<void> {
    this.#running.resolve();
  }

  /** Start the container (its readiness wait included) and describe it as a Member. */
  async startMember(): Promise<Member> {
    try {
      let volume: string | undefined;
      if (this.#volume) {
        volume = `fleetlab-${this.lab.id}-${this.alias}-state`;
        await docker().createVolume({ Name: volume, Labels: labLabels(this.lab, "volume") });
        this.withBindMounts([{ source: volume, target: "/home/lab", mode: "rw" }]);
      }
      const started = await this.start();
      const ip = started.getIpAddress(this.lab.network.name);
      if (!ip) throw new Error(`container ${started.getName()} has no address on ${this.lab.network.name}`);
      return { alias: this.alias, kind: this.kind, container: started, id: started.getId(), ip, volume };
    } catch (err) {
      this.#running.reject(err);
      throw startFailure(this.kind, err);
    }
  }
}

/**
 * Why a member did not come up, for the verdict: its readiness wait ending (it exited, or never
 * became ready) is OpenClaw's failure for the gateway and node hosts (SystemUnderTestError: fail)
 * and the lab's own for every other member (LabInfraError: unknown). Anything else (the engine
 * refused to create it, bad input) is left as it is: not OpenClaw's doing.
 */
export function startFailure(kind: MemberKind, err: unknown): unknown {
  if (!(err instanceof StopWaiting || err instanceof WaitTimeout)) return err;
  return kind === "gateway" || kind === "node" ? new SystemUnderTestError(err.message, { cause: err }) : new LabInfraError(err.message, { cause: err });
}

/** A bring-up step OpenClaw itself has to get right (operator connect, pairing): its failure is a SystemUnderTestError. */
export function openclawFailure(what: string, err: unknown): unknown {
  if (err instanceof LabError || err instanceof LabInfraError || err instanceof SystemUnderTestError) return err;
  return new SystemUnderTestError(`${what}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
}

/**
 * Ends a wait at once when one of the lab's containers exits, is removed or restarts behind the
 * lab's back (node hosts while they are being paired: without it a node that died at start kept
 * the pairing wait going for its full 120 s). check() throws StopWaiting with the exit code and
 * the last log lines; a restart the lab makes itself is announced with restarted().
 */
export class ContainerWatch {
  #startedAt = new Map<string, string>();
  private readonly idOf: (alias: string) => string;
  private readonly what: (alias: string) => string;
  constructor(
    idOf: (alias: string) => string,
    what: (alias: string) => string = (alias) => alias,
  ) {
    this.idOf = idOf;
    this.what = what;
  }

  /** The lab restarted it: its next start time is expected. */
  restarted(alias: string): void {
    this.#startedAt.delete(alias);
  }

  async check(aliases: string[]): Promise<void> {
    await Promise.all(
      aliases.map(async (alias) => {
        const c = docker().getContainer(this.idOf(alias));
        const st = await inspectRunning(c, this.what(alias));
        const was = this.#startedAt.get(alias);
        if (was && st.State.StartedAt !== was) {
          throw new StopWaiting(`${this.what(alias)}: the container restarted (started again at ${st.State.StartedAt}, restart count ${st.RestartCount})${await logTail(c)}`);
        }
        this.#startedAt.set(alias, st.State.StartedAt);
      }),
    );
  }
}

/**
 * The gateway and node hosts: one image, OpenClaw's state and identity on a volume, and a
 * config the image's entrypoint copies into the writable state dir at start (OpenClaw writes
 * beside its config, so it cannot be mounted read-only there).
 */
export class OpenclawContainer extends MemberContainer {
  constructor(lab: LabContext, kind: "gateway" | "node", alias: string, config: Record<string, unknown>) {
    super(lab, kind, alias, lab.images.openclaw.tag);
    this.withStateVolume().withCopyContentToContainer([{ content: JSON.stringify(config, null, 2), target: "/etc/fleetlab/openclaw.json", mode: 0o644 }]);
    // Into the named volume on /home/lab: the engine mounts a created container's volumes for the
    // copy, and the archive keeps its owner (the image's user, uid 10001).
    const archive = lab.stateArchive?.(alias);
    if (archive) this.withCopyArchivesToContainer([{ tar: Readable.from([archive]), target: "/home/lab" }]);
  }
}

/**
 * For members whose readiness the lab judges itself (node hosts: paired and connected, as the
 * operator sees them). Set explicitly so Testcontainers does not pick its default.
 */
export const READY_WHEN_RUNNING: WaitStrategy = {
  waitUntilReady: async () => {},
  withStartupTimeout() {
    return this;
  },
  isStartupTimeoutSet: () => false,
  getStartupTimeout: () => 0,
};

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (err: unknown) => void } {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {}); // a failed start is reported by startMember; this only signals
  return { promise, resolve, reject };
}
