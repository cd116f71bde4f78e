import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRedactor } from '../errors/redact.ts';
import { upstreamHttpError } from '../errors/upstream-error.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import { redactAdapter } from './redact-adapter.ts';
import type { ProviderAdapter, RelayItem } from './types.ts';

const KEY = 'sk-configured-upstream-key-0001';
const redact = createRedactor([KEY]);
const echo = (status: number) => upstreamHttpError({ provider: 'acme', status, message: `Incorrect API key provided: ${KEY}` });
const request = {} as CanonicalRequest;
const ctx = { signal: new AbortController().signal, requestId: 'r1' };

async function* batches(list: CanonicalEvent[][]): AsyncGenerator<CanonicalEvent[]> {
  yield* list;
}

function adapter(overrides: Partial<ProviderAdapter>): ProviderAdapter {
  return {
    name: 'acme',
    listModels: () => [],
    stream: async () => batches([]),
    complete: async () => [],
    ...overrides,
  };
}

describe('redactAdapter: upstream error text never leaves a provider with a key in it', () => {
  it('an HTTP error thrown by stream or complete', async () => {
    const wrapped = redactAdapter(adapter({ stream: () => Promise.reject(echo(401)), complete: () => Promise.reject(echo(400)) }), redact);
    for (const call of [() => wrapped.stream(request, 'm', ctx), () => wrapped.complete(request, 'm', ctx)]) {
      await assert.rejects(call, (err: Error) => !err.message.includes(KEY) && err.message.includes('[redacted]'));
    }
  });

  it('an error event inside a stream, and a failure of the stream itself', async () => {
    const text: CanonicalEvent = { type: 'text', choice: 0, text: `model output may quote ${KEY}` };
    const wrapped = redactAdapter(adapter({ stream: async () => batches([[text], [{ type: 'error', error: echo(429) }]]) }), redact);
    const seen: CanonicalEvent[] = [];
    for await (const batch of await wrapped.stream(request, 'm', ctx)) seen.push(...batch);
    assert.deepEqual(seen[0], text, 'model output is the answer, not error text: left alone');
    assert.equal(seen[1].type === 'error' && seen[1].error.message, 'Incorrect API key provided: [redacted]');
    assert.equal(seen[1].type === 'error' && seen[1].error.status, 429);

    async function* failing(): AsyncGenerator<CanonicalEvent[]> {
      yield [];
      throw echo(502);
    }
    const broken = redactAdapter(adapter({ stream: async () => failing() }), redact);
    await assert.rejects(
      async () => {
        for await (const _ of await broken.stream(request, 'm', ctx));
      },
      (err: Error) => !err.message.includes(KEY),
    );
  });

  it('stopping early reaches the upstream iterator (its return closes the connection)', async () => {
    let closed = false;
    async function* endless(): AsyncGenerator<CanonicalEvent[]> {
      try {
        for (;;) yield [];
      } finally {
        closed = true;
      }
    }
    const wrapped = redactAdapter(adapter({ stream: async () => endless() }), redact);
    for await (const _ of await wrapped.stream(request, 'm', ctx)) break;
    assert.equal(closed, true);
  });

  it('relayed Responses failure frames and errors; other frames pass as sent', async () => {
    const failed = JSON.stringify({ type: 'response.failed', response: { error: { code: 'invalid_api_key', message: `bad key ${KEY}` } } });
    const delta = JSON.stringify({ type: 'response.output_text.delta', delta: KEY });
    async function* items(): AsyncGenerator<RelayItem[]> {
      yield [{ frame: { event: 'response.output_text.delta', data: delta } }, { frame: { event: 'response.failed', data: failed } }];
      yield [{ error: echo(503) }];
    }
    const wrapped = redactAdapter(
      adapter({
        responses: {
          stream: async () => items(),
          complete: async () => ({ status: 'failed', error: { code: 'x', message: `bad key ${KEY}` } }),
        },
      }),
      redact,
    );
    const seen: RelayItem[] = [];
    for await (const batch of await (wrapped.responses?.stream({}, 'm', ctx) ?? items())) seen.push(...batch);
    assert.deepEqual(seen[0], { frame: { event: 'response.output_text.delta', data: delta } });
    const frame = seen[1] as { frame: { data: string } };
    assert.deepEqual(JSON.parse(frame.frame.data).response.error.message, 'bad key [redacted]');
    assert.ok('error' in seen[2] && !seen[2].error.message.includes(KEY));
    assert.deepEqual(await wrapped.responses?.complete({}, 'm', ctx), { status: 'failed', error: { code: 'x', message: 'bad key [redacted]' } });
  });
});
