/** Poll until `probe` returns a value (not undefined), or fail naming what was awaited. */
export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  opts: { timeoutMs: number; intervalMs?: number; lastState?: () => string },
): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      // A probe that throws a "stop now" error (e.g. container exited) ends the wait at once.
      if (err instanceof StopWaiting) throw err;
      lastErr = err;
    }
    if (Date.now() >= deadline) {
      const state = opts.lastState?.() ?? (lastErr ? `last error: ${(lastErr as Error).message}` : "");
      throw new Error(`timed out after ${(opts.timeoutMs / 1000).toFixed(0)} s waiting for ${what}${state ? ` (${state})` : ""}`);
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 200));
  }
}

export class StopWaiting extends Error {}
