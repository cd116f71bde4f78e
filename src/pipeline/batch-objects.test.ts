import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { configSchema } from '../config/schema.ts';
import type { BatchApi, BatchApiKind } from '../providers/batch-api.ts';
import { chooseBatchProvider } from './batch-objects.ts';
import type { PipelineContext } from './context.ts';

const api = (kind: BatchApiKind) => ({ kind }) as BatchApi;
const SERVING = { openai: ['groq', 'openai'], anthropic: ['anthropic'] };

function context(batches: Record<string, unknown> = {}): PipelineContext {
  return {
    config: configSchema.parse({ batches }),
    registry: { batchProviders: (kind: BatchApiKind) => SERVING[kind].map((name) => ({ name, api: api(kind) })) },
  } as unknown as PipelineContext;
}

const request = (provider?: string) => ({ headers: provider === undefined ? {} : { 'x-sluice-provider': provider } }) as IncomingMessage;

describe('the provider a file or batch request naming no object goes to', () => {
  it('the header, else batches.provider (OpenAI API only), else the first provider serving the API', () => {
    assert.equal(chooseBatchProvider(context({ provider: 'openai' }), request('groq'), 'openai').name, 'groq');
    assert.equal(chooseBatchProvider(context({ provider: 'openai' }), request(), 'openai').name, 'openai');
    assert.equal(chooseBatchProvider(context(), request(), 'openai').name, 'groq');
    assert.equal(chooseBatchProvider(context({ provider: 'openai' }), request(), 'anthropic').name, 'anthropic');
  });

  it('a name that serves no such API is a 400 batches_unavailable naming where it came from', () => {
    assert.throws(() => chooseBatchProvider(context(), request('anthropic'), 'openai'), {
      code: 'batches_unavailable',
      param: 'X-Sluice-Provider',
      message: /serving: groq, openai/,
    });
    assert.throws(() => chooseBatchProvider(context({ provider: 'mock' }), request(), 'openai'), {
      code: 'batches_unavailable',
      param: 'batches.provider',
    });
  });
});
