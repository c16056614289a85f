// disconnect: `docker network disconnect` from the lab network; heal reconnects the container
// under the same aliases (its address may change: lab.member(alias).ip follows).
import type Docker from "dockerode";
import { docker } from "../engine/docker.ts";
import { gone, refreshIp } from "./container.ts";
import { Fault, type Detail, type FaultLab, type FaultOptions } from "./fault.ts";
import { anywhere, defineFault } from "./kind.ts";

export class DisconnectFault extends Fault {
  readonly kind = "disconnect";
  readonly #id: string;
  #aliases: string[] = [];
  #ip = "";

  private readonly lab: FaultLab;
  private readonly alias: string;
  constructor(
    lab: FaultLab,
    alias: string,
    opts: FaultOptions = {},
  ) {
    super(alias, { ...opts, run: lab.run }, lab.teardown);
    this.lab = lab;
    this.alias = alias;
    this.#id = lab.member(alias).id;
  }

  async #endpoint(): Promise<Docker.NetworkInfo | undefined> {
    return (await docker().getContainer(this.#id).inspect()).NetworkSettings.Networks?.[this.lab.network.name];
  }

  protected async doPrepare(): Promise<Detail> {
    const ep = await this.#endpoint();
    if (!ep) throw new Error(`${this.alias} is not on ${this.lab.network.name}`);
    // The engine lists the container's short id (12 hex) among the aliases and adds it back
    // itself. (Only that: an alias such as "b" may well be a prefix of the id.)
    this.#aliases = ((ep.Aliases ?? []) as string[]).filter((a) => !(a.length >= 12 && this.#id.startsWith(a)));
    this.#ip = ep.IPAddress;
    return { aliases: this.#aliases, ip: this.#ip };
  }
  protected async doInject(): Promise<void> {
    await docker().getNetwork(this.lab.network.id).disconnect({ Container: this.#id, Force: true });
  }
  protected async inEffect(): Promise<Detail | undefined> {
    return (await this.#endpoint()) ? undefined : {};
  }
  protected async doHeal(): Promise<Detail> {
    if (await this.#endpoint().catch(() => undefined)) return { alreadyConnected: true };
    try {
      await docker()
        .getNetwork(this.lab.network.id)
        .connect({ Container: this.#id, EndpointConfig: { Aliases: this.#aliases } });
    } catch (err) {
      if (gone(err)) return { gone: true };
      throw err;
    }
    return {};
  }
  protected async isHealed(): Promise<Detail | undefined> {
    let ep: Docker.NetworkInfo | undefined;
    try {
      ep = await this.#endpoint();
    } catch (err) {
      if (gone(err)) return { gone: true };
      throw err;
    }
    // A stopped container is connected but has no address until it starts.
    if (!ep) return undefined;
    const aliases = (ep.Aliases ?? []) as string[];
    const missing = this.#aliases.filter((a) => !aliases.includes(a));
    if (missing.length) throw new Error(`reconnected without aliases ${missing.join(", ")}`);
    return { aliases: this.#aliases, ...(ep.IPAddress ? await refreshIp(this.lab, this.alias) : { stopped: true }) };
  }
}

export const disconnect = defineFault({
  name: "disconnect",
  family: "network",
  describe: "take the member off the lab network (engine API); heal reconnects it under the same aliases",
  available: anywhere,
  make: (lab: FaultLab, alias: string, opts: FaultOptions = {}) => new DisconnectFault(lab, alias, opts),
  bench: [{ label: "disconnect (heal: reconnect, same aliases)", observedBy: "engine: endpoint gone / back with its aliases", make: (bed) => new DisconnectFault(bed.lab, "b") }],
});
