import { errors } from '../../errors/catalog.ts';
import { type ChatRequest, chatRequestSchema, formatParamPath } from './request-schema.ts';

/** Validates a parsed JSON body; throws a 400 GatewayError naming the first offending param. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw errors.invalidRequest('The request body must be a JSON object.');
  }
  const result = chatRequestSchema.safeParse(body);
  if (result.success) {
    const req = result.data;
    if (req.top_logprobs != null && !req.logprobs) {
      throw errors.invalidRequest('top_logprobs requires logprobs to be true.', 'top_logprobs');
    }
    if (req.stream_options && !req.stream) {
      throw errors.invalidRequest('stream_options is only allowed when stream is true.', 'stream_options');
    }
    return req;
  }
  const issue = pickIssue(result.error.issues);
  const param = formatParamPath(issue.path);
  throw errors.invalidRequest(`Invalid value for '${param || 'body'}': ${describeIssue(issue)}`, param || null);
}

type Issue = { code: string; message: string; path: PropertyKey[]; errors?: Issue[][] };

/** A union failure reports every branch; the deepest branch names the real culprit. */
function pickIssue(issues: readonly unknown[]): Issue {
  let best = issues[0] as Issue;
  for (const raw of issues) {
    const issue = raw as Issue;
    if (issue.code === 'invalid_union' && issue.errors) {
      for (const branch of issue.errors) {
        if (branch.length === 0) continue;
        const inner = pickIssue(branch);
        const candidate = { ...inner, path: [...issue.path, ...inner.path] };
        if (candidate.path.length > best.path.length || best.code === 'invalid_union') best = candidate;
      }
    } else if (issue.path.length > best.path.length) {
      best = issue;
    }
  }
  return best;
}

function describeIssue(issue: Issue): string {
  if (issue.code === 'invalid_union') return 'does not match any accepted shape.';
  return issue.message.endsWith('.') ? issue.message : `${issue.message}.`;
}
