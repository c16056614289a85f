// The JSON control APIs of the lab's own servers (model, MCP, tap) share one call: fetch with
// a timeout and an error naming the server, method and path.
//
// Each server defines its API once, beside its code (docker/<server>/wire.ts: "METHOD /path" ->
// query, body, reply), and its client calls it through that type: a route, body or reply the two
// ends disagree on does not compile. Replies are not checked again at run time: the images are
// built from this same tree (tagged by a hash of their folder), so the server that answers is
// the one the types describe.

import { deadline, PacedBudget } from "../core/pace.ts";

type Method = "GET" | "POST" | "DELETE";

export interface ControlCall {
  /** Names the server in errors: "model", "mcp", "tap". */
  name: string;
  baseUrl: string;
  method: Method;
  path: string;
  /** Sent as JSON when given. */
  body?: unknown;
  /** A lab-side deadline (reference-machine ms): scaled by the machine's pace when the call starts (lab/core/pace.ts). */
  timeoutMs: number;
  /** The client's own error class, so callers can tell whose control API failed. */
  error: new (message: string, options?: ErrorOptions) => Error;
}

/** One call; returns the parsed JSON reply. */
export async function controlCall(c: ControlCall): Promise<unknown> {
  const url = `${c.baseUrl}${c.path}`;
  let res: Response;
  const budget = new PacedBudget(c.timeoutMs);
  try {
    res = await fetch(url, {
      method: c.method,
      headers: c.body === undefined ? undefined : { "content-type": "application/json" },
      body: c.body === undefined ? undefined : JSON.stringify(c.body),
      signal: AbortSignal.timeout(deadline(c.timeoutMs)), // paced
    });
  } catch (e) {
    // A time-out on a machine busier than planned carries why (machineBusyIn: unknown, not fail).
    const busy = (e as Error).name === "TimeoutError" ? budget.busy() : undefined;
    throw Object.assign(new c.error(`${c.name} control ${c.method} ${url}: ${(e as Error).message}${busy ? `; ${busy}` : ""}`, { cause: e }), busy ? { machineBusy: busy } : {});
  }
  const text = await res.text();
  if (!res.ok) throw new c.error(`${c.name} control ${c.method} ${c.path}: HTTP ${res.status} ${text.slice(0, 500)}`);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new c.error(`${c.name} control ${c.method} ${c.path}: reply is not JSON: ${text.slice(0, 200)}`, { cause: e });
  }
}

type QueryOf<R> = R extends { query: infer Q } ? Q : never;
type BodyOf<R> = R extends { body: infer B } ? B : never;
export type ReplyOf<R> = R extends { reply: infer T } ? T : never;

export interface CallOptions<R> {
  /** Left out of the URL when undefined, false, "" or 0; true is sent as 1. */
  query?: QueryOf<R>;
  body?: BodyOf<R>;
  /** Fills the route's ":id" segment. */
  id?: string;
}

/** Calls one route of `Api` ("METHOD /path" -> { query?, body?, reply }). */
export type ControlCaller<Api> = <K extends keyof Api & string>(route: K, opts?: CallOptions<Api[K]>) => Promise<ReplyOf<Api[K]>>;

export function controlCaller<Api>(server: Omit<ControlCall, "method" | "path" | "body"> & { /** Send {} on a POST without a body. */ emptyPostBody?: boolean }): ControlCaller<Api> {
  const { emptyPostBody, ...c } = server;
  return async (route, opts = {}) => {
    const [method, template] = route.split(" ") as [Method, string];
    let path = opts.id === undefined ? template : template.replace(":id", encodeURIComponent(opts.id));
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries((opts.query ?? {}) as Record<string, unknown>)) {
      if (v !== undefined && v !== false && v !== "" && v !== 0) q.set(k, v === true ? "1" : String(v));
    }
    if (q.size) path += `?${q}`;
    const body = opts.body ?? (method === "POST" && emptyPostBody ? {} : undefined);
    return (await controlCall({ ...c, method, path, body })) as ReplyOf<Api[typeof route]>;
  };
}

/**
 * The base of the lab's HTTP control clients (model, MCP, tap, git-http): the server's root, one
 * typed caller of its API (docker/<server>/wire.ts), and whether it answers. A client adds its
 * routes as methods over `call`.
 */
export class ControlClient<Api> {
  readonly baseUrl: string;
  protected readonly call: ControlCaller<Api>;
  readonly #timeoutMs: number;

  constructor(baseUrl: string, server: Omit<ControlCall, "method" | "path" | "body" | "baseUrl"> & { emptyPostBody?: boolean }) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.#timeoutMs = server.timeoutMs;
    this.call = controlCaller<Api>({ ...server, baseUrl: this.baseUrl });
  }

  /** True when the server answers GET /healthz (2xx) within its deadline; never throws. */
  async healthy(): Promise<boolean> {
    try {
      return (await fetch(`${this.baseUrl}/healthz`, { signal: AbortSignal.timeout(deadline(this.#timeoutMs)) })).ok; // paced
    } catch {
      return false;
    }
  }
}
