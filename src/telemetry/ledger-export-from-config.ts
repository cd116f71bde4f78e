import type { Config } from '../config/schema.ts';
import type { LedgerExport, LedgerExportSettings } from './ledger-export.ts';

/**
 * The ledger export when the config or the environment names a collector, else undefined: off,
 * and the OpenTelemetry logs SDK is never loaded. `OTEL_SDK_DISABLED=true` or
 * `OTEL_LOGS_EXPORTER=none` keep it off. The general OTEL_EXPORTER_OTLP_ENDPOINT (traces) does not
 * turn it on: a copy of every ledger row is sent only where the operator pointed it.
 */
export async function ledgerExportFromConfig(
  config: Config,
  env: NodeJS.ProcessEnv,
  log: (message: string) => void,
): Promise<LedgerExport | undefined> {
  const settings = ledgerExportSettings(config, env);
  if (!settings) return undefined;
  const { otlpLedgerExport } = await import('./ledger-export.ts');
  return otlpLedgerExport({ ...settings, log });
}

/** What the `ledger.export` section and the standard variables ask for; undefined: off. */
export function ledgerExportSettings(config: Config, env: NodeJS.ProcessEnv): LedgerExportSettings | undefined {
  if (!config.ledger.enabled) return undefined;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  if (env.OTEL_LOGS_EXPORTER?.trim().toLowerCase() === 'none') return undefined;
  const options = config.ledger.export;
  const url = options.endpoint ?? (env.OTEL_EXPORTER_OTLP_LOGS_ENDPOINT?.trim() || undefined);
  if (!url) return undefined;
  return {
    url,
    headers: options.headers,
    batchSize: options.batch_size,
    maxQueue: options.max_queue,
    flushIntervalMs: options.flush_interval_ms,
    timeoutMs: options.timeout_ms,
    // Only what the ledger stored can be exported: store_content is the first of the two switches.
    content: options.content && config.ledger.store_content,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || 'sluice',
  };
}
