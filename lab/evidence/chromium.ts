// Looking at report.html as a person would: headless Chromium (Debian's package, installed by
// lab/host/chromium.sh) opens the file, runs its script and prints the resulting DOM or saves a
// screenshot. Every flag that would let Chromium reach outside hosts (background networking,
// component updates, sync, QUIC) is off, and each run gets a fresh profile folder.
import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { LabError } from "../core/log.ts";
import { env } from "../core/settings.ts";

const run = promisify(execFile);

/** The Chromium binary: CHROMIUM=path, else /usr/bin/chromium. */
export function chromiumPath(): string {
  const p = env("CHROMIUM") ?? "/usr/bin/chromium";
  if (!fs.existsSync(p)) throw new LabError(`no Chromium at ${p}: run 'bash lab/host/chromium.sh' (installs Debian's chromium as root on Debian) or set CHROMIUM=/path/to/chromium`);
  return p;
}

const QUIET = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-extensions", "--hide-scrollbars", "--mute-audio"];

async function chromium(args: string[], timeoutMs: number): Promise<string> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "fleetlab-chromium-"));
  try {
    const { stdout } = await run(chromiumPath(), [...QUIET, `--user-data-dir=${profile}`, ...args], { timeout: timeoutMs, maxBuffer: 512 * 1024 * 1024 });
    return stdout;
  } finally {
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

const urlOf = (file: string, hash?: string) => pathToFileURL(path.resolve(file)).href + (hash ? `#${hash}` : "");

/** The page's DOM after its scripts ran. */
export async function dumpDom(file: string, opts: { hash?: string; timeoutMs?: number } = {}): Promise<string> {
  return chromium(["--virtual-time-budget=5000", "--dump-dom", urlOf(file, opts.hash)], opts.timeoutMs ?? 120_000);
}

/** A PNG of the page as a 1600x1200 window shows it (hash: e.g. "scenario=midturn-node-loss"). */
export async function screenshot(file: string, png: string, opts: { hash?: string; width?: number; height?: number; timeoutMs?: number } = {}): Promise<string> {
  await chromium(["--virtual-time-budget=5000", `--window-size=${opts.width ?? 1600},${opts.height ?? 1200}`, `--screenshot=${path.resolve(png)}`, urlOf(file, opts.hash)], opts.timeoutMs ?? 120_000);
  if (!fs.existsSync(png)) throw new Error(`chromium wrote no screenshot to ${png}`);
  return png;
}

/** What a reader sees in a dumped report: the verdict rows and the timeline items by kind. */
export interface PageReading {
  rendered: boolean;
  verdicts: Record<string, string>;
  items: Record<string, number>;
}

/**
 * Read the dumped DOM back by the data attributes the page puts on what it draws (rows:
 * data-scenario / data-verdict; timeline items: data-kind). Chromium serializes attributes in
 * the order the page set them, with values of plain names and kinds as written.
 */
export function readPage(dom: string): PageReading {
  const verdicts: Record<string, string> = {};
  for (const m of dom.matchAll(/<tr\b[^>]*?\bdata-scenario="([^"]*)"[^>]*?\bdata-verdict="([^"]*)"/g)) verdicts[m[1]!] = m[2]!;
  const items: Record<string, number> = {};
  for (const m of dom.matchAll(/<div\b[^>]*?\bclass="item [^"]*"[^>]*?\bdata-kind="([^"]*)"/g)) items[m[1]!] = (items[m[1]!] ?? 0) + 1;
  return { rendered: /<body\b[^>]*\bdata-rendered="true"/.test(dom), verdicts, items };
}
