// OpenClaw's own starts in a container, with the compile cache the package image ships
// (docker/openclaw/warm-up.sh) against the same image made cold: TMPDIR moved to an empty
// folder, so Node's compile cache (OpenClaw keeps it under <tmp>/node-compile-cache) starts
// empty, as every container did before the image shipped one. Same image, same machine, trials
// alternated cold and warm so a load that moves hits both alike.
//   gateway    container start to /readyz answering 200 (polled every 100 ms from this host)
//   node host  container start to its first line saying it reached the gateway and asked to
//              be paired (a warm gateway beside it, started once for the part)
//   bare       the same gateway command as a process on this host, from the same package and
//              Node, its temp folder empty (cold) or the one its first start filled (warm): the
//              baseline each container start is a ratio to
// Every start here runs OpenClaw without a config file (--allow-unconfigured, a token in the
// environment), in the container and bare alike: it times OpenClaw's start, not the lab's config.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { docker, demux } from "../engine/docker.ts";
import { runLabels } from "../engine/cleanup.ts";
import { deadline } from "../core/pace.ts";
import { nodeBinary } from "../engine/images.ts";
import { env as envVar } from "../core/settings.ts";

/** What a node host prints once it has reached the gateway and asked to be paired or approved. */
export const NODE_REACHED = /pairing|approval|approve/i;

export interface StartTimes {
  gateway: { cold: number[]; warm: number[] };
  node: { cold: number[]; warm: number[] };
  bare: { cold: number[]; warm: number[] };
}

/** The part's limit for one start: a gateway is ready in about 12-16 s on a quiet 2-core machine. */
const START_WAIT_MS = 180_000;
const TOKEN = "fleetlab-bench-start";

export async function startTimes(opts: { image: string; runId: string; trials: number; log: (s: string) => void; packageDir?: string }): Promise<StartTimes> {
  const d = docker();
  const labels = runLabels(opts.runId, "bench-start");
  const tag = randomBytes(3).toString("hex");
  const net = await d.createNetwork({ Name: `fleetlab-bench-start-${tag}`, Internal: true, Labels: labels });
  const made: string[] = [];
  const start = async (name: string, env: string[]) => {
    const c = await d.createContainer({
      name,
      Image: opts.image,
      Env: [`OPENCLAW_GATEWAY_TOKEN=${TOKEN}`, ...env],
      Labels: labels,
      HostConfig: { NetworkMode: net.id },
    });
    made.push(c.id);
    const t = performance.now();
    await c.start();
    return { c, t };
  };
  const cold = (on: boolean) => (on ? ["TMPDIR=/tmp/fleetlab-cold"] : []);
  const until = async (what: string, ok: () => Promise<boolean>) => {
    const end = Date.now() + deadline(START_WAIT_MS); // paced
    while (!(await ok())) {
      if (Date.now() > end) throw new Error(`${what} did not happen within ${deadline(START_WAIT_MS) / 1000} s`);
      await new Promise((r) => setTimeout(r, 100)); // fixed: not a deadline: the poll interval
    }
    return performance.now();
  };
  const gatewayOnce = async (isCold: boolean) => {
    const name = `fleetlab-bench-gw-${tag}-${made.length}`;
    const { c, t } = await start(name, ["FLEETLAB_ROLE=gateway", ...cold(isCold)]);
    const ip = (await c.inspect()).NetworkSettings.Networks[`fleetlab-bench-start-${tag}`]?.IPAddress;
    if (!ip) throw new Error(`${name} has no address on the bench network`);
    const done = await until(`${name} /readyz`, async () => {
      const r = await fetch(`http://${ip}:18789/readyz`, { signal: AbortSignal.timeout(deadline(2000)) }).catch(() => undefined); // paced
      return r?.status === 200;
    });
    return { c, name, seconds: (done - t) / 1000 };
  };
  const out: StartTimes = { gateway: { cold: [], warm: [] }, node: { cold: [], warm: [] }, bare: { cold: [], warm: [] } };
  try {
    for (let i = 0; i < opts.trials; i++) {
      for (const isCold of i % 2 ? [false, true] : [true, false]) {
        const g = await gatewayOnce(isCold);
        out.gateway[isCold ? "cold" : "warm"].push(g.seconds);
        opts.log(`gateway start, ${isCold ? "cold" : "warm"} compile cache, trial ${i + 1}: ${g.seconds.toFixed(2)} s`);
        await g.c.remove({ force: true });
      }
    }
    const gw = await gatewayOnce(false);
    for (let i = 0; i < opts.trials; i++) {
      for (const isCold of i % 2 ? [false, true] : [true, false]) {
        const name = `fleetlab-bench-node-${tag}-${made.length}`;
        const { c, t } = await start(name, ["FLEETLAB_ROLE=node", `GATEWAY_HOST=${gw.name}`, `NODE_NAME=${name}`, ...cold(isCold)]);
        const done = await until(`${name} reaching the gateway`, async () => NODE_REACHED.test(demux((await c.logs({ stdout: true, stderr: true })) as unknown as Buffer)));
        const s = (done - t) / 1000;
        out.node[isCold ? "cold" : "warm"].push(s);
        opts.log(`node host start, ${isCold ? "cold" : "warm"} compile cache, trial ${i + 1}: ${s.toFixed(2)} s`);
        await c.remove({ force: true });
      }
    }
    if (opts.packageDir) {
      const warmTmp = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-bench-warm-"));
      try {
        await bareGateway(opts.packageDir, warmTmp); // fills warmTmp's compile cache
        for (let i = 0; i < opts.trials; i++) {
          for (const isCold of i % 2 ? [false, true] : [true, false]) {
            const tmp = isCold ? fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-bench-cold-")) : warmTmp;
            try {
              const s = await bareGateway(opts.packageDir, tmp);
              out.bare[isCold ? "cold" : "warm"].push(s);
              opts.log(`bare gateway start, ${isCold ? "cold" : "warm"} compile cache, trial ${i + 1}: ${s.toFixed(2)} s`);
            } finally {
              if (isCold) fs.rmSync(tmp, { recursive: true, force: true });
            }
          }
        }
      } finally {
        fs.rmSync(warmTmp, { recursive: true, force: true });
      }
    }
  } finally {
    for (const id of made) await d.getContainer(id).remove({ force: true }).catch(() => {});
    await net.remove().catch(() => {});
  }
  return out;
}

/**
 * The gateway as a process on this host with its temp folder (and so its compile cache) at
 * `tmp`: seconds from spawn to /readyz answering 200; then stopped with SIGTERM and awaited
 * (Node writes the compile cache as it exits).
 */
async function bareGateway(packageDir: string, tmp: string): Promise<number> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-bench-home-"));
  const port = 28000 + Math.floor(Math.random() * 1000);
  const env = {
    PATH: envVar("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    TMPDIR: tmp,
    OPENCLAW_STATE_DIR: path.join(home, ".openclaw"),
    OPENCLAW_CONFIG_PATH: path.join(home, ".openclaw", "openclaw.json"),
    OPENCLAW_GATEWAY_TOKEN: TOKEN,
    OPENCLAW_NO_AUTO_UPDATE: "1",
    OPENCLAW_DISABLE_BONJOUR: "1",
    OPENCLAW_SKIP_GMAIL_WATCHER: "1",
    OPENCLAW_SKIP_CANVAS_HOST: "1",
    OPENCLAW_SKIP_BROWSER_CONTROL_SERVER: "1",
    OPENCLAW_NO_RESPAWN: "1",
  };
  const bin = path.join(packageDir, "node_modules", "openclaw", "openclaw.mjs");
  const t = performance.now();
  const p = spawn(nodeBinary().file, [bin, "gateway", "run", "--port", String(port), "--bind", "loopback", "--allow-unconfigured"], { env, stdio: "ignore" });
  const exited = new Promise<void>((r) => p.on("exit", () => r()));
  try {
    const end = Date.now() + deadline(START_WAIT_MS); // paced
    for (;;) {
      const r = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(deadline(2000)) }).catch(() => undefined); // paced
      if (r?.status === 200) break;
      if (p.exitCode !== null) throw new Error(`the bare gateway exited (code ${p.exitCode}) before /readyz answered`);
      if (Date.now() > end) throw new Error(`the bare gateway's /readyz did not answer within ${deadline(START_WAIT_MS) / 1000} s`);
      await new Promise((r) => setTimeout(r, 100)); // fixed: not a deadline: the poll interval
    }
    return (performance.now() - t) / 1000;
  } finally {
    p.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 60_000))]); // fixed: not a deadline: the grace before SIGKILL
    p.kill("SIGKILL");
    fs.rmSync(home, { recursive: true, force: true });
  }
}
