// A node host's link to the gateway as its wire tap recorded it: the worker path (bundle
// install, launches, bundle download, worker sockets, runner inventory), the node's control
// connection and its reconnects.
import { WS_OPCODE, type Frame, type HttpExchange, type TapControl, type TapRecord } from "../clients/tap.ts";
import type { Lab } from "../topology/lab.ts";

/** What one node's wire tap saw of the worker path since `since` (a tap seq). */
export interface WireSummary {
  bundleInstalls: Frame[];
  launches: Frame[];
  bundleDownloads: HttpExchange[];
  workerSockets: HttpExchange[];
  /** Every node.runnerInventory.update the node sent, with the gateway's answer. */
  inventory: { seq: number; ok: boolean | undefined; errorCode?: string; errorDetailsCode?: string; workerHost?: unknown; protocolFeatures?: unknown }[];
}

export async function wireSummary(lab: Lab, alias: string, since = 0): Promise<WireSummary> {
  const tap = lab.tap(alias);
  const [frames, http] = await Promise.all([tap.frames({ since }), tap.http({ since })]);
  const invokes = (command: string) => frames.filter((f) => f.dir === "gw->node" && f.event === "node.invoke.request" && f.command === command);
  const inventory = frames
    .filter((f) => f.dir === "node->gw" && f.method === "node.runnerInventory.update")
    .map((req) => {
      const res = frames.find((f) => f.dir === "gw->node" && f.type === "res" && f.id === req.id && f.conn === req.conn);
      let params: { workerHost?: unknown; protocolFeatures?: unknown } = {};
      try {
        params = (JSON.parse(req.text ?? "{}") as { params?: typeof params }).params ?? {};
      } catch {
        /* a truncated frame: fields stay unknown */
      }
      return { seq: req.seq, ok: res?.ok, errorCode: res?.errorCode, errorDetailsCode: res?.errorDetailsCode, workerHost: params.workerHost, protocolFeatures: params.protocolFeatures };
    });
  return {
    bundleInstalls: invokes("worker.bundle.install.v1"),
    launches: invokes("worker.launch.v1"),
    bundleDownloads: http.filter((h) => h.path.startsWith("/__openclaw__/worker-bundle/")),
    workerSockets: http.filter((h) => h.path.startsWith("/__openclaw__/worker") && !!h.upgrade),
    inventory,
  };
}

/** The node's open control connection ("/") at its tap. */
export async function controlConn(tap: TapControl): Promise<string> {
  const open = (await tap.connections()).filter((c) => c.path === "/" && c.state === "open");
  if (open.length !== 1) throw new Error(`expected one open control connection at the tap, found ${open.map((c) => c.conn).join(", ") || "none"}`);
  return open[0]!.conn;
}

/** The node's next successful connect on "/" after `since` (its reconnection as the tap saw it). */
export async function waitReconnect(tap: TapControl, since: number, timeoutMs = 90_000): Promise<Frame> {
  return tap.waitForFrame((f) => f.path === "/" && f.dir === "gw->node" && f.replyTo === "connect" && f.ok === true, { since, timeoutMs, what: "a successful connect of the node on /" });
}

/** Connection events and control frames (no worker traffic) since `since`, for evidence. */
export async function controlEvents(tap: TapControl, since: number): Promise<TapRecord[]> {
  const all = await tap.events({ since });
  return all.filter((e) => {
    if (e.kind === "frame") {
      const f = e as Frame;
      return f.path === "/" && (f.opcode !== WS_OPCODE.text || f.method === "connect" || f.replyTo === "connect" || f.event === "tick" || !!f.command);
    }
    return true;
  });
}
