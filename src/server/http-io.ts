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

/** Reads the body up to `limit` bytes (413 past it) and parses it as JSON (400 if it is not). */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    req.resume();
    throw errors.bodyTooLarge(limit);
  }
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      throw errors.bodyTooLarge(limit);
    }
    parts.push(chunk as Buffer);
  }
  const text = parts.length === 1 ? parts[0].toString('utf8') : Buffer.concat(parts).toString('utf8');
  if (text.trim() === '') throw errors.invalidJson('the body is empty');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw errors.invalidJson((err as Error).message);
  }
}
