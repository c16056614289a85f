// A persistent Ed25519 device identity as OpenClaw's gateway expects it.
//
// Wire contract (openclaw@2026.9.6, packages/gateway-client/src/device-auth.ts and
// src/infra/device-identity-store.ts, confirmed against dist/):
//   deviceId   = sha256(raw 32-byte Ed25519 public key), lowercase hex (64 chars)
//   publicKey  = raw 32-byte public key, base64url without padding
//   signature  = Ed25519 over the UTF-8 "v3|..." payload below, base64url without padding
//   payload v3 = v3|deviceId|clientId|clientMode|role|scopes(comma)|signedAtMs|token|nonce|platform|deviceFamily
//                (platform and deviceFamily trimmed and ASCII-lowercased; token "" when none)
// The gateway also still accepts the older v2 payload (the same without platform/deviceFamily).
//
// The identity lives in one JSON file, created on first use; device tokens the gateway
// issues are kept in the same file (keyed by role) so a restarted lab reuses them.
import { Redactor } from "../evidence/redact.ts";
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { z } from "zod";

const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

const StoredDeviceTokenSchema = z.object({
  token: z.string().min(1),
  scopes: z.array(z.string()),
  issuedAtMs: z.number().int().nonnegative(),
});
export type StoredDeviceToken = z.infer<typeof StoredDeviceTokenSchema>;

const IdentityFileSchema = z.object({
  version: z.literal(1),
  deviceId: z.string().regex(/^[a-f0-9]{64}$/),
  publicKeyPem: z.string().includes("BEGIN PUBLIC KEY"),
  privateKeyPem: z.string().includes("BEGIN PRIVATE KEY"),
  createdAtMs: z.number().int().nonnegative(),
  deviceTokens: z.record(z.string(), StoredDeviceTokenSchema).default({}),
});
type IdentityFile = z.infer<typeof IdentityFileSchema>;

export interface DeviceAuthPayloadParams {
  deviceId: string;
  clientId: string;
  clientMode: string;
  role: string;
  scopes: readonly string[];
  signedAtMs: number;
  /** The token the connect carries (auth.token ?? auth.deviceToken ?? auth.bootstrapToken). */
  token?: string | null;
  nonce: string;
  platform?: string;
  deviceFamily?: string;
}

/** OpenClaw's normalizeDeviceMetadataForAuth: trim, ASCII-only lowercase. */
function normalizeMetadata(value: string | undefined): string {
  const trimmed = (value ?? "").trim();
  return trimmed.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

/** The v3 connect signature payload (the one OpenClaw's own client signs). */
export function buildDeviceAuthPayloadV3(p: DeviceAuthPayloadParams): string {
  return [
    "v3",
    p.deviceId,
    p.clientId,
    p.clientMode,
    p.role,
    p.scopes.join(","),
    String(p.signedAtMs),
    p.token ?? "",
    p.nonce,
    normalizeMetadata(p.platform),
    normalizeMetadata(p.deviceFamily),
  ].join("|");
}

/** The legacy v2 payload, still accepted by the gateway; kept for tests and comparisons. */
export function buildDeviceAuthPayloadV2(p: Omit<DeviceAuthPayloadParams, "platform" | "deviceFamily">): string {
  return ["v2", p.deviceId, p.clientId, p.clientMode, p.role, p.scopes.join(","), String(p.signedAtMs), p.token ?? "", p.nonce].join("|");
}

export function rawPublicKey(publicKeyPem: string): Buffer {
  const der = crypto.createPublicKey(publicKeyPem).export({ type: "spki", format: "der" });
  if (der.length !== ED25519_SPKI_PREFIX.length + 32 || !der.subarray(0, ED25519_SPKI_PREFIX.length).equals(ED25519_SPKI_PREFIX)) {
    throw new Error("not an Ed25519 public key");
  }
  return der.subarray(ED25519_SPKI_PREFIX.length);
}

export function deriveDeviceId(publicKeyPem: string): string {
  return crypto.createHash("sha256").update(rawPublicKey(publicKeyPem)).digest("hex");
}

/** Verify a base64url signature against a base64url raw public key, as the gateway does. */
export function verifyDeviceSignature(publicKeyBase64Url: string, payload: string, signatureBase64Url: string): boolean {
  try {
    const key = crypto.createPublicKey({
      key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(publicKeyBase64Url, "base64url")]),
      type: "spki",
      format: "der",
    });
    return crypto.verify(null, Buffer.from(payload, "utf8"), key, Buffer.from(signatureBase64Url, "base64url"));
  } catch {
    return false;
  }
}

export interface SignedDevice {
  id: string;
  publicKey: string;
  signature: string;
  signedAt: number;
  nonce: string;
}

export class DeviceIdentity {
  readonly deviceId: string;
  readonly publicKeyPem: string;
  readonly publicKeyBase64Url: string;
  readonly createdAtMs: number;
  readonly #privateKey: crypto.KeyObject;
  readonly #privateKeyPem: string;
  #tokens: Record<string, StoredDeviceToken>;

  readonly file: string;
  private constructor(file: string, data: IdentityFile) {
    this.file = file;
    this.deviceId = data.deviceId;
    this.publicKeyPem = data.publicKeyPem;
    this.#privateKeyPem = data.privateKeyPem;
    this.#privateKey = crypto.createPrivateKey(data.privateKeyPem);
    this.publicKeyBase64Url = rawPublicKey(data.publicKeyPem).toString("base64url");
    this.createdAtMs = data.createdAtMs;
    this.#tokens = { ...data.deviceTokens };
    // Its tokens and key are credentials the run's final redaction pass must know.
    for (const t of Object.values(this.#tokens)) Redactor.credential(t.token);
    Redactor.credential(data.privateKeyPem.split("\n").find((l) => l && !l.startsWith("-----")));
  }

  /** Load the identity stored in `file`, or create and store a new one. */
  static loadOrCreate(file: string): DeviceIdentity {
    if (fs.existsSync(file)) {
      const text = fs.readFileSync(file, "utf8");
      let parsed: IdentityFile;
      try {
        parsed = IdentityFileSchema.parse(JSON.parse(text));
      } catch (err) {
        throw new Error(`device identity file ${file} is not valid: ${(err as Error).message}`);
      }
      const derived = deriveDeviceId(parsed.publicKeyPem);
      if (derived !== parsed.deviceId) {
        throw new Error(`device identity file ${file}: deviceId ${parsed.deviceId} does not match its public key (${derived})`);
      }
      const fromPrivate = crypto.createPublicKey(parsed.privateKeyPem).export({ type: "spki", format: "pem" });
      if (fromPrivate !== crypto.createPublicKey(parsed.publicKeyPem).export({ type: "spki", format: "pem" })) {
        throw new Error(`device identity file ${file}: private and public key do not belong together`);
      }
      return new DeviceIdentity(file, parsed);
    }
    const { publicKey, privateKey } = crypto.generateKeyPairSync("ed25519");
    const publicKeyPem = publicKey.export({ type: "spki", format: "pem" }) as string;
    const data: IdentityFile = {
      version: 1,
      deviceId: deriveDeviceId(publicKeyPem),
      publicKeyPem,
      privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
      createdAtMs: Date.now(),
      deviceTokens: {},
    };
    // Created once whoever asks first (two lanes, two clones share it): written aside, then
    // linked into place only if no file is there yet; the loser of a race loads the winner's.
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString("hex")}.new`;
    fs.writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    try {
      fs.linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      return DeviceIdentity.loadOrCreate(file);
    } finally {
      fs.rmSync(tmp, { force: true });
    }
    return new DeviceIdentity(file, data);
  }

  sign(payload: string): string {
    return crypto.sign(null, Buffer.from(payload, "utf8"), this.#privateKey).toString("base64url");
  }

  /** The `device` block of connect params, signed over the v3 payload. */
  signConnect(p: Omit<DeviceAuthPayloadParams, "deviceId">): SignedDevice {
    const payload = buildDeviceAuthPayloadV3({ ...p, deviceId: this.deviceId });
    return { id: this.deviceId, publicKey: this.publicKeyBase64Url, signature: this.sign(payload), signedAt: p.signedAtMs, nonce: p.nonce };
  }

  deviceToken(role: string): StoredDeviceToken | undefined {
    return this.#tokens[role];
  }

  saveDeviceToken(role: string, token: string, scopes: readonly string[]): void {
    Redactor.credential(token);
    this.#tokens[role] = { token, scopes: [...scopes], issuedAtMs: Date.now() };
    this.#save();
  }

  clearDeviceToken(role: string): void {
    if (!(role in this.#tokens)) return;
    delete this.#tokens[role];
    this.#save();
  }

  #save(): void {
    const data: IdentityFile = {
      version: 1,
      deviceId: this.deviceId,
      publicKeyPem: this.publicKeyPem,
      privateKeyPem: this.#privateKeyPem,
      createdAtMs: this.createdAtMs,
      deviceTokens: this.#tokens,
    };
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    // Write then rename so a crash never leaves half a key file behind.
    const tmp = `${this.file}.${process.pid}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, this.file);
  }
}

export function loadOrCreateDeviceIdentity(file: string): DeviceIdentity {
  return DeviceIdentity.loadOrCreate(file);
}
