import type { Tracing } from './traces.ts';

/**
 * Tracing when the environment asks for it with the standard OTLP variables, else undefined: off,
 * no span is ever created. `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keep it off.
 * The OpenTelemetry SDK (traces.ts) is imported only then: it costs ~7 MiB of RSS, for nothing
 * when off (an idle gateway, compiled: 135 MiB with an endpoint set, 128 without).
 */
export async function tracingFromEnv(env: NodeJS.ProcessEnv): Promise<Tracing | undefined> {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return undefined;
  const url = tracesUrl(env);
  if (!url) return undefined;
  const { otlpTracing } = await import('./traces.ts');
  return otlpTracing(url, env.OTEL_SERVICE_NAME?.trim() || 'sluice');
}

/** The signal-specific endpoint is used as given; the general one gets `/v1/traces` appended (the OTLP spec). */
export function tracesUrl(env: NodeJS.ProcessEnv): string | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}
