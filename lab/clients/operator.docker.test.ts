// The operator's connect against the real gateway (fresh state, the lab's persistent operator
// identity carrying a device token an earlier gateway issued): the stale token costs no refused
// connect, and once the device is paired every connect is exactly one request answered
// hello-ok. Counted from the transcript, where the lab's verdicts read it too.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Run } from "../evidence/run.ts";
import { OPERATOR_DIR } from "../core/paths.ts";
import { Lab } from "../topology/lab.ts";
import { parseTopology } from "../definitions/spec.ts";
import { loadOrCreateDeviceIdentity } from "./device-identity.ts";
import { GatewayClient, type TranscriptEntry } from "./gateway.ts";
import { OPERATOR_ADMIN_SCOPES } from "./operator.ts";

const STALE = "stale-token-from-an-earlier-gateway";
let lab: Lab | undefined;

/** Each connect request with its answer: "hello-ok", or the refusal's details.code. */
function connects(t: readonly TranscriptEntry[]): { auth: string[]; client: unknown; answer: string }[] {
  return t
    .filter((e) => e.dir === "out" && e.method === "connect")
    .map((req) => {
      const res = t.find((e) => e.dir === "in" && e.id === req.id && (e.kind === "res" || e.kind === "anomaly"));
      const frame = res?.frame as { ok?: boolean; payload?: { type?: string }; error?: { details?: { code?: string } } } | undefined;
      const params = (req.frame as { params: { auth?: Record<string, unknown>; client: unknown } }).params;
      return {
        auth: Object.keys(params.auth ?? {}).filter((k) => params.auth![k] !== undefined),
        client: params.client,
        answer: !res ? "no answer" : frame?.ok ? (frame.payload?.type ?? "ok") : (frame?.error?.details?.code ?? "refused"),
      };
    });
}

beforeAll(async () => {
  // Every lab run meets a fresh gateway with the persistent identity and the token the last
  // gateway issued; make that so here even on a first checkout.
  loadOrCreateDeviceIdentity(path.join(OPERATOR_DIR, "identity.json")).saveDeviceToken("operator", STALE, [...OPERATOR_ADMIN_SCOPES]);
  const run = Run.create({ root: fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-operator-")) });
  // A fresh gateway (no snapshot of paired state): the operator must be paired from scratch.
  lab = await Lab.up(parseTopology({ nodes: { count: 0 }, mcp: { servers: [] } }), run, "lab", { snapshot: "fresh" });
}, 600_000);

afterAll(async () => {
  await lab?.down();
});

describe("the operator's connect to a real gateway", () => {
  it("bring-up: the stale device token is never sent; the only refusal is the fresh gateway's pairing of a new device", () => {
    const seen = connects(lab!.operator.client.transcript());
    expect(seen.map((c) => c.answer)).toEqual(["PAIRING_REQUIRED", "hello-ok"]);
    for (const c of seen) expect(c.auth).toEqual(["token"]);
    expect(seen[0]!.client).toMatchObject({ id: "gateway-client", mode: "backend" });
    expect(JSON.stringify(lab!.operator.client.transcript())).not.toContain("AUTH_DEVICE_TOKEN_MISMATCH");
  });

  it("a connect with the paired persistent identity is exactly one connect request, answered hello-ok", async () => {
    const identity = loadOrCreateDeviceIdentity(path.join(OPERATOR_DIR, "identity.json"));
    expect(identity.deviceToken("operator")?.token).not.toBe(STALE); // bring-up stored the issued one
    const client = new GatewayClient({ name: "second" });
    const hello = await client.connect(lab!.gatewayUrl, { token: lab!.spec.gateway.token, identity, scopes: [...OPERATOR_ADMIN_SCOPES], caps: ["approvals", "plugin-approvals"] });
    expect(hello.auth).toMatchObject({ role: "operator", scopes: expect.arrayContaining([...OPERATOR_ADMIN_SCOPES]) });
    expect(connects(client.transcript())).toEqual([{ auth: ["token"], client: expect.objectContaining({ id: "gateway-client", mode: "backend" }), answer: "hello-ok" }]);
    expect(new Set(client.transcript().map((e) => e.conn))).toEqual(new Set(["second#1"]));

    // The gateway's ticks keep the watchdog quiet, and its event sequence runs without gaps.
    const tickMs = hello.policy.tickIntervalMs;
    await client.waitForEvent("tick", () => true, tickMs * 2 + 5_000);
    expect(client.connected).toBe(true);
    expect(client.anomalies().filter((a) => a.gap)).toEqual([]);
    const notes = client.anomalies().map((a) => a.anomaly?.reason);
    if (notes.length) console.log(`anomalies recorded against the published schema (2026.9.1):\n${JSON.stringify(client.anomalies(), null, 1)}`);

    await client.close();
    expect(client.transcript().at(-1)).toMatchObject({ kind: "close", conn: "second#1", note: "code 1000 reason client closing (closed by the lab)" });
    const file = path.join(lab!.dir, "transcripts", "second.jsonl");
    client.saveTranscript(file);
    console.log(`transcript: ${file}`);
  }, 120_000);
});
