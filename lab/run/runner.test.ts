import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Run, readRunRecord } from "../evidence/run.ts";
import type { EvidenceCheck } from "../checks/types.ts";
import type { FindingRecord } from "../findings/findings.ts";
import { LabError } from "../core/log.ts";
import { lanesFromEnv } from "../core/settings.ts";
import { AloneTurns, LabPool, endRun, planLanes, resolveScenarios, runBody, runLanes, runOrder, runScenario, runScenarioAttempts, runScenarios, timeSpent, cpuLine, watchEngine, type PoolOptions } from "./runner.ts";
import { mergeSpec } from "../definitions/spec.ts";
import { LabInfraError, SystemUnderTestError, defineScenario, type Scenario, type ScenarioContext } from "../scenario.ts";
import type { Lab } from "../topology/lab.ts";
import { parseTopology } from "../definitions/spec.ts";
import { TeardownStack } from "../topology/teardown.ts";
import { accepted, exitCodeOf } from "../definitions/verdict.ts";
import { sleep, WaitTimeout } from "../core/wait.ts";
import { PaceMonitor } from "../core/pace.ts";

const fake = (name: string, topology: "shared" | "own"): Scenario => defineScenario({ name, proves: name, topology, timeoutMs: 1, run: async () => {} });
const known = [fake("smoke", "own"), fake("pair", "shared"), fake("loss", "own"), fake("reuse", "shared")];

describe("runner", () => {
  it("an unknown scenario name fails listing the known ones", () => {
    expect(() => resolveScenarios(["smoke", "smok"], known)).toThrow("unknown scenario: smok. Known scenarios: smoke, pair, loss, reuse");
  });

  it("no names means every scenario handed in: shared-lab ones first, then those with a lab of their own", () => {
    expect(resolveScenarios([], known).map((s) => s.name)).toEqual(["pair", "reuse", "loss", "smoke"]);
    const first = { ...fake("zz-first-install", "shared"), order: 0 };
    expect(runOrder([...known, first]).map((s) => s.name)).toEqual(["zz-first-install", "pair", "reuse", "loss", "smoke"]);
    expect(runOrder(resolveScenarios(["loss", "reuse"], known)).map((s) => s.name)).toEqual(["reuse", "loss"]);
  });

  it("a scenario's overrides keep the run's other settings (NODES from the environment stays)", () => {
    const run = { nodes: { count: 4, capacity: 2, prefix: "node", devicePairing: "subnet" }, mcp: { servers: [{ name: "north" }] } };
    expect(mergeSpec(run, { nodes: { capacity: 1 }, mcp: { servers: [] } })).toEqual({
      nodes: { count: 4, capacity: 1, prefix: "node", devicePairing: "subnet" },
      mcp: { servers: [] },
    });
  });

  it("a finding registered twice on one scenario is refused", () => {
    const f = { id: "F-x", expectation: "e", signature: 1, versions: ["1"], kind: "shortfall" as const, evidence: "x" };
    expect(() => defineScenario({ name: "d", proves: "d", topology: "own", timeoutMs: 1, findings: [f, f], run: async () => {} })).toThrow("finding F-x is registered twice");
  });
});

describe("one verdict rule (CLI exit code and vitest alike)", () => {
  it("fail beats unknown beats pass; known findings and fixed? are accepted", () => {
    expect(exitCodeOf(["pass", "known-finding", "fixed?"])).toBe(0);
    expect(exitCodeOf(["pass", "unknown"])).toBe(3);
    expect(exitCodeOf(["unknown", "fail"])).toBe(1);
    expect(exitCodeOf([])).toBe(0);
    expect(["pass", "known-finding", "fixed?", "fail", "unknown"].filter((v) => accepted(v as never))).toEqual(["pass", "known-finding", "fixed?"]);
  });
});

// ---------------------------------------------------------------------------------------
// The verdict rules end to end, with a fake lab (no Docker): what the runner sees of a lab is
// its spec, teardown stack, down(), leftovers() and health(); the pool hands it in.

interface FakeLab {
  lab: Lab;
  name: string;
  /** What the lab went through, in order, shared with the scenario's own events. */
  events: string[];
}

function fakeLab(name: string, events: string[], o: { leftovers?: string[]; health?: string[]; held?: string[]; protocol?: { methods: string[]; events: string[] } | null } = {}): FakeLab {
  const lab = {
    spec: parseTopology({ tap: { enabled: false } }),
    capabilities: { image: "sha256:fake", nodeRunOptions: ["--host", "--port"], gatewayRunOptions: ["--port"] },
    // null: the gateway's hello-ok was never seen.
    protocol: o.protocol === null ? undefined : (o.protocol ?? { methods: ["chat.send", "sessions.dispatch"], events: ["chat"] }),
    teardown: new TeardownStack(),
    down: async () => void events.push(`down ${name}`),
    leftovers: async () => o.leftovers ?? [],
    health: async () => o.health ?? [],
    residue: async () => o.held ?? [],
  };
  return { lab: lab as unknown as Lab, name, events };
}

let root: string;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-runner-test-"));
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A machine as quiet as the reference, whatever this one is doing while the unit tests run. */
const quiet = new PaceMonitor(2, 1);
quiet.record(0, 0, 1);
/** A machine busier than the lab plans for (load 20 on 2 cores: 11x) from now on. */
function busyMonitor(): PaceMonitor {
  const m = new PaceMonitor(2);
  m.record(0, 0, 1);
  m.record(Date.now() - 1, 20, 1);
  return m;
}

/** A pool whose labs are fakes; `labs` lists every lab it brought up. */
function fakePool(o: { leftovers?: string[]; health?: (n: number) => string[]; held?: (n: number) => string[]; up?: () => Promise<void>; protocol?: null } & PoolOptions = {}) {
  const run = Run.create({ root, seed: 1 });
  const events: string[] = [];
  const labs: FakeLab[] = [];
  const pool = new LabPool(parseTopology({}), run, {
    paceMonitor: () => quiet,
    evidenceChecks: [],
    labFindings: [],
    start: async (r, _spec, plan) => void r.update((x) => void (x.plan = runOrder(plan).map((s) => s.name))),
    engineTrouble: async () => undefined,
    ...o,
    up: async (_spec, _run, name) => {
      await o.up?.();
      const f = fakeLab(name, events, { leftovers: o.leftovers, health: o.health?.(labs.length), held: o.held?.(labs.length), protocol: o.protocol });
      labs.push(f);
      return f.lab;
    },
  });
  return { pool, run, events, labs };
}

const scenario = (name: string, body: (ctx: ScenarioContext) => Promise<void>, more: Partial<Scenario> = {}): Scenario =>
  defineScenario({ name, proves: name, topology: "own", timeoutMs: 5_000, run: body, ...more });

const finding = (id: string, signature: unknown): FindingRecord => ({ id, expectation: `expectation of ${id}`, signature, versions: ["2026.9.6"], kind: "shortfall", evidence: "x" });

describe("runScenario: verdicts with a fake lab", () => {
  it("pass: every check held; verdict, findings.json and run.json agree", async () => {
    const { pool, run, events } = fakePool();
    const r = await runScenario(scenario("ok", async ({ check }) => void check({ id: "E-ok", expectation: "it works", holds: true })), pool);
    expect(r.verdict).toBe("pass");
    expect(r.detail).toBeUndefined();
    expect(events).toEqual(["down scenarios/ok/lab"]);
    expect(JSON.parse(fs.readFileSync(path.join(run.dir, "scenarios/ok/findings.json"), "utf8"))[0]).toMatchObject({ findingId: "E-ok", outcome: "pass" });
    expect(readRunRecord(path.join(run.dir, "run.json")).scenarios[0]).toMatchObject({ name: "ok", verdict: "pass" });
  });

  it("known finding: the registered signature reproduced exactly", async () => {
    const { pool } = fakePool();
    const s = scenario("kf", async ({ check }) => void check({ id: "F-a", expectation: "e", holds: false, observed: { x: 1 } }), { findings: [finding("F-a", { x: 1 })] });
    const r = await runScenario(s, pool);
    expect([r.verdict, r.detail]).toEqual(["known-finding", "known-finding F-a"]);
  });

  it("fixed?: a registered finding's check now holds", async () => {
    const { pool } = fakePool();
    const s = scenario("fx", async ({ check }) => void check({ id: "F-a", expectation: "e", holds: true }), { findings: [finding("F-a", { x: 1 })] });
    const r = await runScenario(s, pool);
    expect([r.verdict, r.detail]).toEqual(["fixed?", "fixed? F-a"]);
  });

  it("fail: a thrown assertion", async () => {
    const { pool } = fakePool();
    const r = await runScenario(scenario("boom", async () => assert.ok(false as boolean, "node-1 is not connected")), pool);
    expect([r.verdict, r.detail]).toEqual(["fail", "node-1 is not connected"]);
  });

  it("fail: a shortfall no finding describes, even when the scenario then throws a LabInfraError", async () => {
    const { pool } = fakePool();
    const r = await runScenario(
      scenario("both", async ({ check }) => {
        check({ id: "E-x", expectation: "e", holds: false, observed: 1 });
        throw new LabInfraError("the model container died");
      }),
      pool,
    );
    expect(r.verdict).toBe("fail");
    expect(r.detail).toBe("E-x: expectation not met and no finding is registered as E-x; also the model container died");
  });

  it("unknown: a LabInfraError (the lab could not tell)", async () => {
    const { pool } = fakePool();
    const r = await runScenario(scenario("infra", async () => Promise.reject(new LabInfraError("fault helper could not start"))), pool);
    expect([r.verdict, r.detail]).toEqual(["unknown", "fault helper could not start"]);
  });

  it("a timed-out scenario is aborted and settled before its teardown drains; then the lab is taken down", async () => {
    const { pool, events } = fakePool({ settleMs: 5_000 });
    const s = scenario(
      "slow",
      async ({ lab, signal }) => {
        lab.teardown.defer("heal fault", async () => void events.push("teardown drained"));
        try {
          await sleep(60_000, signal);
        } catch (err) {
          events.push(`aborted: ${(err as Error).name}`);
          await sleep(100); // still winding down (closing a client, say) after the abort
          events.push("settled");
          throw err;
        }
      },
      { timeoutMs: 100 },
    );
    const r = await runScenario(s, pool);
    expect(events).toEqual(["aborted: DeadlineExceeded", "settled", "teardown drained", "down scenarios/slow/lab"]);
    expect(r.verdict).toBe("unknown");
    expect(r.detail).toBe("scenario slow did not finish within 0.1 s: the lab's own deadline for the whole scenario, not an expectation of OpenClaw's (a wait in it had no bound of its own): the lab could not tell");
  });

  it("a scenario that does not settle once cancelled is said, and its shared lab is replaced before the next scenario", async () => {
    const { pool, events, labs } = fakePool({ settleMs: 100 });
    const stray = scenario(
      "stray",
      async () => {
        await sleep(1_000); // ignores its signal
        events.push("stray ended");
      },
      { timeoutMs: 50, topology: "shared" },
    );
    const r = await runScenario(stray, pool);
    expect(r.verdict).toBe("unknown");
    expect(r.detail).toBe("scenario stray did not finish within 0.05 s: the lab's own deadline for the whole scenario, not an expectation of OpenClaw's (a wait in it had no bound of its own): the lab could not tell; also the scenario had not settled 0.1 s after it was cancelled (its lab is not used again)");
    expect(events).toEqual(["down shared-lab"]);
    const next = await runScenario(scenario("next", async () => {}, { topology: "shared" }), pool);
    expect(next.verdict).toBe("pass");
    expect(labs.map((l) => l.name)).toEqual(["shared-lab", "shared-lab-2"]);
    await pool.close();
  });

  it("a failing teardown after a fail stays fail (the undo is appended); after a pass it is unknown", async () => {
    const undoFails = (ctx: ScenarioContext) => void ctx.lab.teardown.defer("heal partition", async () => Promise.reject(new Error("iptables: no such rule")));
    const { pool } = fakePool();
    const failed = await runScenario(
      scenario("f", async (ctx) => {
        undoFails(ctx);
        assert.fail("the turn never ended");
      }),
      pool,
    );
    expect([failed.verdict, failed.detail]).toEqual(["fail", "the turn never ended; also could not undo: heal partition (iptables: no such rule)"]);
    const passed = await runScenario(scenario("p", async (ctx) => undoFails(ctx)), pool);
    expect([passed.verdict, passed.detail]).toEqual(["unknown", "could not undo: heal partition (iptables: no such rule)"]);
  });

  it("leftovers after a fail are reported without hiding it; after a pass they are unknown (the lab's own clean-up)", async () => {
    const { pool } = fakePool({ leftovers: ["container fleetlab-x-node-1"] });
    const failed = await runScenario(scenario("f", async () => assert.fail("no reply")), pool);
    expect([failed.verdict, failed.detail]).toEqual(["fail", "no reply; also teardown left resources behind: container fleetlab-x-node-1"]);
    const passed = await runScenario(scenario("p", async () => {}), pool);
    expect([passed.verdict, passed.detail]).toEqual(["unknown", "teardown left resources behind: container fleetlab-x-node-1"]);
  });

  it("an unhealthy shared lab after a fail keeps the fail, is appended, and is replaced before the next scenario", async () => {
    const { pool, events, labs } = fakePool({ health: (n) => (n === 0 ? ["node node-1: missing from node.list"] : []) });
    const failed = await runScenario(scenario("f", async () => assert.fail("dispatch refused"), { topology: "shared" }), pool);
    expect([failed.verdict, failed.detail]).toEqual(["fail", 'dispatch refused; also scenario declared topology "shared" but left the lab unhealthy: node node-1: missing from node.list']);
    expect(events).toEqual(["down shared-lab"]);
    expect((await runScenario(scenario("n", async () => {}, { topology: "shared" }), pool)).verdict).toBe("pass");
    expect(labs.map((l) => l.name)).toEqual(["shared-lab", "shared-lab-2"]);
  });

  it("a shared lab left with a worker slot held is said and replaced, so the next scenario starts clean; the verdict stays the scenario's own checks", async () => {
    const { pool, events, labs } = fakePool({ held: (n) => (n === 0 ? ["node-1 holding 1 of its 2 worker slot(s)"] : []) });
    const left = await runScenario(scenario("restart", async () => {}, { topology: "shared" }), pool);
    expect([left.verdict, left.detail]).toEqual(["pass", "it left the shared lab with node-1 holding 1 of its 2 worker slot(s) after it ended; the lab was replaced so the next scenario starts clean"]);
    expect(events).toEqual(["down shared-lab"]);
    const next = await runScenario(scenario("next", async () => {}, { topology: "shared" }), pool);
    expect([next.verdict, next.detail]).toEqual(["pass", undefined]);
    expect(labs.map((l) => l.name)).toEqual(["shared-lab", "shared-lab-2"]);
    // A failed scenario keeps its fail, the held slot appended.
    const again = fakePool({ held: () => ["node-2 holding 1 of its 2 worker slot(s)"] });
    const failed = await runScenario(scenario("f", async () => assert.fail("no reply"), { topology: "shared" }), again.pool);
    expect([failed.verdict, failed.detail]).toEqual(["fail", "no reply; also it left the shared lab with node-2 holding 1 of its 2 worker slot(s) after it ended; the lab was replaced so the next scenario starts clean"]);
  });

  it("bring-up: OpenClaw not coming up fails, the lab's own parts not coming up is unknown, bad input stops the run", async () => {
    const sut = fakePool({ up: async () => Promise.reject(new SystemUnderTestError("node host node-1 exited (code 1)")) });
    expect(await runScenario(scenario("a", async () => {}), sut.pool)).toMatchObject({ verdict: "fail", detail: "OpenClaw did not come up: node host node-1 exited (code 1)" });
    const infra = fakePool({ up: async () => Promise.reject(new Error("model /healthz: the container exited (code 2)")) });
    expect(await runScenario(scenario("b", async () => {}), infra.pool)).toMatchObject({ verdict: "unknown", detail: "the lab could not come up: model /healthz: the container exited (code 2)" });
    const bad = fakePool({ up: async () => Promise.reject(new LabError("nodes.count: must be at most 8")) });
    await expect(runScenario(scenario("c", async () => {}), bad.pool)).rejects.toThrow("nodes.count");
  });
});

describe("a busy machine: unknown or another attempt, never a fail", () => {
  it("a fail judged while the machine was busier than planned is unknown naming the load; on a quiet machine it stays a fail", async () => {
    const busy = fakePool({ paceMonitor: busyMonitor });
    const r = await runScenario(scenario("starved", async () => assert.ok(false as boolean, "no reply within 90 s")), busy.pool);
    expect(r.verdict).toBe("unknown");
    expect(r.detail).toMatch(/^the lab could not tell: the machine was busier than the lab plans for: pace 11.00x at worst \(load 20 on 2 cores.*its fail is not charged to OpenClaw: no reply within 90 s/);
    const q = fakePool();
    expect((await runScenario(scenario("quiet", async () => assert.ok(false as boolean, "no reply within 90 s")), q.pool)).verdict).toBe("fail");
  });
  it("a fail once the run was interrupted is unknown: the clean-up took the lab's containers away (a bring-up's exec killed, exit 137)", async () => {
    const sut = new SystemUnderTestError("the gateway did not admit the lab's operator: 'openclaw devices approve x' in the gateway failed (exit 137)");
    const cut = fakePool({ up: async () => Promise.reject(sut), interrupted: () => true });
    const r = await runScenario(scenario("cut-short", async () => {}), cut.pool);
    expect(r.verdict).toBe("unknown");
    expect(r.detail).toMatch(/^the lab could not tell: the run was interrupted .* so its fail is not charged to OpenClaw: OpenClaw did not come up: the gateway did not admit/);
    expect((await runScenario(scenario("not-cut", async () => {}), fakePool({ up: async () => Promise.reject(sut) }).pool)).verdict).toBe("fail");
  });
  it("a fixed? judged while the machine was busier than planned is unknown too: a registered finding that did not show may only not have come in time", async () => {
    const F = { id: "F-slow", expectation: "e", signature: { failed: true }, versions: ["2026.9.6"], kind: "shortfall" as const, evidence: "x" };
    const held = (name: string) => scenario(name, async ({ check }) => void check({ id: "F-slow", expectation: "e", holds: true }), { findings: [F] });
    const busy = fakePool({ paceMonitor: busyMonitor });
    const r = await runScenario(held("starved-fixed"), busy.pool);
    expect(r.verdict).toBe("unknown");
    expect(r.detail).toMatch(/^the lab could not tell: the machine was busier than the lab plans for: .* so its fixed\? \(a registered finding that did not show\) is not claimed: fixed\? F-slow/);
    expect((await runScenario(held("quiet-fixed"), fakePool().pool)).verdict).toBe("fixed?");
  });
  it("a lab-side deadline that passed beyond the plan is unknown even when the machine was quiet again by the verdict", async () => {
    const { pool } = fakePool();
    const err = new WaitTimeout("node-1 connected", 30_000, "", "the machine was busier than the lab plans for: pace 8x");
    const r = await runScenario(scenario("late", async () => Promise.reject(err)), pool);
    expect(r.verdict).toBe("unknown");
    expect(r.detail).toMatch(/busier than the lab plans for: pace 8x/);
  });
  it("a scenario the machine starved runs again; the attempt before is kept (its folder, its row's attempts, the detail)", async () => {
    let n = 0;
    let mon = busyMonitor();
    const { pool, run } = fakePool({ paceMonitor: () => mon });
    const s = scenario("twice", async ({ check }) => {
      n += 1;
      if (n === 1) {
        mon = busyMonitor();
        assert.ok(false as boolean, "timed out");
      }
      mon = quiet;
      check({ id: "E-ok", expectation: "it works", holds: true });
    });
    const r = await runScenarioAttempts(s, pool);
    expect(n).toBe(2);
    expect(r.verdict).toBe("pass");
    expect(r.detail).toMatch(/^attempt 2 of 2: attempt 1 read unknown \(the lab could not tell: the machine was busier/);
    const rows = readRunRecord(path.join(run.dir, "run.json")).scenarios.filter((x) => x.name === "twice");
    expect(rows).toHaveLength(1);
    expect(rows[0]!.attempts).toEqual([expect.objectContaining({ verdict: "unknown", evidence: "scenarios/twice.attempt1" })]);
    expect(fs.existsSync(path.join(run.dir, "scenarios/twice.attempt1"))).toBe(true);
  });
  it("a start OpenClaw gave up on a busy machine (code 78, state lease) is tried again on fresh state; on a quiet one it is OpenClaw's fail", async () => {
    const lease = () => new SystemUnderTestError("gateway /readyz: the container exited (code 78); last log lines: state lease heartbeat did not become ready (phase=startup, trigger=timeout)");
    let tries = 0;
    const busy = fakePool({ paceMonitor: () => { const m = new PaceMonitor(2); m.record(0, 0, 1); m.record(Date.now() - 1, 8, 1); return m; }, up: (async () => { if (++tries === 1) throw lease(); }) as never });
    const r = await runScenario(scenario("retried", async () => {}), busy.pool);
    expect(tries).toBe(2);
    expect(r.verdict).toBe("pass");
    expect(r.detail).toMatch(/its lab started on attempt 2 of 3 \(attempt 1: gateway \/readyz: the container exited \(code 78\).*evidence scenarios\/retried\/lab.attempt1/);
    expect(readRunRecord(path.join(busy.run.dir, "run.json")).scenarios[0]!.startAttempts).toEqual([expect.objectContaining({ attempt: 1, lab: "scenarios/retried/lab" })]);
    let quietTries = 0;
    const q = fakePool({ up: (async () => { quietTries++; throw lease(); }) as never });
    expect(await runScenario(scenario("quiet-lease", async () => {}), q.pool)).toMatchObject({ verdict: "fail" });
    expect(quietTries).toBe(1);
  });
});

describe("one lab comes up at a time", () => {
  it("two lanes asking at once bring their labs up one after the other (so the second one's admission sees the first)", async () => {
    let inUp = 0;
    let most = 0;
    const up = (async () => {
      most = Math.max(most, ++inUp);
      await sleep(30);
      inUp--;
    }) as never;
    const a = fakePool({ up });
    const b = fakePool({ up });
    const [ra, rb] = await Promise.all([runScenario(scenario("lane-a", async () => {}), a.pool), runScenario(scenario("lane-b", async () => {}), b.pool)]);
    expect([ra.verdict, rb.verdict, most]).toEqual(["pass", "pass", 1]);
  });
});

describe("runScenario: named, timed phases in run.json", () => {
  const phasesOf = (run: Run, name: string) => readRunRecord(path.join(run.dir, "run.json")).scenarios.find((x) => x.name === name)?.phases?.map((p) => (p.ok ? p.name : `${p.name} FAILED`));

  it("a scenario that ran: lab, body, drain, evidence checks, lab after, each with its time; a failing body is the verdict's, not its phase's", async () => {
    const { pool, run } = fakePool();
    const r = await runScenario(scenario("timed", async () => sleep(30)), pool);
    expect(phasesOf(run, "timed")).toEqual(["lab", "body", "drain", "evidence checks", "lab after"]);
    expect(r.phases?.find((p) => p.name === "body")?.ms).toBeGreaterThanOrEqual(25);
    await runScenario(scenario("failing", async () => assert.fail("no reply")), pool);
    expect(phasesOf(run, "failing")).toEqual(["lab", "body", "drain", "evidence checks", "lab after"]);
  });

  it("a scenario ended before its body records only the phases that ran: needs (n/a), lab (could not come up), protocol (n/a)", async () => {
    const caps = async () => ({ image: "sha256:fake", nodeRunOptions: ["--port"], gatewayRunOptions: ["--port"] });
    const { pool, run } = fakePool({ capabilities: caps });
    await runScenario(scenario("cli-na", async () => {}, { needs: [{ nodeRunOption: "--session-host" }] }), pool);
    await runScenario(scenario("method-na", async () => {}, { needs: [{ method: "sessions.reclaim" }] }), pool);
    expect(phasesOf(run, "cli-na")).toEqual(["needs"]);
    expect(phasesOf(run, "method-na")).toEqual(["lab", "protocol"]);
    const down = fakePool({ up: async () => Promise.reject(new SystemUnderTestError("the gateway exited")) });
    await runScenario(scenario("no-lab", async () => {}), down.pool);
    expect(phasesOf(down.run, "no-lab")).toEqual(["lab"]);
  });

  it("run folders written before phases were recorded are still read", () => {
    const run = Run.create({ root, seed: 1 });
    run.update((r) => void r.scenarios.push({ name: "old", verdict: "pass", seconds: 1 }));
    expect(readRunRecord(path.join(run.dir, "run.json")).scenarios[0]?.phases).toBeUndefined();
  });
});

describe("runScenario: evidence checks after the scenario", () => {
  const holds: EvidenceCheck = { name: "fine", run: async () => [{ id: "E-fine", expectation: "e", holds: true }] };
  const drift: FindingRecord = { ...finding("E-drift", { frame: "x" }), kind: "differs-from-reference" };
  const drifts: EvidenceCheck = { name: "drift", run: async () => [{ id: "E-drift", expectation: "e", holds: false, observed: { frame: "x" } }] };
  const breaks: EvidenceCheck = { name: "broken", run: async () => Promise.reject(new Error("transcript unreadable")) };

  it("run after the scenario settled and its teardown drained, on its window; judged against the lab-wide records too", async () => {
    let window: unknown;
    const seen: EvidenceCheck = { name: "seen", run: async (w) => ((window = w), [{ id: "E-seen", expectation: "e", holds: true }]) };
    const { pool, run, events } = fakePool({ evidenceChecks: [seen, holds, drifts], labFindings: [drift] });
    const r = await runScenario(scenario("w", async ({ lab }) => void lab.teardown.defer("undo", async () => void events.push(`undone, window ${window ? "read" : "not read yet"}`))), pool);
    expect(events[0]).toBe("undone, window not read yet");
    expect(window).toMatchObject({ scenario: "w", version: "2026.9.6", tapSince: {} });
    // A lab-wide known finding is reported (findings.json, once per run by the CLI) but leaves the verdict alone.
    expect([r.verdict, r.detail]).toEqual(["pass", undefined]);
    const judged = JSON.parse(fs.readFileSync(path.join(run.dir, "scenarios/w/findings.json"), "utf8")) as { findingId: string; outcome: string }[];
    expect(judged.map((c) => [c.findingId, c.outcome])).toEqual([
      ["E-seen", "pass"],
      ["E-fine", "pass"],
      ["E-drift", "known-finding"],
    ]);
  });

  it("a shortfall an evidence check finds, with no record, fails the scenario", async () => {
    const { pool } = fakePool({ evidenceChecks: [drifts] });
    expect((await runScenario(scenario("d", async () => {}), pool)).verdict).toBe("fail");
  });

  it("an evidence check that throws makes the verdict unknown with its reason, without hiding a fail", async () => {
    const { pool } = fakePool({ evidenceChecks: [breaks, holds] });
    const r = await runScenario(scenario("u", async () => {}), pool);
    expect([r.verdict, r.detail]).toEqual(["unknown", "evidence check broken could not tell: transcript unreadable"]);
    expect(r.checks.map((c) => c.findingId)).toEqual(["E-fine"]); // the other checks still ran
    const f = await runScenario(scenario("uf", async () => assert.fail("lost the turn")), pool);
    expect([f.verdict, f.detail]).toEqual(["fail", "lost the turn; also evidence check broken could not tell: transcript unreadable"]);
  });
});

describe("runScenarios: the run and its finding records", () => {
  it("records no check judged are listed in run.json: a scenario's own when its body ran to the end, and lab-wide ones", async () => {
    const labOnly = finding("E-lab-never", { frame: "y" });
    const labSeen = finding("E-lab-seen", { frame: "z" });
    const { pool, run } = fakePool({ labFindings: [labOnly, labSeen], evidenceChecks: [{ name: "lab", run: async () => [{ id: "E-lab-seen", expectation: "e", holds: false, observed: { frame: "z" } }] }] });
    const both = [finding("F-checked", 1), finding("F-forgotten", 2)];
    const complete = scenario("complete", async ({ check }) => void check({ id: "F-checked", expectation: "e", holds: false, observed: 1 }), { findings: both });
    const cut = scenario("cut", async () => assert.fail("stopped before its checks"), { findings: [finding("F-not-reached", 3)] });
    const results = await runScenarios([complete, cut], pool.spec, run, pool);
    expect(results.map((r) => r.verdict)).toEqual(["known-finding", "fail"]);
    const rec = readRunRecord(path.join(run.dir, "run.json"));
    expect(rec.unexercised).toEqual([{ id: "F-forgotten", scenario: "complete" }, { id: "E-lab-never" }]);
    expect(rec.exercised).toEqual(["E-lab-seen", "F-checked"]);
    expect(rec.plan).toEqual(["complete", "cut"]);
    expect(rec.endedAt).toBeDefined();
    expect(exitCodeOf(results.map((r) => r.verdict))).toBe(1);
  });

  it("a lab-wide record absent from one scenario's window is no fixed? there; not seen in the whole run, it is listed", async () => {
    const shows = finding("E-lab-sometimes", { frame: "s" });
    const gone = finding("E-lab-gone", { frame: "g" });
    // The check sees E-lab-sometimes only in scenario "b"; E-lab-gone holds everywhere.
    const check: EvidenceCheck = {
      name: "lab",
      run: async (w) => [
        { id: "E-lab-sometimes", expectation: "e", holds: w.scenario !== "b", observed: w.scenario === "b" ? { frame: "s" } : undefined },
        { id: "E-lab-gone", expectation: "e", holds: true },
      ],
    };
    const { pool, run } = fakePool({ labFindings: [shows, gone], evidenceChecks: [check] });
    const results = await runScenarios([scenario("a", async () => {}), scenario("b", async () => {})], pool.spec, run, pool);
    expect(results.map((r) => [r.name, r.verdict])).toEqual([["a", "pass"], ["b", "pass"]]);
    expect(results[1]!.checks.find((c) => c.findingId === "E-lab-sometimes")).toMatchObject({ outcome: "known-finding", scope: "lab" });
    const rec = readRunRecord(path.join(run.dir, "run.json"));
    expect(rec.exercised).toEqual(["E-lab-sometimes"]);
    expect(rec.unexercised).toEqual([{ id: "E-lab-gone" }]);
  });

  it("a run where no scenario ran flags no lab-wide record", () => {
    const run = Run.create({ root, seed: 1 });
    endRun(run, [finding("E-lab", 1)]);
    expect(readRunRecord(path.join(run.dir, "run.json")).unexercised).toBeUndefined();
  });
});

describe("lanes: scenarios side by side, each lane on its own labs", () => {
  it("LANES: 1 to 8, default 3; anything else is bad input naming the fix", () => {
    expect(lanesFromEnv({})).toBe(3);
    expect(lanesFromEnv({ LANES: "1" })).toBe(1);
    expect(lanesFromEnv({ FLEETLAB_LANES: "3", LANES: "1" })).toBe(3);
    for (const bad of ["0", "9", "two", "1.5"]) expect(() => lanesFromEnv({ LANES: bad })).toThrow(LabError);
    expect(() => lanesFromEnv({ LANES: "x" })).toThrow("LANES=x: give a whole number of scenarios to run at once, 1 to 8");
  });

  it("the split goes by measured cost: shared scenarios stay together on one lab, own ones fill the lanes", () => {
    const list = [fake("a", "shared"), fake("b", "shared"), fake("long", "own"), fake("mid", "own"), fake("short", "own")];
    const costs = { defaultSeconds: 10, sharedLab: { seconds: 30 }, scenarios: { a: 10, b: 10, long: 100, mid: 40, short: 20 } };
    const plan = planLanes(list, 2, costs);
    expect(plan.lanes.map((l) => l.map((s) => s.name))).toEqual([["long"], ["a", "b", "mid", "short"]]);
    expect(plan.seconds).toEqual([100, 110]);
    expect(planLanes(list, 1, costs).lanes.map((l) => l.map((s) => s.name))).toEqual([["a", "b", "long", "mid", "short"]]);
    // Never more lanes than scenarios.
    expect(planLanes(list.slice(0, 1), 4, costs).lanes).toHaveLength(1);
  });

  it("two lanes run at once: every verdict recorded once, results in run order, each lane's shared lab its own", async () => {
    const { pool, run, events } = fakePool();
    const second = fakePool();
    let running = 0;
    let most = 0;
    const body = async () => {
      most = Math.max(most, ++running);
      await sleep(30);
      running--;
    };
    const list = [scenario("s1", body, { topology: "shared" }), scenario("o1", body), scenario("o2", body), scenario("o3", body)];
    const heard: string[] = [];
    const results = await runLanes(list, pool.spec, run, { lanes: 2, pool: (i) => (i === 0 ? pool : new LabPool(pool.spec, run, { ...second.pool.opts, start: pool.opts.start })), onResult: (r) => heard.push(r.name) });
    expect(results.map((r) => r.name)).toEqual(["s1", "o1", "o2", "o3"]);
    expect(results.every((r) => r.verdict === "pass")).toBe(true);
    expect(most).toBe(2);
    expect(heard.sort()).toEqual(["o1", "o2", "o3", "s1"]);
    const rec = readRunRecord(path.join(run.dir, "run.json"));
    expect(rec.scenarios.map((x) => x.name).sort()).toEqual(["o1", "o2", "o3", "s1"]);
    expect(rec.lanes?.partition.flat().sort()).toEqual(["o1", "o2", "o3", "s1"]);
    expect(rec.endedAt).toBeDefined();
    // Every lab that came up went down, the shared one included.
    const downs = [...events, ...second.events].filter((e) => e.startsWith("down "));
    expect(downs.filter((e) => e.includes("shared-lab"))).toHaveLength(1);
    expect(downs).toHaveLength(4);
  });

  it("bad input in one lane stops the run with its message; the other lane's labs still go down", async () => {
    const { pool, run, events } = fakePool();
    const bad = fakePool({ up: async () => { throw new LabError("bad topology: nodes.count must be 0-16"); } });
    const list = [scenario("fine", async () => sleep(20)), scenario("broken", async () => {})];
    await expect(runLanes(list, pool.spec, run, { lanes: 2, pool: (i) => (i === 0 ? pool : new LabPool(pool.spec, run, { ...bad.pool.opts, start: pool.opts.start })) })).rejects.toThrow("bad topology");
    expect(events.filter((e) => e.startsWith("down "))).toHaveLength(1);
    expect(readRunRecord(path.join(run.dir, "run.json")).endedAt).toBeDefined();
  });
});

describe("n/a: the version lacks what a scenario needs", () => {
  const caps = async () => ({ image: "sha256:fake", nodeRunOptions: ["--host", "--port"], gatewayRunOptions: ["--port"] });

  it("a CLI option the version lacks: n/a with the reason at once, before any lab comes up; accepted, exit 0", async () => {
    const { pool, labs } = fakePool({ capabilities: caps });
    let ran = false;
    const s = scenario("needs-flag", async () => void (ran = true), { needs: [{ nodeRunOption: "--session-host", why: "worker sessions in the foreground" }] });
    const r = await runScenario(s, pool);
    expect([r.verdict, r.detail]).toEqual(["n/a", "openclaw@2026.9.6: `openclaw node run` has no --session-host option (worker sessions in the foreground)"]);
    expect(ran).toBe(false);
    expect(labs).toHaveLength(0);
    expect(exitCodeOf([r.verdict, "pass"])).toBe(0);
  });

  it("a method the gateway does not advertise: n/a once the lab is up, the body never runs and an own lab goes down", async () => {
    const { pool, events } = fakePool({ capabilities: caps });
    let ran = false;
    const s = scenario("needs-method", async () => void (ran = true), { needs: [{ method: "sessions.reclaim" }] });
    const r = await runScenario(s, pool);
    expect(r.verdict).toBe("n/a");
    expect(r.detail).toMatch(/does not offer the method sessions.reclaim/);
    expect(ran).toBe(false);
    expect(events).toEqual(["down scenarios/needs-method/lab"]);
  });

  it("a gateway whose hello-ok was not seen: unknown before the body, and an own lab still goes down", async () => {
    const { pool, events } = fakePool({ capabilities: caps, protocol: null });
    let ran = false;
    const r = await runScenario(scenario("no-hello", async () => void (ran = true), { needs: [{ method: "sessions.dispatch" }] }), pool);
    expect([r.verdict, r.detail]).toEqual(["unknown", "the gateway's hello-ok (what it offers) was not seen, so the scenario's needs could not be judged"]);
    expect(ran).toBe(false);
    expect(events).toEqual(["down scenarios/no-hello/lab"]);
  });

  it("needs the version meets: the scenario runs as usual", async () => {
    const { pool } = fakePool({ capabilities: caps });
    const s = scenario("needs-met", async ({ check }) => void check({ id: "E-ok", expectation: "e", holds: true }), { needs: [{ nodeRunOption: "--host" }, { method: "sessions.dispatch" }] });
    expect((await runScenario(s, pool)).verdict).toBe("pass");
  });
});

describe("an error that escapes a scenario is its verdict, and the run goes on", () => {
  it("the Docker engine refusing a call nobody awaited is the lab's: unknown, not fail", async () => {
    const { pool } = fakePool();
    const engineError = Object.assign(new Error("(HTTP code 500) server error - container is restarting"), { statusCode: 500, json: { message: "container is restarting" } });
    const r = await runScenario(
      scenario("engine-escape", async ({ signal }) => {
        void sleep(10).then(() => Promise.reject(engineError));
        await sleep(2_000, signal);
      }),
      pool,
    );
    expect(r.verdict).toBe("unknown");
    expect(r.detail).toContain("an error escaped the scenario while it ran (unhandled rejection, nobody awaited it)");
  });

  it("the engine's socket breaking under a stream nobody awaited is the lab's too; so is any escape while the engine does not answer", async () => {
    const socketError = Object.assign(new Error("connect ECONNRESET /var/run/docker.sock"), { code: "ECONNRESET", address: "/var/run/docker.sock" });
    const escaping = (name: string, err: Error) =>
      scenario(name, async ({ signal }) => {
        void sleep(10).then(() => Promise.reject(err));
        await sleep(2_000, signal);
      });
    const quiet = fakePool();
    const r = await runScenario(escaping("socket-escape", socketError), quiet.pool);
    expect([r.verdict, r.detail]).toEqual(["unknown", expect.stringContaining("an error escaped the scenario while it ran (unhandled rejection, nobody awaited it)")]);
    // Not the engine's socket: OpenClaw's connection, a fail as before.
    const gw = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", address: "172.18.0.2" });
    expect((await runScenario(escaping("gateway-reset", gw), fakePool().pool)).verdict).toBe("fail");
    // The engine not answering when the escape is charged: unknown, and the detail says why.
    const sick = fakePool({ engineTrouble: async () => "the Docker engine does not answer (no answer within 5.0 s)" });
    const s2 = await runScenario(escaping("sick-engine", new Error("gateway agent.wait failed: TIMEOUT")), sick.pool);
    expect(s2.verdict).toBe("unknown");
    expect(s2.detail).toContain("the Docker engine does not answer (no answer within 5.0 s); an error escaped the scenario while it ran");
  });

  it("a rejected promise left behind: fail with its message; thrown from a timer: fail; the next scenario still runs", async () => {
    const { pool, run, events } = fakePool();
    const list = [
      scenario("a-floating", async ({ signal }) => {
        // Started, never awaited (repro-155359's mistake): it rejects while the body waits on.
        void sleep(10).then(() => Promise.reject(new Error("gateway agent.wait failed: TIMEOUT")));
        await sleep(2_000, signal); // the escape aborts the signal: the body ends at once
        events.push("a-floating went on"); // cancelled at the escape: never reached
      }),
      scenario("b-timer", async ({ signal }) => {
        setTimeout(() => {
          throw new Error("thrown from a timer");
        }, 10);
        await sleep(2_000, signal).catch(() => {});
      }),
      scenario("c-after", async ({ check }) => void check({ id: "E-ok", expectation: "e", holds: true })),
    ];
    const results = await runScenarios(list, pool.spec, run, pool);
    expect(results.map((r) => [r.name, r.verdict])).toEqual([
      ["a-floating", "fail"],
      ["b-timer", "fail"],
      ["c-after", "pass"],
    ]);
    expect(results[0]!.detail).toContain("an error escaped the scenario while it ran (unhandled rejection, nobody awaited it): gateway agent.wait failed: TIMEOUT");
    expect(results[1]!.detail).toContain("(uncaught exception, nobody awaited it): thrown from a timer");
    expect(results[0]!.seconds).toBeLessThan(1.5); // ended at the escape, not at its 2 s sleep
    expect(events).not.toContain("a-floating went on");
    // Each lab went down, and the stack is in the scenario's log.
    expect(events.filter((e) => e.startsWith("down"))).toHaveLength(3);
    expect(fs.readFileSync(path.join(run.dir, "scenarios", "a-floating", "scenario.log"), "utf8")).toMatch(/escaped the scenario while it ran \(unhandled rejection\): Error: gateway agent.wait failed: TIMEOUT\n\s+at /);
    expect(readRunRecord(path.join(run.dir, "run.json")).scenarios.map((r) => r.verdict)).toEqual(["fail", "fail", "pass"]);
  });

  it("premises through ctx.premise: recorded in verdict.json and run.json; not met or not declared is unknown", async () => {
    const { pool, run } = fakePool();
    const premises = [{ id: "P-fault-acted", what: "the fault acted on the path" }];
    const met = await runScenario(scenario("met", async ({ premise, check }) => (premise({ id: "P-fault-acted", met: true, observed: { hits: 3 } }), void check({ id: "E-ok", expectation: "e", holds: true })), { premises }), pool);
    expect([met.verdict, met.premises]).toEqual(["pass", [{ id: "P-fault-acted", what: "the fault acted on the path", met: true, observed: { hits: 3 } }]]);
    const missed = await runScenario(scenario("missed", async ({ premise, check }) => (premise({ id: "P-fault-acted", met: false, observed: { hits: 0 } }), void check({ id: "E-ok", expectation: "e", holds: true })), { premises }), pool);
    expect([missed.verdict, missed.detail]).toEqual(["unknown", 'the lab could not tell: premise P-fault-acted not met (the fault acted on the path): observed {"hits":0}']);
    const stray = await runScenario(scenario("stray", async ({ premise }) => void premise({ id: "P-other", met: true })), pool);
    expect(stray.verdict).toBe("unknown");
    expect(stray.detail).toContain("premise P-other not met (not declared in the scenario's premises)");
    expect(readRunRecord(path.join(run.dir, "run.json")).scenarios.find((r) => r.name === "missed")?.premises?.[0]).toMatchObject({ id: "P-fault-acted", met: false });
  });

  it("ctx.proceed: the body stops at a step that does not hold; the step's declared check gives the verdict, the history records the stop", async () => {
    const { pool, run } = fakePool();
    const checks = [
      { id: "R-step", expectation: "the step gives what the rest needs", judge: (h: { step?: number }) => h.step !== undefined ? { holds: h.step > 0, observed: { step: h.step } } : undefined },
      { id: "R-after", expectation: "what comes after", judge: (h: { after?: boolean }) => h.after !== undefined ? { holds: h.after } : undefined },
    ] as Scenario["checks"];
    const body = (step: number) => async ({ observe, proceed }: ScenarioContext) => {
      observe("step", step);
      if (!proceed("R-step")) return;
      observe("after", true);
    };
    const ok = await runScenario(scenario("goes-on", body(1), { checks }), pool);
    expect(ok.verdict).toBe("pass");
    const cut = await runScenario(scenario("stops", body(0), { checks }), pool);
    expect([cut.verdict, cut.detail]).toEqual(["fail", "R-step: expectation not met and no finding is registered as R-step"]);
    const h = JSON.parse(fs.readFileSync(path.join(run.dir, "scenarios", "stops", "history.json"), "utf8"));
    expect([h.stopped, h.bodyReturned, h.observations]).toEqual(["R-step", true, { step: 0 }]);
    expect(fs.readFileSync(path.join(run.dir, "scenarios", "stops", "scenario.log"), "utf8")).toContain('stopped at R-step: it does not hold (observed {"step":0})');
    // An id that names no declared check is the lab's own mistake: unknown.
    const typo = await runScenario(scenario("typo", async ({ proceed }) => void proceed("R-nope"), { checks }), pool);
    expect(typo.verdict).toBe("unknown");
    expect(typo.detail).toContain('ctx.proceed("R-nope") names no declared check or premise with a judge');
  });

  it("a premise not met: the scenario's own failing check is moot (unknown), an evidence check's fail (at-most-once) still fails it", async () => {
    const premises = [{ id: "P-fault-acted", what: "the fault acted on the path" }];
    const body = async ({ premise, check }: ScenarioContext) => (premise({ id: "P-fault-acted", met: false, observed: { hits: 0 } }), void check({ id: "R-recovers", expectation: "e", holds: false, observed: { newSession: false } }));
    const quiet = fakePool();
    const own = await runScenario(scenario("own-fail", body, { premises }), quiet.pool);
    expect(own.verdict).toBe("unknown");
    expect(own.detail).toContain("also moot (premise not met): fail R-recovers");
    const dup = fakePool({ evidenceChecks: [{ name: "at-most-once", run: async () => [{ id: "E-tool-effect-at-most-once", expectation: "each call runs at most once", holds: false, observed: { runs: 2 } }] }] });
    const twice = await runScenario(scenario("ran-twice", body, { premises }), dup.pool);
    expect(twice.verdict).toBe("fail");
    expect(twice.checks.find((c) => c.findingId === "E-tool-effect-at-most-once")?.source).toBe("evidence");
  });

  it("the engine watch keeps at most one abort listener on the scenario's signal, however many pings, and ends with it", async () => {
    const ctl = new AbortController();
    let pings = 0;
    let most = 0;
    const watched = watchEngine(async () => ((most = Math.max(most, getEventListeners(ctl.signal, "abort").length)), ++pings >= 30 && ctl.abort(), undefined), ctl.signal, 1);
    expect(await watched).toBeUndefined();
    expect(pings).toBe(30);
    expect(most).toBeLessThanOrEqual(1);
  });

  it("an engine that stops answering while the body runs ends the scenario at once as unknown, naming the engine (a blip is not enough)", async () => {
    let asked = 0;
    const blip = fakePool({ engineWatchMs: 20, engineTrouble: async () => (++asked === 2 ? "the Docker engine does not answer (blip)" : undefined) });
    const ok = await runScenario(scenario("blip", async ({ signal, check }) => (await sleep(300, signal), void check({ id: "E-ok", expectation: "e", holds: true }))), blip.pool);
    expect(ok.verdict).toBe("pass");
    expect(asked).toBeGreaterThan(3);
    const dead = fakePool({ engineWatchMs: 20, engineTrouble: async () => "the Docker engine does not answer (connect ECONNREFUSED /run/x.sock)" });
    const t0 = performance.now();
    const r = await runScenario(scenario("engine-gone", async ({ signal }) => void (await sleep(4_000, signal))), dead.pool);
    expect(r.verdict).toBe("unknown");
    expect(r.detail).toContain("the Docker engine does not answer (connect ECONNREFUSED /run/x.sock), twice in a row while the scenario ran; the scenario was cancelled there");
    expect(performance.now() - t0).toBeLessThan(2_000); // not its 4 s wait
  });

  it("the lab's own error (LabInfraError) escaping is unknown; one escaping after the body returned is added to the verdict", async () => {
    const { pool, run } = fakePool({
      evidenceChecks: [{ name: "slow", run: async () => (await sleep(50), []) }],
    });
    const list = [
      scenario("infra", async () => {
        void sleep(5).then(() => Promise.reject(new LabInfraError("the tap did not answer")));
        await sleep(1_000);
      }),
      scenario("after-body", async () => {
        void sleep(10).then(() => Promise.reject(new Error("late but before the verdict")));
      }),
    ];
    const results = await runScenarios(list, pool.spec, run, pool);
    expect(Object.fromEntries(results.map((r) => [r.name, r.verdict]))).toEqual({ infra: "unknown", "after-body": "fail" });
    expect(results.find((r) => r.name === "after-body")!.detail).toContain("escaped the scenario after its body ended");
  });
});

describe("the engine is the lab's", () => {
  it("a scenario that fails while the engine does not answer, or on an error the engine's API gave, is unknown, not OpenClaw's fail", async () => {
    const dead = fakePool({ engineTrouble: async () => "the Docker engine does not answer (connect ENOENT /var/run/docker.sock)" });
    const r1 = await runScenario(scenario("engine-died", async () => Promise.reject(new Error("node-1 exited"))), dead.pool);
    expect(r1.verdict).toBe("unknown");
    expect(r1.detail).toContain("the Docker engine does not answer (connect ENOENT /var/run/docker.sock); the scenario's own failure cannot be told apart: node-1 exited");
    const alive = fakePool();
    const apiErr = Object.assign(new Error("(HTTP code 500) server error - container is restarting"), { statusCode: 500, reason: "server error", json: {} });
    const r2 = await runScenario(scenario("engine-refused", async () => Promise.reject(apiErr)), alive.pool);
    expect(r2.verdict).toBe("unknown");
    expect(r2.detail).toContain("the Docker engine refused a call: (HTTP code 500)");
    // With the engine answering, the same failure is OpenClaw's.
    expect((await runScenario(scenario("sut-failed", async () => Promise.reject(new Error("node-1 exited"))), alive.pool)).verdict).toBe("fail");
  });

  it("a lab that cannot come up while the engine does not answer is unknown, also when it looked like OpenClaw's failure", async () => {
    const dead = fakePool({ engineTrouble: async () => "the Docker engine does not answer (no answer within 5 s)", up: async () => Promise.reject(new SystemUnderTestError("the gateway exited")) });
    const r = await runScenario(scenario("up-on-dead-engine", async () => {}), dead.pool);
    expect(r.verdict).toBe("unknown");
    expect(r.detail).toBe("the lab could not come up: the Docker engine does not answer (no answer within 5 s)");
  });
});

describe("runBody", () => {
  it("a body that returns or throws in time is reported as such", async () => {
    expect(await runBody(async () => {}, 1_000, 10, "m")).toEqual({ kind: "returned" });
    const e = new Error("x");
    expect(await runBody(async () => Promise.reject(e), 1_000, 10, "m")).toEqual({ kind: "threw", error: e });
    expect(await runBody(() => { throw e; }, 1_000, 10, "m")).toEqual({ kind: "threw", error: e });
  });
});

describe("where a run's scenario time went", () => {
  it("sums the own labs' bring-up and the bodies' waits, the rest being requests and the lab's work; nothing when no row says", () => {
    expect(timeSpent([{ name: "a", verdict: "pass", seconds: 10 }])).toBeUndefined();
    const line = timeSpent([
      { name: "a", verdict: "pass", seconds: 40, phases: [{ name: "lab", ms: 12_000, ok: true }], waits: { bodyS: 27, windowS: 20, observedS: 4, requestS: 3, pauseS: 1 } },
      { name: "b", verdict: "pass", seconds: 5, phases: [{ name: "lab", ms: 0, ok: true }], waits: { bodyS: 5, windowS: 0, observedS: 2, pauseS: 0 } },
    ]);
    expect(line).toBe("where the scenarios' 45 s went (summed over 2; run.json: scenarios[].waits): their own labs' bring-up 12 s; in their bodies, windows run out 20 s, awaiting OpenClaw 6 s, awaiting its answers to requests 3 s, pauses 1 s, the lab's own work 2 s");
  });
});

describe("the CPU a run used", () => {
  it("against what the cores offered over its wall time, by kind slowest first; without the share the containers are not measured", () => {
    expect(cpuLine({ wallS: 100, cores: 2, containersS: 150, labProcessS: 10, byKind: { tap: 5, gateway: 90, "node-host": 40 } })).toBe(
      "CPU: containers 150 s and the lab's process 10 s of the 200 s 2 cores offered over 100 s (80%); by kind at teardown (a restarted container's earlier runs not counted): gateway 90 s, node-host 40 s, tap 5 s (run.json: cpu)",
    );
    expect(cpuLine({ wallS: 100, cores: 2, labProcessS: 10 })).toBe("CPU: containers not measured (no CPU share) and the lab's process 10 s of the 200 s 2 cores offered over 100 s (5%) (run.json: cpu)");
  });
});

describe("AloneTurns: a scenario that runs alone has nothing beside it", () => {
  it("waits for the scenarios running beside to end, goes before any that come later, and lets them go after it", async () => {
    const turns = new AloneTurns();
    const log: string[] = [];
    const doneA = await turns.beside();
    log.push("A in");
    let waited = false;
    const alone = turns.alone(() => (waited = true)).then((done) => (log.push("alone in"), done));
    // B asks after the alone one: it waits for it, though A is an ordinary scenario too.
    const b = turns.beside().then((done) => (log.push("B in"), done));
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(["A in"]);
    expect(waited).toBe(true);
    doneA();
    const doneAlone = await alone;
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(["A in", "alone in"]);
    doneAlone();
    (await b)();
    expect(log).toEqual(["A in", "alone in", "B in"]);
  });

  it("two that run alone take turns", async () => {
    const turns = new AloneTurns();
    const first = await turns.alone();
    let second = false;
    const p = turns.alone().then((d) => ((second = true), d));
    await new Promise((r) => setTimeout(r, 10));
    expect(second).toBe(false);
    first();
    (await p)();
    expect(second).toBe(true);
  });
});
