import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server, type ServerOptions } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { answerClientError } from './client-error.ts';

interface RawResponse {
  status: string;
  headers: Record<string, string>;
  body: string;
}

/** Sends raw bytes to the server and reads until it closes the connection. */
async function send(server: Server, bytes: string): Promise<RawResponse> {
  const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.write(bytes);
  await once(socket, 'close');
  const text = Buffer.concat(chunks).toString('utf8');
  const split = text.indexOf('\r\n\r\n');
  const [status, ...lines] = text.slice(0, split).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, body: text.slice(split + 4) };
}

describe("node's clientError answered with the OpenAI error JSON", () => {
  let server: Server;
  async function start(options: ServerOptions = {}): Promise<Server> {
    server = createServer(options, (_req, res) => res.end('handled'));
    server.on('clientError', answerClientError);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return server;
  }
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  function assertErrorResponse(response: RawResponse, status: string, code: string, message: string): void {
    assert.equal(response.status, status);
    assert.equal(response.headers['content-type'], 'application/json');
    assert.equal(response.headers['connection'], 'close');
    assert.match(response.headers['x-request-id'] ?? '', /^[0-9a-z]{8}[A-Za-z0-9_-]{12}$/);
    assert.equal(Number(response.headers['content-length']), Buffer.byteLength(response.body));
    assert.deepEqual(JSON.parse(response.body), { error: { message, type: 'invalid_request_error', param: null, code } });
  }

  it('headers over the limit: 431 headers_too_large with an X-Request-ID, and the connection closed', async () => {
    await start({ maxHeaderSize: 1024 });
    const response = await send(server, `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(2048)}\r\n\r\n`);
    assertErrorResponse(
      response,
      'HTTP/1.1 431 Request Header Fields Too Large',
      'headers_too_large',
      'The request headers are larger than this server accepts.',
    );
  });

  it('a malformed request line: 400 malformed_http_request', async () => {
    await start();
    const response = await send(server, 'this is not http\r\n\r\n');
    assertErrorResponse(response, 'HTTP/1.1 400 Bad Request', 'malformed_http_request', 'The HTTP request could not be parsed.');
  });

  it('headers that do not arrive in time: 408 request_timeout', async () => {
    await start({ headersTimeout: 100, requestTimeout: 100, connectionsCheckingInterval: 20 });
    const response = await send(server, 'GET / HTTP/1.1\r\nHost: x\r\n');
    assertErrorResponse(response, 'HTTP/1.1 408 Request Timeout', 'request_timeout', 'The request was not received in time.');
  });

  it('a well-formed request on the same server is not affected', async () => {
    await start({ maxHeaderSize: 1024 });
    const response = await send(server, 'GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    assert.equal(response.status, 'HTTP/1.1 200 OK');
    assert.equal(response.body, 'handled');
  });
});

describe('answerClientError on a connection that cannot take an answer', () => {
  /** A socket that records what was done to it. */
  const fakeSocket = (writable: boolean) => {
    const done: string[] = [];
    const socket = { writable, destroy: () => done.push('destroy'), end: () => done.push('end') } as unknown as Socket;
    return { socket, done };
  };

  it('a reset connection is destroyed, nothing written', () => {
    const { socket, done } = fakeSocket(true);
    answerClientError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }), socket);
    assert.deepEqual(done, ['destroy']);
  });

  it('a socket that is no longer writable is destroyed, nothing written', () => {
    const { socket, done } = fakeSocket(false);
    answerClientError(Object.assign(new Error('Parse Error'), { code: 'HPE_INVALID_METHOD' }), socket);
    assert.deepEqual(done, ['destroy']);
  });
});
