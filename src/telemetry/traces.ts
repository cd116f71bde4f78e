import type { IncomingHttpHeaders } from 'node:http';
import { defaultTextMapGetter, ROOT_CONTEXT, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter, TracerProvider } from '@opentelemetry/sdk-trace';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { type ContentCapture, RequestTrace } from './request-trace.ts';

/**
 * OpenTelemetry traces of one gateway (docs/operations/observability.md "Traces (OpenTelemetry)"): its own tracer provider,
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
 * OTLP/HTTP with JSON bodies to `url`; headers (OTEL_EXPORTER_OTLP_HEADERS) and timeouts come from
 * the exporter's own reading of the standard variables.
 */
export function otlpTracing(url: string, serviceName: string, capture?: ContentCapture): Tracing {
  return new Tracing(new OTLPTraceExporter({ url }), serviceName, capture);
}
