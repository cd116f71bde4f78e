import type { z } from 'zod';

/** A number as YAML 1.2's core schema writes one (no hex, no `.inf`: a port or a limit, not a puzzle). */
const NUMBER = /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
const BOOLEAN: Record<string, boolean> = { true: true, True: true, TRUE: true, false: false, False: false, FALSE: false };

/**
 * `port: ${PORT:-8080}` is a string once interpolated, where the schema wants a number. Where the
 * schema refused such a string for a number or a boolean, the string is read as YAML would have
 * read it written in place (`8080`, `true`), and the caller parses again. Only values that came
 * from a reference are touched: a literal `"8080"` in the file is the author's explicit string,
 * and a value the schema accepts as a string (an api_key of digits) is never looked at.
 * Mutates `raw`; returns whether it changed anything.
 */
export function coerceInterpolated(
  raw: unknown,
  issues: readonly z.core.$ZodIssue[],
  interpolated: readonly PropertyKey[][],
): boolean {
  const fromReference = new Set(interpolated.map((path) => path.map(String).join('\0')));
  let changed = false;
  for (const issue of issues) {
    if (issue.code !== 'invalid_type' || (issue.expected !== 'number' && issue.expected !== 'boolean')) continue;
    if (!fromReference.has(issue.path.map(String).join('\0'))) continue;
    const parent = containerOf(raw, issue.path);
    const key = issue.path.at(-1);
    if (!parent || key === undefined) continue;
    const text = parent[key as string];
    if (typeof text !== 'string') continue;
    const value = issue.expected === 'number' ? (NUMBER.test(text.trim()) ? Number(text) : undefined) : BOOLEAN[text.trim()];
    if (value === undefined) continue;
    parent[key as string] = value;
    changed = true;
  }
  return changed;
}

function containerOf(raw: unknown, path: readonly PropertyKey[]): Record<string, unknown> | undefined {
  let node = raw;
  for (const key of path.slice(0, -1)) {
    if (!node || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[key as string];
  }
  return node && typeof node === 'object' ? (node as Record<string, unknown>) : undefined;
}
