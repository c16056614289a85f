// The gateway client's transcript (lab/clients/gateway.ts): every frame in and out, credentials
// redacted; the entry format is an evidence record (lab/evidence/records/transcript.ts).
import fs from "node:fs";
import path from "node:path";
import { REDACTED, Redactor } from "../evidence/redact.ts";
import type { TranscriptEntry } from "../evidence/records/index.ts";
// ---------------------------------------------------------------------------------------
// Transcript

// The entry format is an evidence record (lab/evidence/records/transcript.ts): the report, the
// checks and the excerpts read the same declaration.
export type { TranscriptEntry } from "../evidence/records/index.ts";

/**
 * Deep copy with credential strings replaced; keeps evidence shareable. One rule for every writer
 * (lab/evidence/redact.ts): any key ending in token, secret, password, signature, authorization,
 * cookie or apiKey (tokens, device tokens, bootstrap tokens, connect signatures).
 */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = Redactor.isSecretKey(k) && typeof v === "string" ? REDACTED : redactSecrets(v);
    }
    return out;
  }
  return value;
}


/** Transcript entries as JSONL (one entry per line), the folder made when missing. */
export function writeTranscript(file: string, entries: readonly TranscriptEntry[]): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, entries.map((e) => JSON.stringify(e)).join("\n") + (entries.length ? "\n" : ""));
}

