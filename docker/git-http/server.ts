// fleetlab git-http: serves bare repositories under GIT_ROOT over smart and dumb HTTP.
// Dependency-free (node: builtins only) so the image needs nothing but Node and git.
//
// URL layout
//   GET  /healthz                          200 "ok"
//   GET  /smart/<name>.git/...             smart HTTP via `git http-backend` (CGI)
//   POST /smart/<name>.git/git-upload-pack | git-receive-pack
//   GET  /dumb/<name>.git/{HEAD,info/refs,objects/...}   plain static files (dumb HTTP)
//   GET  /_control/repos                   {repos: [{name, head, headCommit, refs}]}
//   POST /_control/repos  {name}           create an empty bare repo (201; 200 if it existed)
//   GET  /_control/log[?since=<seq>]       {entries: [{seq, time, method, path, status, bytes, remote, agent, ms}]}
//
// <name> is one or more path segments ([A-Za-z0-9][A-Za-z0-9._-]*), stored as
// GIT_ROOT/<name>.git. Fetching a repo that does not exist is a 404 that says so; pushing to
// one creates it first, with http.receivepack on and a post-update hook running
// `git update-server-info`, so a push is visible over dumb HTTP by the time it returns.
//
// Env: GIT_HTTP_PORT (8080; 0 picks a free port), GIT_HTTP_HOST (0.0.0.0), GIT_ROOT (/srv/git).
// Prints one JSON line {"event":"listening","port":N} when ready, then one per request.
// The control API's replies are defined in wire.ts, shared with lab/clients/git.ts.

import { spawn, execFile, type ExecFileOptions } from "node:child_process";
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import { createReadStream, type Dirent, type Stats } from "node:fs";
import { access, chmod, mkdir, readdir, stat, writeFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import type { AccessLogEntry, CreatedRepo, GitHttpControlApi, RepoInfo } from "./wire.ts";

const execFileP = promisify(execFile);

const PORT = Number(process.env.GIT_HTTP_PORT ?? 8080);
const HOST = process.env.GIT_HTTP_HOST ?? "0.0.0.0";
const GIT_ROOT = path.resolve(process.env.GIT_ROOT ?? "/srv/git");
const LOG_LIMIT = 10_000; // keep memory bounded on long runs; seq numbers stay monotonic
const BODY_LIMIT = 64 * 1024; // control API bodies are tiny

// Repos may live on a volume owned by another uid; git would refuse them as "dubious".
// safe.directory is only honoured from protected config, which includes the command scope.
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_COUNT: "1",
  GIT_CONFIG_KEY_0: "safe.directory",
  GIT_CONFIG_VALUE_0: "*",
};

const git = (args: string[], opts: ExecFileOptions = {}): Promise<{ stdout: string; stderr: string }> =>
  execFileP("git", args, { env: GIT_ENV, maxBuffer: 16 * 1024 * 1024, encoding: "utf8", ...opts }) as Promise<{ stdout: string; stderr: string }>;

const execPath = (await git(["--exec-path"])).stdout.trim();
const HTTP_BACKEND = path.join(execPath, "git-http-backend");

// ---------------------------------------------------------------- access log

const accessLog: AccessLogEntry[] = [];
let seq = 0;

function record(entry: Omit<AccessLogEntry, "seq">): void {
  const e = { seq: ++seq, ...entry };
  accessLog.push(e);
  if (accessLog.length > LOG_LIMIT) accessLog.splice(0, accessLog.length - LOG_LIMIT);
  process.stdout.write(JSON.stringify({ event: "request", ...e }) + "\n");
}

// Count body bytes actually written, whichever way the response is produced (pipe or end).
function countBytes(res: ServerResponse): () => number {
  let bytes = 0;
  // Untyped on purpose: write and end have several overloads, all passed through unchanged.
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  const size = (chunk: unknown, enc: unknown) =>
    chunk == null || typeof chunk === "function" ? 0
      : typeof chunk === "string" ? Buffer.byteLength(chunk, typeof enc === "string" ? (enc as BufferEncoding) : "utf8")
      : (chunk as Uint8Array).length;
  res.write = ((chunk: unknown, ...rest: unknown[]) => { bytes += size(chunk, rest[0]); return write(chunk, ...rest); }) as ServerResponse["write"];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => { bytes += size(chunk, rest[0]); return end(chunk, ...rest); }) as ServerResponse["end"];
  return () => bytes;
}

// ---------------------------------------------------------------- repositories

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function validName(name: unknown): name is string {
  if (typeof name !== "string" || name.length === 0 || name.length > 200) return false;
  return name.split("/").every((s) => SEGMENT.test(s) && !s.endsWith(".git") && !s.includes(".."));
}

const repoDir = (name: string) => path.join(GIT_ROOT, `${name}.git`);

async function exists(p: string): Promise<boolean> {
  try { await access(p); return true; } catch { return false; }
}

const isRepo = (dir: string) => exists(path.join(dir, "HEAD"));

const creating = new Map<string, Promise<void>>(); // name -> Promise, so concurrent pushes create a repo once

async function ensureRepo(name: string): Promise<boolean> {
  const dir = repoDir(name);
  if (await isRepo(dir)) return false;
  if (!creating.has(name)) {
    const p = (async () => {
      await mkdir(path.dirname(dir), { recursive: true });
      await git(["init", "--quiet", "--bare", "--initial-branch=main", dir]);
      await git(["--git-dir", dir, "config", "http.receivepack", "true"]);
      await git(["--git-dir", dir, "config", "http.uploadpack", "true"]);
      const hook = path.join(dir, "hooks", "post-update");
      await writeFile(hook, "#!/bin/sh\n# keep dumb HTTP (info/refs, objects/info/packs) current\nexec git update-server-info\n");
      await chmod(hook, 0o755);
      await git(["--git-dir", dir, "update-server-info"]);
    })().finally(() => creating.delete(name));
    creating.set(name, p);
  }
  await creating.get(name);
  return true;
}

async function findRepos(dir = GIT_ROOT, prefix = ""): Promise<string[]> {
  let entries: Dirent[];
  try { entries = await readdir(dir, { withFileTypes: true }); } catch { return []; }
  const found: string[] = [];
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!e.isDirectory()) continue;
    const full = path.join(dir, e.name);
    if (e.name.endsWith(".git") && (await isRepo(full))) {
      found.push(prefix + e.name.slice(0, -4));
    } else if (SEGMENT.test(e.name)) {
      found.push(...(await findRepos(full, `${prefix}${e.name}/`)));
    }
  }
  return found;
}

async function describeRepo(name: string): Promise<RepoInfo> {
  const dir = repoDir(name);
  const head = await git(["--git-dir", dir, "symbolic-ref", "-q", "HEAD"]).then((r) => r.stdout.trim(), () => null);
  const headCommit = await git(["--git-dir", dir, "rev-parse", "-q", "--verify", "HEAD^{commit}"]).then(
    (r) => r.stdout.trim(), () => null);
  const out = (await git(["--git-dir", dir, "for-each-ref", "--format=%(objectname) %(refname)"])).stdout;
  const refs: Record<string, string> = {};
  for (const line of out.split("\n")) {
    const i = line.indexOf(" ");
    if (i > 0) refs[line.slice(i + 1)] = line.slice(0, i);
  }
  return { name, head, headCommit, refs };
}

// ---------------------------------------------------------------- responses

function sendText(res: ServerResponse, status: number, text: string): void {
  const body = text.endsWith("\n") ? text : text + "\n";
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8", "Content-Length": Buffer.byteLength(body), "Cache-Control": "no-cache" });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value) + "\n";
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body), "Cache-Control": "no-cache" });
  res.end(body);
}

const notFoundRepo = (res: ServerResponse, name: string) =>
  sendText(res, 404, `repository not found: '${name}.git' does not exist under ${GIT_ROOT} ` +
    `(create it with POST /_control/repos {"name":"${name}"} or by pushing to it)`);

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += c.length;
    if (size > BODY_LIMIT) throw Object.assign(new Error("request body too large"), { status: 413 });
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString("utf8");
}

// Splits "/smart/a/b.git/info/refs" into the repo name and the path inside the repo.
function parseRepoPath(rest: string): { name: string; inner: string } | null {
  let segments: string[];
  try { segments = rest.split("/").map(decodeURIComponent); } catch { return null; }
  const i = segments.findIndex((s) => s.endsWith(".git") && s.length > 4);
  if (i < 0) return null;
  const name = [...segments.slice(0, i), segments[i]!.slice(0, -4)].join("/");
  const inner = segments.slice(i + 1);
  if (!validName(name)) return null;
  if (inner.some((s) => s === "." || s === ".." || s.includes("\0") || s.includes("\\"))) return null;
  return { name, inner: inner.join("/") };
}

// ---------------------------------------------------------------- smart HTTP (CGI)

function smart(req: IncomingMessage, res: ServerResponse, url: URL, name: string, inner: string): void {
  const env: NodeJS.ProcessEnv = {
    ...GIT_ENV,
    GIT_PROJECT_ROOT: GIT_ROOT,
    GIT_HTTP_EXPORT_ALL: "1",
    GATEWAY_INTERFACE: "CGI/1.1",
    SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
    SERVER_SOFTWARE: "fleetlab-git-http",
    REQUEST_METHOD: req.method ?? "GET",
    PATH_INFO: `/${name}.git/${inner}`,
    QUERY_STRING: url.search.replace(/^\?/, ""),
    REMOTE_ADDR: req.socket.remoteAddress ?? "",
    // http-backend only allows receive-pack to an authenticated user unless http.receivepack
    // is set; repos we create set it, and this covers repos created by hand.
    REMOTE_USER: "fleetlab",
  };
  if (req.headers["content-type"]) env.CONTENT_TYPE = req.headers["content-type"];
  if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
  // Standard CGI HTTP_* variables; http-backend needs HTTP_CONTENT_ENCODING (gzip'd
  // upload-pack requests) and HTTP_GIT_PROTOCOL (protocol v2).
  for (const [k, v] of Object.entries(req.headers)) {
    if (k === "content-type" || k === "content-length" || k === "authorization" || k === "proxy") continue;
    env[`HTTP_${k.toUpperCase().replace(/-/g, "_")}`] = Array.isArray(v) ? v.join(", ") : v;
  }

  const child = spawn(HTTP_BACKEND, [], { env, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (d) => { stderr += d; process.stderr.write(`[http-backend ${name}] ${d}`); });
  child.stdin.on("error", () => {}); // backend may exit before reading everything; its status says why
  req.pipe(child.stdin);
  res.on("close", () => { if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM"); });

  // CGI output: header lines, a blank line, then the body.
  let head = Buffer.alloc(0);
  let headersDone = false;
  const onData = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    let end = head.indexOf("\r\n\r\n"), sep = 4;
    const lf = head.indexOf("\n\n");
    if (lf >= 0 && (end < 0 || lf < end)) { end = lf; sep = 2; }
    if (end < 0) return;
    headersDone = true;
    child.stdout.off("data", onData);
    let status = 200, reason: string | undefined;
    const headers: OutgoingHttpHeaders = {};
    for (const line of head.subarray(0, end).toString("latin1").split(/\r?\n/)) {
      const i = line.indexOf(":");
      if (i <= 0) continue;
      const key = line.slice(0, i).trim(), value = line.slice(i + 1).trim();
      if (key.toLowerCase() === "status") {
        const m = /^(\d{3})\s*(.*)$/.exec(value);
        if (m) { status = Number(m[1]); reason = m[2] || undefined; }
      } else {
        headers[key] = key in headers ? ([] as string[]).concat(headers[key] as string | string[], value) : value;
      }
    }
    res.writeHead(status, reason, headers);
    const rest = head.subarray(end + sep);
    if (rest.length) res.write(rest);
    child.stdout.pipe(res);
  };
  child.stdout.on("data", onData);
  child.on("close", (code, signal) => {
    if (headersDone) return;
    if (!res.headersSent) sendText(res, 502, `git http-backend exited (${signal ?? code}) without a response: ${stderr.trim()}`);
  });
  child.on("error", (err) => {
    if (!res.headersSent) sendText(res, 500, `cannot run ${HTTP_BACKEND}: ${err.message}`);
  });
}

// ---------------------------------------------------------------- dumb HTTP (static)

const DUMB_FILE = /^(HEAD|info\/refs|objects\/.+)$/;

function dumbType(inner: string): string {
  if (inner === "HEAD" || inner.startsWith("info/") || inner.startsWith("objects/info/")) return "text/plain; charset=utf-8";
  if (/^objects\/[0-9a-f]{2}\/[0-9a-f]{38,62}$/.test(inner)) return "application/x-git-loose-object";
  if (inner.endsWith(".pack")) return "application/x-git-packed-objects";
  if (inner.endsWith(".idx")) return "application/x-git-packed-objects-toc";
  return "application/octet-stream";
}

async function dumb(req: IncomingMessage, res: ServerResponse, name: string, inner: string): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") return sendText(res, 405, "dumb HTTP is read-only: use GET");
  const dir = repoDir(name);
  if (!(await isRepo(dir))) return notFoundRepo(res, name);
  const file = path.join(dir, inner);
  let st: Stats | null = null;
  if (!DUMB_FILE.test(inner) || !file.startsWith(dir + path.sep) || !(st = await stat(file).catch(() => null)) || !st.isFile()) {
    // Normal during a dumb fetch: the client probes for alternates and loose objects.
    return sendText(res, 404, `not found: ${inner} in ${name}.git`);
  }
  res.writeHead(200, { "Content-Type": dumbType(inner), "Content-Length": st.size, "Cache-Control": "no-cache" });
  if (req.method === "HEAD") {
    res.end();
    return;
  }
  createReadStream(file).on("error", () => res.destroy()).pipe(res);
}

// ---------------------------------------------------------------- routing

type Reply<K extends keyof GitHttpControlApi> = GitHttpControlApi[K]["reply"];

async function control(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  if (url.pathname === "/_control/log" && req.method === "GET") {
    const since = Number(url.searchParams.get("since") ?? 0);
    const reply: Reply<"GET /_control/log"> = { entries: accessLog.filter((e) => e.seq > since) };
    return sendJson(res, 200, reply);
  }
  if (url.pathname === "/_control/repos" && req.method === "GET") {
    const repos: RepoInfo[] = [];
    for (const name of await findRepos()) repos.push(await describeRepo(name));
    const reply: Reply<"GET /_control/repos"> = { repos };
    return sendJson(res, 200, reply);
  }
  if (url.pathname === "/_control/repos" && req.method === "POST") {
    let name: unknown;
    try { name = (JSON.parse(await readBody(req)) as Partial<GitHttpControlApi["POST /_control/repos"]["body"]>).name; } catch (err) {
      const e = err as Error & { status?: number };
      return sendText(res, e.status ?? 400, `expected a JSON body {"name": "<repo>"}: ${e.message}`);
    }
    if (!validName(name)) {
      return sendText(res, 400, `invalid repo name ${JSON.stringify(name)}: use segments of [A-Za-z0-9._-] separated by '/', without .git`);
    }
    const created = await ensureRepo(name);
    const reply: CreatedRepo = { created, ...(await describeRepo(name)) };
    return sendJson(res, created ? 201 : 200, reply);
  }
  return sendText(res, 404, `no control endpoint ${req.method} ${url.pathname}`);
}

async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://git-http");
  const p = url.pathname;
  if (p === "/healthz") return sendText(res, 200, "ok");
  if (p.startsWith("/_control/")) return control(req, res, url);
  const m = /^\/(smart|dumb)\/(.+)$/.exec(p);
  const repo = m && parseRepoPath(m[2]);
  if (!m || !repo) {
    return sendText(res, 404, `no route for ${p}: use /smart/<name>.git/... or /dumb/<name>.git/... (see /_control/repos)`);
  }
  if (m[1] === "dumb") return dumb(req, res, repo.name, repo.inner);

  const pushing = repo.inner === "git-receive-pack" ||
    (repo.inner === "info/refs" && url.searchParams.get("service") === "git-receive-pack");
  if (pushing) await ensureRepo(repo.name);
  else if (!(await isRepo(repoDir(repo.name)))) return notFoundRepo(res, repo.name);
  return smart(req, res, url, repo.name, repo.inner);
}

const server = createServer((req, res) => {
  const started = Date.now();
  const bytes = countBytes(res);
  let logged = false;
  const done = () => {
    if (logged) return;
    logged = true;
    record({
      time: new Date(started).toISOString(),
      method: req.method ?? "",
      path: req.url ?? "",
      status: res.statusCode,
      bytes: bytes(),
      remote: req.socket.remoteAddress ?? "",
      agent: req.headers["user-agent"] ?? "",
      ms: Date.now() - started,
      ...(res.writableFinished ? {} : { aborted: true }),
    });
  };
  res.on("finish", done);
  res.on("close", done);
  route(req, res).catch((err: Error) => {
    process.stderr.write(`error handling ${req.method} ${req.url}: ${err.stack ?? err}\n`);
    if (!res.headersSent) sendText(res, 500, `internal error: ${err.message}`);
    else res.destroy();
  });
});

await mkdir(GIT_ROOT, { recursive: true });
server.listen(PORT, HOST, () => {
  const addr = server.address() as AddressInfo;
  process.stdout.write(JSON.stringify({ event: "listening", host: HOST, port: addr.port, gitRoot: GIT_ROOT }) + "\n");
});

// As PID 1 in a container Node gets no default signal handling; stop promptly.
for (const sig of ["SIGTERM", "SIGINT"]) {
  process.on(sig, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
