import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSchema } from '../config/schema.ts';
import { ledgerExportFromConfig, ledgerExportSettings } from './ledger-export-from-config.ts';

const config = (ledger: Record<string, unknown> = {}) => configSchema.parse({ ledger });
const LOGS = 'http://collector:4318/v1/logs';

describe('ledgerExportSettings', () => {
  it('is off by default, even with the general OTLP endpoint the traces use', async () => {
    assert.equal(ledgerExportSettings(config(), {}), undefined);
    assert.equal(ledgerExportSettings(config(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' }), undefined);
    assert.equal(await ledgerExportFromConfig(config(), {}, () => {}), undefined);
  });

  it('takes the config endpoint as written, with the section defaults', () => {
    assert.deepEqual(ledgerExportSettings(config({ export: { endpoint: LOGS, headers: { 'x-api-key': 's' } } }), {}), {
      url: LOGS,
      headers: { 'x-api-key': 's' },
      batchSize: 512,
      maxQueue: 10_000,
      flushIntervalMs: 1_000,
      timeoutMs: 10_000,
      content: false,
      serviceName: 'sluice',
    });
  });

  it('reads OTEL_EXPORTER_OTLP_LOGS_ENDPOINT when the config names none, and OTEL_SERVICE_NAME', () => {
    const settings = ledgerExportSettings(config(), { OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: ` ${LOGS} `, OTEL_SERVICE_NAME: 'gw-eu' });
    assert.equal(settings?.url, LOGS);
    assert.equal(settings?.serviceName, 'gw-eu');
    const both = ledgerExportSettings(config({ export: { endpoint: 'http://mine:1/v1/logs' } }), {
      OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: LOGS,
    });
    assert.equal(both?.url, 'http://mine:1/v1/logs');
  });

  it('stays off with the SDK disabled, the logs exporter none, or no ledger', () => {
    const on = { export: { endpoint: LOGS } };
    assert.equal(ledgerExportSettings(config(on), { OTEL_SDK_DISABLED: 'TRUE' }), undefined);
    assert.equal(ledgerExportSettings(config(on), { OTEL_LOGS_EXPORTER: 'none' }), undefined);
    assert.equal(ledgerExportSettings(config({ ...on, enabled: false }), {}), undefined);
  });

  it('exports content only when the ledger stores it and the export asks for it', () => {
    const content = (ledger: Record<string, unknown>) => ledgerExportSettings(config(ledger), {})?.content;
    assert.equal(content({ export: { endpoint: LOGS, content: true } }), false);
    assert.equal(content({ store_content: true, export: { endpoint: LOGS } }), false);
    assert.equal(content({ store_content: true, export: { endpoint: LOGS, content: true } }), true);
  });

  it('refuses an endpoint that is not an http(s) URL, and takes an empty one as unset', () => {
    assert.throws(() => config({ export: { endpoint: 'collector:4318' } }), /endpoint/);
    assert.throws(() => config({ export: { endpoint: 'grpc://c:4317' } }), /endpoint/);
    assert.equal(config({ export: { endpoint: '' } }).ledger.export.endpoint, undefined);
  });
});
