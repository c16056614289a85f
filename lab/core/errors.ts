// The lab's own refusal of bad input or set-up (exit 2 unless said otherwise): one line naming what
// is wrong and how to fix it, never a stack trace. Apart from log.ts so that settings.ts, which
// log.ts reads the environment through, can throw it.
export class LabError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
    this.name = "LabError";
  }
}
