import { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { isFunctionTool } from '../function-tools.ts';

/** A scripted response: event batches with the delay before each. Pure, so tests can read it. */
export interface ScriptStep {
  delayMs: number;
  events: CanonicalEvent[];
}

export interface MockScenario {
  description: string;
  /** Thrown before any output: becomes an HTTP error, like an upstream refusing the request. */
  refuse?: GatewayError;
  script(request: CanonicalRequest): ScriptStep[];
}

const START: CanonicalEvent = { type: 'start', upstreamModel: 'sluice-mock', systemFingerprint: 'sluice-mock' };

function lastUserText(request: CanonicalRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i];
    if (m.role !== 'user') continue;
    if (typeof m.content === 'string') return m.content;
    return m.content.map((p) => (p.type === 'text' ? p.text : `[${p.type}]`)).join(' ');
  }
  return '';
}

/** The tool results of the current turn: those after the last user message. */
function toolResultsSinceLastUser(request: CanonicalRequest): string[] {
  const results: string[] = [];
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const m = request.messages[i];
    if (m.role === 'user') break;
    if (m.role !== 'tool' && m.role !== 'function') continue;
    const c = m.content ?? '';
    results.unshift(typeof c === 'string' ? c : c.map((p) => p.text).join(''));
  }
  return results;
}

/** Words with their following space, so that the pieces concatenate back to the text. */
function pieces(text: string): string[] {
  return text.match(/\S+\s*|\s+/g) ?? [];
}

function promptTokens(request: CanonicalRequest): number {
  let n = 0;
  for (const m of request.messages) {
    const c = m.content;
    if (typeof c === 'string') n += pieces(c).length;
    else if (Array.isArray(c)) n += c.length;
    n += 3;
  }
  return n;
}

function streamText(choice: number, text: string, delayMs: number): ScriptStep[] {
  return pieces(text).map((piece) => ({ delayMs, events: [{ type: 'text', choice, text: piece }] }));
}

function finish(
  request: CanonicalRequest,
  reason: 'stop' | 'tool_calls',
  outputTokens: number,
  reasoningTokens?: number,
): ScriptStep {
  return {
    delayMs: 0,
    events: [
      { type: 'finish', choice: 0, reason },
      {
        type: 'usage',
        usage: { inputTokens: promptTokens(request), outputTokens, reasoningTokens, source: 'provider' },
      },
    ],
  };
}

function echo(delayMs: number) {
  return (request: CanonicalRequest): ScriptStep[] => {
    const text = `You said: ${lastUserText(request) || '(nothing)'}`;
    const steps = streamText(0, text, delayMs);
    return [{ delayMs: 0, events: [START] }, ...steps, finish(request, 'stop', steps.length)];
  };
}

/**
 * The built-in `mock` provider's models. Deterministic and honest about being a simulator: the
 * system_fingerprint is `sluice-mock` and the text says what it is echoing.
 */
export const scenarios: Record<string, MockScenario> = {
  echo: { description: 'Echoes the last user message, word by word (15 ms apart).', script: echo(15) },
  slow: { description: 'Echo with 500 ms between tokens: shows streaming and heartbeats.', script: echo(500) },
  reasoning: {
    description: 'Streams reasoning_content, then the echoed answer.',
    script(request) {
      const thinking = streamText(0, 'The user wants their message repeated. I will echo it.', 10).map((s) => ({
        ...s,
        events: s.events.map((e) => (e.type === 'text' ? { ...e, type: 'reasoning' as const } : e)),
      }));
      const answer = streamText(0, `You said: ${lastUserText(request)}`, 10);
      return [
        { delayMs: 0, events: [START] },
        ...thinking,
        ...answer,
        finish(request, 'stop', thinking.length + answer.length, thinking.length),
      ];
    },
  },
  tools: {
    description:
      'Calls the first function tool of the request (or get_weather) with streamed JSON arguments; once the tool answered, says what it returned.',
    script(request) {
      // An agent loop sends the tool's result back and expects an answer: calling again would loop
      // until the client's turn limit (the OpenAI Agents SDK's MaxTurnsExceededError).
      const results = toolResultsSinceLastUser(request);
      if (results.length > 0) {
        const steps = streamText(0, `The tool returned: ${results.join(' ')}`, 10);
        return [{ delayMs: 0, events: [START] }, ...steps, finish(request, 'stop', steps.length)];
      }
      const name = request.tools?.find(isFunctionTool)?.function.name ?? 'get_weather';
      const args = ['{"location":', ' "Paris",', ' "unit": "celsius"}'];
      return [
        { delayMs: 0, events: [START, { type: 'tool-call-start', choice: 0, index: 0, id: 'call_mock_0', name }] },
        ...args.map((a) => ({ delayMs: 10, events: [{ type: 'tool-call-delta' as const, choice: 0, index: 0, arguments: a }] })),
        finish(request, 'tool_calls', args.length + 1),
      ];
    },
  },
  error: {
    description: 'Streams a few tokens, then fails mid-stream (an error frame, then [DONE]).',
    script() {
      return [
        { delayMs: 0, events: [START] },
        ...streamText(0, 'This answer will not finish', 10),
        {
          delayMs: 10,
          events: [
            {
              type: 'error',
              error: new GatewayError({
                code: 'upstream_error',
                upstreamCode: 'mock_failure',
                status: 502,
                type: 'upstream_error',
                provider: 'mock',
                message: 'The mock provider failed mid-stream, as mock/error always does.',
              }),
            },
          ],
        },
      ];
    },
  },
  unavailable: {
    description: 'Refuses before the stream starts with 503, as an overloaded upstream would.',
    refuse: new GatewayError({
      code: 'upstream_overloaded',
      status: 503,
      type: 'server_error',
      provider: 'mock',
      retryable: true,
      message: 'The mock provider is overloaded, as mock/unavailable always is.',
    }),
    script: () => [],
  },
  stall: {
    description: 'Sends one token, then nothing: shows heartbeats and the idle timeout.',
    script(request) {
      return [
        { delayMs: 0, events: [START, { type: 'text', choice: 0, text: 'Waiting' }] },
        { delayMs: 24 * 3600 * 1000, events: [] },
        ...streamText(0, ` ${lastUserText(request)}`, 0),
        finish(request, 'stop', 1),
      ];
    },
  },
};
