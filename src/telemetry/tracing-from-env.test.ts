import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { tracesUrl, tracingFromEnv } from './tracing-from-env.ts';

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
    assert.equal(await tracingFromEnv({}), undefined);
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    assert.equal(await tracingFromEnv({ ...endpoint, OTEL_SDK_DISABLED: 'true' }), undefined);
    assert.equal(await tracingFromEnv({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }), undefined);
    const on = await tracingFromEnv(endpoint);
    assert.ok(on);
    await on.shutdown();
  });
});
