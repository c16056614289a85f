// The worker kits without a lab: a gateway client that answers chat.send, agent.wait (once the
// turn's model request is released), node.list and sessions.dispatch, and a model that holds
// what was armed.
import { describe, expect, it } from "vitest";
import { GatewayError } from "../clients/gateway.ts";
import type { Lab } from "../topology/lab.ts";
import { dispatchedCheck, dispatchOrRefusal, startHeldTurn, startHeldTurns, type DispatchSeen } from "./workers.ts";

interface Fake {
  lab: Lab;
  calls: string[];
}

/** A lab whose turns are held at the model when armed; `dispatch` answers sessions.dispatch. */
function fakeLab(opts: { dispatch?: (params: Record<string, unknown>) => unknown; endAtOnce?: string } = {}): Fake {
  const calls: string[] = [];
  const armed: string[] = [];
  const held: { id: string; userText: string }[] = [];
  const releases = new Map<string, () => void>();
  let runs = 0;
  const request = async (method: string, params: Record<string, unknown>) => {
    calls.push(method);
    if (method === "chat.send") {
      const text = String(params.message);
      const runId = `run-${++runs}`;
      const token = armed.find((t) => text.includes(t));
      const done = new Promise<void>((resolve) => {
        if (!token || text.includes(opts.endAtOnce ?? "\0")) return resolve();
        held.push({ id: `h-${runId}`, userText: text });
        releases.set(`h-${runId}`, resolve);
      });
      releases.set(runId, () => {});
      runIds.set(runId, { done, text });
      return { runId, status: "started" };
    }
    if (method === "agent.wait") {
      const r = runIds.get(String(params.runId))!;
      await r.done;
      return { runId: params.runId, status: "ok", terminalReply: { text: `fleetlab-ok: ${r.text}` } };
    }
    if (method === "node.list") return { ts: 1, nodes: [{ nodeId: "id-node-1", displayName: "node-1", connected: true, paired: true }] };
    if (method === "sessions.dispatch") return opts.dispatch!(params);
    throw new Error(`unexpected ${method}`);
  };
  const runIds = new Map<string, { done: Promise<void>; text: string }>();
  const model = {
    hold: async (o: { match: { contains: string } }) => void (armed.push(o.match.contains), calls.push(`hold ${o.match.contains}`)),
    waitForHeld: async (_ms: number, pred: (h: { id: string; userText: string }) => boolean) => {
      for (let i = 0; i < 200; i++) {
        const h = held.find(pred);
        if (h) return h;
        await new Promise((r) => setTimeout(r, 5));
      }
      throw new Error("no model request was held");
    },
    release: async (id?: string) => {
      calls.push(`release ${id ?? "all"}`);
      for (const [k, r] of releases) if (!id || k === id) r();
      return [];
    },
  };
  return { lab: { operator: { client: { request } }, model } as unknown as Lab, calls };
}

describe("startHeldTurns: a burst of turns, each held at its model call", () => {
  it("arms every hold, sends every turn before any is held, and gives one HeldTurn per turn in order", async () => {
    const { lab, calls } = fakeLab();
    const turns = await startHeldTurns(lab, [
      { key: "a", message: "go tok-a", token: "tok-a" },
      { key: "b", message: "go tok-b", token: "tok-b" },
      { key: "c", message: "go tok-c", token: "tok-c" },
    ]);
    expect(calls.slice(0, 6)).toEqual(["hold tok-a", "hold tok-b", "hold tok-c", "chat.send", "chat.send", "chat.send"]);
    expect(turns.map((t) => t.held.userText)).toEqual(["go tok-a", "go tok-b", "go tok-c"]);
    const b = await turns[1]!.finish();
    expect(b.text).toBe("fleetlab-ok: go tok-b");
    expect(calls).toContain("release h-run-2");
    for (const t of turns) await t.finish();
  });

  it("a turn that ends before it is held releases every hold and throws", async () => {
    const { lab, calls } = fakeLab({ endAtOnce: "quick" });
    await expect(
      startHeldTurns(lab, [
        { key: "a", message: "go tok-a", token: "tok-a" },
        { key: "b", message: "quick tok-b", token: "tok-b" },
      ]),
    ).rejects.toThrow(/ended .* before its model request was held/);
    expect(calls).toContain("release all");
  });

  it("refuses a message without its token and two turns with one token, before sending anything", async () => {
    const { lab, calls } = fakeLab();
    await expect(startHeldTurns(lab, [{ key: "a", message: "go", token: "tok-a" }])).rejects.toThrow(/must contain the token 'tok-a'/);
    await expect(
      startHeldTurns(lab, [
        { key: "a", message: "tok", token: "tok" },
        { key: "b", message: "tok", token: "tok" },
      ]),
    ).rejects.toThrow(/a token of its own/);
    expect(calls).toEqual([]);
  });

  it("startHeldTurn is the burst of one", async () => {
    const { lab } = fakeLab();
    const t = await startHeldTurn(lab, "a", "one tok-1", "tok-1");
    expect(t.held.userText).toBe("one tok-1");
    expect((await t.finish()).text).toBe("fleetlab-ok: one tok-1");
  });
});

describe("dispatchOrRefusal: sessions.dispatch with its refusal as data", () => {
  it("an accepted dispatch gives its placement, to the node's id", async () => {
    let asked: Record<string, unknown> = {};
    const { lab } = fakeLab({ dispatch: (p) => ((asked = p), { ok: true, key: "k", sessionId: "s", placement: { state: "active", generation: 1 } }) });
    const r = await dispatchOrRefusal(lab, "k", "node-1");
    expect(asked).toEqual({ key: "k", deviceId: "id-node-1" });
    expect(r).toMatchObject({ ok: true, placement: { state: "active" } });
    expect(r.ms).toBeGreaterThanOrEqual(0);
  });

  it("the gateway's refusal is data: code, details code, message", async () => {
    const { lab } = fakeLab({
      dispatch: () => {
        throw new GatewayError("sessions.dispatch", "INVALID_REQUEST", "device worker is at capacity (all worker slots in use): id-node-1", { code: "AT_CAPACITY" });
      },
    });
    expect(await dispatchOrRefusal(lab, "k", "auto")).toMatchObject({ ok: false, code: "INVALID_REQUEST", detailsCode: "AT_CAPACITY", message: "device worker is at capacity (all worker slots in use): id-node-1" });
  });

  it("no answer (the client's own codes) and other errors are thrown: the lab could not ask", async () => {
    const closed = fakeLab({
      dispatch: () => {
        throw new GatewayError("sessions.dispatch", "CONNECTION_CLOSED", "socket closed");
      },
    });
    await expect(dispatchOrRefusal(closed.lab, "k", "node-1")).rejects.toThrow(/socket closed/);
    await expect(dispatchOrRefusal(fakeLab().lab, "k", "node-9")).rejects.toThrow(/node-9 is missing from node.list/);
  });
});

describe("dispatchedCheck: every dispatch gave an active placement (and, with onNode, on that node)", () => {
  type H = { d?: DispatchSeen[]; nodeId?: string };
  const ok: DispatchSeen = { alias: "node-1", state: "active", deviceId: "n1" };
  it("active: holds; any other state does not; nothing observed: nothing to judge", () => {
    const c = dispatchedCheck<H>("R-x", (h) => h.d);
    expect(c.judge({ d: [ok] })).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active" }] });
    expect(c.judge({ d: [ok, { alias: "node-2", state: "local" }] })).toEqual({ holds: false, observed: [{ alias: "node-1", state: "active" }, { alias: "node-2", state: "local" }] });
    expect(c.judge({})).toBeUndefined();
    expect(c.expectation).toBe("a dispatch to a paired node host gives an active placement on it");
  });
  it("onNode: the runner must be that node too; its nodeId unknown: nothing to judge", () => {
    const c = dispatchedCheck<H>("R-x", (h) => h.d, { onNode: (h) => h.nodeId, expectation: "on n1" });
    expect(c.judge({ d: [ok], nodeId: "n1" })).toEqual({ holds: true, observed: [{ alias: "node-1", state: "active", onNode: true }] });
    expect(c.judge({ d: [ok], nodeId: "n2" })).toEqual({ holds: false, observed: [{ alias: "node-1", state: "active", onNode: false }] });
    expect(c.judge({ d: [ok] })).toBeUndefined();
    expect(c.expectation).toBe("on n1");
  });
});
