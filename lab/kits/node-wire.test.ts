import { describe, expect, it } from "vitest";
import type { Frame } from "../clients/tap.ts";
import { answerOf, commandOf, inventoryIn, invokePayload, invokeParams, launchIdentity, launchOf, refusedConnectsIn } from "./node-wire.ts";
import type { HttpExchange } from "../clients/tap.ts";

// A node.invoke.request as the tap records it (gw->node, the command's params as a JSON string).
const invoke = (seq: number, command: string, payload: Record<string, unknown>, text?: string): Frame => ({
  kind: "frame",
  seq,
  t: 1_000 + seq,
  conn: "c1",
  path: "/",
  dir: "gw->node",
  opcode: 1,
  fin: true,
  len: 100,
  masked: false,
  action: "forward",
  type: "event",
  event: "node.invoke.request",
  command,
  invokeId: `inv-${seq}`,
  text: text ?? JSON.stringify({ type: "event", event: "node.invoke.request", payload: { command, ...payload } }),
});

const launchParams = {
  launchId: "launch-1",
  placementGeneration: 3,
  descriptor: { admission: { environmentId: "worker:e1", sessionId: "s1", ownerEpoch: 7 }, assignment: { runId: "run-1" } },
};

describe("invokeParams", () => {
  it("parses the payload's paramsJSON", () => {
    expect(invokeParams(invoke(1, "worker.cancel.v1", { paramsJSON: JSON.stringify({ launchId: "l1" }) }))).toEqual({ launchId: "l1" });
  });
  it("takes params sent as an object", () => {
    expect(invokeParams(invoke(1, "mcp.tools.call.v1", { params: { server: "east", tool: "echo" } }))).toEqual({ server: "east", tool: "echo" });
  });
  it("is undefined for a frame cut short, or one without params", () => {
    expect(invokeParams(invoke(1, "worker.launch.v1", {}, '{"type":"event","payload":{"paramsJSON":"{\\"launch'))).toBeUndefined();
    expect(invokeParams(invoke(1, "worker.status.v1", {}))).toBeUndefined();
    expect(invokeParams({ ...invoke(1, "worker.status.v1", {}), text: undefined })).toBeUndefined();
  });
});

describe("commandOf", () => {
  it("keeps the command, its invoke id, the tap's action and the params", () => {
    const f = invoke(5, "worker.environment.stop.v1", { paramsJSON: JSON.stringify({ environmentId: "worker:e1" }) });
    expect(commandOf(f)).toEqual({ seq: 5, t: 1_005, command: "worker.environment.stop.v1", invokeId: "inv-5", action: "forward", params: { environmentId: "worker:e1" } });
  });
  it("leaves params out when the frame was cut short", () => {
    expect("params" in commandOf(invoke(5, "worker.cancel.v1", {}, "{cut"))).toBe(false);
  });
});

describe("launchOf", () => {
  it("reads the ids of the launch's descriptor", () => {
    expect(launchOf(invoke(9, "worker.launch.v1", { paramsJSON: JSON.stringify(launchParams) }))).toEqual({
      seq: 9,
      t: 1_009,
      launchId: "launch-1",
      runId: "run-1",
      environmentId: "worker:e1",
      sessionId: "s1",
      ownerEpoch: 7,
      placementGeneration: 3,
    });
  });
  it("leaves the ids unknown when the frame was cut short", () => {
    expect(JSON.stringify(launchOf(invoke(9, "worker.launch.v1", {}, "{cut")))).toBe('{"seq":9,"t":1009}');
  });
});

// The node's node.invoke.result as the tap records it (node->gw).
const result = (seq: number, params: Record<string, unknown>, text?: string): Frame => ({
  kind: "frame",
  seq,
  t: 2_000 + seq,
  conn: "c1",
  path: "/",
  dir: "node->gw",
  opcode: 1,
  fin: true,
  len: 100,
  masked: true,
  action: "forward",
  type: "req",
  method: "node.invoke.result",
  invokeId: String(params.id),
  text: text ?? JSON.stringify({ type: "req", id: `r${seq}`, method: "node.invoke.result", params }),
});

const identity = { launchId: "l1", planHash: "a".repeat(64), environmentId: "worker:e1", sessionId: "s1", ownerEpoch: 2, placementGeneration: 1, runId: "run-1" };

describe("answerOf", () => {
  it("parses payloadJSON, keeps ok and error", () => {
    expect(answerOf(result(3, { id: "i", nodeId: "n", ok: true, payloadJSON: JSON.stringify({ ...identity, state: "running" }) }))).toEqual({ seq: 3, t: 2_003, ok: true, payload: { ...identity, state: "running" }, error: null });
    expect(answerOf(result(4, { id: "i", nodeId: "n", ok: false, error: { code: "INVALID_REQUEST", message: "stale" } }))).toMatchObject({ ok: false, payload: null, error: { code: "INVALID_REQUEST" } });
  });
  it("an answer with no payload (a cancel that found nothing to cancel) reads payload null, not a receipt", () => {
    expect(answerOf(result(5, { id: "i", nodeId: "n", ok: true, payloadJSON: "null" })).payload).toBeNull();
    expect(answerOf(result(6, { id: "i", nodeId: "n", ok: true })).payload).toBeNull();
  });
  it("a frame cut short leaves every field unknown", () => {
    expect(answerOf(result(7, { id: "i" }, '{"type":"req","params":{"ok":tr'))).toEqual({ seq: 7, t: 2_007, ok: undefined, payload: null, error: null });
  });
});

describe("launchIdentity", () => {
  it("takes the seven identity fields of a receipt, and nothing else", () => {
    expect(launchIdentity({ ...identity, state: "running", extra: 1 })).toEqual(identity);
  });
  it("is undefined when a field is missing (a cancel without planHash would be refused for its shape, not its epoch)", () => {
    const { planHash: _, ...partial } = identity;
    expect(launchIdentity(partial)).toBeUndefined();
    expect(launchIdentity(null)).toBeUndefined();
  });
});

describe("refusedConnectsIn", () => {
  const res = (seq: number, ok: boolean, extra: Partial<Frame> = {}): Frame => ({ kind: "frame", seq, t: seq, conn: "c1", path: "/", dir: "gw->node", opcode: 1, fin: true, len: 10, masked: false, action: "forward", type: "res", replyTo: "connect", ok, ...extra });
  const upgrade = (seq: number, status: number | null): HttpExchange => ({ kind: "http", seq, t: seq, conn: "c2", method: "GET", path: "/", status, reqBytes: 0, resBytes: 0, durationMs: 1, upgrade: "websocket" });
  it("takes refused connect answers and upgrades answered with an error, in order; not admitted connects, other paths, or other answers", () => {
    const frames = [
      res(1, true),
      res(2, false, { errorCode: "NOT_PAIRED", errorDetailsCode: "PAIRING_REQUIRED" }),
      res(3, false, { replyTo: "node.event", errorCode: "UNAVAILABLE" }),
      res(4, false, { path: "/__openclaw__/worker", errorCode: "X" }),
    ];
    expect(refusedConnectsIn(frames, [upgrade(5, 502), upgrade(6, 101), upgrade(7, null)])).toEqual([
      { seq: 2, t: 2, conn: "c1", how: "connect", code: "NOT_PAIRED", detailsCode: "PAIRING_REQUIRED" },
      { seq: 5, t: 5, conn: "c2", how: "upgrade", status: 502 },
    ]);
  });
});

describe("invokePayload", () => {
  it("an operator's answered node.invoke: its payload, else its payloadJSON parsed, else nothing", () => {
    expect(invokePayload({ ok: true, payload: { a: 1 }, payloadJSON: '{"a":2}' })).toEqual({ a: 1 });
    expect(invokePayload({ ok: true, payloadJSON: '{"a":2}' })).toEqual({ a: 2 });
    expect(invokePayload({ ok: true })).toBeUndefined();
  });
});

describe("inventoryIn: the node's runner inventory updates with their tap times", () => {
  const base = { kind: "frame", conn: "c1", path: "/", opcode: 1, fin: true, len: 100, masked: false, action: "forward" } as const;
  const req = (seq: number, id: string, params: unknown, text?: string): Frame => ({ ...base, seq, t: 5_000 + seq, dir: "node->gw", type: "req", id, method: "node.runnerInventory.update", text: text ?? JSON.stringify({ type: "req", id, method: "node.runnerInventory.update", params }) });
  const res = (seq: number, id: string, ok: boolean, errorCode?: string): Frame => ({ ...base, seq, t: 5_000 + seq, dir: "gw->node", type: "res", id, ok, ...(errorCode ? { errorCode } : {}) });

  it("each update with its tap time, the answer's and its fields; an unanswered one has no ok", () => {
    const frames = [req(1, "a", { workerHost: { slots: 1 }, protocolFeatures: ["x"] }), res(2, "a", true), req(3, "b", { workerHost: { slots: 1 } }), res(4, "b", false, "INVALID_REQUEST"), req(5, "c", {})];
    expect(inventoryIn(frames)).toEqual([
      { seq: 1, t: 5_001, conn: "c1", ok: true, answeredT: 5_002, errorCode: undefined, errorDetailsCode: undefined, workerHost: { slots: 1 }, protocolFeatures: ["x"] },
      { seq: 3, t: 5_003, conn: "c1", ok: false, answeredT: 5_004, errorCode: "INVALID_REQUEST", errorDetailsCode: undefined, workerHost: { slots: 1 }, protocolFeatures: undefined },
      { seq: 5, t: 5_005, conn: "c1", ok: undefined, errorCode: undefined, errorDetailsCode: undefined, workerHost: undefined, protocolFeatures: undefined },
    ]);
  });

  it("a frame cut short keeps its time; its fields stay unknown", () => {
    expect(inventoryIn([req(7, "d", {}, '{"type":"req","params":{"workerHo')])).toMatchObject([{ seq: 7, t: 5_007, ok: undefined, workerHost: undefined }]);
  });
});
