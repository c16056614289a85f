// HTTP/1.1 message boundaries on a byte stream, for a tap that forwards the bytes unchanged.
// The parser never rewrites anything: it only says where a head ends, how many body bytes follow
// (Content-Length, chunked, or until close), when a message is complete (keep-alive: several per
// connection), and when the connection switches protocols (101 after an Upgrade request).
//
// feed(buf) returns events in stream order; every input byte is in exactly one event's `raw`
// (except bytes held while an upgrade is pending, handed back by resolveUpgrade):
//   { type: "head", raw, head }     head: a RequestHead or a ResponseHead (below)
//   { type: "body", raw, n }        n = payload bytes in raw (chunk framing not counted)
//   { type: "end" }                 the message is complete
//   { type: "switch", raw }         protocol switched; raw = bytes after the 101 head
//   { type: "raw", raw }            unparseable / tunneled bytes, passed on as they are

const MAX_HEAD = 64 * 1024;
const CRLF2 = Buffer.from("\r\n\r\n");

interface HeadBase {
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  chunked: boolean;
  contentLength: number | null;
}

export interface RequestHead extends HeadBase {
  method: string;
  target: string;
  /** The target without its query string. */
  path: string;
  /** The Upgrade protocol (lower case) when the request asks to switch, else null. */
  upgrade: string | null;
}

export interface ResponseHead extends HeadBase {
  status: number;
  /** 1xx other than 101: the final response is still to come. */
  informational?: boolean;
}

export type HttpEvent<H> =
  | { type: "head"; raw: Buffer; head: H }
  | { type: "body"; raw: Buffer; n: number }
  | { type: "end" }
  | { type: "switch"; raw: Buffer }
  | { type: "raw"; raw: Buffer };

type Role = "request" | "response";
type State = "head" | "raw" | "await-upgrade" | "switched" | "body-len" | "body-eof" | "chunk-size" | "trailer" | "chunk-data" | "chunk-crlf";

function parseHead(text: string, role: Role): RequestHead | ResponseHead | null {
  const lines = text.split("\r\n");
  while (lines.length && lines[0] === "") lines.shift(); // tolerated leading empty lines
  const start = lines.shift() ?? "";
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(":");
    if (i <= 0) continue;
    const k = line.slice(0, i).trim().toLowerCase();
    const v = line.slice(i + 1).trim();
    headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  }
  const te = (headers["transfer-encoding"] ?? "").toLowerCase();
  const chunked = te.split(",").some((t) => t.trim() === "chunked");
  const cl = headers["content-length"];
  const contentLength = cl !== undefined && /^\d+$/.test(cl.split(",")[0]!.trim()) ? Number(cl.split(",")[0]!.trim()) : null;
  if (role === "request") {
    const m = /^(\S+)\s+(\S+)\s+HTTP\/(\d\.\d)$/.exec(start);
    if (!m) return null;
    const conn = (headers.connection ?? "").toLowerCase();
    const upgrade = headers.upgrade !== undefined && conn.split(",").some((t) => t.trim() === "upgrade") ? headers.upgrade.toLowerCase() : null;
    return { headers, method: m[1]!.toUpperCase(), target: m[2]!, path: m[2]!.split("?")[0]!, upgrade, chunked, contentLength };
  }
  const m = /^HTTP\/(\d\.\d)\s+(\d{3})(?:\s.*)?$/.exec(start);
  if (!m) return null;
  return { headers, status: Number(m[2]), chunked, contentLength };
}

/**
 * role "request" (node -> gateway) parses RequestHeads, "response" (gateway -> node)
 * ResponseHeads. A response parser needs `requestFor()`: the head of the oldest request still
 * waiting for its response (HEAD requests and upgrades change how a response is framed).
 */
export class HttpParser<H extends RequestHead | ResponseHead> {
  readonly role: Role;
  readonly requestFor: () => RequestHead | null;
  state: State = "head";
  headAcc: Buffer = Buffer.alloc(0);
  /** body-len / chunk-data bytes still to come. */
  remaining = 0;
  /** chunk-size / trailer line being read. */
  line = "";
  /** Bytes held while an upgrade is pending. */
  held: Buffer[] = [];

  constructor(role: H extends RequestHead ? "request" : "response", opts: { requestFor?: () => RequestHead | null } = {}) {
    this.role = role;
    this.requestFor = opts.requestFor ?? (() => null);
  }

  feed(buf: Buffer): HttpEvent<H>[] {
    const ev: HttpEvent<H>[] = [];
    let pos = 0;
    let bodyStart = -1;
    let bodyN = 0;
    const flushBody = (end: number) => {
      if (bodyStart >= 0 && end > bodyStart) ev.push({ type: "body", raw: buf.subarray(bodyStart, end), n: bodyN });
      bodyStart = -1;
      bodyN = 0;
    };
    const startBody = () => {
      if (bodyStart < 0) bodyStart = pos;
    };
    while (pos < buf.length) {
      switch (this.state) {
        case "raw":
          flushBody(pos);
          ev.push({ type: "raw", raw: buf.subarray(pos) });
          return ev;
        case "await-upgrade":
          this.held.push(buf.subarray(pos));
          return ev;
        case "head": {
          const acc = this.headAcc.length ? Buffer.concat([this.headAcc, buf.subarray(pos)]) : buf.subarray(pos);
          const idx = acc.indexOf(CRLF2);
          if (idx < 0) {
            if (acc.length > MAX_HEAD) {
              this.state = "raw";
              this.headAcc = Buffer.alloc(0);
              ev.push({ type: "raw", raw: acc });
              return ev;
            }
            this.headAcc = Buffer.from(acc);
            return ev;
          }
          const prior = this.headAcc.length;
          const headEnd = idx + 4;
          const raw = acc.subarray(0, headEnd);
          this.headAcc = Buffer.alloc(0);
          pos += headEnd - prior;
          const head = parseHead(raw.toString("latin1"), this.role) as H | null;
          if (!head) {
            this.state = "raw";
            ev.push({ type: "raw", raw });
            break;
          }
          ev.push({ type: "head", raw, head });
          this.#afterHead(head, ev);
          if ((this.state as State) === "switched") {
            ev.push({ type: "switch", raw: buf.subarray(pos) });
            return ev;
          }
          break;
        }
        case "body-len": {
          startBody();
          const k = Math.min(this.remaining, buf.length - pos);
          pos += k;
          bodyN += k;
          this.remaining -= k;
          if (this.remaining === 0) {
            flushBody(pos);
            this.#endMessage(ev);
          }
          break;
        }
        case "body-eof":
          startBody();
          bodyN += buf.length - pos;
          pos = buf.length;
          break;
        case "chunk-size":
        case "trailer": {
          startBody();
          const nl = buf.indexOf(10, pos);
          const end = nl < 0 ? buf.length : nl + 1;
          this.line += buf.toString("latin1", pos, end);
          pos = end;
          if (nl < 0) {
            if (this.line.length > MAX_HEAD) {
              flushBody(pos);
              this.state = "raw";
            }
            break;
          }
          const line = this.line.replace(/\r?\n$/, "");
          this.line = "";
          if (this.state === "trailer") {
            if (line === "") {
              flushBody(pos);
              this.#endMessage(ev);
            }
            break;
          }
          const size = parseInt(line.split(";")[0]!.trim(), 16);
          if (!Number.isFinite(size) || size < 0) {
            flushBody(pos);
            this.state = "raw";
            break;
          }
          if (size === 0) this.state = "trailer";
          else {
            this.state = "chunk-data";
            this.remaining = size;
          }
          break;
        }
        case "chunk-data": {
          startBody();
          const k = Math.min(this.remaining, buf.length - pos);
          pos += k;
          bodyN += k;
          this.remaining -= k;
          if (this.remaining === 0) {
            this.state = "chunk-crlf";
            this.remaining = 2;
          }
          break;
        }
        case "chunk-crlf": {
          startBody();
          const k = Math.min(this.remaining, buf.length - pos);
          pos += k;
          this.remaining -= k;
          if (this.remaining === 0) this.state = "chunk-size";
          break;
        }
        default:
          throw new Error(`http parser in state ${this.state}`);
      }
    }
    flushBody(pos);
    return ev;
  }

  #afterHead(h: RequestHead | ResponseHead, ev: HttpEvent<H>[]): void {
    if ("method" in h) {
      if (h.upgrade) {
        this.state = "await-upgrade";
        return;
      }
      if (h.chunked) this.state = "chunk-size";
      else if (h.contentLength) {
        this.state = "body-len";
        this.remaining = h.contentLength;
      } else this.#endMessage(ev);
      return;
    }
    const req = this.requestFor();
    const s = h.status;
    if (s === 101) {
      this.state = "switched";
      return;
    }
    if (s >= 100 && s < 200) {
      h.informational = true; // 100 Continue etc.: the final response is still to come
      this.state = "head";
      return;
    }
    if (req?.method === "HEAD" || s === 204 || s === 304) this.#endMessage(ev);
    else if (req?.method === "CONNECT" && s >= 200 && s < 300) {
      this.state = "switched";
    } else if (h.chunked) this.state = "chunk-size";
    else if (h.contentLength !== null) {
      if (h.contentLength === 0) this.#endMessage(ev);
      else {
        this.state = "body-len";
        this.remaining = h.contentLength;
      }
    } else this.state = "body-eof";
  }

  #endMessage(ev: HttpEvent<H>[]): void {
    ev.push({ type: "end" });
    this.state = "head";
  }

  /** The request side's answer to its pending upgrade: returns the bytes held meanwhile. */
  resolveUpgrade(accepted: boolean): Buffer {
    const held = this.held.length ? Buffer.concat(this.held) : Buffer.alloc(0);
    this.held = [];
    this.state = accepted ? "switched" : "head";
    return held;
  }

  /** The stream ended: a body read until close is complete now. */
  finish(): HttpEvent<H>[] {
    if (this.state === "body-eof") {
      this.state = "head";
      return [{ type: "end" }];
    }
    return [];
  }
}
