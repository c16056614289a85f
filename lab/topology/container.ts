import { GenericContainer, type StartedTestContainer } from "testcontainers";
import { runLabels } from "../cleanup.ts";

/**
 * A Testcontainers container that joins only the lab's internal network, under DNS aliases.
 * (GenericContainer.withNetworkAliases would also attach it to the default bridge network,
 * which has egress; here the aliases go into the create call itself.)
 */
export class LabContainer extends GenericContainer {
  constructor(image: string, runId: string, kind: string) {
    super(image);
    this.withLabels(runLabels(runId, kind));
  }

  /** Join `network` only, reachable as `aliases`; unknown names fail in 1 s, not 20 s. */
  onLabNetwork(network: string, aliases: string[]): this {
    this.withNetworkMode(network);
    this.createOpts.NetworkingConfig = { EndpointsConfig: { [network]: { Aliases: aliases } } };
    this.hostConfig.DnsOptions = ["timeout:1", "attempts:1"];
    return this;
  }

  withMemoryLimitMiB(mib: number): this {
    this.hostConfig.Memory = mib * 2 ** 20;
    return this;
  }
}

/** The container's address on a network (the host reaches internal networks by IP). */
export function ipOn(c: StartedTestContainer, network: string): string {
  const ip = c.getIpAddress(network);
  if (!ip) throw new Error(`container ${c.getName()} has no address on ${network}`);
  return ip;
}
