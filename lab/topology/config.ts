// OpenClaw configuration for each role, derived from the topology spec. Only keys measured to
// work with the pinned version (../shared FIELD-NOTES) are used; everything that would reach
// outside the lab (update checks, mDNS, SSH pairing verification, control UI) is off.
import type { TopologySpec } from "./spec.ts";

export const MODEL_PROVIDER = "lab";
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
  };
}

export function nodeConfig(spec: TopologySpec): Record<string, unknown> {
  return {
    discovery: { mdns: { mode: "off" } },
    update: { checkOnStart: false },
    nodeHost: {
      workerRuns: { enabled: true, capacity: spec.nodes.capacity },
      autoUpdate: { enabled: false },
      browserProxy: { enabled: false },
    },
  };
}
