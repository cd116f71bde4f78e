import type { ServerResponse } from 'node:http';
import type { GatewayError } from '../errors/gateway-error.ts';
import { sendJson } from '../protocol/http/send-json.ts';
import type { StreamRecording } from '../resume/stream-buffer.ts';

/**
 * One HTTP request/response as the pipeline sees it: where to write, under which request id, and
 * how this surface renders an error before any byte was sent (each surface has its own shape:
 * OpenAI's error JSON for chat and responses).
 */
export interface Exchange {
  readonly res: ServerResponse;
  readonly requestId: string;
  sendJson(status: number, body: unknown): void;
  /** The HTTP error for `error`, unless a response has already started (then a no-op). */
  sendError(error: GatewayError): void;
  /** Set when streams are resumable (stream.resume, docs/streams/resume.md). */
  readonly resume?: Resumable;
}

/**
 * A stream that a client which lost its connection can resume: its frames are recorded (the SSE
 * writer records them, once the caller's project has claimed the recording), and a disconnect
 * cancels the stream after `graceMs` instead of at once, so that it goes on for the resume.
 */
export interface Resumable {
  recording: StreamRecording;
  graceMs: number;
  /** Its frames carry `id:` lines (stream.resume.event_ids); else a client resumes after the number of events it got. */
  eventIds: boolean;
}

/**
 * `statusOf`: the HTTP status of an error, where the surface's API answers with its own (Anthropic's
 * `overloaded_error` is a 529); sluice's status otherwise.
 */
export function createExchange(
  res: ServerResponse,
  requestId: string,
  renderError: (error: GatewayError) => string,
  statusOf: (error: GatewayError) => number = (error) => error.status,
): Exchange {
  return {
    res,
    requestId,
    sendJson: (status, body) => sendJson(res, status, body, { 'X-Request-ID': requestId }),
    sendError: (error) => sendJson(res, statusOf(error), renderError(error), { ...error.headers, 'X-Request-ID': requestId }),
  };
}
