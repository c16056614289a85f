import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { Run, checkGivenRunId, newRunId, readRunRecord } from "./run.ts";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-run-"));

describe("run.json", () => {
  it("is written through one schema and read back with it", () => {
    const run = Run.create({ root, seed: 7 });
    run.update((r) => void r.scenarios.push({ name: "smoke", verdict: "pass", seconds: 1.5 }));
    run.time("up", 2.3456);
    const back = readRunRecord(path.join(run.dir, "run.json"));
    expect(back.seed).toBe(7);
    expect(back.scenarios).toEqual([{ name: "smoke", verdict: "pass", seconds: 1.5 }]);
    expect(back.timings.up).toBe(2.346);
  });

  it("a writer that breaks the schema fails naming the field, and nothing is written", () => {
    const run = Run.create({ root, seed: 1 });
    expect(() => run.update((r) => void r.scenarios.push({ name: "x", verdict: "passed" as never, seconds: 1 }))).toThrow(/scenarios\.0\.verdict/);
    expect(() => run.update((r) => void ((r as Record<string, unknown>).whatever = 1))).toThrow(/whatever/);
  });

  it("a cut or foreign run.json is named as such, not trusted", () => {
    const dir = fs.mkdtempSync(path.join(root, "cut-"));
    fs.writeFileSync(path.join(dir, "run.json"), '{"id": "x", "seed": 1, "scen');
    expect(() => readRunRecord(path.join(dir, "run.json"))).toThrow(/not readable JSON.*cut/);
    fs.writeFileSync(path.join(dir, "run.json"), JSON.stringify({ id: "x", seed: 1 }));
    expect(() => readRunRecord(path.join(dir, "run.json"))).toThrow(/not a fleetlab run record: startedAt/);
  });
});

describe("run ids", () => {
  it("carry 64 random bits; a given one is checked as a path and a label, and refused when a run has it", () => {
    expect(newRunId(new Date("2026-12-01T10:00:00Z"))).toMatch(/^20261201-100000-[0-9a-f]{16}$/);
    const runs = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-runs-"));
    expect(checkGivenRunId("runner-abc.1", runs)).toBe("runner-abc.1");
    expect(() => checkGivenRunId("../etc", runs)).toThrow(/a run id is 1-64 of/);
    expect(() => checkGivenRunId("x".repeat(65), runs)).toThrow(/a run id is 1-64 of/);
    fs.mkdirSync(path.join(runs, "taken"));
    expect(() => checkGivenRunId("taken", runs)).toThrow(/a run with this id exists already/);
  });
});

describe("run.json holds no credential", () => {
  it("the gateway's shared token of the topology and of every lab's spec is written hidden, and kept in memory", () => {
    const run = Run.create({ root, seed: 1 });
    const token = "a-custom-gateway-token-123456";
    run.update((r) => {
      r.topology = { gateway: { token, port: 1 } };
      r.labs = { l1: { evidence: "x", spec: { gateway: { token } }, network: { name: "n", id: "i", subnet: "s" }, members: [], timings: {} } };
    });
    const text = fs.readFileSync(path.join(run.dir, "run.json"), "utf8");
    expect(text).not.toContain(token);
    expect(readRunRecord(path.join(run.dir, "run.json")).topology).toEqual({ gateway: { token: "[redacted]", port: 1 } });
    expect((run.record.topology as { gateway: { token: string } }).gateway.token).toBe(token);
  });
});
