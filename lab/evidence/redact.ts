// Credentials out of what the report embeds. The operator transcript is redacted when it is
// recorded, but the tap transcripts carry the node's connect frames as sent: the shared gateway
// token, device tokens and signatures in clear. A report is meant to be passed around, so
// everything it embeds goes through a Redactor first: string values under a credential key are
// replaced, and every value seen there (and the topology's gateway token) is also replaced
// wherever else it turns up (a token echoed inside some other string).

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

export class Redactor {
  readonly #known = new Set<string>();

  /** Values to replace wherever they occur (shorter than 8 characters: ignored, too likely to hit ordinary text). */
  constructor(secrets: Iterable<string> = []) {
    for (const s of secrets) this.remember(s);
  }

  remember(value: string): void {
    if (value.length >= 8 && value !== REDACTED) this.#known.add(value);
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

  /** Raw text (a frame that is not JSON): credential headers, "key":"value" pairs under a credential key, and known secrets replaced. */
  text(s: string): string {
    return this.known(this.#pairs(s.replace(AUTH_HEADER, (_m, name: string, sep: string) => `${name}${sep}${REDACTED}`)));
  }

  /**
   * A whole JSON text kept valid JSON: "key":"value" pairs under a credential key, and known
   * secrets, replaced where they stand (no header rule: it runs to the end of a line and would
   * cut a JSON string that quotes a header, as a worker's git set-up script does).
   */
  jsonText(s: string): string {
    return this.known(this.#pairs(s));
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
