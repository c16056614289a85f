// What every evidence format shares: reading a file of records with the format's schema, and,
// for formats a container's program writes (docker/*, which cannot import from lab/), the
// compile-time proof that the schema here and the writer's own type are the same shape.
import fs from "node:fs";
import type { z } from "zod";

/** A record and the line it was read from (1-based). */
export interface Line<T> {
  line: number;
  value: T;
}

/**
 * The value when it passes `schema`, as it was written: its own key order, and fields the schema
 * does not name (a newer writer's) kept. The formats have no transforms or defaults, so a value
 * that passes already is of the schema's type; undefined when it does not pass.
 */
export function asWritten<T>(schema: z.ZodType<T>, raw: unknown): T | undefined {
  return schema.safeParse(raw).success ? (raw as T) : undefined;
}

/** One JSON line as a record of `schema` (as written), or undefined when it is not JSON or not such a record. */
export function parseJsonLine<T>(line: string, schema: z.ZodType<T>): T | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  return asWritten(schema, raw);
}

/** The JSON lines of `text` that are records of `schema` (with their line numbers), and how many lines are not. */
export function parseJsonl<T>(text: string, schema: z.ZodType<T>): { records: Line<T>[]; bad: number } {
  const records: Line<T>[] = [];
  let bad = 0;
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    const value = parseJsonLine(line, schema);
    if (value === undefined) bad++;
    else records.push({ line: i + 1, value });
  });
  return { records, bad };
}

/** A JSON lines file read with `schema` (no records when it does not exist). */
export function readJsonl<T>(file: string, schema: z.ZodType<T>): { records: Line<T>[]; bad: number } {
  return fs.existsSync(file) ? parseJsonl(fs.readFileSync(file, "utf8"), schema) : { records: [], bad: 0 };
}

/**
 * True when A and B are the same type, field for field (an optional field on one side only, or
 * one of another type, makes it false). Both sides are flattened first, all the way down and per
 * union member, so a zod object and the interfaces, intersections and Omit<>s its writer declares
 * compare by their fields alone.
 */
export type SameShape<A, B> = (<T>() => T extends Flat<A> ? 1 : 2) extends <T>() => T extends Flat<B> ? 1 : 2 ? true : false;
type Flat<T> = T extends object ? { [K in keyof T]: Flat<T[K]> } : T;
