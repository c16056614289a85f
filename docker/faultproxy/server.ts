// fleetlab faultproxy: a wire tap between node hosts and their gateway.
//
// Node hosts connect to it as if it were the gateway; it carries everything they send to that
// address (the node's WebSocket on /, each worker's WebSocket on /__openclaw__/worker, the plain
// HTTP bundle download and transfer POSTs) to the real gateway and back, byte for byte (no
// X-Forwarded-For or any other change), records every HTTP exchange and WebSocket frame, and
// applies fault rules at protocol points. Dependency-free (node: builtins only).
//
// Run: node server.ts
//   TAP_UPSTREAM       host:port of the gateway (required), e.g. gateway:18789
//   TAP_LISTEN_PORT    port node hosts connect to (18789)
//   TAP_CONTROL_PORT   control API port (9099)
//   TAP_HOST           listen address for both (0.0.0.0)
//   TAP_MAX_TEXT       longest frame text kept in a record, in characters (1048576); longer
//                      texts are cut and marked truncated (fields are parsed from the full text)
//   TAP_KEEP_FRAMES    frames kept in memory (50000); also TAP_KEEP_HTTP (10000), TAP_KEEP_EVENTS
//   TAP_STDOUT         "all" (default): every record as a JSON line on stdout; "none"
// Stdout starts with {"kind":"listening",...} naming the bound ports (port 0 picks free ones).
// Modules: proxy.ts (forwarding), http-messages.ts + ws-frames.ts (parsing), recorder.ts
// (records), rules.ts (fault rules), control.ts (control API), wire.ts (what the control API
// answers, shared with lab/clients/tap.ts).

import type { AddressInfo } from "node:net";
import { Proxy } from "./proxy.ts";
import { Recorder } from "./recorder.ts";
import { RuleBook } from "./rules.ts";
import { createControl } from "./control.ts";

const env = process.env;
const upstream = env.TAP_UPSTREAM;
const m = /^(.+):(\d+)$/.exec(upstream ?? "");
if (!m) {
  process.stderr.write(`faultproxy: TAP_UPSTREAM must be host:port, got ${JSON.stringify(upstream)}\n`);
  process.exit(2);
}
const host = env.TAP_HOST || "0.0.0.0";
const int = (v: string | undefined, d: number) => (v !== undefined && v !== "" && Number.isInteger(Number(v)) ? Number(v) : d);

const recorder = new Recorder({
  frames: int(env.TAP_KEEP_FRAMES, 50_000),
  http: int(env.TAP_KEEP_HTTP, 10_000),
  events: int(env.TAP_KEEP_EVENTS, 20_000),
  out: env.TAP_STDOUT === "none" ? null : (line) => void process.stdout.write(line),
});
const rules = new RuleBook();
const proxy = new Proxy({ upstreamHost: m[1]!, upstreamPort: Number(m[2]), recorder, rules, maxText: int(env.TAP_MAX_TEXT, 1024 * 1024) });

const listen = await proxy.listen(int(env.TAP_LISTEN_PORT, 18789), host);
const info: { listen: string; upstream: string; control?: string } = { listen: `${host}:${listen.port}`, upstream: upstream! };
const control = createControl({ proxy, recorder, rules, info });
await new Promise<void>((resolve, reject) => {
  control.once("error", reject);
  control.listen(int(env.TAP_CONTROL_PORT, 9099), host, resolve);
});
const controlPort = (control.address() as AddressInfo).port;
info.control = `${host}:${controlPort}`;
process.stdout.write(`${JSON.stringify({ kind: "listening", listen: listen.port, control: controlPort, host, upstream })}\n`);

const stop = () => {
  control.close();
  proxy.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
