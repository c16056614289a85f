import { describe, expect, it } from "vitest";
import type { Frame } from "../clients/tap.ts";
import { commandOf, invokeParams, launchOf } from "./node-wire.ts";

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
