import { describe, expect, it } from "vitest";
import scenario, { type Observed } from "./mcp-server-lost.ts";
import { deriveChecks, emptyHistory, judgeHistory } from "../lab/judge/history.ts";
import type { CallObserved } from "../lab/kits/mcp.ts";

const NOT_CONNECTED = 'bundle-mcp server "north" is not connected';
const refused: CallObserved = { run: "ok", serverCalls: 0, resultIsError: true, result: NOT_CONNECTED };
const echoed = (text: string): CallObserved => ({ run: "ok", serverCalls: 1, resultIsError: false, result: `north echoed: ${text}` });
/** What 2026.9.6 showed: the lost call failed but the run ended ok; the next call refused without reaching north. */
const lostSeen = { run: "ok", toolItems: ["failed"], toolResultIsError: true };
const judged = (o: Observed) => Object.fromEntries(deriveChecks(scenario.checks!, { ...o }, true).checks.map((c) => [c.id, c]));
const history = (o: Observed) => ({ ...emptyHistory("mcp-server-lost", "2026.9.6", { own: [], labWide: [] }), bodyReturned: true, observations: { ...o } });

describe("mcp-server-lost's checks over what its body observed", () => {
  it("turn-error: the run ends with an error: holds; ended ok: short, with the bound", () => {
    expect(judged({ lost: { run: "error", toolItems: ["failed"], toolResultIsError: true } })["R-mcp-server-lost-turn-error"]).toEqual({
      id: "R-mcp-server-lost-turn-error",
      expectation: "an MCP server container killed during a call: the turn ends with an error",
      holds: true,
      kind: "differs-from-reference",
      observed: { within_s: 120, run: "error", toolItems: ["failed"], toolResultIsError: true },
    });
    expect(judged({ lost: lostSeen })["R-mcp-server-lost-turn-error"]!.holds).toBe(false);
    expect(judged({ lost: lostSeen })["R-mcp-server-lost-turn-error"]!.observed).toEqual({ within_s: 120, run: "ok", toolItems: ["failed"], toolResultIsError: true });
  });

  it("next-call: north's echo of 'back', one call at north: holds; refused without reaching north: short", () => {
    expect(judged({ next: echoed("back") })["R-mcp-server-lost-next-call"]).toEqual({
      id: "R-mcp-server-lost-next-call",
      expectation: "after the server is back, the next call works",
      holds: true,
      kind: "differs-from-reference",
      observed: { after_s_at_least: 6, serverInitialize_s: 1.5, within_s: 90, run: "ok", serverCalls: 1, resultIsError: false, result: "north echoed: back" },
    });
    expect(judged({ next: refused })["R-mcp-server-lost-next-call"]!.holds).toBe(false);
    expect(judged({ next: refused })["R-mcp-server-lost-next-call"]!.observed).toEqual({ after_s_at_least: 6, serverInitialize_s: 1.5, within_s: 90, run: "ok", serverCalls: 0, resultIsError: true, result: NOT_CONNECTED });
    expect(judged({ next: echoed("other") })["R-mcp-server-lost-next-call"]!.holds).toBe(false);
  });

  it("later-call: clean refusals before the call that works: holds, each refusal listed", () => {
    const later = [
      { text: "later-1", observed: refused },
      { text: "later-2", observed: echoed("later-2") },
    ];
    expect(judged({ later })["R-mcp-server-lost-later-call"]).toEqual({
      id: "R-mcp-server-lost-later-call",
      expectation: "once the gateway has reconnected to the restarted server, calls work again within 30 s (a call before the one that works is refused cleanly: an error result, nothing reaching the server)",
      holds: true,
      observed: {
        within_s: 30,
        attempts: 2,
        refusalsBefore: 1,
        before: [{ text: "later-1", run: "ok", serverCalls: 0, resultIsError: true, answer: NOT_CONNECTED }],
        last: echoed("later-2"),
      },
    });
  });

  it("later-call: a call before the one that works reached north and failed there, or none worked: short", () => {
    const reached: CallObserved = { run: "ok", serverCalls: 1, resultIsError: true, result: "boom" };
    const c = judged({ later: [{ text: "later-1", observed: reached }, { text: "later-2", observed: echoed("later-2") }] })["R-mcp-server-lost-later-call"]!;
    expect(c.holds).toBe(false);
    expect(c.observed).toEqual({ within_s: 30, attempts: 2, refusalsBefore: 1, before: [{ text: "later-1", run: "ok", serverCalls: 1, resultIsError: true, answer: "boom" }], last: echoed("later-2") });
    expect(judged({ later: [{ text: "later-1", observed: refused }, { text: "later-2", observed: refused }] })["R-mcp-server-lost-later-call"]).toMatchObject({
      holds: false,
      observed: { attempts: 2, refusalsBefore: 2, last: refused },
    });
  });

  it("the registered signatures of the lost turn and the next call read known-finding", () => {
    const j = judgeHistory(history({ lost: lostSeen, next: refused, later: [{ text: "later-1", observed: echoed("later-1") }] }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding R-mcp-server-lost-turn-error, known-finding R-mcp-server-lost-next-call"]);
  });

  it("a body that returned before the later calls: unknown", () => {
    expect(judgeHistory(history({ lost: lostSeen, next: refused }), scenario, []).verdict).toBe("unknown");
  });
});
