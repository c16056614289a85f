// The opening and closing of a scenario without a lab: a context whose lab has a teardown
// stack, node aliases, taps that say when they are taken, and MCP servers and a model that
// record their resets.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ScenarioContext } from "../scenario.ts";
import { TeardownStack } from "../topology/teardown.ts";
import { mcpScene, nodeScene, nodesScene, scene } from "./scene.ts";

let dir: string;
let calls: string[];

function context(nodes = ["node-1", "node-2"]): ScenarioContext {
  const records = { requests: async () => [], held: async () => [], effects: async () => [], sessions: async () => [] };
  const lab = {
    teardown: new TeardownStack(),
    run: { id: "test-run" },
    nodes: nodes.map((alias) => ({ alias })),
    tap: (alias: string) => (calls.push(`tap ${alias}`), { alias }),
    mcp: (name: string) => ({ ...records, reset: async () => void calls.push(`reset ${name}`) }),
    model: { reset: async () => void calls.push("reset model"), requests: async () => [] },
    spec: { mcp: { nodeServers: [] } },
    operator: { client: { on: () => () => void calls.push("events stopped") } },
  };
  return { lab, file: (rel: string) => path.join(dir, rel), log: (m: string) => void calls.push(`log ${m}`) } as unknown as ScenarioContext;
}

const evidence = () => JSON.parse(fs.readFileSync(path.join(dir, "evidence.json"), "utf8")) as Record<string, unknown>;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-scene-"));
  calls = [];
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("nodeScene", () => {
  it("evidence.json starts with the node; what the scenario left is undone, then atEnd runs, then the evidence is written", async () => {
    const ctx = context();
    await nodeScene(ctx, { evidence: { boundS: 45 }, atEnd: (s) => void (calls.push("atEnd"), (s.evidence.atEnd = true)) }, async ({ alias, evidence, tl }) => {
      expect(alias).toBe("node-1");
      expect(tl).toBeDefined();
      ctx.lab.teardown.defer("heal a fault", async () => void calls.push("healed"));
      evidence.seen = "x";
    });
    expect(calls.filter((c) => !c.startsWith("log"))).toEqual(["healed", "atEnd"]);
    expect(Object.keys(evidence())).toEqual(["node", "boundS", "seen", "atEnd"]);
    expect(evidence()).toMatchObject({ node: "node-1", boundS: 45 });
    expect(fs.existsSync(path.join(dir, "faults.jsonl"))).toBe(true);
  });

  it("writes the evidence and runs atEnd when the body throws, and rethrows", async () => {
    await expect(
      nodeScene(context(), { atEnd: () => void calls.push("atEnd") }, async ({ evidence }) => {
        evidence.before = 1;
        throw new Error("the node did not come back");
      }),
    ).rejects.toThrow("the node did not come back");
    expect(calls).toContain("atEnd");
    expect(evidence()).toEqual({ node: "node-1", before: 1 });
  });

  it("node: n is the n-th node, the last when there are fewer; the tap is taken only when read", async () => {
    await nodeScene(context(), { node: 1 }, async ({ alias }) => void expect(alias).toBe("node-2"));
    await nodeScene(context(["node-1"]), { node: 1 }, async (s) => {
      expect(s.alias).toBe("node-1");
      expect(calls).not.toContain("tap node-1");
      expect(s.tap).toBe(s.tap);
    });
    expect(calls.filter((c) => c.startsWith("tap"))).toEqual(["tap node-1"]);
  });

  it("an evidence entry `node` replaces the alias, in first place", async () => {
    await nodeScene(context(), { faults: false, evidence: { node: { alias: "node-1", slots: 1 }, bounds: {} } }, async () => {});
    expect(evidence()).toEqual({ node: { alias: "node-1", slots: 1 }, bounds: {} });
  });
});

describe("nodesScene", () => {
  it("every node by default: evidence.json starts with their aliases; each tap is taken once, when first asked for", async () => {
    await nodesScene(context(["node-1", "node-2", "node-3"]), { evidence: { boundS: 5 } }, async ({ aliases, tap, tl }) => {
      expect(aliases).toEqual(["node-1", "node-2", "node-3"]);
      expect(tl).toBeDefined();
      expect(calls.filter((c) => c.startsWith("tap"))).toEqual([]);
      expect(tap("node-2")).toBe(tap("node-2"));
      expect(() => tap("node-9")).toThrow(/not one of this scene's nodes/);
    });
    expect(calls.filter((c) => c.startsWith("tap"))).toEqual(["tap node-2"]);
    expect(evidence()).toEqual({ nodes: ["node-1", "node-2", "node-3"], boundS: 5 });
  });

  it("a count takes the first nodes, a list those indexes; more than the lab has fails before the body, naming the count", async () => {
    await nodesScene(context(["node-1", "node-2", "node-3"]), { nodes: 2, faults: false }, async ({ aliases }) => void expect(aliases).toEqual(["node-1", "node-2"]));
    await nodesScene(context(["node-1", "node-2", "node-3"]), { nodes: [2, 0] }, async ({ aliases }) => void expect(aliases).toEqual(["node-3", "node-1"]));
    let ran = false;
    await expect(nodesScene(context(["node-1"]), { nodes: 2 }, async () => void (ran = true))).rejects.toThrow(/has 1 node host\(s\) \(node-1\); node index\(es\) 1 do not exist: raise spec.nodes.count/);
    expect(ran).toBe(false);
  });
});

describe("scene", () => {
  it("faults: false gives no fault timeline and leaves no faults.jsonl", async () => {
    await scene(context(), { faults: false, evidence: { a: 1 } }, async (s) => {
      expect("tl" in s).toBe(false);
    });
    expect(evidence()).toEqual({ a: 1 });
    expect(fs.existsSync(path.join(dir, "faults.jsonl"))).toBe(false);
  });
});

describe("mcpScene", () => {
  it("resets both servers and the model before; after, stops the events, runs atEnd, saves the evidence and resets what it changed", async () => {
    await mcpScene(context(), { reset: ["south"], atEnd: () => void calls.push("atEnd") }, async ({ extra }) => {
      calls.push("body");
      extra.parked = { id: "a1" };
    });
    expect(calls.slice(0, 3).sort()).toEqual(["reset model", "reset north", "reset south"]);
    expect(calls.slice(3, 6)).toEqual(["body", "events stopped", "atEnd"]);
    expect(calls.slice(6).sort()).toEqual(["reset model", "reset south"]);
    for (const f of ["mcp-servers.json", "approval-events.json", "events.json", "model-requests.json", "parked.json"]) expect(fs.existsSync(path.join(dir, f))).toBe(true);
  });

  it("without reset, touches neither the servers nor the model", async () => {
    await mcpScene(context(), {}, async () => {});
    expect(calls).toEqual(["events stopped"]);
  });
});
