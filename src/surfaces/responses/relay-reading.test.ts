import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors } from '../../errors/catalog.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { ProviderAdapter } from '../../providers/types.ts';
import type { Candidate } from '../../routing/plan.ts';
import { responsesRelayReading } from './relay-reading.ts';

const candidate: Candidate = {
  target: { adapter: {} as ProviderAdapter, provider: 'ra', model: 'm', requested: 'route' },
  key: 'ra/m',
  weight: 1,
  ttftTimeoutMs: 0,
  answerTimeoutMs: 0,
  params: undefined,
  via: 'route',
};

const frame = (type: string, fields: Record<string, unknown> = {}) => ({
  frame: { event: type, data: JSON.stringify({ type, ...fields }) },
});

describe('responsesRelayReading', () => {
  const verdict = (batch: Parameters<typeof responsesRelayReading.verdict>[0]) => responsesRelayReading.verdict(batch, candidate);

  it('holds the opening events: nothing is answered yet', () => {
    assert.equal(verdict([frame('response.created'), frame('response.in_progress')]), null);
  });

  it('the first output item answers', () => {
    assert.equal(verdict([frame('response.created'), frame('response.output_item.added')]), 'answer');
  });

  it("an error before any output is the target's failure, with the upstream's code and message", () => {
    const error = verdict([frame('response.created'), frame('error', { code: 'rate_limit_exceeded', message: 'slow down' })]) as GatewayError;
    assert.deepEqual([error.provider, error.upstreamCode, error.message, error.fallbackable], ['ra', 'rate_limit_exceeded', 'slow down', true]);
  });

  it('response.failed before any output is a failure too, its response.error read', () => {
    const failed = frame('response.failed', { response: { error: { code: 'server_error', message: 'boom' } } });
    assert.equal((verdict([failed]) as GatewayError).message, 'boom');
  });

  it('a broken stream before any output is its own error; an unnamed frame is read by its type', () => {
    const broken = errors.malformed('ra', 'not SSE');
    assert.equal(verdict([{ error: broken }]), broken);
    assert.equal(verdict([{ frame: { event: undefined, data: '{"type":"response.in_progress"}' } }]), null);
  });
});
