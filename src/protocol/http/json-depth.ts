import { formatParamPath } from '../schema-errors.ts';

/**
 * Deeper than any real request needs (a JSON schema in response_format nests a few dozen levels
 * at most), shallow enough that no recursive walk downstream (schemas, serializers, drivers) can
 * overflow the stack on it.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * The path of the first value nested deeper than `max`, or null. The recursion stops at `max`
 * levels, so the check itself cannot overflow; it allocates nothing unless it finds an offender
 * (it runs on every request body).
 */
export function findTooDeep(root: unknown, max = MAX_JSON_DEPTH): string | null {
  const path = deepPath(root, max);
  return path === null ? null : formatParamPath(path.reverse()) || '(body)';
}

/** The offending path, innermost key first; null when `value` fits in `budget` levels. */
function deepPath(value: unknown, budget: number): (string | number)[] | null {
  if (value === null || typeof value !== 'object') return null;
  if (budget === 0) return [];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = deepPath(value[i], budget - 1);
      if (found) return found.concat(i);
    }
    return null;
  }
  for (const key in value) {
    const found = deepPath((value as Record<string, unknown>)[key], budget - 1);
    if (found) return found.concat(key);
  }
  return null;
}
