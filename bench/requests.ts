/**
 * The requests every bench side sends (run.ts, perf-sides.ts): one short chat, streamed, not
 * streamed, or as an Anthropic Messages stream, through any origin.
 */
import type { Target } from './load.ts';

/** The plain requests' key: the master key, so that only the governed sides go through admission. */
export const MASTER_KEY = 'sk-bench-master';

const SYSTEM = 'You are a concise assistant.';
const PROMPT = 'Describe a river in twenty words.';

/** The chat both OpenAI requests send, after their model. */
const CHAT = {
  messages: [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: PROMPT },
  ],
  max_tokens: 64,
};

/**
 * A chat stream through `origin`; with a governed key, every answer must carry its limit headers,
 * and every request has two tags (docs/governance/spend.md), which its row and the spend rollups keep.
 */
export function openAIChat(origin: string, model: string, governedKey?: string): Target {
  return {
    ...(governedKey && { expectHeader: 'x-ratelimit-limit-requests' }),
    origin,
    path: '/v1/chat/completions',
    headers: {
      'content-type': 'application/json',
      authorization: `Bearer ${governedKey ?? MASTER_KEY}`,
      ...(governedKey && { 'x-sluice-tags': 'bench, team:search' }),
    },
    body: JSON.stringify({ model, ...CHAT, stream: true, stream_options: { include_usage: true } }),
    protocol: 'openai',
  };
}

/** The unary mode's request: the same chat without `stream`, answered by a 256-byte completion. */
export function openAIUnary(origin: string, model: string): Target {
  return {
    origin,
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${MASTER_KEY}` },
    body: JSON.stringify({ model, ...CHAT }),
    protocol: 'openai',
    unary: true,
  };
}

export function anthropicMessages(origin: string, model: string): Target {
  return {
    origin,
    path: '/v1/messages',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-ant-bench', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model, max_tokens: 64, system: SYSTEM, messages: [{ role: 'user', content: PROMPT }], stream: true }),
    protocol: 'anthropic',
  };
}
