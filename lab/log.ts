/** Progress output for long steps, on stderr so stdout stays for tables and paths. */
const quiet = () => process.env.FLEETLAB_QUIET === "1";

export function info(msg: string): void {
  if (!quiet()) process.stderr.write(`fleetlab: ${msg}\n`);
}

/** Run a step, printing its name, then its duration (or failure). */
export async function step<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  if (!quiet()) process.stderr.write(`fleetlab: ${label} ...\n`);
  try {
    const out = await fn();
    if (!quiet()) process.stderr.write(`fleetlab: ${label}: done in ${secs(t0)}\n`);
    return out;
  } catch (err) {
    if (!quiet()) process.stderr.write(`fleetlab: ${label}: FAILED after ${secs(t0)}\n`);
    throw err;
  }
}

export function secs(t0: number): string {
  return `${((performance.now() - t0) / 1000).toFixed(1)} s`;
}

/** An error whose message is meant for the user as is (bad input, missing engine, ...). */
export class LabError extends Error {
  constructor(message: string, readonly exitCode = 2) {
    super(message);
    this.name = "LabError";
  }
}
