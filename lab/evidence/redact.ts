// Credentials out of every artifact. Run folders are uploaded by the nightly and attached to bug
// reports, so no credential the run issued or learned may stay in any file of them. Writers
// redact as they write (the operator transcript, the tap records, run.json, excerpts, the
// report), and `sealFolder` is the final pass over a whole run folder when the run ends: string
// values under a credential key, `key=value` forms and credential headers are replaced, and every
// value ever seen there (by any Redactor of this process: the gateway tokens of its labs, the
// operator's and the nodes' device tokens) is also replaced wherever else it turns up (a token
// echoed inside some other string, a container log, a file written before the token was learnt).
import fs from "node:fs";
import path from "node:path";
import { writeAtomic } from "./write.ts";

/** Keys whose string values are credentials: token, deviceToken, bootstrapToken, password,
 * clientSecret, signature, authorization (header or field), cookie, apiKey. Case-insensitive;
 * a key that only contains "token" as a count (inputTokens) does not end with it. */
const SECRET_KEY = /(^|[-_a-z])(token|password|passwd|secret|signature|authorization|cookie|api[-_]?key)$/i;

export const REDACTED = "[redacted]";

/** Plain-text header lines (`Authorization: Bearer ...`) in a non-JSON frame or log line. */
const AUTH_HEADER = /\b(authorization|proxy-authorization|cookie|set-cookie)(\s*:\s*)[^\r\n]+/gi;

/** A signature is made for one connect and is not replayable: hidden where it stands, not hunted
 * for elsewhere (every connect has its own; searching the whole report for each costs seconds). */
const SIGNATURE = /signature$/i;

/** A "key": "value" pair inside raw text (a JSON frame cut short, so not parseable). */
const JSON_PAIR = /"([A-Za-z_-]+)"(\s*:\s*)"([^"\\]*)"/g;

/** A `key=value` form under a credential key (a URL query, an environment line, a CLI flag's
 * `--token=...`): the value runs to a space, quote, `&`, `;`, `,` or backslash. */
const ASSIGNED = /\b([A-Za-z][A-Za-z0-9_-]*)=([^\s"'&;,\\<>]+)/g;

/** Every credential any Redactor of this process was given or learnt: the final pass over a run
 * folder replaces all of them (one run's token in another run's folder is hidden too: harmless). */
const everKnown = new Set<string>();

/** Shorter than 8 characters: too likely to hit ordinary text to be replaced everywhere. */
const worthHiding = (value: string) => value.length >= 8 && value !== REDACTED;

export class Redactor {
  readonly #known = new Set<string>();

  /** Values to replace wherever they occur (shorter than 8 characters: ignored, too likely to hit ordinary text). */
  constructor(secrets: Iterable<string> = []) {
    for (const s of secrets) this.remember(s);
  }

  remember(value: string): void {
    if (!worthHiding(value)) return;
    this.#known.add(value);
    everKnown.add(value);
  }

  /** Make `value` known to the final pass (a credential the lab issued or was given). */
  static credential(value: string | undefined): void {
    if (value && worthHiding(value)) everKnown.add(value);
  }

  /** A Redactor that knows every credential any Redactor of this process has seen. */
  static ofProcess(extra: Iterable<string> = []): Redactor {
    return new Redactor([...everKnown, ...extra]);
  }

  static isSecretKey(key: string): boolean {
    return SECRET_KEY.test(key);
  }

  /**
   * `value` with every string under a credential key replaced, IN PLACE (objects and arrays
   * are changed, not copied: pass data read for the report, freshly parsed). Other strings are
   * left to `known`, run once over the serialized report, which also catches a secret first
   * seen after the string that holds it.
   */
  value<T>(value: T): T {
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) value[i] = this.value(value[i]);
    } else if (value && typeof value === "object") {
      const o = value as Record<string, unknown>;
      for (const k of Object.keys(o)) {
        const v = o[k];
        if (typeof v === "string") {
          if (SECRET_KEY.test(k)) {
            if (!SIGNATURE.test(k)) this.remember(v);
            o[k] = REDACTED;
          }
        } else if (v && typeof v === "object") this.value(v);
      }
    }
    return value;
  }

  /** Raw text (a frame that is not JSON, a log line): credential headers, "key":"value" pairs and `key=value` forms under a credential key, and known secrets replaced. */
  text(s: string): string {
    return this.known(this.#assigned(this.#pairs(s.replace(AUTH_HEADER, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`))));
  }

  /**
   * A whole JSON text kept valid JSON: "key":"value" pairs under a credential key, and known
   * secrets, replaced where they stand (no header rule: it runs to the end of a line and would
   * cut a JSON string that quotes a header, as a worker's git set-up script does).
   */
  jsonText(s: string): string {
    return this.known(this.#assigned(this.#pairs(s)));
  }

  /** Learn the credentials in `s` without changing it: values under credential keys (in JSON
   * lines, also inside strings that hold JSON or `key=value` text) and in `key=value` forms. */
  learn(s: string): void {
    this.#assigned(this.#pairs(s));
    for (const line of s.split("\n")) {
      const t = line.trimStart();
      if (!t.startsWith("{") && !t.startsWith("[")) continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(t);
      } catch {
        continue;
      }
      this.#learnValue(parsed);
    }
  }

  #learnValue(v: unknown): void {
    if (typeof v === "string") {
      const t = v.trimStart();
      if (t.startsWith("{") || t.startsWith("[")) this.learn(t); // JSON held in a string: its pairs, forms and values
      else if (v.includes("=") || v.includes('"')) this.#assigned(this.#pairs(v));
    } else if (Array.isArray(v)) for (const x of v) this.#learnValue(x);
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
        if (typeof x === "string" && SECRET_KEY.test(k) && !SIGNATURE.test(k)) this.remember(x);
        else this.#learnValue(x);
      }
    }
  }

  #assigned(s: string): string {
    if (!s.includes("=")) return s;
    return s.replace(ASSIGNED, (m, key: string, v: string) => {
      if (!SECRET_KEY.test(key) || v === REDACTED) return m;
      if (!SIGNATURE.test(key)) this.remember(v);
      return `${key}=${REDACTED}`;
    });
  }

  #pairs(s: string): string {
    return s.replace(JSON_PAIR, (m, key: string, sep: string, v: string) => {
      if (!SECRET_KEY.test(key)) return m;
      if (!SIGNATURE.test(key)) this.remember(v);
      return `"${key}"${sep}"${REDACTED}"`;
    });
  }

  /** Every secret seen so far replaced in `s` (also on serialized JSON: a secret learnt from a
   * later frame is then replaced in an earlier one too; tokens hold no characters JSON escapes). */
  known(s: string): string {
    let out = s;
    for (const secret of this.#known) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }
}

/** Files the final pass reads and rewrites: the text formats a run folder holds (screenshots and archives are left alone). */
const TEXT_FILE = /\.(json|jsonl|ndjson|log|txt|html|xml|md|csv|out|err)$/i;
const JSON_FILE = /\.(json|jsonl|ndjson|html)$/i;

function* textFiles(dir: string): Generator<string> {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) yield* textFiles(p);
    else if (e.isFile() && TEXT_FILE.test(e.name)) yield p;
  }
}

/**
 * The final pass over a run folder (or any folder of artifacts): first every file is read to
 * learn the credentials in it, then every file holding one of them (or any credential this
 * process's Redactors knew, or `secrets`) is rewritten with them replaced, by temp file and
 * rename, its mode kept. JSON files stay valid JSON. Returns what it did, for the run's log.
 */
export function sealFolder(dir: string, secrets: Iterable<string> = []): { files: number; rewritten: string[]; ms: number } {
  const t0 = performance.now();
  if (!fs.existsSync(dir)) return { files: 0, rewritten: [], ms: 0 };
  const red = Redactor.ofProcess(secrets);
  // Each file read once: learnt from in the first pass, rewritten from the same text in the second.
  const files = [...textFiles(dir)].map((f) => ({ f, text: fs.readFileSync(f, "utf8") }));
  for (const { text } of files) red.learn(text);
  const rewritten: string[] = [];
  for (const { f, text } of files) {
    const out = JSON_FILE.test(f) ? red.jsonText(text) : red.text(text);
    if (out === text) continue;
    writeAtomic(f, out, { mode: fs.statSync(f).mode & 0o777 });
    rewritten.push(path.relative(dir, f));
  }
  return { files: files.length, rewritten, ms: Math.round(performance.now() - t0) };
}
