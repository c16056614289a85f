import { afterEach, describe, expect, it } from "vitest";
import { isWriteFailure, onLateEscape, onUnownedEscape, raise, withEscapes, type Escape } from "./escapes.ts";
import { sleep } from "./wait.ts";

// These run in vitest's worker with the trap's listeners installed; vitest then leaves
// unhandled errors to them, so what escapes here is seen only by the handlers under test.
const restore: (() => void)[] = [];
afterEach(() => {
  for (const r of restore.splice(0)) r();
});
function collect(kind: "unowned" | "late"): Escape[] {
  const seen: Escape[] = [];
  (kind === "unowned" ? onUnownedEscape : onLateEscape)((e) => void seen.push(e));
  restore.push(() => (kind === "unowned" ? onUnownedEscape : onLateEscape)(() => {}));
  return seen;
}

describe("errors that escape their owner are charged to it", () => {
  it("a rejection nobody awaits and a throw from a timer reach the scope they came from, not another", async () => {
    const a: Escape[] = [];
    const b: Escape[] = [];
    const unowned = collect("unowned");
    const sa = withEscapes("scenario a", (e) => void a.push(e), async () => {
      // The pattern that took a full run down: started now, awaited (never) later.
      void sleep(20).then(() => Promise.reject(new Error("agent.wait failed: TIMEOUT")));
    });
    const sb = withEscapes("scenario b", (e) => void b.push(e), async () => {
      setTimeout(() => {
        throw new Error("thrown from a timer");
      }, 10);
    });
    await Promise.all([sa.result, sb.result]);
    await sleep(80);
    expect(a.map((e) => [e.owner, e.kind, (e.error as Error).message])).toEqual([["scenario a", "unhandled rejection", "agent.wait failed: TIMEOUT"]]);
    expect(b.map((e) => [e.owner, e.kind, (e.error as Error).message])).toEqual([["scenario b", "uncaught exception", "thrown from a timer"]]);
    expect(unowned).toEqual([]);
  });

  it("after close() an escape is late (said, not charged); outside every scope it is the lab's own", async () => {
    const charged: Escape[] = [];
    const late = collect("late");
    const unowned = collect("unowned");
    const s = withEscapes("scenario c", (e) => void charged.push(e), async () => {
      void sleep(30).then(() => Promise.reject(new Error("after the verdict")));
    });
    await s.result;
    s.close();
    setTimeout(() => {
      throw new Error("nobody's");
    }, 5);
    await sleep(80);
    expect(charged).toEqual([]);
    expect(late.map((e) => [e.owner, (e.error as Error).message])).toEqual([["scenario c", "after the verdict"]]);
    expect(unowned.map((e) => [e.owner, (e.error as Error).message])).toEqual([["the lab", "nobody's"]]);
  });

  it("a full disk is nobody's scenario: a write failure escaping from inside one goes to the lab's own handler", async () => {
    const charged: Escape[] = [];
    const unowned = collect("unowned");
    const s = withEscapes("scenario d", (e) => void charged.push(e), async () => {
      raise(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }));
    });
    await s.result;
    await sleep(20);
    expect(charged).toEqual([]);
    expect(unowned.map((e) => [e.owner, (e.error as Error).message])).toEqual([["the lab's evidence", "ENOSPC: no space left on device, write"]]);
    expect(isWriteFailure(Object.assign(new Error("x"), { code: "EACCES" }))).toBe(false);
  });
});
