import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildDeviceAuthPayloadV3 as referencePayloadV3 } from "@openclaw/gateway-client/browser";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  buildDeviceAuthPayloadV2,
  buildDeviceAuthPayloadV3,
  deriveDeviceId,
  loadOrCreateDeviceIdentity,
  verifyDeviceSignature,
} from "./device-identity.ts";

// Produced by openclaw@2026.9.6's own code (dist/device-auth-*.mjs buildDeviceAuthPayloadV3,
// dist/ed25519-signature-*.mjs signEd25519Payload / publicKeyRawBase64UrlFromEd25519Pem) for a
// key with a seed of 32 bytes of 0x07. Ed25519 is deterministic, so ours must match bit for bit.
const OPENCLAW_VECTOR = {
  privateKeyPem: "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIAcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcH\n-----END PRIVATE KEY-----\n",
  publicKeyPem: "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA6kpsY+KcUgq+9VB7Ey7F+ZVHdq6+vnuSQh7qaRRG0iw=\n-----END PUBLIC KEY-----\n",
  publicKey: "6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw",
  deviceId: "fe812c12f3ab4ce6ac5db69ac352f906cb1b11ef43fb33e252ef7ff552263889",
  params: {
    clientId: "cli",
    clientMode: "cli",
    role: "operator",
    scopes: ["operator.admin", "operator.read"],
    signedAtMs: 1737264000000,
    token: "shared-secret",
    nonce: "nonce-123",
    platform: " Linux ",
    deviceFamily: "Server",
  },
  payload:
    "v3|fe812c12f3ab4ce6ac5db69ac352f906cb1b11ef43fb33e252ef7ff552263889|cli|cli|operator|operator.admin,operator.read|1737264000000|shared-secret|nonce-123|linux|server",
  signature: "b3An4ObpJOaa-aHAZ5dNEINFy72SfSEpTIrD71m4bytCKlYZ2y20rLqlPfiYc3OvcuIzj7CT_8p6QWMeqJCwDw",
};

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-identity-"));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("device identity", () => {
  it("is created on first use and reloads with the same deviceId and keys", () => {
    const file = path.join(dir, "nested", "operator.json");
    const first = loadOrCreateDeviceIdentity(file);
    expect(fs.existsSync(file)).toBe(true);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(first.deviceId).toMatch(/^[a-f0-9]{64}$/);

    const again = loadOrCreateDeviceIdentity(file);
    expect(again.deviceId).toBe(first.deviceId);
    expect(again.publicKeyBase64Url).toBe(first.publicKeyBase64Url);
    // Same private key: a signature made after reload verifies with the first public key.
    expect(verifyDeviceSignature(first.publicKeyBase64Url, "x", again.sign("x"))).toBe(true);
  });

  it("derives deviceId as sha256 of the raw 32-byte public key, hex", () => {
    const identity = loadOrCreateDeviceIdentity(path.join(dir, "id.json"));
    const der = crypto.createPublicKey(identity.publicKeyPem).export({ type: "spki", format: "der" });
    const raw = der.subarray(der.length - 32);
    expect(identity.deviceId).toBe(crypto.createHash("sha256").update(raw).digest("hex"));
    expect(Buffer.from(identity.publicKeyBase64Url, "base64url").equals(raw)).toBe(true);
    expect(identity.publicKeyBase64Url).not.toMatch(/[=+/]/);
  });

  it("matches OpenClaw's own deviceId, payload and signature for a known key", () => {
    const file = path.join(dir, "vector.json");
    fs.writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        deviceId: OPENCLAW_VECTOR.deviceId,
        publicKeyPem: OPENCLAW_VECTOR.publicKeyPem,
        privateKeyPem: OPENCLAW_VECTOR.privateKeyPem,
        createdAtMs: 0,
      }),
    );
    const identity = loadOrCreateDeviceIdentity(file);
    expect(deriveDeviceId(OPENCLAW_VECTOR.publicKeyPem)).toBe(OPENCLAW_VECTOR.deviceId);
    expect(identity.publicKeyBase64Url).toBe(OPENCLAW_VECTOR.publicKey);
    expect(buildDeviceAuthPayloadV3({ deviceId: identity.deviceId, ...OPENCLAW_VECTOR.params })).toBe(OPENCLAW_VECTOR.payload);

    const device = identity.signConnect(OPENCLAW_VECTOR.params);
    expect(device).toEqual({
      id: OPENCLAW_VECTOR.deviceId,
      publicKey: OPENCLAW_VECTOR.publicKey,
      signature: OPENCLAW_VECTOR.signature,
      signedAt: OPENCLAW_VECTOR.params.signedAtMs,
      nonce: OPENCLAW_VECTOR.params.nonce,
    });
  });

  it("builds the same v3 payload as the published reference client, byte for byte", () => {
    const cases = [
      { ...OPENCLAW_VECTOR.params, deviceId: OPENCLAW_VECTOR.deviceId },
      { deviceId: "d", clientId: "gateway-client", clientMode: "backend", role: "operator", scopes: [], signedAtMs: 0, token: null, nonce: "n", platform: "linux" },
      { deviceId: "d", clientId: "gateway-client", clientMode: "backend", role: "operator", scopes: ["operator.read"], signedAtMs: 1, token: "t", nonce: "n", platform: "  ÄLinux ", deviceFamily: "X" },
    ];
    for (const c of cases) expect(buildDeviceAuthPayloadV3(c)).toBe(referencePayloadV3(c));
  });

  it("signs exactly the documented v3 payload (not v2, not another nonce)", () => {
    const identity = loadOrCreateDeviceIdentity(path.join(dir, "id.json"));
    const params = { clientId: "cli", clientMode: "cli", role: "operator", scopes: ["operator.read"], signedAtMs: 42, token: null, nonce: "n-1", platform: "linux" };
    const device = identity.signConnect(params);
    const v3 = buildDeviceAuthPayloadV3({ deviceId: identity.deviceId, ...params });
    expect(v3).toBe(`v3|${identity.deviceId}|cli|cli|operator|operator.read|42||n-1|linux|`);
    expect(verifyDeviceSignature(device.publicKey, v3, device.signature)).toBe(true);
    expect(verifyDeviceSignature(device.publicKey, buildDeviceAuthPayloadV2({ deviceId: identity.deviceId, ...params }), device.signature)).toBe(false);
    expect(verifyDeviceSignature(device.publicKey, v3.replace("n-1", "n-2"), device.signature)).toBe(false);
  });

  it("keeps issued device tokens beside the identity across reloads", () => {
    const file = path.join(dir, "id.json");
    const identity = loadOrCreateDeviceIdentity(file);
    expect(identity.deviceToken("operator")).toBeUndefined();
    identity.saveDeviceToken("operator", "tok-1", ["operator.read"]);
    const reloaded = loadOrCreateDeviceIdentity(file);
    expect(reloaded.deviceId).toBe(identity.deviceId);
    expect(reloaded.deviceToken("operator")).toMatchObject({ token: "tok-1", scopes: ["operator.read"] });
    reloaded.clearDeviceToken("operator");
    expect(loadOrCreateDeviceIdentity(file).deviceToken("operator")).toBeUndefined();
  });

  it("refuses a file whose deviceId does not belong to its key, naming the file", () => {
    const file = path.join(dir, "id.json");
    loadOrCreateDeviceIdentity(file);
    const data = JSON.parse(fs.readFileSync(file, "utf8"));
    data.deviceId = "0".repeat(64);
    fs.writeFileSync(file, JSON.stringify(data));
    expect(() => loadOrCreateDeviceIdentity(file)).toThrow(new RegExp(`${file}.*does not match`));
  });
});
