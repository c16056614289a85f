// fleet-real-nodes' premise and checks over hand-made histories: no Docker, no gateway.
import { describe, expect, it } from "vitest";
import { asRecorded, judgeHistory, type Observations, type ScenarioHistory } from "../../lab/judge/history.ts";
import type { TurnSeen } from "../../lab/kits/proof.ts";
import scenario, { type Observed } from "./fleet-real-nodes.ts";
import { checkOf as checkOfScenario, historyOf, premiseOf as premiseOfScenario } from "../../lab/testing/histories.ts";

const obs = (o: Observed): Observations => asRecorded(o) as Observations;
const hist = (o: Observed): ScenarioHistory => historyOf(scenario, obs(o));
const checkOf = (id: string, o: Observed) => checkOfScenario(scenario, id, obs(o));
const premiseOf = (id: string, o: Observed) => premiseOfScenario(scenario, id, obs(o));

const OVERLOADED = "UNAVAILABLE: WorkerTaskError: worker task capacity reached: code=overloaded";
const windows = [
  { alias: "node-1", from: 10_000, to: 20_000 },
  { alias: "node-2", from: 30_000, to: 40_000 },
];
type Invoke = NonNullable<Observed["load"]>["invokes"][number];
/** The load through a window: an invoke every 100 ms, 80 ms each, the first begun 50 ms before the window. */
const through = (w: { from: number }): Invoke[] => Array.from({ length: 100 }, (_, k) => ({ start: w.from - 50 + k * 100, end: w.from + 30 + k * 100, outcome: "routed" as const }));
/** A turn proven on its node: the marker's reply, and worker.launch.v1 for its placement on the node's tap. */
const proven = (alias: string): TurnSeen => ({
  alias,
  marker: { nonce: "n-1", reply: "fleetlab-ok: read returned: marker n-1", environmentId: "env-1" },
  reply: "fleetlab-ok: read returned: marker n-1",
  launches: [{ seq: 7, t: 1, conn: "c1", launchId: "l-1", environmentId: "env-1" }],
});

/** Both real nodes' sessions placed and their turns with the fleet quiet run on them, in the body's order. */
const quietTurns = (): NonNullable<Observed["quietTurns"]> =>
  ["node-1", "node-2"].flatMap((alias) => (["warm-up", "baseline"] as const).map((what) => ({ alias, what, seen: proven(alias) })));

/** Both turns served under a busy fleet of 10, the load routed, the operator never refused. */
const good = (): Observed => ({
  fleet: { scripted: 10 },
  realNodes: 2,
  dispatch: [
    { alias: "node-1", state: "active", deviceId: "d-1" },
    { alias: "node-2", state: "active", deviceId: "d-2" },
  ],
  quietTurns: quietTurns(),
  loadStarted: { error: null },
  load: { windows, invokes: windows.flatMap(through), lists: windows.flatMap((w) => [{ start: w.from + 100, ms: 30 }, { start: w.from + 5_000, ms: 40 }]) },
  turns: { placed: 2, busy: [{ alias: "node-1", seen: proven("node-1"), ms: 9_000 }, { alias: "node-2", seen: proven("node-2"), ms: 9_500 }] },
  overloaded: [],
});

describe("fleet-real-nodes: P-real-fleet-busy", () => {
  it("met when invokes were in flight at each turn's start and a round's worth completed within it", () => {
    const window = (alias: string) => ({ alias, windowMs: 10_000, inFlightAtStart: 1, invokesCompleted: 100, roundsWorth: 10, nodeListReads: 2 });
    expect(premiseOf("P-real-fleet-busy", good())).toEqual({ id: "P-real-fleet-busy", met: true, observed: [window("node-1"), window("node-2")] });
  });
  it("not met when nothing was in flight at a turn's start, or less than a round's worth completed, or a turn has no window", () => {
    const o = good();
    o.load!.invokes = [...through(windows[0]!).slice(1), ...through(windows[1]!).slice(0, 9)];
    expect(premiseOf("P-real-fleet-busy", o)).toEqual({
      id: "P-real-fleet-busy",
      met: false,
      observed: [
        { alias: "node-1", windowMs: 10_000, inFlightAtStart: 0, invokesCompleted: 99, roundsWorth: 9, nodeListReads: 2 },
        { alias: "node-2", windowMs: 10_000, inFlightAtStart: 1, invokesCompleted: 9, roundsWorth: 0, nodeListReads: 2 },
      ],
    });
    expect(premiseOf("P-real-fleet-busy", { ...good(), turns: { ...good().turns!, placed: 3 } })).toMatchObject({ met: false });
  });
});

describe("fleet-real-nodes: P-real-two-nodes (the body stops there when it is not met)", () => {
  it("met with two real node hosts (or more)", () => {
    expect(premiseOf("P-real-two-nodes", good())).toEqual({ id: "P-real-two-nodes", met: true, observed: { realNodes: 2 } });
    expect(premiseOf("P-real-two-nodes", { realNodes: 3 })).toEqual({ id: "P-real-two-nodes", met: true, observed: { realNodes: 3 } });
  });
  it("not met with one; a body that stopped there is unknown, nothing after it judged", () => {
    const one: Observed = { fleet: { scripted: 10 }, realNodes: 1 };
    expect(premiseOf("P-real-two-nodes", one)).toEqual({ id: "P-real-two-nodes", met: false, observed: { realNodes: 1 } });
    const j = judgeHistory({ ...hist(one), stopped: "P-real-two-nodes" }, scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toBe('the lab could not tell: premise P-real-two-nodes not met (the lab has at least two real node hosts, a turn under load on each): observed {"realNodes":1}');
    expect(j.checks).toEqual([]);
  });
});

describe("fleet-real-nodes: R-real-dispatch (the body stops at the first dispatch that is not active)", () => {
  it("holds when each real node's session was placed on it", () => {
    expect(checkOf("R-real-dispatch", good())).toMatchObject({ holds: true, observed: [{ alias: "node-1", state: "active" }, { alias: "node-2", state: "active" }] });
  });
  it("does not hold when one was not active; a body that stopped there fails on it", () => {
    const o: Observed = { fleet: { scripted: 10 }, realNodes: 2, dispatch: [{ alias: "node-1", state: "active" }, { alias: "node-2", state: "pending" }] };
    expect(checkOf("R-real-dispatch", o)).toMatchObject({ holds: false, observed: [{ alias: "node-1", state: "active" }, { alias: "node-2", state: "pending" }] });
    const j = judgeHistory({ ...hist(o), stopped: "R-real-dispatch" }, scenario, []);
    expect(j).toMatchObject({ verdict: "fail", detail: "R-real-dispatch: expectation not met and no finding is registered as R-real-dispatch" });
    expect(j.checks.map((c) => c.findingId)).toEqual(["R-real-dispatch"]);
  });
});

describe("fleet-real-nodes: R-real-quiet-turn (the body stops at the first quiet turn not on its node)", () => {
  it("holds when each warm-up and baseline turn ran on its node", () => {
    expect(checkOf("R-real-quiet-turn", good())).toEqual({
      id: "R-real-quiet-turn",
      expectation: "with the fleet quiet, each real node host's warm-up and baseline worker turns run on it (each reads a node-only file; worker.launch.v1 on the node's tap)",
      holds: true,
      observed: { turns: 4, notOnNode: [] },
    });
  });
  it("does not hold when one gave no reply or no launch on its node, named with what its proof read; a body that stopped there fails on it", () => {
    const failed = { ...proven("node-1"), reply: null, launches: [], error: "chat turn 0b6d8f0e-1c2a-4e5b-9f3d-2a1b3c4d5e6f in agent:main:fleetlab-3fa2c1 ended with status timeout" };
    const o: Observed = { ...good(), quietTurns: [{ alias: "node-1", what: "warm-up", seen: failed }] };
    expect(checkOf("R-real-quiet-turn", o)).toMatchObject({
      holds: false,
      observed: { turns: 1, notOnNode: [{ alias: "node-1", what: "warm-up", reply: "none", launches: 0, error: "chat turn <uuid> in agent:main:fleetlab-<id> ended with status timeout" }] },
    });
    const elsewhere: Observed = { ...good(), quietTurns: [...quietTurns().slice(0, 3), { alias: "node-2", what: "baseline", seen: { ...proven("node-2"), launches: [{ seq: 9, t: 1, conn: "c2", environmentId: "env-other" }] } }] };
    expect(checkOf("R-real-quiet-turn", elsewhere)).toMatchObject({ holds: false, observed: { turns: 4, notOnNode: [{ alias: "node-2", what: "baseline", reply: "node-only marker", launches: 0 }] } });
    const { load: _l, turns: _t, overloaded: _o, loadStarted: _s, ...stopped } = o;
    const j = judgeHistory({ ...hist(stopped), stopped: "R-real-quiet-turn" }, scenario, []);
    expect(j).toMatchObject({ verdict: "fail", detail: "R-real-quiet-turn: expectation not met and no finding is registered as R-real-quiet-turn" });
  });
});

describe("fleet-real-nodes: P-real-load-started (the body stops there when it is not met)", () => {
  it("met when the load loop had not stopped", () => {
    expect(premiseOf("P-real-load-started", good())).toEqual({ id: "P-real-load-started", met: true, observed: { error: null } });
  });
  it("not met when it stopped on an error (normalised); a body that stopped there is unknown", () => {
    const o: Observed = { ...good(), loadStarted: { error: "Unexpected token < in JSON at position 0 (node 0b6d8f0e-1c2a-4e5b-9f3d-2a1b3c4d5e6f)" } };
    expect(premiseOf("P-real-load-started", o)).toEqual({ id: "P-real-load-started", met: false, observed: { error: "Unexpected token < in JSON at position 0 (node <uuid>)" } });
    const { load: _l, turns: _t, overloaded: _o, ...stopped } = o;
    const j = judgeHistory({ ...hist(stopped), stopped: "P-real-load-started" }, scenario, []);
    expect(j.verdict).toBe("unknown");
    expect(j.detail).toContain("premise P-real-load-started not met");
    expect(j.checks.map((c) => [c.findingId, c.outcome])).toEqual([
      ["R-real-dispatch", "pass"],
      ["R-real-quiet-turn", "pass"],
    ]);
  });
});

describe("fleet-real-nodes: F-real-turn-served", () => {
  it("holds when each turn is proven on its node within 120 s; the expectation names N", () => {
    expect(checkOf("F-real-turn-served", good())).toEqual({
      id: "F-real-turn-served",
      expectation: "with 10 scripted nodes kept busy, a worker turn on each real node host completes on its node (it reads a node-only file; worker.launch.v1 on the node's tap) within 120 s, the lab's budget for a normal worker turn",
      holds: true,
      observed: { turns: 2, served: 2, failedWith: [] },
    });
  });
  it("does not hold when a turn failed, was not proven on its node, or took too long: each named once", () => {
    const o = good();
    o.turns!.busy[0] = { alias: "node-1", seen: { ...proven("node-1"), reply: null, error: "chat turn run-9 in agent:main:x ended with status error: model unavailable" } };
    o.turns!.busy[1] = { alias: "node-2", seen: { ...proven("node-2"), launches: [] }, ms: 9_000 };
    expect(checkOf("F-real-turn-served", o)).toMatchObject({ holds: false, observed: { turns: 2, served: 0, failedWith: ["error: model unavailable", 'not proven on its node: {"reply":"node-only marker","launches":0}'] } });
    const slow = good();
    slow.turns!.busy[1]!.ms = 120_001;
    expect(checkOf("F-real-turn-served", slow)).toMatchObject({ holds: false, observed: { turns: 2, served: 1, failedWith: ["took longer than 120 s"] } });
  });
  it("does not hold when fewer turns ran than sessions were placed", () => {
    const o = good();
    o.turns!.busy.pop();
    expect(checkOf("F-real-turn-served", o)).toMatchObject({ holds: false, observed: { turns: 1, served: 1, failedWith: [] } });
  });
});

describe("fleet-real-nodes: F-real-fleet-unharmed", () => {
  it("holds when the invokes in flight during the turns came back routed", () => {
    expect(checkOf("F-real-fleet-unharmed", good())).toEqual({
      id: "F-real-fleet-unharmed",
      expectation: "no node.invoke of the load (all 10 scripted nodes, 16 in flight at a time) in flight during the turns comes back with another node's answer, and some came back with their own",
      holds: true,
      observed: { routed: "some", misrouted: false },
    });
  });
  it("does not hold when one came back with another node's answer, or none came back routed; invokes outside the windows do not count", () => {
    const o = good();
    o.load!.invokes[50]!.outcome = "misrouted";
    expect(checkOf("F-real-fleet-unharmed", o)).toMatchObject({ holds: false, observed: { routed: "some", misrouted: true } });
    const refused = good();
    refused.load!.invokes = refused.load!.invokes.map((r) => ({ ...r, outcome: "refused" as const }));
    refused.load!.invokes.push({ start: 25_000, end: 25_100, outcome: "routed" }, { start: 20_000, end: 20_100, outcome: "misrouted" });
    expect(checkOf("F-real-fleet-unharmed", refused)).toMatchObject({ holds: false, observed: { routed: "none", misrouted: false } });
  });
});

describe("fleet-real-nodes: F-real-operator-served", () => {
  it("holds when the gateway never refused the turns' requests as overloaded", () => {
    expect(checkOf("F-real-operator-served", good())).toMatchObject({ holds: true, observed: { refused: [] } });
  });
  it("does not hold when it did: each refusal once, the registered signature", () => {
    expect(checkOf("F-real-operator-served", { ...good(), overloaded: [OVERLOADED, OVERLOADED] })).toEqual({
      id: "F-real-operator-served",
      expectation: "with 10 scripted nodes connected, the gateway never refuses the operator's requests for the real node hosts' turns as overloaded",
      holds: false,
      observed: { refused: [OVERLOADED] },
    });
  });
});

describe("fleet-real-nodes: the verdict", () => {
  it("served under load passes (the intermittent record not seen is no fixed?)", () => {
    expect(judgeHistory(hist(good()), scenario, [])).toMatchObject({ verdict: "pass" });
  });
  it("the operator refused as overloaded reads the registered finding F-real-operator-served", () => {
    const j = judgeHistory(hist({ ...good(), overloaded: [OVERLOADED] }), scenario, []);
    expect([j.verdict, j.detail]).toEqual(["known-finding", "known-finding F-real-operator-served"]);
  });
  it("a load that did not run through the turns: unknown", () => {
    expect(judgeHistory(hist({ ...good(), load: { ...good().load!, invokes: [] } }), scenario, [])).toMatchObject({ verdict: "unknown" });
  });
});
