import { describe, expect, it } from "vitest";
import { judge } from "../findings/findings.ts";
import { APPROVED_FIRST_ID, AT_MOST_ONCE_ID, argsFromDescription, atMostOnceExpectations, canonical, judgeAtMostOnce, unlessUnread, type AtMostOnceEvidence, type EffectRecord } from "./at-most-once.ts";

// Fabricated evidence in the shapes the MCP servers, the model and the operator transcript record.
const T0 = Date.parse("2026-11-30T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const echo = (token: string, s: number, server = "north"): EffectRecord => ({ server, tool: "example_echo", args: { text: token }, time: at(s) });
const write = (s: number): EffectRecord => ({ server: "south", tool: "write_file", args: { path: "parks.txt", content: "parked" }, time: at(s) });
const base: AtMostOnceEvidence = { effects: [], intents: [], approvals: [], gatedTools: ["south__write_file"], separators: { north: "__", south: "__", east: "_" } };
const verdict = (ev: AtMostOnceEvidence) => atMostOnceExpectations(judgeAtMostOnce(ev)).map((c) => ({ id: c.id, outcome: judge([], { ...c, scenario: "s", version: "2026.9.6" }).outcome, observed: c.observed }));

const clean: AtMostOnceEvidence = {
  ...base,
  effects: [echo("tok-a", 1), echo("tok-b", 2), echo("tok-a", 3, "south"), write(12)],
  intents: [
    { name: "north__example_echo", arguments: '{"text":"tok-a"}', callId: "c1" },
    { name: "north__example_echo", arguments: '{"text":"tok-b"}', callId: "c2" },
    { name: "south__example_echo", arguments: '{"text":"tok-a"}', callId: "c3" },
    { name: "south__write_file", arguments: '{"content":"parked","path":"parks.txt"}', callId: "c4" },
  ],
  approvals: [{ id: "plugin:1", toolName: "south__write_file", args: { path: "parks.txt", content: "parked" }, decision: "allow-once", decidedAt: T0 + 11_000 }],
};

describe("at-most-once effects", () => {
  it("passes on clean evidence: the same tool twice with different tokens, the same arguments on two servers, a gated call after its allow", () => {
    expect(verdict(clean)).toEqual([
      { id: AT_MOST_ONCE_ID, outcome: "pass", observed: undefined },
      { id: APPROVED_FIRST_ID, outcome: "pass", observed: undefined },
    ]);
  });

  it("catches a call that reached its server twice (a retry after a reconnect)", () => {
    const v = verdict({ ...clean, effects: [...clean.effects, echo("tok-b", 7)] });
    expect(v[0]).toMatchObject({ id: AT_MOST_ONCE_ID, outcome: "fail", observed: [{ server: "north", tool: "example_echo", args: { text: "tok-b" }, effects: 2, intents: 1 }] });
  });

  it("two model calls with the same arguments (two call ids) allow two effects, not three", () => {
    const twice = { ...clean, intents: [...clean.intents!, { name: "north__example_echo", arguments: '{"text":"tok-a"}', callId: "c9" }] };
    expect(verdict({ ...twice, effects: [...clean.effects, echo("tok-a", 5)] })[0]!.outcome).toBe("pass");
    expect(verdict({ ...twice, effects: [...clean.effects, echo("tok-a", 5), echo("tok-a", 6)] })[0]).toMatchObject({ outcome: "fail", observed: [{ effects: 3, intents: 2 }] });
  });

  it("without the model's records one effect per tool and arguments is allowed", () => {
    expect(verdict({ ...clean, intents: undefined })[0]!.outcome).toBe("pass");
    expect(verdict({ ...clean, intents: undefined, effects: [...clean.effects, echo("tok-a", 9)] })[0]).toMatchObject({ outcome: "fail", observed: [{ intents: "unknown" }] });
  });

  it("catches a gated call that ran before its approval, and one with no approval at all", () => {
    const early = verdict({ ...clean, effects: [echo("tok-a", 1), echo("tok-b", 2), echo("tok-a", 3, "south"), write(10)] });
    expect(early[1]).toMatchObject({ id: APPROVED_FIRST_ID, outcome: "fail", observed: [{ tool: "write_file", why: "before its allow decision" }] });
    expect(verdict({ ...clean, approvals: [] })[1]).toMatchObject({ outcome: "fail", observed: [{ why: "no allow decision" }] });
    const denied = verdict({ ...clean, approvals: [{ ...clean.approvals[0]!, decision: "deny" }] });
    expect(denied[1]!.outcome).toBe("fail");
  });

  it("one allow-once covers one effect; a second run of the same approved call is caught twice over", () => {
    const v = verdict({ ...clean, effects: [...clean.effects, write(14)] });
    expect(v.map((c) => c.outcome)).toEqual(["fail", "fail"]);
    expect(v[1]!.observed).toEqual([{ server: "south", tool: "write_file", args: { path: "parks.txt", content: "parked" }, why: "its allow-once was used by an earlier effect" }]);
  });

  it("an approval for other arguments does not cover the call", () => {
    const other = verdict({ ...clean, approvals: [{ ...clean.approvals[0]!, args: { path: "other.txt", content: "x" } }] });
    expect(other[1]).toMatchObject({ outcome: "fail", observed: [{ why: "no allow decision" }] });
  });

  it("node-hosted servers are named with one underscore, and a tool an approval was asked for is gated too", () => {
    const ev: AtMostOnceEvidence = { ...base, gatedTools: [], effects: [echo("tok-e", 5, "east")], intents: [{ name: "east_example_echo", arguments: '{"text":"tok-e"}', callId: "c1" }], approvals: [{ id: "p", toolName: "east_example_echo", args: { text: "tok-e" }, decision: "allow-once", decidedAt: T0 + 6000 }] };
    expect(verdict(ev).map((c) => c.outcome)).toEqual(["pass", "fail"]);
  });

  it("claims nothing when no effect reached a server", () => {
    expect(verdict(base)).toEqual([]);
  });

  it("reads the gate plugin's description and keys arguments canonically", () => {
    expect(argsFromDescription("south__write_file", 'Run south__write_file with {"path":"a","content":"b"}')).toEqual({ path: "a", content: "b" });
    expect(argsFromDescription("south__write_file", "something else")).toBeUndefined();
    expect(canonical({ b: 1, a: [{ d: 1, c: 2 }] })).toBe(canonical({ a: [{ c: 2, d: 1 }], b: 1 }));
  });

  describe("a server it could not read", () => {
    const unread = [{ server: "south", reason: "unreachable after the scenario (connect ECONNREFUSED) and no saved log in mcp-servers.json" }];

    it("could not tell: throws with the server and the reason (the runner makes that unknown), instead of passing on the others", () => {
      const expectations = atMostOnceExpectations(judgeAtMostOnce(clean));
      expect(() => unlessUnread(expectations, unread)).toThrow(/could not tell whether tool effects happened at most once: MCP server south could not be read \(unreachable after the scenario \(connect ECONNREFUSED\)/);
    });

    it("a fail in what it could read stands", () => {
      const expectations = atMostOnceExpectations(judgeAtMostOnce({ ...clean, effects: [...clean.effects, echo("tok-b", 7)] }));
      expect(unlessUnread(expectations, unread).map((e) => [e.id, e.holds])).toEqual([[AT_MOST_ONCE_ID, false]]);
    });

    it("every server read: the expectations as judged", () => {
      const expectations = atMostOnceExpectations(judgeAtMostOnce(clean));
      expect(unlessUnread(expectations, [])).toBe(expectations);
    });
  });
});
