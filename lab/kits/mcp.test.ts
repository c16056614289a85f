import { describe, expect, it } from "vitest";
import type { McpRecord } from "../clients/mcp.ts";
import { callsBefore, refusedCleanly, toolCallsThrough, type CallObserved } from "./mcp.ts";

const rec = (seq: number, rpcMethod: string, tool?: string): McpRecord => ({ seq, time: `2026-12-01T10:00:0${seq}.000Z`, kind: "rpc", rpcMethod, tool }) as McpRecord;

describe("toolCallsThrough", () => {
  const log = [rec(1, "tools/list"), rec(2, "tools/call", "write_file"), rec(3, "tools/call", "example_echo"), rec(4, "tools/call", "write_file")];

  it("keeps the tools/call records at or before the position read before an answer", () => {
    expect(toolCallsThrough(log, 3).map((r) => r.seq)).toEqual([2, 3]);
    expect(toolCallsThrough(log, 3, "write_file").map((r) => r.seq)).toEqual([2]);
  });

  it("none when the position came before every call", () => {
    expect(toolCallsThrough(log, 1)).toEqual([]);
  });
});

describe("calls before the one that works", () => {
  const refused: CallObserved = { run: "ok", serverCalls: 0, resultIsError: true, result: 'bundle-mcp server "north" is not connected' };
  const worked: CallObserved = { run: "ok", serverCalls: 1, resultIsError: false, result: "north echoed: later-2" };

  it("lists every call before the success with its answer, and judges each", () => {
    const before = callsBefore(
      [
        { text: "later-1", observed: refused },
        { text: "later-2", observed: worked },
      ],
      true,
    );
    expect(before).toEqual([{ text: "later-1", run: "ok", serverCalls: 0, resultIsError: true, answer: 'bundle-mcp server "north" is not connected' }]);
    expect(before.every(refusedCleanly)).toBe(true);
  });

  it("none before a first call that works", () => {
    expect(callsBefore([{ text: "later-1", observed: worked }], true)).toEqual([]);
  });

  it("every call when none worked", () => {
    expect(callsBefore([{ text: "later-1", observed: refused }], false)).toHaveLength(1);
  });

  it("a call that reached the server, or did not end, is no clean refusal", () => {
    expect(refusedCleanly({ run: "ok", serverCalls: 1, resultIsError: true })).toBe(false);
    expect(refusedCleanly({ run: "timeout", serverCalls: 0, resultIsError: null })).toBe(false);
    expect(refusedCleanly({ run: "ok", serverCalls: 0, resultIsError: false })).toBe(false);
  });
});
