import type { Socket } from 'node:net';
import { renderErrorBody } from '../errors/render.ts';
import { errors } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { newRequestId } from './request-id.ts';

/**
 * What node's HTTP parser refuses before any handler runs (headers too large, a malformed request
 * line, a headers timeout) still gets the OpenAI error JSON and an X-Request-ID, instead of node's
 * bare status line; the connection is closed, since the parser cannot continue on it.
 */
export function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable || (err as { code?: string }).code === 'ECONNRESET') {
    socket.destroy();
    return;
  }
  const error = classify(err.code);
  const body = renderErrorBody(error);
  socket.end(
    `HTTP/1.1 ${error.status} ${REASONS[error.status]}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-ID: ${newRequestId()}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

const REASONS: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

function classify(code: string | undefined): GatewayError {
  if (code === 'HPE_HEADER_OVERFLOW') return errors.headersTooLarge();
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return errors.requestTimeout();
  return errors.malformedHttp();
}
