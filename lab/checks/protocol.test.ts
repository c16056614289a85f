import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { judge, type FindingRecord } from "../findings/findings.ts";
import { MALFORMED_ID, compareVersions, driftId, driftSignature, installedSchemas, judgeFrames, nearestSchema, normalisePointer, protocolExpectations, schemaFor, type WireFrame } from "./protocol.ts";
import { labFindings } from "./findings.ts";

// The real published schema installed with the lab (the version under test is 2026.9.6).
const { schema } = schemaFor("2026.9.6");

const helloOk = (extra: { auth?: object; presence?: object[] } = {}) => ({
  type: "hello-ok",
  protocol: 4,
  server: { version: "2026.9.6", connId: "c1" },
  features: { methods: ["node.list"], events: ["tick"] },
  snapshot: { presence: extra.presence ?? [], health: {}, stateVersion: { presence: 1, health: 1 }, uptimeMs: 5 },
  auth: { role: "operator", scopes: ["operator.read"], ...extra.auth },
  policy: { maxPayload: 1, maxBufferedBytes: 1, tickIntervalMs: 1000 },
});
const op = (frame: unknown, replyTo?: string): WireFrame => ({ source: "operator", ref: "t", path: "/", dir: "in", frame, replyTo });

describe("which published schema", () => {
  it("takes the newest installed version not newer than the one under test, else the oldest", () => {
    const installed = [{ version: "2026.8.1-beta.3", dir: "a" }, { version: "2026.9.1", dir: "b" }, { version: "2026.9.8", dir: "c" }];
    expect(nearestSchema(installed, "2026.9.6")?.schema.version).toBe("2026.9.1");
    expect(nearestSchema(installed, "2026.9.8")?.reason).toBe("same version");
    expect(nearestSchema(installed, "2026.8.1")?.schema.version).toBe("2026.8.1-beta.3");
    expect(nearestSchema(installed, "2026.7.0")?.schema.version).toBe("2026.8.1-beta.3");
    expect(nearestSchema([], "2026.9.6")).toBeUndefined();
    expect(compareVersions("2026.10.1", "2026.9.6")).toBeGreaterThan(0);
  });

  it("finds a second installed version under an npm alias by the name in its package.json", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-schemas-"));
    const put = (dir: string, version: string) => {
      fs.mkdirSync(path.join(root, "node_modules", dir), { recursive: true });
      fs.writeFileSync(path.join(root, "node_modules", dir, "package.json"), JSON.stringify({ name: "@openclaw/gateway-protocol", version }));
      fs.writeFileSync(path.join(root, "node_modules", dir, "protocol.schema.json"), "{}");
    };
    put("@openclaw/gateway-protocol", "2026.9.1");
    put("gateway-protocol-2026.9.6", "2026.9.6");
    fs.mkdirSync(path.join(root, "node_modules", "other"));
    fs.writeFileSync(path.join(root, "node_modules", "other", "package.json"), JSON.stringify({ name: "other", version: "1.0.0" }));
    expect(installedSchemas(root).map((s) => s.version)).toEqual(["2026.9.1", "2026.9.6"]);
    expect(nearestSchema(installedSchemas(root), "2026.9.6")?.schema.dir).toBe(path.join("node_modules", "gateway-protocol-2026.9.6"));
  });

  it("the lab has the published package installed", () => {
    expect(installedSchemas().map((s) => s.version)).toContain(schema.version);
  });
});

describe("a frame against the published schema", () => {
  it("a well-formed request and its answer are valid", () => {
    expect(schema.check(op({ type: "req", id: "1", method: "node.pair.approve", params: { requestId: "r1" } })).outcome).toBe("valid");
    expect(schema.check(op({ type: "res", id: "1", ok: true, payload: helloOk() }, "connect"))).toMatchObject({ outcome: "valid", schema: "HelloOk" });
  });

  it("fields the schema forbids are drift, with array indexes collapsed", () => {
    const v = schema.check(op({ type: "res", id: "1", ok: true, payload: helloOk({ auth: { method: "device-token" }, presence: [{ ts: 1 }, { ts: 2, clientId: "x" }] }) }, "connect"));
    expect(v).toMatchObject({ kind: "res connect", outcome: "drift", malformed: [] });
    expect(v.drift).toEqual(["auth.method", "snapshot.presence[].clientId"]);
  });

  it("a method the schema does not list is drift", () => {
    expect(schema.check(op({ type: "req", id: "1", method: "brand.new.method", params: {} }))).toMatchObject({ outcome: "drift", drift: ["(unknown method)"] });
  });

  it("a wrong type, a missing required field, a bad envelope or non-JSON text is malformed", () => {
    const wrongType = schema.check(op({ type: "req", id: "1", method: "node.pair.approve", params: { requestId: 7 } }));
    expect(wrongType).toMatchObject({ outcome: "malformed" });
    expect(wrongType.malformed[0]).toMatchObject({ path: "requestId", rule: "type" });
    expect(schema.check(op({ type: "res", id: "1", ok: true, payload: { ...helloOk(), auth: undefined } }, "connect")).outcome).toBe("malformed");
    expect(schema.check(op({ type: "req", id: 1, method: "node.list" })).malformed[0]).toMatchObject({ path: "id" });
    expect(schema.check(op({ type: "hello" })).outcome).toBe("malformed");
    expect(schema.check({ source: "tap-node-1", ref: "t", path: "/", dir: "node->gw", text: "{nope" }).outcome).toBe("malformed");
  });

  it("drift and a wrong type in one frame: malformed wins, the drift is still reported", () => {
    const v = schema.check(op({ type: "res", id: "1", ok: true, payload: { ...helloOk({ auth: { method: "x" } }), protocol: "4" } }, "connect"));
    expect(v.outcome).toBe("malformed");
    expect(v.drift).toEqual(["auth.method"]);
    expect(v.malformed.map((i) => i.path)).toEqual(["protocol"]);
  });

  it("what has no schema is unchecked, never valid", () => {
    expect(schema.check(op({ type: "event", event: "connect.challenge", payload: { nonce: "n", ts: 1 } }))).toMatchObject({ outcome: "unchecked" });
    expect(schema.check({ source: "tap-node-1", ref: "t", path: "/__openclaw__/worker", dir: "node->gw", frame: { type: "req", id: "1", method: "worker.live-event", params: {} } }).unchecked).toMatch(/worker dialect/);
    expect(schema.check({ source: "tap-node-1", ref: "t", path: "/", dir: "gw->node", text: "{", truncated: true }).outcome).toBe("unchecked");
  });

  it("normalises JSON pointers", () => {
    expect(normalisePointer("/snapshot/presence/12/clientId")).toBe("snapshot.presence[].clientId");
    expect(normalisePointer("/a~1b/0/0")).toBe("a/b[][]");
    expect(normalisePointer("")).toBe("");
  });
});

describe("expectations from a window of frames", () => {
  const schemaInfo = { package: "@openclaw/gateway-protocol", version: schema.version, dir: "x", reason: "test" };
  const report = (frames: WireFrame[]) => ({ ...judgeFrames(schema, frames), schema: schemaInfo });
  const drifted = op({ type: "res", id: "1", ok: true, payload: helloOk({ auth: { method: "token" } }) }, "connect");
  const clean = op({ type: "res", id: "2", ok: true, payload: helloOk() }, "connect");
  const record: FindingRecord = { id: driftId("res connect", "auth.method"), expectation: "x", signature: driftSignature("res connect", "auth.method", schema.version), versions: ["2026.9.6"], kind: "differs-from-reference", evidence: "x" };

  it("a malformed frame fails the verdict unless registered", () => {
    const ex = protocolExpectations(report([op({ type: "req", id: 1, method: "node.list" })]), []);
    const m = ex.find((e) => e.id === MALFORMED_ID)!;
    expect(m.holds).toBe(false);
    expect(judge([], { ...m, scenario: "s", version: "2026.9.6" }).outcome).toBe("fail");
  });

  it("registered drift reads as a known finding; new drift fails; a clean frame of that kind reads fixed?", () => {
    const seen = protocolExpectations(report([drifted]), [record]);
    expect(seen.find((e) => e.id === MALFORMED_ID)?.holds).toBe(true);
    const d = seen.find((e) => e.id === record.id)!;
    expect(judge([record], { ...d, scenario: "s", version: "2026.9.6" }).outcome).toBe("known-finding");
    expect(judge([], { ...d, scenario: "s", version: "2026.9.6" }).outcome).toBe("fail");

    const fixed = protocolExpectations(report([clean]), [record]).find((e) => e.id === record.id)!;
    expect(judge([record], { ...fixed, scenario: "s", version: "2026.9.6" }).outcome).toBe("fixed?");
    expect(protocolExpectations(report([op({ type: "event", event: "tick", payload: { ts: 1 } })]), [record]).map((e) => e.id)).toEqual([MALFORMED_ID]);
  });

  it("no frame in the window: nothing is claimed", () => {
    expect(protocolExpectations(report([]), [record])).toEqual([]);
  });

  it("every lab-wide drift record has the id and signature the check produces", () => {
    for (const r of labFindings.filter((f) => f.id.startsWith("F-protocol-drift "))) {
      const s = r.signature as { frame: string; path: string; schema: string };
      expect(r.id).toBe(driftId(s.frame, s.path));
      expect(r.signature).toEqual(driftSignature(s.frame, s.path, s.schema));
    }
  });
});
