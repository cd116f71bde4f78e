import assert from 'node:assert/strict';
import { openAIStreamBody, readFixture } from '../helpers/fixtures.ts';
import { parseSse } from '../helpers/gateway.ts';

/** A recorded gpt-4o-mini text stream: role, 8 content deltas, finish "stop", usage, [DONE]. */
const TEXT_RECORDING = 'openai-chat/gpt4o-mini-text-after-tool.sse';

/** The recording's SSE frames, each with its blank line, so a test can cut the stream anywhere. */
export function recordedFrames(): string[] {
  return openAIStreamBody(TEXT_RECORDING)
    .toString('utf8')
    .split(/(?<=\n\n)/);
}

/** The content the recording streams, in order. */
export function recordedText(frames = recordedFrames()): string {
  return frames
    .map((f) => f.slice('data: '.length).trim())
    .filter((d) => d !== '[DONE]')
    .map((d) => JSON.parse(d).choices[0]?.delta?.content ?? '')
    .join('');
}

/** Groq's `event: error` frame from a real recording (status_code 400, code tool_use_failed). */
export function groqErrorFrame(): string {
  const body = readFixture('groq/midstream-error-tool-use-failed.sse').toString('utf8');
  const frame = body.split(/\n\n+/).find((b) => b.startsWith('event: error'));
  assert.ok(frame, 'the Groq recording has an error frame');
  return `${frame}\n\n`;
}

/** The streaming request the fault tests send, typed for the SDK. */
export const streamRequest = {
  model: 'up/gpt-4o-mini',
  messages: [{ role: 'user' as const, content: 'hi' }],
  stream: true as const,
};

export const chatRequest = (extra: Record<string, unknown> = {}) => ({ ...streamRequest, ...extra });

export interface StreamEnd {
  /** The chat chunks before the error frame. */
  chunks: { choices: { delta: { content?: string }; finish_reason: string | null }[] }[];
  error: { message: string; type: string; code: string };
}

/**
 * Asserts the streaming failure contract on a raw SSE body: chunks, then exactly one error frame
 * `{"error":{message,type,code}}`, then `data: [DONE]` as the very last bytes.
 */
export function expectErrorThenDone(text: string, code: string, event?: string): StreamEnd {
  assert.ok(text.endsWith('data: [DONE]\n\n'), `the stream ends with [DONE]: ${text.slice(-200)}`);
  const { frames } = parseSse(text);
  assert.equal(frames.at(-1)?.data, '[DONE]');
  const errorFrame = frames.at(-2);
  assert.ok(errorFrame, 'an error frame precedes [DONE]');
  assert.equal(errorFrame.event, event);
  const parsed = JSON.parse(errorFrame.data) as { error: StreamEnd['error'] };
  assert.deepEqual(Object.keys(parsed), ['error']);
  assert.deepEqual(Object.keys(parsed.error), ['message', 'type', 'code']);
  assert.equal(parsed.error.code, code);
  assert.ok(parsed.error.message.length > 0);
  const chunks = frames.slice(0, -2).map((f) => JSON.parse(f.data));
  assert.ok(
    chunks.every((c) => !('error' in c)),
    'exactly one error frame',
  );
  return { chunks, error: parsed.error };
}

/** The content a client assembled from chat chunks. */
export const contentOf = (chunks: StreamEnd['chunks']): string => chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');

/** Polls a condition with a bounded number of steps (no timed assertions, just a ceiling). */
export async function until(condition: () => boolean, what: string, steps = 200, stepMs = 10): Promise<void> {
  for (let i = 0; i < steps; i++) {
    if (condition()) return;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  assert.fail(`timed out waiting for ${what}`);
}
