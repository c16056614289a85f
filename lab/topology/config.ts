// OpenClaw configuration for each role, derived from the topology spec. Only keys measured to
// work with the pinned version (../shared FIELD-NOTES) are used; everything that would reach
// outside the lab (update checks, mDNS, SSH pairing verification, control UI) is off.
import type { TopologySpec } from "./spec.ts";

export const MODEL_PROVIDER = "lab";
export const APPROVAL_PLUGIN = "fleetlab-approval-gate";
/** Where the approval plugin is copied inside the gateway container. */
export const APPROVAL_PLUGIN_DIR = `/etc/fleetlab/plugins/${APPROVAL_PLUGIN}`;
export const MODEL_ID = "scripted";

export function gatewayConfig(spec: TopologySpec, labSubnet?: string): Record<string, unknown> {
  const pairing: Record<string, unknown> = { sshVerify: false };
  if (spec.nodes.devicePairing === "subnet" && labSubnet) pairing.autoApproveCidrs = [labSubnet];
  return {
    gateway: {
      mode: "local",
      bind: "lan",
      port: spec.gateway.port,
      auth: { mode: "token", token: spec.gateway.token },
      controlUi: { enabled: false },
      nodes: { pairing },
    },
    discovery: { mdns: { mode: "off" } },
    update: { checkOnStart: false },
    models: {
      providers: {
        [MODEL_PROVIDER]: {
          baseUrl: `http://${spec.model.alias}:${spec.model.port}/v1`,
          api: "openai-responses",
          apiKey: "fleetlab-scripted",
          request: { allowPrivateNetwork: true },
          models: [{ id: MODEL_ID, name: "fleetlab scripted model", contextWindow: 128000, maxTokens: 4096, input: ["text"], reasoning: false }],
        },
      },
    },
    agents: { defaults: { workspace: "/home/lab/workspace", model: { primary: `${MODEL_PROVIDER}/${MODEL_ID}` } } },
    ...mcpConfig(spec),
  };
}

/** MCP servers in their own containers, offered to the model directly, and the approval gate. */
function mcpConfig(spec: TopologySpec): Record<string, unknown> {
  if (!spec.mcp.servers.length && !spec.mcp.nodeServers.length) return {};
  return {
    // Tool Search (on by default) would hide MCP tools behind `tool_call`; scenarios need the
    // model to see and call `<server>__<tool>` directly.
    tools: { toolSearch: false },
    mcp: {
      servers: Object.fromEntries(
        spec.mcp.servers.map((m) => [m.name, { url: `http://${m.name}:${m.port}/mcp`, transport: "streamable-http", connectionTimeoutMs: 5000 }]),
      ),
    },
    plugins: {
      allow: [APPROVAL_PLUGIN],
      load: { paths: [APPROVAL_PLUGIN_DIR] },
      entries: { [APPROVAL_PLUGIN]: { enabled: true, config: { tools: spec.mcp.approvalTools } } },
    },
  };
}

export function nodeConfig(spec: TopologySpec, alias?: string): Record<string, unknown> {
  const hosted = spec.mcp.nodeServers.filter((m) => m.node === alias);
  return {
    discovery: { mdns: { mode: "off" } },
    update: { checkOnStart: false },
    nodeHost: {
      workerRuns: { enabled: true, capacity: spec.nodes.capacity },
      autoUpdate: { enabled: false },
      browserProxy: { enabled: false },
      ...(hosted.length
        ? { mcp: { servers: Object.fromEntries(hosted.map((m) => [m.name, { url: `http://${m.name}:${m.port}/mcp`, transport: "streamable-http", connectionTimeoutMs: 5000 }])) } }
        : {}),
    },
  };
}
