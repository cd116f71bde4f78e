import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errors } from '../../errors/catalog.ts';
import type { ProviderAdapter } from '../../providers/types.ts';
import type { Candidate } from '../../routing/plan.ts';
import { messagesRelayReading } from './relay-reading.ts';

const candidate: Candidate = {
  target: { adapter: {} as ProviderAdapter, provider: 'ra', model: 'm', requested: 'route' },
  key: 'ra/m',
  weight: 1,
  ttftTimeoutMs: 0,
  answerTimeoutMs: 0,
  params: undefined,
  via: 'route',
};

describe('messagesRelayReading', () => {
  it("message_start's events wait; Anthropic's error event first is a failure; text answers", () => {
    const overloaded = errors.malformed('anthropic', 'overloaded');
    assert.equal(messagesRelayReading.verdict([{ text: 'event: message_start\n…\n\n' }, { event: { type: 'start' } }], candidate), null);
    assert.equal(messagesRelayReading.verdict([{ event: { type: 'error', error: overloaded }, told: true }], candidate), overloaded);
    assert.equal(messagesRelayReading.verdict([{ event: { type: 'text', choice: 0, text: 'hi' } }], candidate), 'answer');
  });
});
