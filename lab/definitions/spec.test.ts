import { describe, expect, it } from "vitest";
import { nodeConfig } from "../members/node-host.ts";
import { nodeAliases, nodeCapacity, parseTopology, scriptedAliases, tappedAliases, tappedScriptedCount, topologyFromEnv } from "./spec.ts";

describe("topology spec", () => {
  it("gives the standard lab by default", () => {
    const s = parseTopology({});
    expect(s.nodes.count).toBe(2);
    expect(s.openclawVersion).toBe("2026.9.6");
    expect(s.git.enabled).toBe(true);
    expect(nodeAliases(s)).toEqual(["node-1", "node-2"]);
  });

  it("worker slots: one number for every node, or one per node in alias order (the last for the rest)", () => {
    const one = parseTopology({ nodes: { count: 2, capacity: 1 } });
    expect(nodeAliases(one).map((a) => nodeCapacity(one, a))).toEqual([1, 1]);
    const each = parseTopology({ nodes: { count: 3, capacity: [1, 3] } });
    expect(nodeAliases(each).map((a) => nodeCapacity(each, a))).toEqual([1, 3, 3]);
    expect(nodeCapacity(parseTopology({}), "node-1")).toBe(2);
    expect((nodeConfig(each, "node-2").nodeHost as { workerRuns: unknown }).workerRuns).toEqual({ enabled: true, capacity: 3 });
    expect(() => parseTopology({ nodes: { capacity: [1, 9] } })).toThrow(/nodes\.capacity/);
  });

  it("names the field and the value of a bad node count", () => {
    expect(() => parseTopology({ nodes: { count: 12 } })).toThrow(/nodes\.count = 12: .*at most 8/);
    expect(() => topologyFromEnv({ NODES: "two" })).toThrow(/nodes\.count = "two"/);
  });

  it("rejects a version range, naming it", () => {
    expect(() => topologyFromEnv({ OPENCLAW_VERSION: "^2026.9.0" })).toThrow(/openclawVersion = "\^2026\.9\.0": must be an exact version/);
  });

  it("rejects unknown fields and lists the known ones", () => {
    expect(() => parseTopology({ nodes: { cnt: 3 } })).toThrow(/nodes = {"cnt":3}: .*"cnt".*known fields here: count, capacity, prefix, devicePairing/);
  });

  it("reports every bad field at once", () => {
    let msg = "";
    try {
      parseTopology({ nodes: { capacity: 0 }, gateway: { port: 80 } });
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/nodes\.capacity = 0/);
    expect(msg).toMatch(/gateway\.port = 80/);
  });

  it("takes overrides from the environment", () => {
    const s = topologyFromEnv({ NODES: "4", OPENCLAW_VERSION: "2026.9.7", SEED: "42", TOPOLOGY: '{"nodes":{"capacity":1}}' });
    expect(s.nodes).toMatchObject({ count: 4, capacity: 1 });
    expect(s.openclawVersion).toBe("2026.9.7");
    expect(s.seed).toBe(42);
  });

  it("a node-hosted MCP server must name its node", () => {
    expect(() => parseTopology({ mcp: { nodeServers: [{ name: "east", catalog: "north" }] } })).toThrow(/mcp\.nodeServers\.0\.node/);
  });

  it("a node-hosted MCP server's node must exist", () => {
    expect(() => parseTopology({ nodes: { count: 1 }, mcp: { nodeServers: [{ name: "east", catalog: "north", node: "node-2" }] } })).toThrow(
      'mcp.nodeServers.0.node = "node-2": no such node host (this topology has: node-1)',
    );
  });

  it("scripted nodes: none by default; they need taps and a prefix of their own, each refusal naming the field", () => {
    expect(parseTopology({}).scripted).toEqual({ count: 0, prefix: "scripted", paired: false });
    expect(scriptedAliases(parseTopology({ scripted: { count: 2 } }))).toEqual(["scripted-1", "scripted-2"]);
    expect(tappedAliases(parseTopology({ nodes: { count: 1 }, scripted: { count: 1 } }))).toEqual(["node-1", "scripted-1"]);
    expect(() => parseTopology({ scripted: { count: 1 }, tap: { enabled: false } })).toThrow(/scripted\.count = 1: 1 scripted node\(s\) connect through wire taps: set tap\.enabled true/);
    expect(() => parseTopology({ scripted: { count: 1, prefix: "node" } })).toThrow(/scripted\.prefix = "node": must differ from nodes\.prefix/);
    expect(() => parseTopology({ scripted: { count: 1001 } })).toThrow(/scripted\.count = 1001/);
  });

  it("a fleet: up to 1000 scripted nodes, the first `tapped` through taps (all when 4 or fewer), the rest to the gateway directly; paired at bring-up only past OpenClaw's auth limiter", () => {
    const fleet = parseTopology({ nodes: { count: 2 }, scripted: { count: 500, prefix: "fleet" } });
    expect(scriptedAliases(fleet)).toHaveLength(500);
    expect(tappedScriptedCount(fleet)).toBe(0);
    expect(tappedAliases(fleet)).toEqual(["node-1", "node-2"]);
    const some = parseTopology({ nodes: { count: 0 }, scripted: { count: 50, tapped: 2 } });
    expect(tappedAliases(some)).toEqual(["scripted-1", "scripted-2"]);
    expect(tappedScriptedCount(parseTopology({ scripted: { count: 3 } }))).toBe(3);
    // No taps at all: a fleet of any size connects directly; a tapped one is refused by name.
    expect(tappedAliases(parseTopology({ scripted: { count: 200 }, tap: { enabled: false } }))).toEqual([]);
    expect(() => parseTopology({ scripted: { count: 200, tapped: 2 }, tap: { enabled: false } })).toThrow(/scripted\.tapped = 2: 2 scripted node\(s\) connect through wire taps/);
    expect(() => parseTopology({ scripted: { count: 2, tapped: 3 } })).toThrow(/scripted\.tapped = 3: more than scripted\.count \(2\)/);
    // Paired at bring-up past 10 nodes: the limiter would lock the lab's address out; named before anything is built.
    expect(() => parseTopology({ scripted: { count: 50, paired: true } })).toThrow(/gateway\.authRateLimit\.maxAttempts.*need gateway\.authRateLimit\.maxAttempts of at least 50 \(now 10\)/);
    expect(parseTopology({ scripted: { count: 50, paired: true }, gateway: { authRateLimit: { maxAttempts: 100_000 } } }).scripted.paired).toBe(true);
  });

  it("explains malformed TOPOLOGY JSON", () => {
    expect(() => topologyFromEnv({ TOPOLOGY: "{nodes:" })).toThrow(/TOPOLOGY is not valid JSON/);
  });
});
