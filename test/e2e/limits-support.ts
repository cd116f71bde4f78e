import type { IncomingMessage } from 'node:http';
import type { Budget, Caller } from '../../src/admission/admission.ts';
import type { TestGateway } from '../helpers/gateway.ts';

/**
 * Governance tests speak as callers of their choosing: `x-test-key: k1` is key k1 of project p1 on
 * the tier `x-test-tier` names (else none). Installed over the gateway's authenticate, so these
 * tests do not depend on how keys are issued (src/governance/keys).
 */
export function callerFrom(req: IncomingMessage, budgets: readonly Budget[] = []): Caller {
  const key = header(req, 'x-test-key');
  return {
    keyId: key ?? null,
    projectId: key ? (header(req, 'x-test-project') ?? 'p1') : null,
    tier: header(req, 'x-test-tier') ?? null,
    allowedModels: null,
    admin: false,
    budgets,
  };
}

export function speakAsTestCallers(gw: TestGateway, budgets: readonly Budget[] = []): void {
  gw.gateway.context.authenticate = (req) => callerFrom(req, budgets);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' && value ? value : undefined;
}

/** An OpenAI chat stream: a role chunk, one chunk per piece, the finish, the usage chunk, [DONE]. */
export function chatSse(pieces: readonly string[], usage = { prompt_tokens: 10, completion_tokens: pieces.length }): string {
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices, ...extra })}\n\n`;
  let body = chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  for (const text of pieces) body += chunk([{ index: 0, delta: { content: text }, finish_reason: null }]);
  body += chunk([{ index: 0, delta: {}, finish_reason: 'stop' }]);
  body += chunk([], { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } });
  return `${body}data: [DONE]\n\n`;
}

/** The same answer as one chat.completion (non-streaming). */
export function chatJson(text: string, usage = { prompt_tokens: 10, completion_tokens: 5 }): string {
  return JSON.stringify({
    id: 'chatcmpl-up',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-test',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  });
}

export async function post(gw: TestGateway, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}
