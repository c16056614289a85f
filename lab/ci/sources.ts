// The repository's own TypeScript sources under lab/ and scenarios/ (test files left out), as the
// lint-like tests beside this file read them: repository-relative paths with forward slashes.
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "../core/paths.ts";

/** Every non-test .ts file under lab/ and scenarios/ that `keep` admits (folders too: a folder it refuses is not walked). */
export function labSources(keep: (rel: string, isDir: boolean) => boolean = () => true): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      const p = path.posix.join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== "node_modules" && keep(p, true)) walk(p);
      } else if (/\.ts$/.test(e.name) && !/\.test\.ts$/.test(e.name) && keep(p, false)) out.push(p);
    }
  };
  walk("lab");
  walk("scenarios");
  return out;
}

/** README.md and every .md under docs/ (repository-relative): what the docs tests read. */
export function docFiles(): string[] {
  const out = ["README.md"];
  const walk = (d: string) => {
    if (!fs.existsSync(path.join(ROOT, d))) return;
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".md")) out.push(p);
    }
  };
  walk("docs");
  return out;
}
