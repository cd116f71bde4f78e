import type { IncomingMessage } from 'node:http';
import { errors } from '../../errors/catalog.ts';
import { requireJsonContentType } from './check-content-type.ts';

/**
 * Reads the body up to `limit` bytes (413 past it) and parses it as JSON (400 if it is not); a body
 * not declared as application/json is refused first (415, see edge/check-content-type.ts).
 */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<unknown> {
  try {
    requireJsonContentType(req);
  } catch (err) {
    req.resume();
    throw err;
  }
  const body = await readBodyBytes(req, limit);
  const text = body.toString('utf8');
  if (text.trim() === '') throw errors.invalidJson('the body is empty');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw errors.invalidJson((err as Error).message);
  }
}

/**
 * The body's bytes, up to `limit` (413 past it, declared or sent); a client that leaves while
 * sending is `cancelled`. Plain 'data' events rather than `for await`: the request's async
 * iterator costs a few us per request on the hot path, and past the limit the rest of the body is
 * still drained, so the client reads the 413 instead of a reset connection.
 */
export async function readBodyBytes(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > limit) {
    req.resume();
    throw errors.bodyTooLarge(limit);
  }
  return new Promise<Buffer>((resolve, reject) => {
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
      if (failed) return;
      const whole = parts.length === 1 ? parts[0] : Buffer.concat(parts);
      // These listeners stay on the request for its life (a stream's), and with them this array:
      // emptied, the body's bytes are not kept for as long as the response runs.
      parts.length = 0;
      resolve(whole);
    });
    req.once('error', () => {
      if (failed) return;
      failed = true;
      reject(errors.cancelled('The client closed the connection while sending the request.'));
    });
  });
}
