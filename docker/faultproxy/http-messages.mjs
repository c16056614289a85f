// HTTP/1.1 message boundaries on a byte stream, for a tap that forwards the bytes unchanged.
// The parser never rewrites anything: it only says where a head ends, how many body bytes follow
// (Content-Length, chunked, or until close), when a message is complete (keep-alive: several per
// connection), and when the connection switches protocols (101 after an Upgrade request).
//
// feed(buf) returns events in stream order; every input byte is in exactly one event's `raw`
// (except bytes held while an upgrade is pending, handed back by resolveUpgrade):
//   { type: "head", raw, head }     head = { method, path, status, headers, upgrade, ... }
//   { type: "body", raw, n }        n = payload bytes in raw (chunk framing not counted)
//   { type: "end" }                 the message is complete
//   { type: "switch", raw }         protocol switched; raw = bytes after the 101 head
//   { type: "raw", raw }            unparseable / tunneled bytes, passed on as they are

const MAX_HEAD = 64 * 1024;
const CRLF2 = Buffer.from("\r\n\r\n");

function parseHead(text, role) {
  const lines = text.split("\r\n");
  while (lines.length && lines[0] === "") lines.shift(); // tolerated leading empty lines
  const start = lines.shift() ?? "";
  const headers = {};
  for (const line of lines) {
    const i = line.indexOf(":");
    if (i <= 0) continue;
    const k = line.slice(0, i).trim().toLowerCase();
    const v = line.slice(i + 1).trim();
    headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  }
  const head = { headers };
  if (role === "request") {
    const m = /^(\S+)\s+(\S+)\s+HTTP\/(\d\.\d)$/.exec(start);
    if (!m) return null;
    head.method = m[1].toUpperCase();
    head.target = m[2];
    head.path = m[2].split("?")[0];
    const conn = (headers.connection ?? "").toLowerCase();
    head.upgrade = headers.upgrade !== undefined && conn.split(",").some((t) => t.trim() === "upgrade") ? headers.upgrade.toLowerCase() : null;
  } else {
    const m = /^HTTP\/(\d\.\d)\s+(\d{3})(?:\s.*)?$/.exec(start);
    if (!m) return null;
    head.status = Number(m[2]);
  }
  const te = (headers["transfer-encoding"] ?? "").toLowerCase();
  head.chunked = te.split(",").some((t) => t.trim() === "chunked");
  const cl = headers["content-length"];
  head.contentLength = cl !== undefined && /^\d+$/.test(cl.split(",")[0].trim()) ? Number(cl.split(",")[0].trim()) : null;
  return head;
}

export class HttpParser {
  /**
   * role "request" (node -> gateway) or "response" (gateway -> node). A response parser needs
   * `requestFor()`: the head of the oldest request still waiting for its response (HEAD requests
   * and upgrades change how a response is framed).
   */
  constructor(role, { requestFor } = {}) {
    this.role = role;
    this.requestFor = requestFor ?? (() => null);
    this.state = "head";
    this.headAcc = Buffer.alloc(0);
    this.remaining = 0; // body-len / chunk-data
    this.line = ""; // chunk-size / trailer line being read
    this.held = []; // bytes held while an upgrade is pending
  }

  feed(buf) {
    const ev = [];
    let pos = 0;
    let bodyStart = -1;
    let bodyN = 0;
    const flushBody = (end) => {
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
          const head = parseHead(raw.toString("latin1"), this.role);
          if (!head) {
            this.state = "raw";
            ev.push({ type: "raw", raw });
            break;
          }
          ev.push({ type: "head", raw, head });
          this.#afterHead(head, ev);
          if (this.state === "switched") {
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
          const size = parseInt(line.split(";")[0].trim(), 16);
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

  #afterHead(head, ev) {
    if (this.role === "request") {
      if (head.upgrade) {
        this.state = "await-upgrade";
        return;
      }
      if (head.chunked) this.state = "chunk-size";
      else if (head.contentLength) {
        this.state = "body-len";
        this.remaining = head.contentLength;
      } else this.#endMessage(ev);
      return;
    }
    const req = this.requestFor();
    const s = head.status;
    if (s === 101) {
      this.state = "switched";
      return;
    }
    if (s >= 100 && s < 200) {
      head.informational = true; // 100 Continue etc.: the final response is still to come
      this.state = "head";
      return;
    }
    if (req?.method === "HEAD" || s === 204 || s === 304) this.#endMessage(ev);
    else if (req?.method === "CONNECT" && s >= 200 && s < 300) {
      this.state = "switched";
    } else if (head.chunked) this.state = "chunk-size";
    else if (head.contentLength !== null) {
      if (head.contentLength === 0) this.#endMessage(ev);
      else {
        this.state = "body-len";
        this.remaining = head.contentLength;
      }
    } else this.state = "body-eof";
  }

  #endMessage(ev) {
    ev.push({ type: "end" });
    this.state = "head";
  }

  /** The request side's answer to its pending upgrade: returns the bytes held meanwhile. */
  resolveUpgrade(accepted) {
    const held = this.held.length ? Buffer.concat(this.held) : Buffer.alloc(0);
    this.held = [];
    this.state = accepted ? "switched" : "head";
    return held;
  }

  /** The stream ended: a body read until close is complete now. */
  finish() {
    if (this.state === "body-eof") {
      this.state = "head";
      return [{ type: "end" }];
    }
    return [];
  }
}
