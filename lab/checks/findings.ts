// Lab-wide finding records: what the evidence checks (lab/checks) judge against, beside each
// scenario's own records. Same format and matching as a scenario's findings (lab/findings).
import type { FindingRecord } from "../findings/findings.ts";

// Protocol drift (lab/checks/protocol.ts): frames of the gateway under test carrying fields that
// OpenClaw's own published schema (@openclaw/gateway-protocol, the nearest installed version)
// forbids with additionalProperties:false. Kind "differs-from-reference": the reference is
// OpenClaw's published contract, and a newer gateway adding fields is expected, not a shortfall
// a user meets; but a client validating strictly with the published package (as OpenClaw's own
// qa-lab does) would reject these frames, so each drifted path is a record of its own and a new
// one fails until it is looked at. Id and signature are what protocolExpectations() produces.
const drift = (frame: string, path: string, evidence: string): FindingRecord => ({
  id: `F-protocol-drift ${frame} ${path}`,
  expectation: `${frame} frames carry only what OpenClaw's published protocol schema for them allows`,
  signature: { frame, path, rule: "additionalProperties", schema: "2026.9.1" },
  versions: ["2026.9.6"],
  kind: "differs-from-reference",
  evidence,
});
const HELLO = "hello-ok (operator and node connects): run 20261130-073317-27d1, shared-lab/transcripts/operator.jsonl and tap-node-*.jsonl";
const AGENT = "agent events during turns: run 20261130-073317-27d1, shared-lab/transcripts/operator.jsonl";

export const labFindings: FindingRecord[] = [
  drift("res connect", "auth.method", HELLO),
  drift("res connect", "snapshot.health.eventLoop.cpuBreakdown", HELLO),
  drift("event agent", "agentId", AGENT),
  drift("event agent", "lane", AGENT),
  drift("event agent", "sessionId", AGENT),
  drift("event agent", "sessionKey", AGENT),
  drift("event node.invoke.request", "sessionKey", "node.invoke.request to a node-hosted MCP server: run 20261130-083457-2e5c, scenarios/mcp-node-hosted/protocol.json"),
];
