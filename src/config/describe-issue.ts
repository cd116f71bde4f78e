import type { z } from 'zod';
import { closestMatch } from './edit-distance.ts';
import { formatKeyPath } from './key-path.ts';

/**
 * One zod issue of the config file as sentences naming the key path: one, or one per unknown key.
 * An unknown key (a strictObject's `unrecognized_keys`) gets the closest known key at the same
 * place as a suggestion: a typo'd key silently ignored is the mistake operators take longest to see.
 */
export function describeIssue(issue: z.core.$ZodIssue, schema: z.ZodType): string[] {
  if (issue.code !== 'unrecognized_keys') return [`${formatKeyPath(issue.path)}: ${issue.message}`];
  const known = knownKeysAt(schema, issue.path);
  return issue.keys.map((key) => {
    const suggestion = closestMatch(key, known);
    const hint = suggestion ? ` (did you mean ${formatKeyPath([...issue.path, suggestion])}?)` : '';
    return `unknown key ${formatKeyPath([...issue.path, key])}${hint}`;
  });
}

/** The keys the object schema at `path` accepts (none where the path leads to no object). */
export function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let node: z.core.$ZodType | undefined = unwrap(schema);
  for (const key of path) {
    const def = node?._zod.def as unknown as Record<string, unknown> | undefined;
    if (!def) return [];
    if (def.type === 'object') node = unwrap((def.shape as Record<string, z.core.$ZodType>)[String(key)]);
    else if (def.type === 'record') node = unwrap(def.valueType as z.core.$ZodType);
    else if (def.type === 'array') node = unwrap(def.element as z.core.$ZodType);
    else return [];
  }
  const def = node?._zod.def as unknown as { type: string; shape?: Record<string, unknown> } | undefined;
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

/** Through .optional(), .default(), .prefault(), .nullable() and transforms to the schema that holds the shape. */
function unwrap(node: z.core.$ZodType | undefined): z.core.$ZodType | undefined {
  for (let depth = 0; node && depth < 10; depth++) {
    const def = node._zod.def as unknown as Record<string, unknown>;
    if ('innerType' in def) node = def.innerType as z.core.$ZodType;
    else if (def.type === 'pipe') node = def.in as z.core.$ZodType;
    else return node;
  }
  return node;
}
