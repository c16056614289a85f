// Lab-wide finding records: what the evidence checks (lab/checks) judge against, beside each
// scenario's own records. Same format and matching as a scenario's findings (lab/findings).
import type { FindingRecord } from "../findings/findings.ts";
import { excerptPath } from "../findings/excerpt.ts";

// Protocol drift (lab/checks/protocol.ts): frames of the gateway under test carrying fields that
// OpenClaw's own published schema (@openclaw/gateway-protocol, the nearest installed version)
// forbids with additionalProperties:false. Kind "differs-from-reference": the reference is
// OpenClaw's published contract, and a newer gateway adding fields is expected, not a shortfall
// a user meets; but a client validating strictly with the published package (as OpenClaw's own
// qa-lab does) would reject these frames, so each drifted path is a record of its own and a new
// one fails until it is looked at. Id and signature are what protocolExpectations() produces.
const drift = (frame: string, path: string): FindingRecord => ({
  id: `F-protocol-drift ${frame} ${path}`,
  expectation: `${frame} frames carry only what OpenClaw's published protocol schema for them allows`,
  signature: { frame, path, rule: "additionalProperties", schema: "2026.9.1" },
  versions: ["2026.9.6"],
  kind: "differs-from-reference",
  // The frames that show it, trimmed (fleetlab excerpt): hello-ok of operator and node connects,
  // agent events during turns, node.invoke.request to a node-hosted MCP server.
  evidence: excerptPath(`F-protocol-drift ${frame} ${path}`),
});

export const labFindings: FindingRecord[] = [
  drift("res connect", "auth.method"),
  drift("res connect", "snapshot.health.eventLoop.cpuBreakdown"),
  // Only when a client that sent a clientId is present at connect time (seen after a gateway
  // restart, when the node hosts are back before the operator: gateway-restart, run
  // 20261130-110736-1eb1); most connects carry no such presence entry, so most runs do not show it.
  drift("res connect", "snapshot.presence[].clientId"),
  // In the operator's reconnect after a gateway restart in a lab without node hosts
  // (repro-137355, run 20261130-123958-ab62); not in the standard topology's connects.
  drift("res connect", "controlUiLinkReaders"),
  drift("event agent", "agentId"),
  drift("event agent", "lane"),
  drift("event agent", "sessionId"),
  drift("event agent", "sessionKey"),
  drift("event node.invoke.request", "sessionKey"),
  // Worker environments listed by environments.list (scenarios/parity/pair-remove.ts, run 20261130-152637-acd8).
  drift("res environments.list", "environments[].worker.profileId"),
  // The same field in environments.destroy's answer (repro-137088, run 20261202-032755-5945).
  drift("res environments.destroy", "worker.profileId"),
];
