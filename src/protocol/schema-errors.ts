import type { z } from 'zod';
import { errors } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';

/** `messages[0].content` style path for the `param` field of a 400. */
export function formatParamPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

type Issue = {
  code: string;
  message: string;
  path: PropertyKey[];
  errors?: Issue[][];
  keys?: string[];
  /** A discriminated union's accepted discriminator values. */
  options?: unknown[];
};

/** A union failure reports every branch; the deepest branch names the real culprit. */
function pickIssue(issues: readonly unknown[]): Issue {
  let best = issues[0] as Issue;
  for (const raw of issues) {
    const issue = raw as Issue;
    // A discriminated union with no matching discriminator has no branches: it is the leaf itself.
    if (issue.code === 'invalid_union' && issue.errors?.length) {
      for (const branch of issue.errors) {
        if (branch.length === 0) continue;
        const inner = pickIssue(branch);
        const candidate = { ...inner, path: [...issue.path, ...inner.path] };
        if (candidate.path.length > best.path.length || (best.code === 'invalid_union' && best.errors?.length)) best = candidate;
      }
    } else if (issue.path.length > best.path.length) {
      best = issue;
    }
  }
  return best;
}

function describeIssue(issue: Issue): string {
  if (issue.code === 'invalid_union' && issue.errors?.length) return 'does not match any accepted shape.';
  // A bad discriminator (a message's role, a part's type): name the accepted values plainly
  // rather than zod's "Expected 'system' | 'developer' | …".
  if (issue.code === 'invalid_union' && issue.options?.length) return `must be one of ${issue.options.join(', ')}.`;
  return issue.message.endsWith('.') ? issue.message : `${issue.message}.`;
}

/** The 400 for a body that failed its schema: one precise message, `param` naming the field. */
export function schemaError(error: z.ZodError): GatewayError {
  const issue = pickIssue(error.issues);
  // A strict object's unknown key is the field to name, not the object holding it.
  if (issue.code === 'unrecognized_keys' && issue.keys?.length) {
    const param = formatParamPath([...issue.path, issue.keys[0]]);
    return errors.invalidRequest(`Unsupported parameter: '${param}'.`, param);
  }
  const param = formatParamPath(issue.path);
  return errors.invalidRequest(`Invalid value for '${param || 'body'}': ${describeIssue(issue)}`, param || null);
}
