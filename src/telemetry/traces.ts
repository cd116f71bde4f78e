import type { IncomingHttpHeaders } from 'node:http';
import { defaultTextMapGetter, ROOT_CONTEXT, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { Config } from '../config/schema.ts';
import { type ContentCapture, RequestTrace } from './request-trace.ts';

/**
 * OpenTelemetry traces of one gateway (README "Traces (OpenTelemetry)"): its own tracer provider,
 * never registered globally, so two gateways in one process (the tests) do not share spans, and
 * no context manager: the request's span is handed down explicitly (RequestTrace).
 */
export class Tracing {
  private readonly provider: TracerProvider;
  private readonly tracer: Tracer;
  private readonly propagator = new W3CTraceContextPropagator();
  /** Prompts and completions in the request spans (absent: never). */
  readonly capture: ContentCapture | undefined;

  constructor(exporter: SpanExporter, serviceName: string, capture?: ContentCapture) {
    this.capture = capture;
    this.provider = new TracerProvider({
      resource: resourceFromAttributes({ 'service.name': serviceName }),
      spanProcessors: [new BatchSpanProcessor({ exporter })],
    });
    this.tracer = this.provider.getTracer('sluice');
  }

  /** A model request's trace: a child of the client's `traceparent` when it sent a valid one. */
  request(headers: IncomingHttpHeaders, surface: LedgerRecord['surface']): RequestTrace {
    const parent = this.propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    return new RequestTrace(this.tracer, this.propagator, parent, surface, this.capture);
  }

  /** Exports the spans still queued and stops (gateway shutdown). */
  shutdown(): Promise<void> {
    return this.provider.shutdown();
  }
}

/**
 * Tracing when the environment asks for it with the standard OTLP variables, else undefined: off,
 * no span is ever created. `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none` keep it off.
 */
export function tracingFromEnv(env: NodeJS.ProcessEnv, config: Config['traces']): Tracing | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return undefined;
  const url = tracesUrl(env);
  if (!url) return undefined;
  // OTLP/HTTP with JSON bodies; headers (OTEL_EXPORTER_OTLP_HEADERS) and timeouts come from the
  // exporter's own reading of the standard variables.
  const capture = capturesContent(config, env) ? { maxChars: config.content_max_chars } : undefined;
  return new Tracing(new OTLPTraceExporter({ url }), env.OTEL_SERVICE_NAME?.trim() || 'sluice', capture);
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
