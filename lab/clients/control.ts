// The JSON control APIs of the lab's own servers (model, MCP, tap) share one call: fetch with
// a timeout, an error naming the server, method and path, and the reply checked with zod.
import { z } from "zod";

export interface ControlCall<T> {
  /** Names the server in errors: "model", "mcp", "tap". */
  name: string;
  baseUrl: string;
  method: "GET" | "POST" | "DELETE";
  path: string;
  schema: z.ZodType<T>;
  /** Sent as JSON when given. */
  body?: unknown;
  timeoutMs: number;
  /** The client's own error class, so callers can tell whose control API failed. */
  error: new (message: string, options?: ErrorOptions) => Error;
}

export async function controlCall<T>(c: ControlCall<T>): Promise<T> {
  const url = `${c.baseUrl}${c.path}`;
  let res: Response;
  try {
    res = await fetch(url, {
      method: c.method,
      headers: c.body === undefined ? undefined : { "content-type": "application/json" },
      body: c.body === undefined ? undefined : JSON.stringify(c.body),
      signal: AbortSignal.timeout(c.timeoutMs),
    });
  } catch (e) {
    throw new c.error(`${c.name} control ${c.method} ${url}: ${(e as Error).message}`, { cause: e });
  }
  const text = await res.text();
  if (!res.ok) throw new c.error(`${c.name} control ${c.method} ${c.path}: HTTP ${res.status} ${text.slice(0, 500)}`);
  const parsed = c.schema.safeParse(JSON.parse(text));
  if (!parsed.success) throw new c.error(`${c.name} control ${c.method} ${c.path}: unexpected reply: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
