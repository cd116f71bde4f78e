import type { IncomingMessage, ServerResponse } from 'node:http';
import { errors } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import { renderErrorBody } from '../errors/render.ts';

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** An error before any stream byte: the OpenAI error JSON with the right status and retry hints. */
export function sendError(res: ServerResponse, err: GatewayError, requestId: string): void {
  if (res.headersSent || res.destroyed) return;
  // 499 is nginx's "client closed request"; the client is gone, but the status keeps logs honest.
  sendJson(res, err.status, renderErrorBody(err), { ...err.headers, 'X-Request-ID': requestId });
}

/**
 * Reads the body up to `limit` bytes (413 past it) and parses it as JSON (400 if it is not).
 * Plain 'data' events rather than `for await`: the request's async iterator costs a few us per
 * request on the hot path, and past the limit the rest of the body is still drained, so the
 * client reads the 413 instead of a reset connection.
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    req.resume();
    throw errors.bodyTooLarge(limit);
  }
  const body = await new Promise<Buffer>((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(errors.bodyTooLarge(limit));
        return;
      }
      parts.push(chunk);
    });
    req.once('end', () => {
      if (!failed) resolve(parts.length === 1 ? parts[0] : Buffer.concat(parts));
    });
    req.once('error', () => {
      if (failed) return;
      failed = true;
      reject(errors.cancelled('The client closed the connection while sending the request.'));
    });
  });
  const text = body.toString('utf8');
  if (text.trim() === '') throw errors.invalidJson('the body is empty');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw errors.invalidJson((err as Error).message);
  }
}
