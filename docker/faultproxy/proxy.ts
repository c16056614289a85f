// The forwarding half of the tap: a TCP proxy that node hosts reach as if it were their gateway.
// Each accepted connection gets its own upstream connection; bytes go both ways unchanged.
// Parsing only observes: HTTP heads and bodies (keep-alive, chunked) until a 101 switches the
// connection to WebSocket, then frames in both directions (masking, fragments, control frames,
// permessage-deflate). Every HTTP exchange and WS frame is handed to the recorder; every WS unit
// (control frame or whole message) and HTTP request head is put to the rule book first, and the
// decision is carried out here before the bytes move on.
//
// Each direction has a lane: an ordered queue of byte runs to write to the destination socket.
// A lane stops while its connection is half-open (or the tap is frozen), waits on a delayed item
// (later items queue behind it), and pauses its source socket when the destination pushes back.

import net, { type AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { HttpParser, type HttpEvent, type RequestHead, type ResponseHead } from "./http-messages.ts";
import { FrameError, FrameParser, Inflater, MessageAssembler, OP, closeFrame, parseClose, parseDeflate, textFrame, type Deflate, type ParsedFrame, type Unit } from "./ws-frames.ts";
import { nowMs, type Recorder, type Unstamped } from "./recorder.ts";
import type { Decision, Dir, RuleAction, RuleBook, TapRule } from "./rules.ts";
import type { Frame, FrameAction, GatewayFields, Healed, PerDir, Released, Side, TapConnection } from "./wire.ts";

const HIGH_WATER = 16 * 1024 * 1024;
const CLOSED_KEPT = 2000;
const other = (side: Side): Side => (side === "node" ? "gw" : "node");
const dirFrom = (side: Side): Dir => (side === "node" ? "node->gw" : "gw->node");

/** One run of a lane: bytes (maybe not before a time), or the end / destruction of the destination. */
interface LaneItem {
  buf?: Buffer;
  /** performance.now() before which the item is not written (0: now). */
  notBefore?: number;
  end?: boolean;
  destroy?: boolean;
  reset?: boolean;
}

const STATUS_TEXT: Record<number, string> = { 500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout", 429: "Too Many Requests", 404: "Not Found" };

class Lane {
  items: LaneItem[] = [];
  bytes = 0;
  timer: NodeJS.Timeout | null = null;
  dead = false;
  readonly conn: Conn;
  readonly dir: Dir;
  readonly src: net.Socket;
  readonly dest: net.Socket;

  constructor(conn: Conn, dir: Dir, src: net.Socket, dest: net.Socket) {
    this.conn = conn;
    this.dir = dir;
    this.src = src;
    this.dest = dest;
  }

  push(item: LaneItem): void {
    if (this.dead) return;
    this.items.push(item);
    if (item.buf) this.bytes += item.buf.length;
    this.pump();
  }

  get delayed(): number {
    return this.items.filter((i) => i.notBefore).length;
  }

  pump(): void {
    if (this.timer || this.dead) return this.flow();
    while (this.items.length && !this.conn.held()) {
      const it = this.items[0]!;
      const wait = it.notBefore ? it.notBefore - performance.now() : 0;
      if (wait > 0) {
        this.timer = setTimeout(() => {
          this.timer = null;
          this.pump();
        }, Math.ceil(wait));
        break;
      }
      this.items.shift();
      const d = this.dest;
      if (it.buf) {
        this.bytes -= it.buf.length;
        if (!d.destroyed && !d.writableEnded) d.write(it.buf);
      } else if (it.end) {
        if (!d.destroyed) d.end();
      } else if (it.destroy) {
        if (d.destroyed) continue;
        if (it.reset) d.resetAndDestroy();
        else d.destroy();
      }
    }
    this.flow();
  }

  /** Delivers delayed items now (heal). */
  flush(): void {
    for (const it of this.items) it.notBefore = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pump();
  }

  /** Stops the lane for good: queued items are discarded, later pushes ignored. */
  kill(): void {
    this.dead = true;
    this.items = [];
    this.bytes = 0;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.src.isPaused() && !this.src.destroyed) this.src.resume();
  }

  /** Backpressure: hold the source while the destination or this queue is full. */
  flow(): void {
    const s = this.src;
    if (s.destroyed) return;
    const full = !this.dead && (this.dest.writableNeedDrain || this.bytes > HIGH_WATER);
    if (full && !s.isPaused()) s.pause();
    else if (!full && s.isPaused()) s.resume();
  }
}

/** Fields of a gateway JSON frame worth indexing ({type, method, event, id, ...}). */
export function gatewayFields(text: string): GatewayFields {
  if (text.length === 0 || text[0] !== "{") return {};
  let j;
  try {
    j = JSON.parse(text);
  } catch {
    return { json: false };
  }
  if (!j || typeof j !== "object") return {};
  const out: GatewayFields = {};
  if (typeof j.type === "string") out.type = j.type;
  if (typeof j.method === "string") out.method = j.method;
  if (typeof j.event === "string") out.event = j.event;
  if (typeof j.id === "string" || typeof j.id === "number") out.id = String(j.id);
  if (typeof j.ok === "boolean") out.ok = j.ok;
  if (typeof j.seq === "number") out.eventSeq = j.seq;
  if (j.error && typeof j.error === "object") {
    if (typeof j.error.code === "string") out.errorCode = j.error.code;
    if (typeof j.error.details?.code === "string") out.errorDetailsCode = j.error.details.code;
  }
  if (j.event === "node.invoke.request" && j.payload && typeof j.payload === "object") {
    if (typeof j.payload.command === "string") out.command = j.payload.command;
    if (typeof j.payload.id === "string") out.invokeId = j.payload.id;
  }
  if ((j.method === "node.invoke" || j.method === "node.invoke.result") && j.params && typeof j.params === "object") {
    if (typeof j.params.command === "string") out.command = j.params.command;
    if (typeof j.params.id === "string") out.invokeId = j.params.id;
  }
  return out;
}

/** An HTTP request on a connection, until its response has ended. */
interface Exchange {
  head: RequestHead;
  method: string;
  path: string;
  t: number;
  start: number;
  reqBytes: number;
  resBytes: number;
  status: number | null;
  upgrade: string | null;
  rule: string | null;
}

/** Parsing state of one WebSocket direction. */
interface WsState {
  parser: FrameParser;
  asm: MessageAssembler;
  inflater: Inflater | null;
}

type Mode = "http" | "ws" | "raw";

class Conn {
  mode: PerDir<Mode> = { "node->gw": "http", "gw->node": "http" };
  path: string | null = null;
  deflate: Deflate | null = null;
  ws: PerDir<WsState> | null = null;
  exchanges: Exchange[] = []; // HTTP requests waiting for (the end of) their response
  halfOpenBy = new Set<string>();
  fault: TapConnection["fault"] = null;
  closed = { node: false, gw: false };
  closedAt: number | null = null;
  requests = 0;
  frames: PerDir<number> = { "node->gw": 0, "gw->node": 0 };
  bytes: PerDir<number> = { "node->gw": 0, "gw->node": 0 };
  upstreamLocal: string | null = null;
  reqIds: PerDir<Map<string, string>> = { "node->gw": new Map(), "gw->node": new Map() };
  readonly proxy: Proxy;
  readonly rec: Recorder;
  readonly id: string;
  readonly node: net.Socket;
  readonly gw: net.Socket;
  readonly remote: string;
  readonly openedAt: number;
  readonly lanes: PerDir<Lane>;
  readonly reqParser: HttpParser<RequestHead>;
  readonly resParser: HttpParser<ResponseHead>;

  constructor(proxy: Proxy, id: string, node: net.Socket, gw: net.Socket) {
    this.proxy = proxy;
    this.rec = proxy.recorder;
    this.id = id;
    this.node = node;
    this.gw = gw;
    this.remote = `${node.remoteAddress}:${node.remotePort}`;
    this.openedAt = nowMs();
    this.lanes = { "node->gw": new Lane(this, "node->gw", node, gw), "gw->node": new Lane(this, "gw->node", gw, node) };
    this.reqParser = new HttpParser<RequestHead>("request");
    this.resParser = new HttpParser<ResponseHead>("response", { requestFor: () => this.exchanges[0]?.head ?? null });
  }

  held(): boolean {
    return this.halfOpenBy.size > 0 || this.proxy.frozenBy.size > 0;
  }

  sock(side: Side): net.Socket {
    return side === "node" ? this.node : this.gw;
  }

  view(): TapConnection {
    return {
      conn: this.id,
      remote: this.remote,
      upstreamLocal: this.upstreamLocal,
      state: this.closedAt ? "closed" : this.fault ? "faulted" : this.held() ? "held" : "open",
      mode: this.mode["gw->node"] === "ws" ? "ws" : this.mode["gw->node"],
      path: this.path,
      deflate: this.deflate ? true : false,
      openedAt: this.openedAt,
      closedAt: this.closedAt,
      halfOpenBy: [...this.halfOpenBy],
      fault: this.fault,
      requests: this.requests,
      frames: { ...this.frames },
      bytes: { ...this.bytes },
      queued: { "node->gw": this.lanes["node->gw"].items.length, "gw->node": this.lanes["gw->node"].items.length },
    };
  }

  // ---------- bytes in ----------

  onData(side: Side, chunk: Buffer): void {
    const dir = dirFrom(side);
    this.bytes[dir] += chunk.length;
    const mode = this.mode[dir];
    if (mode === "ws") this.#wsIn(dir, chunk);
    else if (mode === "http") this.#httpIn(dir, chunk);
    else this.#forward(dir, chunk);
  }

  onEnd(side: Side): void {
    const dir = dirFrom(side);
    if (dir === "gw->node" && this.mode[dir] === "http") this.#resEvents(this.resParser.finish());
    if (this.mode[dir] === "ws") {
      // A peer that ends mid-frame: pass on what it sent, as a byte-level proxy would.
      const st = this.ws![dir];
      const rest = [...st.asm.takePending().map((f) => f.raw), st.parser.drain()].filter((b) => b.length);
      if (rest.length) this.#forward(dir, Buffer.concat(rest));
    }
    if (this.fault) {
      this.sock(side).end();
      return;
    }
    this.lanes[dir].push({ end: true });
  }

  onError(side: Side, err: NodeJS.ErrnoException): void {
    this.rec.record("conn", { conn: this.id, event: "error", side, code: err.code ?? null, message: err.message });
    this.lanes[dirFrom(side)].push({ destroy: true, reset: err.code === "ECONNRESET" });
  }

  onClose(side: Side): void {
    this.closed[side] = true;
    if (!this.closed.node || !this.closed.gw || this.closedAt) return;
    this.closedAt = nowMs();
    for (const ex of this.exchanges) this.#recordExchange(ex, { incomplete: true });
    this.exchanges = [];
    for (const l of Object.values(this.lanes)) l.kill();
    this.proxy.rules.forgetConn(this.id);
    this.proxy.closedConn(this);
    this.rec.record("conn", {
      conn: this.id,
      event: "close",
      remote: this.remote,
      path: this.path,
      durationMs: Math.round(this.closedAt - this.openedAt),
      frames: { ...this.frames },
      bytes: { ...this.bytes },
    });
  }

  #forward(dir: Dir, buf: Buffer, notBefore = 0): void {
    if (this.fault) return;
    this.lanes[dir].push({ buf, notBefore });
  }

  // ---------- HTTP ----------

  #httpIn(dir: Dir, chunk: Buffer): void {
    if (dir === "node->gw") this.#reqEvents(this.reqParser.feed(chunk));
    else this.#resEvents(this.resParser.feed(chunk));
  }

  /** node -> gateway */
  #reqEvents(events: HttpEvent<RequestHead>[]): void {
    const dir = "node->gw";
    for (const ev of events) {
      if (ev.type === "head") {
        const h = ev.head;
        this.requests++;
        const ex: Exchange = { head: h, method: h.method, path: h.path, t: nowMs(), start: performance.now(), reqBytes: 0, resBytes: 0, status: null, upgrade: h.upgrade, rule: null };
        this.exchanges.push(ex);
        const decision = this.fault ? null : this.#decideHttp(ex, ev.raw);
        if (decision?.action.type === "close") {
          this.#closeFault(decision.rule, decision.action);
          this.#acted(decision);
          return;
        }
        if (decision?.action.type === "respond") {
          this.#respondFault(decision.rule, decision.action.status, ex);
          this.#acted(decision);
          return;
        }
        this.#forward(dir, ev.raw, decision?.action.type === "delay" ? performance.now() + decision.action.ms : 0);
        if (decision) this.#acted(decision);
      } else if (ev.type === "body") {
        const ex = this.exchanges.at(-1);
        if (ex) ex.reqBytes += ev.n;
        this.#forward(dir, ev.raw);
      } else if (ev.type === "raw") this.#forward(dir, ev.raw);
    }
  }

  /** gateway -> node */
  #resEvents(events: HttpEvent<ResponseHead>[]): void {
    const dir = "gw->node";
    let lastHead: ResponseHead | null = null;
    for (const ev of events) {
      const ex = this.exchanges[0];
      if (ev.type === "head") {
        lastHead = ev.head;
        if (ex && !ev.head.informational) {
          ex.status = ev.head.status;
          if (ex.upgrade && ev.head.status !== 101) {
            // Upgrade refused (e.g. 401/403/404): the request side goes on as plain HTTP.
            const held = this.reqParser.resolveUpgrade(false);
            this.#forward(dir, ev.raw);
            if (held.length) this.#httpIn("node->gw", held);
            continue;
          }
        }
        this.#forward(dir, ev.raw);
      } else if (ev.type === "body") {
        if (ex) ex.resBytes += ev.n;
        this.#forward(dir, ev.raw);
      } else if (ev.type === "end") {
        if (ex) this.#recordExchange(this.exchanges.shift(), {});
      } else if (ev.type === "switch") {
        this.#switch(ex, lastHead, ev.raw);
        return;
      } else if (ev.type === "raw") this.#forward(dir, ev.raw);
    }
  }

  #decideHttp(ex: Exchange, raw: Buffer): Decision | null {
    const t = nowMs();
    const d = this.proxy.rules.decideHttp({ t, seq: this.rec.seq + 1, conn: this.id, dir: "node->gw", path: ex.path, method: ex.method, text: raw.toString("latin1") });
    if (!d) return null;
    ex.rule = d.rule.id;
    // This record takes the seq the rule book was given: the firing names it as its trigger.
    this.rec.record("rule", { t, event: "fired", id: d.rule.id, action: d.action.type, conn: this.id, trigger: { kind: "http", method: ex.method, path: ex.path } });
    this.#applyHeld(d);
    return d;
  }

  #recordExchange(ex: Exchange | undefined, extra: { incomplete?: boolean }): void {
    if (!ex) return;
    this.rec.record("http", {
      t: ex.t,
      conn: this.id,
      method: ex.method,
      path: ex.path,
      status: ex.status,
      reqBytes: ex.reqBytes,
      resBytes: ex.resBytes,
      durationMs: Math.round((performance.now() - ex.start) * 1000) / 1000,
      ...(ex.upgrade ? { upgrade: ex.upgrade } : {}),
      ...(ex.rule ? { rule: ex.rule } : {}),
      ...extra,
    });
  }

  #switch(ex: Exchange | undefined, head: ResponseHead | null, rest: Buffer): void {
    this.exchanges.shift();
    const held = this.reqParser.resolveUpgrade(true);
    if (ex) this.#recordExchange(ex, {});
    // The 101 head itself was forwarded as a "head" event before this.
    if (ex?.upgrade === "websocket") {
      this.path = ex.path;
      this.deflate = parseDeflate(head?.headers["sec-websocket-extensions"]);
      const mk = (noCtx: boolean): WsState => ({ parser: new FrameParser(), asm: new MessageAssembler(), inflater: this.deflate ? new Inflater(noCtx) : null });
      this.ws = { "node->gw": mk(this.deflate?.clientNoContextTakeover ?? false), "gw->node": mk(this.deflate?.serverNoContextTakeover ?? false) };
      this.mode["node->gw"] = "ws";
      this.mode["gw->node"] = "ws";
      this.rec.record("conn", {
        conn: this.id,
        event: "upgrade",
        path: this.path,
        remote: this.remote,
        offeredExtensions: ex.head.headers["sec-websocket-extensions"] ?? null,
        extensions: head?.headers["sec-websocket-extensions"] ?? null,
      });
      if (rest.length) this.#wsIn("gw->node", rest);
      if (held.length) this.#wsIn("node->gw", held);
    } else {
      this.mode["node->gw"] = "raw";
      this.mode["gw->node"] = "raw";
      this.rec.record("conn", { conn: this.id, event: "tunnel", path: ex?.path ?? null, upgrade: ex?.upgrade ?? null });
      if (rest.length) this.#forward("gw->node", rest);
      if (held.length) this.#forward("node->gw", held);
    }
  }

  // ---------- WebSocket ----------

  #wsIn(dir: Dir, chunk: Buffer): void {
    const st = this.ws![dir];
    let frames: ParsedFrame[];
    try {
      frames = st.parser.push(chunk);
    } catch (e) {
      if (!(e instanceof FrameError)) throw e;
      // Not WebSocket after all (or broken): stop parsing this direction, keep forwarding bytes.
      this.rec.record("conn", { conn: this.id, event: "parse-error", dir, message: e.message });
      this.mode[dir] = "raw";
      const pending = st.asm.takePending().map((f) => f.raw);
      this.#forward(dir, Buffer.concat([...pending, st.parser.drain()]));
      return;
    }
    const t = nowMs();
    for (const f of frames) {
      f.t = t;
      const unit = st.asm.add(f);
      if (unit) this.#wsUnit(dir, st, unit);
    }
  }

  #wsUnit(dir: Dir, st: WsState, unit: Unit): void {
    const { frames, opcode } = unit;
    const last = frames.at(-1)!;
    let payload = frames.length === 1 ? last.payload : Buffer.concat(frames.map((f) => f.payload));
    let decodeError: string | null = null;
    if (unit.compressed && st.inflater) {
      try {
        payload = st.inflater.decompress(payload);
      } catch (e) {
        decodeError = (e as Error).message;
      }
    }
    let gw: GatewayFields = {};
    let text: string | undefined;
    if (opcode === OP.TEXT && !decodeError) {
      text = payload.toString("utf8");
      gw = gatewayFields(text);
      if (gw.type === "res" && gw.id !== undefined) {
        const back = dir === "node->gw" ? "gw->node" : "node->gw";
        const m = this.reqIds[back].get(gw.id);
        if (m) {
          gw.replyTo = m;
          this.reqIds[back].delete(gw.id);
        }
      } else if (gw.type === "req" && gw.id !== undefined && gw.method) {
        const ids = this.reqIds[dir];
        ids.set(gw.id, gw.method);
        if (ids.size > 10_000) ids.delete(ids.keys().next().value!);
      }
    }
    const close = opcode === OP.CLOSE ? parseClose(last.payload) : null;

    // Seqs of this unit's records, known before deciding so a rule can name its trigger frame.
    const seq0 = this.rec.seq + 1;
    const triggerSeq = seq0 + frames.length - 1;
    const t = last.t;
    const decision = this.fault
      ? null
      : this.proxy.rules.decideFrame({ seq: triggerSeq, t, conn: this.id, path: this.path, dir, opcode, text, method: gw.method, event: gw.event, command: gw.command });
    const type = decision?.action.type;
    const action: FrameAction = this.fault
      ? "discard"
      : !decision
        ? this.held()
          ? "hold"
          : "forward"
        : type === "drop" || type === "withholdPong"
          ? "drop"
          : type === "halfOpen" || type === "freeze"
            ? "hold"
            : type === "notify" || type === "inject"
              ? "forward"
              : (type as "delay" | "close");

    const maxText = this.proxy.maxText;
    frames.forEach((f, i) => {
      // Built in the transcript's key order: frame facts first, then action and rule.
      const rec: Omit<Unstamped<Frame>, "action"> & { action?: FrameAction } = { t: f.t, conn: this.id, path: this.path, dir, opcode: f.opcode, fin: f.fin, len: f.len, masked: f.masked };
      if (f.rsv1) rec.compressed = true;
      if (i === frames.length - 1) {
        if (frames.length > 1) rec.fragments = frames.length;
        if (unit.compressed) rec.messageLen = payload.length;
        if (text !== undefined) {
          if (text.length > maxText) {
            rec.text = text.slice(0, maxText);
            rec.truncated = true;
          } else rec.text = text;
        }
        if (decodeError) rec.decodeError = decodeError;
        Object.assign(rec, gw);
        if (close) rec.close = close;
      }
      rec.action = action;
      if (decision) rec.rule = decision.rule.id;
      this.rec.record("frame", rec as Unstamped<Frame>);
    });
    this.frames[dir] += frames.length;
    if (decision && decision.rule.hits === 1 && decision.rule.firstFired?.seq === triggerSeq) {
      this.rec.record("rule", { event: "fired", id: decision.rule.id, action: type!, conn: this.id, trigger: triggerSeq });
    }

    if (this.fault) return;
    const raw = frames.length === 1 ? last.raw : Buffer.concat(frames.map((f) => f.raw));
    if (!decision) return this.#forward(dir, raw);
    this.#act(decision, dir, raw, triggerSeq, t);
    this.#acted(decision);
  }

  /** Carries out a frame's decision (the trigger frame is `raw`). */
  #act(decision: Decision, dir: Dir, raw: Buffer, triggerSeq: number, t: number): void {
    switch (decision.action.type) {
      case "delay":
        return this.#forward(dir, raw, performance.now() + decision.action.ms);
      case "drop":
      case "withholdPong":
        return;
      case "close":
        return this.#closeFault(decision.rule, decision.action, decision.action.after ? { dir, raw } : undefined);
      case "notify": {
        // The frame goes on first; the helper hears of it within a millisecond or two.
        this.#forward(dir, raw);
        const body = JSON.stringify({ rule: decision.rule.id, seq: triggerSeq, t, conn: this.id });
        fetch(decision.action.url, { method: "POST", body, headers: { "content-type": "application/json" } }).then(
          (r) => this.rec.record("rule", { event: "notified", id: decision.rule.id, action: "notify", conn: this.id, trigger: triggerSeq, status: r.status }),
          (e: Error) => this.rec.record("rule", { event: "notify-failed", id: decision.rule.id, action: "notify", conn: this.id, trigger: triggerSeq, error: e.message }),
        );
        return;
      }
      case "inject": {
        const a = decision.action;
        if (a.before) this.#inject(decision.rule, a);
        this.#forward(dir, raw);
        if (!a.before) this.#inject(decision.rule, a);
        return;
      }
      default:
        this.#applyHeld(decision);
        return this.#forward(dir, raw);
    }
  }

  /** Writes an inject rule's frame to its side (queued in that lane like any frame) and records it. */
  #inject(rule: TapRule, a: Extract<RuleAction, { type: "inject" }>): void {
    const dir = dirFrom(other(a.to));
    const masked = a.to === "gw";
    const gw = gatewayFields(a.text);
    // A written request is paired with its answer like any other (replyTo on the res).
    if (gw.type === "req" && gw.id !== undefined && gw.method) this.reqIds[dir].set(gw.id, gw.method);
    this.#forward(dir, textFrame(a.text, masked));
    const len = Buffer.byteLength(a.text);
    const text = a.text.length > this.proxy.maxText ? a.text.slice(0, this.proxy.maxText) : a.text;
    this.rec.record("frame", {
      conn: this.id,
      path: this.path,
      dir,
      opcode: OP.TEXT,
      fin: true,
      len,
      masked,
      text,
      ...(text.length < a.text.length ? { truncated: true } : {}),
      ...gw,
      action: "inject",
      rule: rule.id,
    });
  }

  /** The action of `d` is carried out: its firing gets the time (trigger -> acted is the tap's own latency). */
  #acted(d: Decision): void {
    this.proxy.rules.acted(d.rule, nowMs());
  }

  #applyHeld(d: Decision): void {
    if (d.action.type === "halfOpen") this.halfOpenBy.add(d.rule.id);
    else if (d.action.type === "freeze") this.proxy.freeze(d.rule.id);
  }

  // ---------- faults ----------

  /** A close rule fired: nothing more is forwarded; the named sides are closed or aborted. */
  #closeFault(rule: TapRule, action: Extract<RuleAction, { type: "close" }>, first?: { dir: Dir; raw: Buffer }): void {
    if (this.fault) return;
    const { code, side } = action;
    const ws = this.mode["gw->node"] === "ws";
    // after: the trigger frame goes through first; its receiver's socket is closed behind it
    // in the same lane (frame, then the close frame unless 1006, then FIN), so it arrives whole.
    const receiver = first ? (first.dir === "node->gw" ? "gw" : "node") : undefined;
    if (first) {
      const lane = this.lanes[first.dir];
      lane.push({ buf: first.raw, notBefore: 0 });
      if (side === "both" || side === receiver) {
        if (ws && code !== 1006) lane.push({ buf: closeFrame(code, "fleetlab tap fault", receiver === "gw"), notBefore: 0 });
        lane.push({ end: true, notBefore: 0 });
      }
    }
    this.fault = { rule: rule.id, code, side, t: nowMs() };
    for (const [d, l] of Object.entries(this.lanes)) if (!first || d !== first.dir) l.kill();
    for (const s of side === "both" ? (["node", "gw"] as const) : [side]) {
      const sock = this.sock(s);
      if (s === receiver) {
        setTimeout(() => sock.destroy(), 1000).unref();
        continue;
      }
      if (sock.destroyed) continue;
      if (code === 1006) {
        sock.resetAndDestroy();
        continue;
      }
      if (ws) sock.write(closeFrame(code, "fleetlab tap fault", s === "gw"));
      sock.end();
      setTimeout(() => sock.destroy(), 1000).unref();
    }
    this.rec.record("conn", { conn: this.id, event: "fault", rule: rule.id, code, side, path: this.path, ...(first ? { after: true } : {}) });
  }

  /** A respond rule fired on an HTTP request: the tap answers it with `status` and closes; nothing reaches the gateway. */
  #respondFault(rule: TapRule, status: number, ex: Exchange): void {
    if (this.fault) return;
    this.fault = { rule: rule.id, code: status, side: "both", t: nowMs() };
    for (const l of Object.values(this.lanes)) l.kill();
    const reason = STATUS_TEXT[status] ?? "Fault";
    const body = `fleetlab tap: ${status} ${reason}\n`;
    const node = this.sock("node");
    if (!node.destroyed) {
      node.write(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      node.end();
      setTimeout(() => node.destroy(), 1000).unref();
    }
    const gw = this.sock("gw");
    if (!gw.destroyed) gw.destroy();
    ex.status = status;
    ex.rule = rule.id;
    this.rec.record("conn", { conn: this.id, event: "fault", rule: rule.id, code: status, side: "both", path: ex.path });
  }

  /** Heal: resume a held connection, deliver delayed frames, end what a close fault left open. */
  heal(): { resumed: boolean; flushed: number; ended: boolean } {
    const out = { resumed: this.halfOpenBy.size > 0, flushed: 0, ended: false };
    this.halfOpenBy.clear();
    for (const l of Object.values(this.lanes)) {
      out.flushed += l.delayed;
      l.flush();
    }
    if (this.fault) {
      for (const s of ["node", "gw"] as const) {
        if (!this.sock(s).destroyed) {
          this.sock(s).destroy();
          out.ended = true;
        }
      }
    }
    return out;
  }

  release(ruleId: string): boolean {
    if (this.halfOpenBy.delete(ruleId)) {
      this.pumpAll();
      return true;
    }
    return false;
  }

  pumpAll(): void {
    for (const l of Object.values(this.lanes)) l.pump();
  }
}

export class Proxy {
  frozenBy = new Set<string>();
  #n = 0;
  /** Open connections and the most recently closed ones, by id. */
  table = new Map<string, Conn>();
  #closedOrder: string[] = [];
  readonly upstreamHost: string;
  readonly upstreamPort: number;
  readonly recorder: Recorder;
  readonly rules: RuleBook;
  readonly maxText: number;
  readonly server: net.Server;

  constructor({ upstreamHost, upstreamPort, recorder, rules, maxText = 1024 * 1024 }: { upstreamHost: string; upstreamPort: number; recorder: Recorder; rules: RuleBook; maxText?: number }) {
    this.upstreamHost = upstreamHost;
    this.upstreamPort = upstreamPort;
    this.recorder = recorder;
    this.rules = rules;
    this.maxText = maxText;
    this.server = net.createServer({ allowHalfOpen: true, noDelay: true }, (s) => this.#accept(s));
  }

  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => resolve(this.server.address() as AddressInfo));
    });
  }

  close(): void {
    this.server.close();
    for (const c of this.table.values()) {
      c.node.destroy();
      c.gw.destroy();
    }
  }

  #accept(node: net.Socket): void {
    const id = `c${++this.#n}`;
    const gw = net.connect({ host: this.upstreamHost, port: this.upstreamPort, allowHalfOpen: true, noDelay: true });
    const c = new Conn(this, id, node, gw);
    this.table.set(id, c);
    this.recorder.record("conn", { conn: id, event: "open", remote: c.remote });
    gw.once("connect", () => {
      c.upstreamLocal = `${gw.localAddress}:${gw.localPort}`;
    });
    for (const [side, sock] of [
      ["node", node],
      ["gw", gw],
    ] as const) {
      sock.on("data", (d: Buffer) => c.onData(side, d));
      sock.on("end", () => c.onEnd(side));
      sock.on("error", (e) => c.onError(side, e));
      sock.on("close", () => c.onClose(side));
      sock.on("drain", () => c.lanes[dirFrom(other(side))].pump());
    }
  }

  closedConn(c: Conn): void {
    this.#closedOrder.push(c.id);
    while (this.#closedOrder.length > CLOSED_KEPT) this.table.delete(this.#closedOrder.shift()!);
  }

  connections(): TapConnection[] {
    return [...this.table.values()].map((c) => c.view());
  }

  freeze(ruleId: string): void {
    this.frozenBy.add(ruleId);
  }

  /** Undoes the lasting effects of one rule (its half-open connections, its freeze). */
  release(ruleId: string): Released {
    let resumed = 0;
    const unfrozen = this.frozenBy.delete(ruleId);
    for (const c of this.table.values()) if (c.release(ruleId)) resumed++;
    if (unfrozen) for (const c of this.table.values()) c.pumpAll();
    return { resumed, unfrozen };
  }

  /** Heals everything: unfreeze, resume half-open connections, flush delays, end faulted ones. */
  heal(): Healed {
    const out = { unfrozen: this.frozenBy.size > 0, resumed: 0, flushedFrames: 0, ended: 0 };
    this.frozenBy.clear();
    for (const c of this.table.values()) {
      if (c.closedAt) continue;
      const h = c.heal();
      if (h.resumed) out.resumed++;
      out.flushedFrames += h.flushed;
      if (h.ended) out.ended++;
    }
    return out;
  }
}
