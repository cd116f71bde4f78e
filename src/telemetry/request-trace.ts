import {
  type Attributes,
  type Context,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { Attempt } from '../accounting/attempt.ts';
import type { AttemptWatcher } from '../routing/attempts.ts';
import type { Candidate } from '../routing/plan.ts';
import { boundedJson } from './bounded-json.ts';
import { providerName } from './genai-provider.ts';
import { genAiOperation } from './genai-operation.ts';
import type { GenAiInput } from './genai-messages.ts';
import { OutputTranscript } from './output-transcript.ts';

/** Prompts and completions go in the request's span, each attribute at most `maxChars` characters of JSON. */
export interface ContentCapture {
  maxChars: number;
}

/**
 * The spans of one model request: a SERVER span for the request, a CLIENT span per upstream
 * attempt under it, with the GenAI semantic-convention attributes from the ledger record. The
 * prompt and the completion go in only when content capture is on (docs/operations/observability.md "Traces (OpenTelemetry)").
 */
export class RequestTrace implements AttemptWatcher {
  private readonly tracer: Tracer;
  private readonly propagator: TextMapPropagator;
  private readonly span: Span;
  /** The request span as the attempts' parent (no context manager: handed down explicitly). */
  private readonly context: Context;
  private readonly operation: string;
  /** The attempt that answered: its span stays open until the request ends (usage, finish reason). */
  private answering: { span: Span; firstChunkMs: number } | undefined;
  /** The attempt under way, until it answers or fails. */
  private current: Span | undefined;
  private attempts = 0;
  private ended = false;
  /** The bound of each content attribute (used only with a transcript). */
  private readonly maxChars: number;
  /** The output as the accountant sees it, when content is captured (absent: nothing is kept). */
  readonly transcript: OutputTranscript | undefined;

  constructor(
    tracer: Tracer,
    propagator: TextMapPropagator,
    parent: Context,
    surface: LedgerRecord['surface'],
    capture?: ContentCapture,
  ) {
    this.tracer = tracer;
    this.propagator = propagator;
    this.maxChars = capture?.maxChars ?? 0;
    // The conventions define no content attribute for embeddings: their input is never recorded.
    this.transcript = capture && surface !== 'embeddings' ? new OutputTranscript(capture.maxChars) : undefined;
    this.operation = genAiOperation(surface);
    this.span = tracer.startSpan(
      this.operation,
      { kind: SpanKind.SERVER, attributes: { 'gen_ai.operation.name': this.operation, 'sluice.surface': surface } },
      parent,
    );
    this.context = trace.setSpan(ROOT_CONTEXT, this.span);
  }

  /** The request's input, when content is captured (built only then: `input` is not called otherwise). */
  captureInput(input: () => GenAiInput): void {
    if (!this.transcript || this.ended) return;
    const { system, messages } = input();
    if (system.length > 0) this.setContent('gen_ai.system_instructions', system);
    this.setContent('gen_ai.input.messages', messages);
  }

  private setContent(name: string, value: readonly unknown[]): void {
    const { json, clipped } = boundedJson(value, this.maxChars);
    this.span.setAttribute(name, json);
    if (clipped) this.span.setAttribute('sluice.content_truncated', true);
  }

  /** An upstream attempt starts: its span, and the headers that carry it upstream (`traceparent`). */
  began(candidate: Candidate): Record<string, string> {
    const { provider, model } = candidate.target;
    this.current = this.tracer.startSpan(
      `${this.operation} ${model}`,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'gen_ai.operation.name': this.operation,
          'gen_ai.provider.name': providerName(provider),
          'gen_ai.request.model': model,
          'sluice.attempt': ++this.attempts,
        },
      },
      this.context,
    );
    const headers: Record<string, string> = {};
    this.propagator.inject(trace.setSpan(this.context, this.current), headers, defaultTextMapSetter);
    return headers;
  }

  /** The attempt answered (its first output) or failed before any, as the ledger keeps it. */
  settled(attempt: Attempt): void {
    const span = this.current;
    if (!span) return;
    this.current = undefined;
    if (attempt.errorCode === null) {
      this.answering = { span, firstChunkMs: attempt.latencyMs };
      return;
    }
    if (attempt.status !== null) span.setAttribute('http.response.status_code', attempt.status);
    if (attempt.fallbackReason) span.setAttribute('sluice.fallback_reason', attempt.fallbackReason);
    fail(span, attempt.errorCode);
    span.end();
  }

  /** The request's final record: the request span and the answering attempt's get its outcome. */
  end(record: LedgerRecord): void {
    if (this.ended) return;
    this.ended = true;
    const outcome = response(record);
    if (this.answering) {
      const { span, firstChunkMs } = this.answering;
      span.setAttributes(outcome);
      if (record.streamed) span.setAttribute('gen_ai.response.time_to_first_chunk', firstChunkMs / 1000);
      if (record.outcome !== 'ok') fail(span, record.errorCode ?? record.outcome);
      span.end();
    }
    // An attempt the request's end cut short (the client left while it was under way).
    if (this.current) {
      fail(this.current, record.errorCode ?? record.outcome);
      this.current.end();
    }
    // No output attribute for a request that produced none (refused, or failed before any).
    const output = this.transcript?.messages(record.finishReason) ?? [];
    if (output.length > 0) this.setContent('gen_ai.output.messages', output);
    if (this.transcript?.clipped) this.span.setAttribute('sluice.content_truncated', true);
    this.span.updateName(`${this.operation} ${record.requestedModel}`);
    this.span.setAttributes({ ...outcome, 'gen_ai.request.model': record.requestedModel, 'sluice.request_id': record.requestId });
    if (record.streamed && record.ttftMs !== null)
      this.span.setAttribute('gen_ai.response.time_to_first_chunk', record.ttftMs / 1000);
    if (record.outcome !== 'ok') fail(this.span, record.errorCode ?? record.outcome);
    this.span.end();
  }

  /** Refused before the caller was known (no ledger record): the span says why. */
  refused(failure: GatewayError): void {
    if (this.ended) return;
    this.ended = true;
    fail(this.span, failure.code);
    this.span.end();
  }
}

/** What the record says of the answer, as GenAI attributes. */
function response(record: LedgerRecord): Attributes {
  const attributes: Attributes = {
    'gen_ai.response.model': record.model,
    'gen_ai.usage.input_tokens': record.inputTokens,
    'gen_ai.usage.output_tokens': record.outputTokens,
    'sluice.outcome': record.outcome,
  };
  if (record.provider) attributes['gen_ai.provider.name'] = providerName(record.provider);
  if (record.finishReason) attributes['gen_ai.response.finish_reasons'] = [record.finishReason];
  return attributes;
}

function fail(span: Span, errorType: string): void {
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
}
