import type { Config } from '../config/schema.ts';
import type { Tracing } from './traces.ts';

/**
 * Tracing when the environment asks for it with the standard OTLP variables, else undefined: off,
 * no span is ever created. `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keep it off.
 * The OpenTelemetry SDK (traces.ts) is imported only then: it costs ~7 MiB of RSS, for nothing
 * when off (an idle gateway, compiled: 135 MiB with an endpoint set, 128 without).
 */
export async function tracingFromEnv(env: NodeJS.ProcessEnv, config: Config['traces']): Promise<Tracing | undefined> {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return undefined;
  const url = tracesUrl(env);
  if (!url) return undefined;
  const { otlpTracing } = await import('./traces.ts');
  const capture = capturesContent(config, env) ? { maxChars: config.content_max_chars } : undefined;
  return otlpTracing(url, env.OTEL_SERVICE_NAME?.trim() || 'sluice', capture);
}

/**
 * Content capture is on when the config says so, or with the variable the OpenTelemetry GenAI
 * instrumentations read: `true` (JavaScript's), or `SPAN_ONLY` / `SPAN_AND_EVENT` (Python's:
 * sluice records content on spans only, so `EVENT_ONLY` leaves it off).
 */
export function capturesContent(config: Config['traces'], env: NodeJS.ProcessEnv): boolean {
  if (config.capture_content) return true;
  const value = env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase();
  return value === 'true' || value === 'span_only' || value === 'span_and_event';
}

/** The signal-specific endpoint is used as given; the general one gets `/v1/traces` appended (the OTLP spec). */
export function tracesUrl(env: NodeJS.ProcessEnv): string | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : undefined;
}
