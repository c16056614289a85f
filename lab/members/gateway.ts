// The OpenClaw gateway: `openclaw gateway run --bind lan` with token auth, its state on a
// volume, configured from the topology spec (the scripted model as its provider, the MCP
// servers, the approval plugin). Ready when /readyz answers 200 (10-12 s on an idle machine,
// 20 s beside 2 node hosts, 48 s beside 8 on 2 cores).
//
// Only configuration keys measured to work with the pinned version (../shared FIELD-NOTES) are
// used; everything that would reach outside the lab (update checks, mDNS, SSH pairing
// verification, control UI) is off.
import path from "node:path";
import { fitConfig } from "../engine/capabilities.ts";
import { FIXTURES } from "../core/paths.ts";
import type { TopologySpec } from "../definitions/spec.ts";
import { OpenclawContainer, type LabContext, type LabMembers } from "./member.ts";
import { HttpOnLabNetwork } from "./wait-http.ts";

export const MODEL_PROVIDER = "lab";
export const MODEL_ID = "scripted";
export const APPROVAL_PLUGIN = "fleetlab-approval-gate";
/** Where the approval plugin is copied inside the gateway container. */
export const APPROVAL_PLUGIN_DIR = `/etc/fleetlab/plugins/${APPROVAL_PLUGIN}`;
/**
 * The host tool policy file (spec `gateway.toolPolicy`): root-owned, outside the gateway's state
 * (/home/lab/.openclaw, where its config lives) and the agent's workspace, admitted by
 * OPENCLAW_INCLUDE_ROOTS (OpenClaw refuses `$include` paths outside the config directory
 * otherwise; docs/gateway/config-secrets-env.md).
 */
export const TOOL_POLICY_DIR = "/etc/fleetlab/policy";
export const TOOL_POLICY_FILE = `${TOOL_POLICY_DIR}/tool-policy.json`;
/** The gateway's config file and the agent's workspace inside its container (docker/openclaw). */
export const GATEWAY_CONFIG_PATH = "/home/lab/.openclaw/openclaw.json";
export const AGENT_WORKSPACE = "/home/lab/workspace";

const READY_PATH = "/readyz";
export const READY_TIMEOUT_MS = 90_000;

export class GatewayContainer extends OpenclawContainer {
  constructor(lab: LabContext) {
    const spec = lab.spec;
    // Without the optional keys this version does not know (lab/engine/capabilities.ts).
    super(lab, "gateway", spec.gateway.alias, fitConfig(gatewayConfig(spec, lab.network.subnet), lab.capabilities.unknownConfig?.gateway));
    this.withEnvironment({ FLEETLAB_ROLE: "gateway", GATEWAY_PORT: String(spec.gateway.port), OPENCLAW_GATEWAY_TOKEN: spec.gateway.token })
      .withCopyDirectoriesToContainer([{ source: path.join(FIXTURES, "plugins", APPROVAL_PLUGIN), target: APPROVAL_PLUGIN_DIR }])
      .withWaitStrategy(this.httpReady(spec.gateway.port, READY_PATH).withStartupTimeout(READY_TIMEOUT_MS));
    if (spec.gateway.toolPolicy) {
      this.withEnvironment({ OPENCLAW_INCLUDE_ROOTS: TOOL_POLICY_DIR }).withCopyContentToContainer([
        { content: toolPolicyBytes(spec.gateway.toolPolicy), target: TOOL_POLICY_FILE, mode: 0o644 },
      ]);
    }
  }
}

/** /readyz of a gateway already running (after a restart), the same wait its start used. */
export function gatewayReadiness(network: string, spec: TopologySpec): HttpOnLabNetwork {
  return new HttpOnLabNetwork({ network, port: spec.gateway.port, path: READY_PATH, what: `${spec.gateway.alias} ${READY_PATH}` });
}

/** The bytes of a tool policy file as the lab writes them (the gateway reads JSON5, so JSON is fine). */
export function toolPolicyBytes(policy: Record<string, unknown>): string {
  return `${JSON.stringify(policy)}\n`;
}

/** WebSocket URL of the gateway as the host reaches it (container IP on the internal network). */
export function gatewayUrl(lab: LabMembers): string {
  return `ws://${lab.member(lab.spec.gateway.alias).ip}:${lab.spec.gateway.port}`;
}

/** The gateway's /readyz as the host reaches it. */
export function gatewayReadyUrl(lab: LabMembers): string {
  return `http://${lab.member(lab.spec.gateway.alias).ip}:${lab.spec.gateway.port}${READY_PATH}`;
}

export function gatewayConfig(spec: TopologySpec, labSubnet?: string): Record<string, unknown> {
  const pairing: Record<string, unknown> = { sshVerify: false };
  if (spec.nodes.devicePairing === "subnet" && labSubnet) pairing.autoApproveCidrs = [labSubnet];
  return {
    gateway: {
      mode: "local",
      bind: "lan",
      port: spec.gateway.port,
      auth: { mode: "token", token: spec.gateway.token, ...(spec.gateway.authRateLimit ? { rateLimit: spec.gateway.authRateLimit } : {}) },
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
    agents: { defaults: { workspace: AGENT_WORKSPACE, model: { primary: `${MODEL_PROVIDER}/${MODEL_ID}` } } },
    ...withToolPolicy(spec, mcpConfig(spec)),
  };
}

/** With spec `gateway.toolPolicy`: the `tools` section comes from the policy file, the lab's own tools keys beside it. */
function withToolPolicy(spec: TopologySpec, config: Record<string, unknown>): Record<string, unknown> {
  if (!spec.gateway.toolPolicy) return config;
  // Sibling keys are merged over the included file (docs/gateway/config-secrets-env.md).
  return { ...config, tools: { $include: TOOL_POLICY_FILE, ...(config.tools as Record<string, unknown> | undefined) } };
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
