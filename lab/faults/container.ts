// Plumbing of the faults that act on a member's container through the engine API (kill, stop,
// pause, restart; disconnect uses refreshIp). "In effect" and "healed" are the engine's view of
// the container; pass inEffectWhen/healedWhen for what the rest of the lab must see
// (node.list, a probe).
import type Docker from "dockerode";
import { docker } from "../engine/docker.ts";
import { Fault, type Detail, type FaultLab, type FaultOptions } from "./fault.ts";

export type ContainerState = Docker.ContainerInspectInfo["State"];

/** The engine's answer for a container that no longer exists. */
export const gone = (err: unknown) => (err as { statusCode?: number }).statusCode === 404;

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

/** The member's address on the lab network, or an error saying it has none. */
export async function ipOnLab(lab: FaultLab, alias: string): Promise<string> {
  const info = await docker().getContainer(lab.member(alias).id).inspect();
  const ip = info.NetworkSettings.Networks?.[lab.network.name]?.IPAddress;
  if (!ip) throw new Error(`${alias} has no address on ${lab.network.name} (disconnected or stopped?)`);
  return ip;
}

/** A fault on one member's container; healing starts the same container again (same state volume). */
export abstract class ContainerFault extends Fault {
  protected readonly containerId: string;
  protected readonly lab: FaultLab;
  protected readonly alias: string;
  constructor(
    lab: FaultLab,
    alias: string,
    opts: FaultOptions = {},
  ) {
    super(alias, { ...opts, run: lab.run }, lab.teardown);
    this.lab = lab;
    this.alias = alias;
    this.containerId = lab.member(alias).id;
  }
  protected get container(): Docker.Container {
    return docker().getContainer(this.containerId);
  }
  protected async st(): Promise<ContainerState> {
    return (await this.container.inspect()).State;
  }
  protected override defaultTimeoutMs(): number {
    return 30_000;
  }
  /** Heal: start the container again unless it runs; a removed container counts as healed. */
  protected async doHeal(): Promise<Detail> {
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
  /** Healed: running (not paused), at its address on the lab network now. */
  protected async isHealed(): Promise<Detail | undefined> {
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
