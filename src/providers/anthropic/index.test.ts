import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { UpstreamClient } from '../../upstream/http-client.ts';
import { anthropicProvider } from './index.ts';

describe('anthropic provider definition', () => {
  const client = new UpstreamClient({ connectTimeoutMs: 1000, headersTimeoutMs: 1000 });
  after(() => client.close());

  it('is enabled by ANTHROPIC_API_KEY or by a config entry, and not otherwise', () => {
    assert.equal(anthropicProvider.create({}, undefined, client), undefined);
    assert.equal(anthropicProvider.create({ ANTHROPIC_API_KEY: '' }, undefined, client), undefined);
    assert.equal(anthropicProvider.create({ ANTHROPIC_API_KEY: 'sk-ant' }, undefined, client)?.name, 'anthropic');
    const fromFile = anthropicProvider.create({}, { base_url: 'http://127.0.0.1:1', models: ['claude-sonnet-4-5'] }, client);
    assert.equal(fromFile?.name, 'anthropic');
    assert.deepEqual(fromFile?.listModels(), ['claude-sonnet-4-5']);
    assert.equal(anthropicProvider.enableHint, 'ANTHROPIC_API_KEY');
  });
});
