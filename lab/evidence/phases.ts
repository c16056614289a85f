// Named, timed phases (after roachtest's failure modes, which lab/faults/fault.ts follows step
// for step): a lab's bring-up (images, network, members, operator, restore or pairing,
// snapshot) and a scenario's run (needs, lab, body, drain, evidence checks, lab after) are
// each a sequence of phases, and run.json records every phase that ran with how long it took
// and whether it ended well (PhaseRow in lab/evidence/run.ts), so a slow or broken run shows
// where its time went without reading its log.
import type { PhaseRow } from "./run.ts";

/** What a phase may answer instead of nothing: the life cycle is over (a verdict is known before the body ran, say); only clean-up phases follow. */
export const STOP = "stop";

export interface Phase {
  name: string;
  run: () => Promise<void | typeof STOP>;
  /**
   * Runs whatever happened before it (a phase that threw or stopped): it undoes what earlier
   * phases set up, so it must be safe to run at any point (its `when` says whether there is
   * anything to undo).
   */
  cleanup?: boolean;
  /** Whether the phase has anything to do when its turn comes (default: yes); a phase left out is not recorded. */
  when?: () => boolean;
}

export class Phases {
  /** Every phase run so far, in order. */
  readonly rows: PhaseRow[] = [];

  private readonly now: () => number;
  constructor(now: () => number = () => performance.now()) {
    this.now = now;
  }

  /** Run one phase, timed into `rows` (ok: false when it throws; the error goes on to the caller). */
  async run<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t0 = this.now();
    const row = (ok: boolean) => this.rows.push({ name, ms: Math.round(this.now() - t0), ok });
    try {
      const out = await fn();
      row(true);
      return out;
    } catch (err) {
      row(false);
      throw err;
    }
  }

  /**
   * Run phases in order. The first that throws ends the sequence, and one that answers STOP
   * does so without an error: the phases after it are not run, but for the clean-up ones,
   * which run whatever happened. The first error (a clean-up's too) is thrown once the
   * clean-ups have run.
   */
  async sequence(phases: Phase[]): Promise<void> {
    let ended = false;
    let failure: { error: unknown } | undefined;
    for (const p of phases) {
      if (ended && !p.cleanup) continue;
      if (p.when && !p.when()) continue;
      try {
        if ((await this.run(p.name, p.run)) === STOP) ended = true;
      } catch (error) {
        ended = true;
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }
}
