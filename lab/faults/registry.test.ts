// The fault registry (no Docker): every kind listed once and reachable through the faults API,
// each saying where it is available, and no kind file left out of the list.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, expectTypeOf, it } from "vitest";
import { TeardownStack } from "../topology/teardown.ts";
import type { KillFault } from "./kill.ts";
import { FAMILIES, isFaultKind, type AnyFaultKind, type LabTraits } from "./kind.ts";
import { faults } from "./index.ts";
import type { PartitionFault } from "./partition.ts";
import { allFaults, availability, faultKind, faultsOf } from "./registry.ts";
import type { WireFault } from "./wire.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const kinds = allFaults as readonly AnyFaultKind[];

/** A lab as `available` and the faults API see it (no containers: makers refuse before they look). */
const fakeLab = (traits: { tap?: boolean; base?: boolean } = {}) => ({
  id: "lab-x",
  run: { id: "run-x" },
  teardown: new TeardownStack(),
  network: { name: "n", id: "n" },
  images: { base: { tag: traits.base === false ? "" : "fleetlab/base:x" } },
  spec: { tap: { enabled: traits.tap !== false } },
  tap: () => {
    throw new Error("no tap here");
  },
  member: (alias: string) => ({ alias, id: `${alias}-id`, ip: "10.0.0.2" }),
});

describe("fault registry", () => {
  it("lists every kind once, each with a family, a one-line description and at least one bench recipe", () => {
    const names = kinds.map((k) => k.name);
    expect(new Set(names).size).toBe(names.length);
    // The kinds the lab shipped with are all there (a new kind adds to this list, needs no edit here).
    for (const n of ["kill", "stop", "pause", "restart", "disconnect", "partition", "loss", "bandwidth", "wire.delay", "wire.drop", "wire.close", "wire.halfOpen", "wire.withholdPong", "wire.freeze", "wire.respond", "wire.inject"]) expect(names).toContain(n);
    for (const k of kinds) {
      expect(FAMILIES).toContain(k.family);
      expect(k.describe).toMatch(/^\S.{10,200}$/);
      expect(k.bench.length).toBeGreaterThan(0);
      for (const r of k.bench) expect([typeof r.label, typeof r.observedBy, typeof r.make]).toEqual(["string", "string", "function"]);
      // A "group.name" kind is a wire kind and the other way round.
      expect(k.name.startsWith("wire.")).toBe(k.family === "wire");
      expect(faultKind(k.name)).toBe(k);
    }
    for (const f of FAMILIES) expect(faultsOf(f).length).toBeGreaterThan(0);
  });

  it("every kind a file in lab/faults exports is registered (a kind file nobody listed fails here)", async () => {
    const files = fs.readdirSync(HERE).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"));
    const exported: string[] = [];
    for (const f of files) {
      const mod = (await import(path.join(HERE, f))) as Record<string, unknown>;
      for (const v of Object.values(mod)) if (isFaultKind(v)) exported.push(v.name);
    }
    expect([...new Set(exported)].sort()).toEqual(kinds.map((k) => k.name).sort());
  });

  it("the faults API has one maker per kind: faults.kill, faults.partition, faults.wire.close, ...", () => {
    for (const k of kinds) {
      const [group, name] = k.name.split(".");
      const maker = name ? (faults as unknown as Record<string, Record<string, unknown>>)[group!]![name] : (faults as unknown as Record<string, unknown>)[group!];
      expect(typeof maker, k.name).toBe("function");
    }
    expect(Object.keys(faults.wire).sort()).toEqual(["close", "delay", "drop", "freeze", "halfOpen", "inject", "respond", "withholdPong"]);
    expect(Object.keys(faults)).toEqual(expect.arrayContaining(["when", "injectWhen", "timelineOf"]));
    // The makers keep each kind's own signature and fault class.
    expectTypeOf(faults.kill).returns.toEqualTypeOf<KillFault>();
    expectTypeOf(faults.partition).parameter(2).toEqualTypeOf<string | string[]>();
    expectTypeOf(faults.partition).returns.toEqualTypeOf<PartitionFault>();
    expectTypeOf(faults.wire.close).parameter(1).toEqualTypeOf<number>();
    expectTypeOf(faults.wire.close).returns.toEqualTypeOf<WireFault>();
  });

  it("available: everything on a lab with taps and the base image; the reason otherwise", () => {
    expect(availability(fakeLab()).every((a) => a.available === true)).toBe(true);

    const noTap = availability(fakeLab({ tap: false }));
    for (const a of noTap) {
      if (a.family === "wire") expect(a.available).toMatch(/tap\.enabled false/);
      else expect(a.available).toBe(true);
    }
    // A test bed: no topology and no tap at all.
    const bed: LabTraits = { images: { base: { tag: "fleetlab/base:x" } } };
    for (const k of faultsOf("wire")) expect(k.available(bed)).toMatch(/needs a wire tap/);

    const noBase = Object.fromEntries(availability(fakeLab({ base: false })).map((a) => [a.name, a.available]));
    for (const n of ["partition", "loss", "bandwidth"]) expect(noBase[n]).toMatch(/needs the base image/);
    for (const n of ["kill", "stop", "pause", "restart", "disconnect"]) expect(noBase[n]).toBe(true);
  });

  it("a maker refuses where its kind is not available, naming the kind and the reason", () => {
    expect(() => faults.partition(fakeLab({ base: false }), "a", "b")).toThrow(/^fault partition is not available here: needs the base image/);
    expect(() => faults.wire.close({ lab: fakeLab({ tap: false }), node: "node-1" }, 1006)).toThrow(/^fault wire.close is not available here: needs wire taps/);
    // Where it is available, the maker makes the fault (not prepared: nothing registered yet).
    const lab = fakeLab();
    const f = faults.kill(lab, "a");
    expect([f.kind, f.target, f.state]).toEqual(["kill", "a", "new"]);
    expect(lab.teardown.pending).toEqual([]);
  });
});
