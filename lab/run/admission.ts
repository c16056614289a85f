// Admission and attempts: what keeps a busy machine from reading as OpenClaw's failure.
//
// - Admission: a lab is brought up only when the machine has the headroom the lab plans for
//   (free memory for its members; a pace within the plan; a second lab beside another only when
//   the pace leaves room for it), waiting with a progress line that says what it waits for.
//   Lanes narrow while the machine is busy (a lane waits while another lab runs) and widen again
//   when it is not. The wait is bounded: after it the lab comes up anyway and says so (its
//   deadlines still follow the pace, and one that passes beyond the plan is unknown).
// - Start attempts: a gateway or node host that gave up its own start because the machine starved
//   it (OpenClaw exits with code 78: "state lease heartbeat did not become ready", seen at load
//   7 per core on 2 cores) or a readiness deadline passed beyond the plan, is started again on
//   fresh state, up to START_ATTEMPTS times (as Testcontainers' startup attempts do), each failed
//   attempt's evidence kept beside the next one's. A start that fails on a quiet machine is still
//   OpenClaw's failure: not tried again.
import { docker } from "../engine/docker.ts";
import { info, step } from "../core/log.ts";
import { MAX_FACTOR, machineBusyIn, memAvailable, monitor, type PaceSample } from "../core/pace.ts";
import { sleep } from "../core/wait.ts";

/** Starts of one lab before the lab gives up (the first one included). */
export const START_ATTEMPTS = 3;
/** Runs of one scenario the lab could not judge because the machine was busier than planned (the first one included). */
export const SCENARIO_ATTEMPTS = 2;
/**
 * A second lab comes up beside another only while the CPU calibration (what a thread of the lab
 * gets now, median of the last 10 s) is at most this much slower than the reference. Not the load
 * average: it trails the machine by a minute, so a lane whose lab just went down would keep the
 * next one waiting on a quiet machine (seen: a quiet two-lane run reads load 5-6 on 2 cores).
 */
export const ADMIT_BESIDE = 2;
/**
 * Above this pace a start OpenClaw gave up (exit 78, state lease) is worth another attempt: beyond
 * what the lab itself brings to a 2-core machine (a quiet two-lane run reads about 3.5-4, most of
 * it the lab's own containers). At or below it, the exit is OpenClaw's failure, not tried again;
 * after every attempt, it is unknown only when the machine was beyond the plan (MAX_FACTOR).
 */
export const RETRY_PACE = 4;
const GiB = 2 ** 30;

/** What a lab of this many node hosts needs free (measured: gateway ~1.2 GiB after turns, node host ~0.8, the rest ~0.3). */
export function memoryNeed(nodes: number): number {
  return Math.round((1.2 + 0.8 * nodes + 0.3) * GiB);
}

/** The machine now, as admission reads it. */
export interface Machine {
  /** The latest pace reading (unclamped). */
  sample: PaceSample;
  cores: number;
  memAvailable: number;
  /** Other labs running on this engine now (their gateways), this run's or another's. */
  othersUp: number;
}

/** Why a lab needing `need` bytes may not come up on this machine now, or undefined when it may (pure). */
export function noHeadroom(m: Machine, need: number): string | undefined {
  const why: string[] = [];
  if (m.memAvailable < need) why.push(`free memory ${(m.memAvailable / GiB).toFixed(1)} GiB, the lab needs ${(need / GiB).toFixed(1)} GiB`);
  const pace = `pace ${m.sample.raw.toFixed(2)}x (load ${m.sample.load} on ${m.cores} cores)`;
  if (m.sample.raw > MAX_FACTOR) why.push(`${pace}, beyond the ${MAX_FACTOR}x the lab plans for`);
  else if (m.othersUp > 0 && m.sample.cpu > ADMIT_BESIDE) why.push(`CPU ${m.sample.cpu.toFixed(2)}x slower than the reference (load ${m.sample.load} on ${m.cores} cores) with ${m.othersUp} other lab(s) running; another comes up beside them at ${ADMIT_BESIDE}x or less`);
  return why.length ? why.join("; ") : undefined;
}

/** Labs running on this engine: their gateways (any run). 0 when the engine cannot tell. */
export async function labsRunning(): Promise<number> {
  try {
    const list = await docker().listContainers({ filters: { label: ["fleetlab.kind=gateway"], status: ["running"] } });
    return list.length;
  } catch {
    return 0;
  }
}

export interface Admission {
  waitedMs: number;
  /** Said when the lab came up without the headroom (the wait ran out). */
  note?: string;
}

/**
 * Wait until the machine has the headroom for a lab of `nodes` node hosts, at most `maxWaitMs`
 * (60 min while other labs run: lanes narrow while the machine is busy, one lab at a time, and a
 * lane waits only while it holds no lab, so two never wait for each other; 5 min when none does).
 * `own` labs of the caller's that are running anyway (a shared lab a scenario runs again on) do
 * not count as others. Says what it waits for, again every minute.
 */
export async function admit(what: string, nodes: number, opts: { signal?: AbortSignal; maxWaitMs?: number; machine?: () => Promise<Machine>; pollMs?: number; own?: number } = {}): Promise<Admission> {
  const machine = opts.machine ?? (() => readMachine(opts.own ?? 0));
  // A lab that is already up (own) needs no memory of its own: only the pace is waited for.
  const need = opts.own ? 0 : memoryNeed(nodes);
  const t0 = Date.now();
  let m = await machine();
  let why = noHeadroom(m, need);
  if (!why) return { waitedMs: 0 };
  const max = opts.maxWaitMs ?? (m.othersUp > 0 ? 60 * 60_000 : 5 * 60_000);
  return step(`${what}: waiting for headroom (${why})`, async () => {
    let said = Date.now();
    while (why) {
      if (Date.now() - t0 >= max) {
        const note = `came up without the headroom the lab plans for after waiting ${Math.round((Date.now() - t0) / 1000)} s (${why})`;
        info(`${what}: ${note}`);
        return { waitedMs: Date.now() - t0, note };
      }
      await sleep(opts.pollMs ?? 5_000, opts.signal);
      m = await machine();
      why = noHeadroom(m, need);
      if (why && Date.now() - said >= 60_000) {
        said = Date.now();
        info(`${what}: still waiting for headroom (${why}; ${Math.round((Date.now() - t0) / 1000)} s so far)`);
      }
    }
    return { waitedMs: Date.now() - t0 };
  });
}

async function readMachine(own: number): Promise<Machine> {
  const mon = monitor();
  const sample = mon.samples.at(-1)!;
  return { sample, cores: mon.cores, memAvailable: memAvailable(), othersUp: Math.max(0, (await labsRunning()) - own) };
}

/**
 * Why a lab's start failed because the machine starved it, so that it is worth another attempt,
 * or undefined (OpenClaw's own failure, bad input, the engine). `worstPace` is the worst reading
 * while the attempt ran: OpenClaw giving up its start on a quiet machine is its own failure.
 */
export function starvedStart(err: unknown, worstPace: number): string | undefined {
  const text = errorText(err);
  const busy = machineBusyIn(err);
  if (busy) return busy;
  if (/the machine was busier than the lab planned for/.test(text)) return text.split("\n")[0];
  if (/state lease heartbeat did not become ready/.test(text) && worstPace > RETRY_PACE) {
    return `OpenClaw gave up its own start (state lease heartbeat did not become ready) on a machine at pace ${worstPace.toFixed(2)}x`;
  }
  return undefined;
}

/** An error's message with its causes' (the lease message may sit in a cause). */
function errorText(err: unknown): string {
  const parts: string[] = [];
  for (let e = err, d = 0; e && d < 10; e = (e as { cause?: unknown }).cause, d++) parts.push((e as Error).message ?? String(e));
  return parts.join("\n");
}
