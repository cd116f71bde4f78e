import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSchema } from '../config/schema.ts';
import { STREAM_PROFILES } from '../protocol/stream-profiles.ts';
import { streamProfileFor } from './stream-settings.ts';

const stream = (fields: object = {}) => configSchema.parse({ stream: fields }).stream;

describe('streamProfileFor', () => {
  it("is OpenAI's behaviour by default, the same object as the profile (nothing set apart)", () => {
    assert.equal(streamProfileFor(stream(), {}), STREAM_PROFILES.openai);
  });

  it('the header wins over the endpoint, which wins over the config', () => {
    const config = stream({ profile: 'accounting' });
    assert.equal(streamProfileFor(config, {}), STREAM_PROFILES.accounting);
    assert.equal(streamProfileFor(config, { endpoint: { profile: 'chat-streaming-full' } }), STREAM_PROFILES['chat-streaming-full']);
    assert.equal(
      streamProfileFor(config, { header: 'responses-streaming', endpoint: { profile: 'chat-streaming-full' } }),
      STREAM_PROFILES['responses-streaming'],
    );
  });

  it("usage, error_style and vendor_events set apart win over the profile's, the endpoint's over the config's", () => {
    const config = stream({ profile: 'chat-streaming-full', error_style: 'data', usage: 'always' });
    const resolved = streamProfileFor(config, { endpoint: { usage: 'opt_in' } });
    assert.deepEqual(
      [resolved.chat.errorStyle, resolved.chat.usage, resolved.chat.vendorEvents, resolved.chat.usageChunk],
      ['data', 'opt_in', 'passthrough', 'finish'],
    );
    // The profile's own table is never changed.
    assert.equal(STREAM_PROFILES['chat-streaming-full'].chat.errorStyle, 'event');
  });
});
