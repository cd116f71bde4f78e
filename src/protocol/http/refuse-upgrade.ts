import { STATUS_CODES } from './node-http.ts';
import type { Duplex } from 'node:stream';
import type { GatewayError } from '../../errors/gateway-error.ts';
import { renderErrorBody } from '../../errors/render.ts';

/**
 * Refuses a WebSocket upgrade with an HTTP error response written on the raw socket (no
 * ServerResponse exists for an `upgrade` request), in OpenAI's error JSON, then closes it: the
 * client's handshake fails with that status, and no WebSocket opens.
 */
export function refuseUpgrade(socket: Duplex, error: GatewayError, requestId: string): void {
  if (socket.destroyed || !socket.writable) return;
  const body = renderErrorBody(error);
  const headers: Record<string, string | number> = {
    ...error.headers,
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    'X-Request-ID': requestId,
    Connection: 'close',
  };
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}\r\n${lines.join('\r\n')}\r\n\r\n${body}`);
}
