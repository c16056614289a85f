// Process faults through the engine API: SIGKILL (or another signal that ends the process),
// graceful stop, pause (freeze), restart. Healing starts the same container again (same state
// volume) or unpauses it. "In effect" and "healed" are the engine's view of the container;
// pass inEffectWhen/healedWhen for what the rest of the lab must see (node.list, a probe).
import type Docker from "dockerode";
import { docker } from "../docker.ts";
import { Fault, type Detail, type FaultLab, type FaultOptions } from "./fault.ts";

type State = Docker.ContainerInspectInfo["State"];

const gone = (err: unknown) => (err as { statusCode?: number }).statusCode === 404;

/** The member's address on the lab network now; updates lab.member(alias).ip when it moved. */
export async function refreshIp(lab: FaultLab, alias: string): Promise<Detail> {
  const m = lab.member(alias);
  const info = await docker().getContainer(m.id).inspect();
  const ip = info.NetworkSettings.Networks?.[lab.network.name]?.IPAddress;
  if (!ip || ip === m.ip) return {};
  const from = m.ip;
  // Docker gives the lowest free address on (re)connect; if another container took the old one
  // meanwhile, the member moved. Clients built from member.ip after this see the new one.
  m.ip = ip;
  return { ipChanged: { from, to: ip } };
}

abstract class ContainerFault extends Fault {
  protected readonly containerId: string;
  constructor(
    protected readonly lab: FaultLab,
    protected readonly alias: string,
    opts: FaultOptions,
  ) {
    super(alias, { ...opts, run: lab.run }, lab.teardown);
    this.containerId = lab.member(alias).id;
  }
  protected get container(): Docker.Container {
    return docker().getContainer(this.containerId);
  }
  protected async st(): Promise<State> {
    return (await this.container.inspect()).State;
  }
  protected override defaultTimeoutMs(): number {
    return 30_000;
  }
  /** Start the container again unless it runs; a removed container counts as healed. */
  protected async startAgain(): Promise<Detail> {
    try {
      const st = await this.st();
      if (st.Running) return { alreadyRunning: true };
      await this.container.start();
      return {};
    } catch (err) {
      if (gone(err)) return { gone: true };
      throw err;
    }
  }
  protected async running(): Promise<Detail | undefined> {
    try {
      const st = await this.st();
      if (!st.Running || st.Paused) return undefined;
      return { pid: st.Pid, ...(await refreshIp(this.lab, this.alias)) };
    } catch (err) {
      if (gone(err)) return { gone: true };
      throw err;
    }
  }
}

/** Send a signal that ends the container's process (default SIGKILL); heal: start it again. */
export class KillFault extends ContainerFault {
  readonly kind: string;
  constructor(lab: FaultLab, alias: string, readonly signal = "SIGKILL", opts: FaultOptions = {}) {
    super(lab, alias, opts);
    this.kind = signal === "SIGKILL" ? "kill" : `kill.${signal}`;
  }
  protected async doInject(): Promise<Detail> {
    await this.container.kill({ signal: this.signal });
    return { signal: this.signal };
  }
  protected async inEffect(): Promise<Detail | undefined> {
    const st = await this.st();
    return st.Running ? undefined : { exitCode: st.ExitCode };
  }
  protected doHeal(): Promise<Detail> {
    return this.startAgain();
  }
  protected isHealed(): Promise<Detail | undefined> {
    return this.running();
  }
}

/** Graceful stop: SIGTERM, then SIGKILL after timeoutSeconds; heal: start it again. */
export class StopFault extends ContainerFault {
  readonly kind = "stop";
  constructor(lab: FaultLab, alias: string, readonly timeoutSeconds = 10, opts: FaultOptions = {}) {
    super(lab, alias, opts);
  }
  protected async doInject(): Promise<Detail> {
    // The engine answers once the container has stopped (or was already stopped: 304).
    await this.container.stop({ t: this.timeoutSeconds }).catch((err: { statusCode?: number }) => {
      if (err.statusCode !== 304) throw err;
    });
    return { timeoutSeconds: this.timeoutSeconds };
  }
  protected async inEffect(): Promise<Detail | undefined> {
    const st = await this.st();
    // Exit code 137 after a stop means the grace period ran out and the engine killed it.
    return st.Running ? undefined : { exitCode: st.ExitCode, graceful: st.ExitCode !== 137 };
  }
  protected doHeal(): Promise<Detail> {
    return this.startAgain();
  }
  protected isHealed(): Promise<Detail | undefined> {
    return this.running();
  }
}

/** Freeze every process of the container (cgroup freezer); heal: unpause. Sockets stay open. */
export class PauseFault extends ContainerFault {
  readonly kind = "pause";
  protected async doInject(): Promise<void> {
    await this.container.pause();
  }
  protected async inEffect(): Promise<Detail | undefined> {
    return (await this.st()).Paused ? {} : undefined;
  }
  protected async doHeal(): Promise<Detail> {
    try {
      if ((await this.st()).Paused) await this.container.unpause();
      return {};
    } catch (err) {
      if (gone(err)) return { gone: true };
      throw err;
    }
  }
  protected async isHealed(): Promise<Detail | undefined> {
    try {
      const st = await this.st();
      return st.Paused ? undefined : {};
    } catch (err) {
      if (gone(err)) return { gone: true };
      throw err;
    }
  }
}

/**
 * Restart (stop with timeoutSeconds, then start): in effect once the container runs again
 * with a new start time. Nothing is left to heal; heal only waits until it runs.
 */
export class RestartFault extends ContainerFault {
  readonly kind = "restart";
  #before = "";
  constructor(lab: FaultLab, alias: string, readonly timeoutSeconds = 10, opts: FaultOptions = {}) {
    super(lab, alias, opts);
  }
  protected async doInject(): Promise<Detail> {
    this.#before = (await this.st()).StartedAt;
    await this.container.restart({ t: this.timeoutSeconds });
    return { timeoutSeconds: this.timeoutSeconds };
  }
  protected async inEffect(): Promise<Detail | undefined> {
    const st = await this.st();
    if (!st.Running || st.StartedAt === this.#before) return undefined;
    return { pid: st.Pid, ...(await refreshIp(this.lab, this.alias)) };
  }
  protected async doHeal(): Promise<Detail> {
    return this.startAgain();
  }
  protected isHealed(): Promise<Detail | undefined> {
    return this.running();
  }
}
