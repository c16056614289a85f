// Tests run the lab's own server programs (model, MCP, git-http, tap) as child processes on
// loopback. Each prints its bound port once listening (port 0 avoids racing for a free one);
// this starts one, waits for that line, and stops it again.
// The programs are TypeScript (docker/*/server.ts) that Node runs as it is, by stripping the
// types, as in their images: no build step, no flag on Node 24 (the npm scripts' Node).
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";

export interface ServerProcess<T> {
  child: ChildProcess;
  /** What `ready` read from the output (the port, or the listening record). */
  ready: T;
  /** Everything the process printed so far, stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

export async function startServerProcess<T>(
  label: string,
  script: string,
  env: Record<string, string>,
  ready: (output: string) => T | undefined,
  /** keepOutput false: stop collecting once ready (the output is still drained), for chatty servers. */
  opts: { timeoutMs?: number; keepOutput?: boolean } = {},
): Promise<ServerProcess<T>> {
  if (script.endsWith(".ts") && !process.features.typescript) {
    throw new Error(`${label}: ${script} is TypeScript and this Node (${process.version}) cannot strip types; run the tests through the npm scripts, which use the pinned Node 24`);
  }
  const child = spawn(process.execPath, [script], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let collecting = true;
  child.stderr!.on("data", (d) => {
    if (collecting) out += d;
  });
  const value = await new Promise<T>((resolve, reject) => {
    const timer = opts.timeoutMs ? setTimeout(() => reject(new Error(`${label} did not start in ${opts.timeoutMs} ms: ${out}`)), opts.timeoutMs) : undefined;
    let done = false;
    child.stdout!.on("data", (d) => {
      if (!collecting) return;
      out += d;
      const v = done ? undefined : ready(out);
      if (v !== undefined) {
        done = true;
        clearTimeout(timer);
        if (opts.keepOutput === false) collecting = false;
        resolve(v);
      }
    });
    child.once("exit", (code) => reject(new Error(`${label} exited (${code}) before listening: ${out}`)));
  });
  return {
    child,
    ready: value,
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      await once(child, "exit");
    },
  };
}

/** The port a server printed as "listening on <ip>:<port>". */
export const listeningOnPort = (out: string): number | undefined => {
  const m = /listening on [\d.]+:(\d+)/.exec(out);
  return m ? Number(m[1]) : undefined;
};

/** The first JSON line containing "listening", parsed. */
export const listeningRecord = <T>(out: string): T | undefined => {
  const line = out.split("\n").find((l) => l.includes('"listening"') && l.trim().endsWith("}"));
  return line ? (JSON.parse(line) as T) : undefined;
};
