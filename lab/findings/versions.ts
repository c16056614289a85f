// OpenClaw's versions as findings use them: calendar versions (YYYY.M.P, an optional -pre) and
// the version ranges a finding record's variants are registered for. A range is one or more
// comparators separated by spaces, all of which must hold (as npm's ranges without `||`):
//   "2026.9.5"              that version only
//   ">=2026.9.5"            2026.9.5 and newer
//   ">=2026.9.4 <2026.9.6"  2026.9.4 up to, not including, 2026.9.6
// Kept this small on purpose: a record names the versions it was seen on, nothing fancier.

/**
 * OpenClaw's calendar versions (YYYY.M.P, optional -pre): numeric parts, a prerelease before its
 * release. A build's name (`2026.9.6+1a2b3c4d5e`, lab/definitions/build.ts) compares as its
 * version: build metadata is dropped, as semver does.
 */
export function compareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const [core, pre] = v.split("+", 1)[0]!.split("-", 2) as [string, string | undefined];
    return { nums: core.split(".").map((x) => Number.parseInt(x, 10) || 0), pre };
  };
  const x = parse(a);
  const y = parse(b);
  for (let i = 0; i < Math.max(x.nums.length, y.nums.length); i++) {
    const d = (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
    if (d) return d;
  }
  if (x.pre === y.pre) return 0;
  if (x.pre === undefined) return 1;
  if (y.pre === undefined) return -1;
  return x.pre.localeCompare(y.pre, "en", { numeric: true });
}

type Op = "=" | ">=" | ">" | "<=" | "<";
interface Comparator {
  op: Op;
  version: string;
}

const COMPARATOR = /^(>=|<=|>|<|=)?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)$/;

/** The comparators of a range; a malformed one is an Error naming the part and the form. */
export function parseRange(range: string): Comparator[] {
  const parts = range.trim().split(/\s+/).filter(Boolean);
  if (!parts.length) throw new Error(`version range "${range}" is empty: give e.g. "2026.9.5", ">=2026.9.5" or ">=2026.9.4 <2026.9.6"`);
  return parts.map((p) => {
    const m = COMPARATOR.exec(p);
    if (!m) throw new Error(`version range "${range}": "${p}" is not a comparator (an exact version such as 2026.9.5, or one after >=, >, <=, <)`);
    return { op: (m[1] ?? "=") as Op, version: m[2]! };
  });
}

/** Whether `version` lies in `range`. */
export function inRange(version: string, range: string): boolean {
  return parseRange(range).every(({ op, version: v }) => {
    const d = compareVersions(version, v);
    return op === "=" ? d === 0 : op === ">=" ? d >= 0 : op === ">" ? d > 0 : op === "<=" ? d <= 0 : d < 0;
  });
}

/** The versions a range names (its bounds and exact versions). */
export function rangeVersions(range: string): string[] {
  return parseRange(range).map((c) => c.version);
}

/** The oldest of `versions` (undefined for none). */
export function oldest(versions: string[]): string | undefined {
  return [...versions].sort(compareVersions)[0];
}
