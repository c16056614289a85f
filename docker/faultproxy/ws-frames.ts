// WebSocket frames as they pass the tap (RFC 6455 + RFC 7692): an incremental parser that hands
// back each complete frame with its original bytes (forwarded untouched) and an unmasked copy of
// its payload (for recording), message assembly across fragments, permessage-deflate decoding
// for the record, and the close frames the tap itself sends when a rule closes a connection.
//
// Nothing here writes to a socket: the proxy decides what happens to each frame.

import crypto from "node:crypto";
import zlib from "node:zlib";

/** The frame kinds a tap rule may name (lab/faults and docker/faultproxy/rules.ts). */
export type OpcodeName = "text" | "binary" | "close" | "ping" | "pong" | "continuation";

export const OP = { CONT: 0x0, TEXT: 0x1, BINARY: 0x2, CLOSE: 0x8, PING: 0x9, PONG: 0xa } as const;
export const OPCODE_NAMES: Record<OpcodeName, number> = { text: OP.TEXT, binary: OP.BINARY, close: OP.CLOSE, ping: OP.PING, pong: OP.PONG, continuation: OP.CONT };

/** One complete frame. */
export interface ParsedFrame {
  fin: boolean;
  rsv1: boolean;
  opcode: number;
  masked: boolean;
  len: number;
  /** The frame's original bytes, forwarded untouched. */
  raw: Buffer;
  /** An unmasked copy of the payload, for the record. */
  payload: Buffer;
  /** When its last chunk arrived (ms since the epoch); set by the proxy. */
  t: number;
}

/** What the proxy decides on: a control frame alone, or a whole data message. */
export interface Unit {
  frames: ParsedFrame[];
  opcode: number;
  compressed: boolean;
}

/** A FIFO of byte chunks that avoids re-concatenating a large frame on every arriving chunk. */
class ByteQueue {
  chunks: Buffer[] = [];
  length = 0;

  push(buf: Buffer): void {
    if (buf.length === 0) return;
    this.chunks.push(buf);
    this.length += buf.length;
  }

  /** The first n bytes (n <= length) without consuming them. */
  peek(n: number): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= n) return first.subarray(0, n);
    const parts: Buffer[] = [];
    let have = 0;
    for (const c of this.chunks) {
      if (have >= n) break;
      parts.push(c);
      have += c.length;
    }
    return Buffer.concat(parts).subarray(0, n);
  }

  /** Removes and returns the first n bytes (n <= length); one copy at most. */
  take(n: number): Buffer {
    this.length -= n;
    const first = this.chunks[0]!;
    if (first.length === n) return this.chunks.shift()!;
    if (first.length > n) {
      this.chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let off = 0;
    while (off < n) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length, n - off);
      c.copy(out, off, 0, k);
      off += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    return out;
  }

  drain(): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.length);
    this.chunks = [];
    this.length = 0;
    return all;
  }
}

export class FrameError extends Error {}

/**
 * Incremental frame parser for one direction of one connection.
 * push(chunk) returns the frames completed by that chunk.
 * Throws FrameError on bytes that cannot be a frame; the caller then stops parsing.
 */
export class FrameParser {
  #q = new ByteQueue();

  /** Bytes received but not yet part of a complete frame. */
  get pending(): number {
    return this.#q.length;
  }

  /** Hands back (and forgets) the unparsed bytes, e.g. when the caller gives up parsing. */
  drain(): Buffer {
    return this.#q.drain();
  }

  push(chunk: Buffer): ParsedFrame[] {
    this.#q.push(chunk);
    const frames: ParsedFrame[] = [];
    for (;;) {
      const q = this.#q;
      if (q.length < 2) break;
      const h = q.peek(Math.min(q.length, 14));
      const b0 = h[0]!;
      const b1 = h[1]!;
      const opcode = b0 & 0x0f;
      if ((opcode > 0x2 && opcode < 0x8) || opcode > 0xa) throw new FrameError(`invalid opcode ${opcode}`);
      const masked = (b1 & 0x80) !== 0;
      let len = b1 & 0x7f;
      let headerLen = 2;
      if (len === 126) {
        if (h.length < 4) break;
        len = h.readUInt16BE(2);
        headerLen = 4;
      } else if (len === 127) {
        if (h.length < 10) break;
        const hi = h.readUInt32BE(2);
        if (hi > 0x1fffff) throw new FrameError("frame length beyond 2^53");
        len = hi * 2 ** 32 + h.readUInt32BE(6);
        headerLen = 10;
      }
      if (opcode >= 0x8 && len > 125) throw new FrameError("control frame longer than 125 bytes");
      const maskOff = headerLen;
      if (masked) headerLen += 4;
      if (h.length < headerLen) break;
      if (q.length < headerLen + len) break;
      const raw = q.take(headerLen + len);
      let payload = raw.subarray(headerLen);
      if (masked) {
        const m0 = raw[maskOff]!, m1 = raw[maskOff + 1]!, m2 = raw[maskOff + 2]!, m3 = raw[maskOff + 3]!;
        const copy = Buffer.allocUnsafe(len);
        for (let i = 0; i < len; i++) {
          const m = (i & 3) === 0 ? m0 : (i & 3) === 1 ? m1 : (i & 3) === 2 ? m2 : m3;
          copy[i] = payload[i]! ^ m;
        }
        payload = copy;
      }
      frames.push({ fin: (b0 & 0x80) !== 0, rsv1: (b0 & 0x40) !== 0, opcode, masked, len, raw, payload, t: 0 });
    }
    return frames;
  }
}

/**
 * Groups frames into units the proxy decides on: a control frame alone, or a whole data message
 * (first fragment .. fin). Fragments of a data message are held until the message is complete so
 * a rule matching its text takes effect on all of it; control frames interleaved between
 * fragments come out first (RFC 6455 allows control frames in the middle of a message).
 */
export class MessageAssembler {
  #frags: Unit | null = null;

  /** Returns a unit when `f` completes one, else null. */
  add(f: ParsedFrame): Unit | null {
    if (f.opcode >= 0x8) return { frames: [f], opcode: f.opcode, compressed: false };
    if (f.opcode !== OP.CONT) {
      if (f.fin) return { frames: [f], opcode: f.opcode, compressed: f.rsv1 };
      this.#frags = { frames: [f], opcode: f.opcode, compressed: f.rsv1 };
      return null;
    }
    if (!this.#frags) return { frames: [f], opcode: OP.CONT, compressed: false }; // stray continuation: pass it on
    this.#frags.frames.push(f);
    if (!f.fin) return null;
    const unit = this.#frags;
    this.#frags = null;
    return unit;
  }

  /** Frames held for an incomplete message (e.g. when the connection ends). */
  takePending(): ParsedFrame[] {
    const f = this.#frags?.frames ?? [];
    this.#frags = null;
    return f;
  }
}

export interface Deflate {
  serverNoContextTakeover: boolean;
  clientNoContextTakeover: boolean;
}

/** permessage-deflate parameters from a 101 response's Sec-WebSocket-Extensions, or null. */
export function parseDeflate(header: string | undefined): Deflate | null {
  if (!header) return null;
  for (const ext of String(header).split(",")) {
    const [name, ...params] = ext.split(";").map((s) => s.trim());
    if (name!.toLowerCase() !== "permessage-deflate") continue;
    const p = Object.fromEntries(
      params.filter(Boolean).map((kv) => {
        const [k, v] = kv.split("=").map((s) => s.trim());
        return [k!.toLowerCase(), v === undefined ? true : v.replace(/^"|"$/g, "")];
      }),
    );
    return {
      serverNoContextTakeover: p.server_no_context_takeover === true,
      clientNoContextTakeover: p.client_no_context_takeover === true,
    };
  }
  return null;
}

const TAIL = Buffer.from([0x00, 0x00, 0xff, 0xff]);
const WINDOW = 32 * 1024;

/**
 * Decodes compressed messages of one direction for the record. Synchronous, so a rule can match
 * the text of the very frame it is about to forward: context takeover is replayed by priming each
 * raw inflate with the last 32 KiB of output as its dictionary (what the sender's window holds).
 */
export class Inflater {
  #window: Buffer = Buffer.alloc(0);
  readonly noContextTakeover: boolean;

  constructor(noContextTakeover: boolean) {
    this.noContextTakeover = noContextTakeover;
  }

  decompress(payload: Buffer): Buffer {
    const opts: zlib.ZlibOptions = { finishFlush: zlib.constants.Z_SYNC_FLUSH, windowBits: 15 };
    if (!this.noContextTakeover && this.#window.length) opts.dictionary = this.#window;
    const out = zlib.inflateRawSync(Buffer.concat([payload, TAIL]), opts);
    if (!this.noContextTakeover) {
      const w = Buffer.concat([this.#window, out]);
      this.#window = w.length > WINDOW ? Buffer.from(w.subarray(w.length - WINDOW)) : w;
    }
    return out;
  }
}

/** Code and reason of a close frame's payload. */
export function parseClose(payload: Buffer): { code: number; reason: string } {
  if (payload.length < 2) return { code: 1005, reason: "" };
  return { code: payload.readUInt16BE(0), reason: payload.subarray(2).toString("utf8") };
}

/** One unfragmented, uncompressed text frame; masked when the tap sends it to the gateway (as a
 * client must). Uncompressed is valid on a permessage-deflate connection too (RSV1 clear). */
export function textFrame(text: string, masked: boolean): Buffer {
  const body = Buffer.from(text, "utf8");
  const n = body.length;
  const len = n < 126 ? Buffer.from([(masked ? 0x80 : 0) | n]) : n < 65536 ? Buffer.from([(masked ? 0x80 : 0) | 126, n >> 8, n & 0xff]) : Buffer.concat([Buffer.from([(masked ? 0x80 : 0) | 127]), bigLength(n)]);
  const head = Buffer.concat([Buffer.from([0x80 | OP.TEXT]), len]);
  if (!masked) return Buffer.concat([head, body]);
  const mask = crypto.randomBytes(4);
  for (let i = 0; i < body.length; i++) body[i] ^= mask[i & 3]!;
  return Buffer.concat([head, mask, body]);
}

function bigLength(n: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

/** A close frame; masked when the tap sends it to the gateway (it speaks as the client there). */
export function closeFrame(code: number, reason: string, masked: boolean): Buffer {
  const body = Buffer.concat([Buffer.from([code >> 8, code & 0xff]), Buffer.from(reason, "utf8").subarray(0, 123)]);
  const head = Buffer.from([0x80 | OP.CLOSE, (masked ? 0x80 : 0) | body.length]);
  if (!masked) return Buffer.concat([head, body]);
  const mask = crypto.randomBytes(4);
  const out = Buffer.from(body);
  for (let i = 0; i < out.length; i++) out[i] ^= mask[i & 3]!;
  return Buffer.concat([head, mask, out]);
}
