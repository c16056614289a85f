// Signatures without per-run noise: a finding's signature must read the same on every run
// that shows the same behaviour, so ids, tokens and clock values are replaced by what they
// are. Use it on what a check observes: check({ ..., observed: normalise(seen) }).
//   uuid                      -> <uuid>
//   ISO time / epoch ms       -> <time>
//   lab names (fleetlab-3fa2c1, node ids, sha256 hex) -> <id>
//   numbers under keys named *Ms, *At, *_ms, ms, at, ts, seq, pid, conn, id -> <n> (measured;
//   keep: ["seq"] keeps one). Bounds a signature asserts (within_s: 30) are kept: *_s is a bound.
const UUID = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const ISO = /\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b/g;
const LAB_NAME = /\b(fleetlab|repo|tok|run|lab)-[0-9a-f]{4,}\b/g;
const LONG_HEX = /\b[0-9a-f]{16,}\b/g;
const CLOCK_KEY = /(Ms|At|_ms)$|^(ms|at|ts|seq|pid|conn|id)$/;

export function normaliseText(s: string): string {
  return s.replace(UUID, "<uuid>").replace(ISO, "<time>").replace(LAB_NAME, "$1-<id>").replace(LONG_HEX, "<id>");
}

export function normalise<T>(value: T, opts: { keep?: string[] } = {}): T {
  const keep = new Set(opts.keep ?? []);
  const walk = (v: unknown, key?: string): unknown => {
    if (typeof v === "string") return normaliseText(v);
    if (typeof v === "number" && key !== undefined && !keep.has(key) && CLOCK_KEY.test(key)) return "<n>";
    if (typeof v === "number" && v > 1_500_000_000_000 && v < 4_000_000_000_000) return "<time>"; // epoch ms
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return walk(value) as T;
}
