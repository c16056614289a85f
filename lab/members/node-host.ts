// An OpenClaw node host: `openclaw node run` (with `--session-host` where the version has it,
// lab/engine/capabilities.ts) as a non-root user, worker runs
// enabled, state on a volume (a node killed and started again keeps its identity). It
// reaches "its gateway" through its wire tap when taps are on. Ready means approved, paired
// and connected as the operator sees it in node.list: the lab judges that while it pairs the
// node (LabOperator.approveNodes), so the container itself has nothing to wait for; a node
// host that exits or restarts meanwhile ends that wait at once (ContainerWatch in member.ts),
// and bring-up fails as OpenClaw's failure (SystemUnderTestError), quoting its last log lines.
import { fitConfig, nodeRunExtraArgs } from "../engine/capabilities.ts";
import type { TopologySpec } from "../definitions/spec.ts";
import { nodeAliases, nodeCapacity, tapAlias } from "../definitions/spec.ts";
import { OpenclawContainer, READY_WHEN_RUNNING, type LabContext } from "./member.ts";

export class NodeHostContainer extends OpenclawContainer {
  constructor(lab: LabContext, alias: string) {
    const spec = lab.spec;
    // Without the optional keys this version does not know (lab/engine/capabilities.ts).
    super(lab, "node", alias, fitConfig(nodeConfig(spec, alias), lab.capabilities.unknownConfig?.node));
    this.withEnvironment({
      FLEETLAB_ROLE: "node",
      // Through its wire tap when taps are on: everything the node sends to "its gateway" passes it.
      GATEWAY_HOST: spec.tap.enabled ? tapAlias(alias) : spec.gateway.alias,
      GATEWAY_PORT: String(spec.gateway.port),
      NODE_NAME: alias,
      OPENCLAW_GATEWAY_TOKEN: spec.gateway.token,
      FLEETLAB_NODE_ARGS: nodeRunExtraArgs(lab.capabilities).join(" "),
    }).withWaitStrategy(READY_WHEN_RUNNING);
  }
}

export function nodeConfig(spec: TopologySpec, alias?: string): Record<string, unknown> {
  const hosted = spec.mcp.nodeServers.filter((m) => m.node === alias);
  return {
    discovery: { mdns: { mode: "off" } },
    update: { checkOnStart: false },
    nodeHost: {
      workerRuns: { enabled: true, capacity: nodeCapacity(spec, alias ?? nodeAliases(spec)[0] ?? "") },
      autoUpdate: { enabled: false },
      browserProxy: { enabled: false },
      ...(hosted.length
        ? { mcp: { servers: Object.fromEntries(hosted.map((m) => [m.name, { url: `http://${m.name}:${m.port}/mcp`, transport: "streamable-http", connectionTimeoutMs: 5000 }])) } }
        : {}),
    },
  };
}
