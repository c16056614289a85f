// The evidence records read as the report and the checks read them: a record is kept as its
// writer wrote it, what is not a record is counted, and the writers that cannot import these
// declarations yet (the kits' savers, lab/kits/mcp.ts and lab/kits/events.ts) write what they
// declare. The servers' own output is parsed in lab/clients/{tap,mcp,model}.test.ts, the gateway
// client's in lab/clients/gateway.test.ts, the fault timeline's in lab/faults/fault.test.ts.
import { describe, expect, it } from "vitest";
import type { Recorded } from "../../kits/events.ts";
import { mcpEvidence, modelEvidence } from "../../kits/mcp.ts";
import type { Lab } from "../../topology/lab.ts";
import { containerEventLine } from "../containers.ts";
import { ContainerEventLine, McpRecord, ModelRequest, RecordedEvent, SavedMcpServers, SavedModelRequests, TimelineEntry, TranscriptsLine, parseJsonLine, parseJsonl, type McpHeldCall, type SameShape } from "./index.ts";

const T = "2026-11-30T06:00:00.000Z";

describe("reading records", () => {
  it("keeps a record as written (its key order, a field the schema does not name) and counts what is not one", () => {
    const text = [
      '{"t":2,"id":"f1","fault":"kill","target":"node-1","step":"inject","ms":1,"newer":true}',
      "",
      '{"id":"f1","fault":"kill","target":"node-1","step":"teleport","t":3,"ms":1}', // no such step
      '{"id":"f1","fault":"kill"', // a cut last line
    ].join("\n");
    const { records, bad } = parseJsonl(text, TimelineEntry);
    expect(bad).toBe(2);
    expect(records).toHaveLength(1);
    expect(records[0]!.line).toBe(1);
    expect(JSON.stringify(records[0]!.value)).toBe('{"t":2,"id":"f1","fault":"kill","target":"node-1","step":"inject","ms":1,"newer":true}');
  });

  it("tells an operator's entry from a tap's record in a lab's transcripts/ folder, and neither from a container event", () => {
    const op = { n: 0, ts: T, t: Date.parse(T), conn: "operator#1", dir: "out", kind: "req", id: "r1", method: "chat.send", frame: { type: "req" } };
    const tap = { kind: "frame", seq: 2, t: 1, conn: "c1", path: "/", dir: "node->gw", opcode: 1, fin: true, len: 2, masked: true, text: "{}", action: "forward" };
    expect(parseJsonLine(JSON.stringify(op), TranscriptsLine)).toEqual(op);
    expect(parseJsonLine(JSON.stringify(tap), TranscriptsLine)).toEqual(tap);
    expect(parseJsonLine(JSON.stringify({ t: 1, time: T, alias: "node-1", container: "abc", action: "start" }), TranscriptsLine)).toBeUndefined();
  });

  it("a container event as lab/evidence/containers.ts writes it is a record", () => {
    const line = containerEventLine({ Type: "container", Action: "die", Actor: { ID: "0123456789abcdef", Attributes: { "fleetlab.alias": "node-1", "fleetlab.kind": "node", exitCode: "137" } }, timeNano: 1796018384253600000 });
    expect(ContainerEventLine.safeParse(line).success).toBe(true);
  });
});

describe("the kits' savers write the records' shapes", () => {
  const record: McpRecord = { seq: 3, time: T, server: "north", kind: "rpc", httpMethod: "POST", sessionId: "s1", rpcMethod: "tools/call", rpcId: 2, tool: "example_echo", args: { text: "hi" } };
  const held: McpHeldCall = { id: "hold-1", tool: "example_echo", args: {}, sessionId: "s1", rpcId: 2, status: "released", heldAt: T, releasedAt: T, cancelledAt: null, cancelReason: null };
  const request: ModelRequest = {
    id: "req-1",
    seq: 1,
    time: T,
    method: "POST",
    path: "/v1/responses",
    model: "m",
    stream: true,
    rule: "echo",
    status: "completed",
    httpStatus: 200,
    endedAt: T,
    events: 4,
    output: [{ type: "function_call", name: "north__example_echo", arguments: '{"text":"hi"}', callId: "c1" }],
    bodyBytes: 10,
    body: { input: [{ type: "function_call_output", call_id: "c0", output: "ok" }] },
    headers: { "user-agent": null, "x-client-request-id": null },
    userText: "hi",
    round: 1,
    toolNames: ["north__example_echo"],
  };
  const lab = {
    mcp: (name: string) =>
      name === "north"
        ? { requests: async () => [record], held: async () => [held], effects: async () => [], sessions: async () => [{ id: "s1", createdAt: T, lastSeenAt: T, sseOpen: false, clientInfo: {} }] }
        : {
            requests: async () => {
              throw new Error("connect ECONNREFUSED");
            },
          },
    model: { requests: async () => [request] },
    spec: { mcp: { nodeServers: [] } },
  } as unknown as Lab;

  it("mcp-servers.json (lab/kits/mcp.ts mcpEvidence), a server that could not be read included", async () => {
    const saved = await mcpEvidence(lab, ["north", "south"]);
    expect(SavedMcpServers.safeParse(saved).error).toBeUndefined();
    expect(SavedMcpServers.parse(saved).south).toEqual({ unreachable: "connect ECONNREFUSED" });
  });

  it("model-requests.json (lab/kits/mcp.ts modelEvidence)", async () => {
    const saved = await modelEvidence(lab);
    expect(SavedModelRequests.safeParse(saved).error).toBeUndefined();
  });

  it("events.json (lab/kits/events.ts Recorded)", () => {
    true satisfies SameShape<RecordedEvent, Recorded>;
    expect(RecordedEvent.safeParse({ t: 1, event: "chat", payload: { state: "final" } } satisfies Recorded).success).toBe(true);
  });
});
