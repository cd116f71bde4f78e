import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSchema } from '../config/schema.ts';
import { capturesContent, tracesUrl, tracingFromEnv } from './tracing-from-env.ts';

const defaults = configSchema.parse({}).traces;

describe('tracesUrl', () => {
  it('appends /v1/traces to the general endpoint, once', () => {
    assert.equal(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), 'http://c:4318/v1/traces');
    assert.equal(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }), 'http://c:4318/v1/traces');
  });

  it('takes the traces endpoint as written, before the general one', () => {
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/otlp/spans' };
    assert.equal(tracesUrl(env), 'http://t:9/otlp/spans');
  });

  it('is undefined with neither (or blank ones)', () => {
    assert.equal(tracesUrl({}), undefined);
    assert.equal(tracesUrl({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }), undefined);
  });
});

describe('tracingFromEnv', () => {
  it('is off without an endpoint, and when the SDK or the traces exporter is switched off', async () => {
    assert.equal(await tracingFromEnv({}, defaults), undefined);
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    assert.equal(await tracingFromEnv({ ...endpoint, OTEL_SDK_DISABLED: 'true' }, defaults), undefined);
    assert.equal(await tracingFromEnv({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }, defaults), undefined);
    const on = await tracingFromEnv(endpoint, defaults);
    assert.ok(on);
    assert.equal(on.capture, undefined, 'content is not captured by default');
    await on.shutdown();
  });
});

describe('capturesContent', () => {
  it('is off by default, on with the config switch', () => {
    assert.equal(defaults.capture_content, false);
    assert.equal(capturesContent(defaults, {}), false);
    assert.equal(capturesContent({ ...defaults, capture_content: true }, {}), true);
  });

  it('is on with the GenAI instrumentations variable when it asks for content on spans', () => {
    const on = (value: string) => capturesContent(defaults, { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: value });
    assert.deepEqual(['true', 'TRUE', 'SPAN_ONLY', 'span_and_event', 'false', 'NO_CONTENT', 'EVENT_ONLY', ''].map(on), [
      true,
      true,
      true,
      true,
      false,
      false,
      false,
      false,
    ]);
  });
});
