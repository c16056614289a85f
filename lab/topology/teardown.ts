// The lab owns its teardown: whatever a scenario, a fault, a helper or an extra operator sets
// up registers what undoes it here, and the lab drains the stack newest first: after each
// scenario down to the mark taken before it (so a shared lab is handed on healed), and in
// down() and the interrupt handler completely (faults healed before their containers go).
// No module-global state: each lab has its own stack.

export interface Undo {
  name: string;
  fn: () => Promise<unknown>;
}

export interface DrainResult {
  done: string[];
  failed: { name: string; error: string }[];
}

export class TeardownStack {
  #stack: Undo[] = [];

  /** Register what undoes something; returns a function that removes it (it was undone another way). */
  defer(name: string, fn: () => Promise<unknown>): () => void {
    const u = { name, fn };
    this.#stack.push(u);
    return () => {
      const i = this.#stack.indexOf(u);
      if (i >= 0) this.#stack.splice(i, 1);
    };
  }

  /** What is registered, oldest first (names). */
  get pending(): string[] {
    return this.#stack.map((u) => u.name);
  }

  /** A position to drain back to later. */
  mark(): number {
    return this.#stack.length;
  }

  /**
   * Undo everything registered after `mark` (default: everything), newest first. Never throws:
   * failures are returned, since this runs at the end of runs that may already be failing.
   * An undo that fails stays registered, so the lab's down() (or the interrupt handler) tries
   * it again; prune is the last resort.
   */
  async drain(mark = 0): Promise<DrainResult> {
    const res: DrainResult = { done: [], failed: [] };
    const taken = this.#stack.splice(mark);
    const kept: Undo[] = [];
    for (const u of taken.reverse()) {
      try {
        await u.fn();
        res.done.push(u.name);
      } catch (err) {
        res.failed.push({ name: u.name, error: (err as Error).message });
        kept.unshift(u);
      }
    }
    this.#stack.splice(Math.min(mark, this.#stack.length), 0, ...kept);
    return res;
  }
}
