import { describe, expect, it } from "vitest";
import { answersRefused, invokesOnWire, percentiles, refusedBy } from "./fleet.ts";

describe("the fleet kit's figures", () => {
  it("percentiles by nearest rank, with a one-line text; an empty list reads zeros", () => {
    const p = percentiles(Array.from({ length: 100 }, (_, i) => i + 1));
    expect([p.p50, p.p95, p.p99, p.max]).toEqual([50, 95, 99, 100]);
    expect(p.text).toBe("n=100 p50 50 ms, p95 95 ms, p99 99 ms, max 100 ms");
    expect(percentiles([]).p95).toBe(0);
  });

  it("connects counted: admitted, and each refusal by its details code, else its code", () => {
    expect(refusedBy([{ admitted: true, ms: 1 }, { admitted: false, ms: 2, code: "NOT_PAIRED", detailsCode: "PAIRING_REQUIRED", message: "" }, { admitted: false, ms: 2, code: "HANDSHAKE_FAILED", message: "503" }])).toEqual({ admitted: 1, PAIRING_REQUIRED: 1, HANDSHAKE_FAILED: 1 });
  });
});

describe("the fleet's invokes as the wire shows them", () => {
  const t = (n: number, x: Record<string, unknown>) => ({ n, t: n, ...x });
  it("each invoke the operator sent in the window, its answer and the gateway's error; answers outside the window left out", () => {
    const client = {
      transcript: () => [
        t(1, { dir: "out", kind: "req", method: "node.invoke", id: "a", frame: { params: { nodeId: "n1" } } }),
        t(2, { dir: "out", kind: "req", method: "node.invoke", id: "b", frame: { params: { nodeId: "n2" } } }),
        t(3, { dir: "in", kind: "res", method: "node.invoke", id: "a", ok: true, frame: {} }),
        t(4, { dir: "in", kind: "res", method: "node.invoke", id: "b", ok: false, frame: { error: { code: "UNAVAILABLE", message: "busy" } } }),
        t(9, { dir: "out", kind: "req", method: "node.invoke", id: "c", frame: { params: { nodeId: "n3" } } }),
      ],
    } as never;
    expect(invokesOnWire(client, 0, 5)).toEqual([
      { id: "a", nodeId: "n1", sent: 1, answered: 3 },
      { id: "b", nodeId: "n2", sent: 2, answered: 4, error: "UNAVAILABLE: busy" },
    ]);
  });

  it("the nodes' answers the gateway refused, counted by code and details, and which nodes", () => {
    const conn = (entries: unknown[]) => ({ transcript: () => entries });
    const refused = t(5, { dir: "in", kind: "res", method: "node.invoke.result", ok: false, frame: { error: { code: "UNAVAILABLE", message: "node pairing changed before request dispatch", details: { code: "PAIRING_CHANGED" } } } });
    const nodes = [
      { nodeId: "n1", connections: [conn([refused])] },
      { nodeId: "n2", connections: [conn([t(5, { dir: "in", kind: "res", method: "node.invoke.result", ok: true, frame: {} })])] },
    ] as never;
    const r = answersRefused(nodes, 0);
    expect(r.counts).toEqual({ "UNAVAILABLE: node pairing changed before request dispatch (PAIRING_CHANGED)": 1 });
    expect([...r.nodeIds]).toEqual(["n1"]);
    expect(answersRefused(nodes, 6).nodeIds.size).toBe(0);
  });
});
