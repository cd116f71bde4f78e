import { once } from 'node:events';
import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OneResponse {
  /** The server side of the one request: what the code under test writes to. */
  res: ServerResponse;
  /** The client's response, once its status line and headers arrived. */
  response: Promise<IncomingMessage>;
  /** Starts reading the client's side (left unread, the client applies back-pressure). */
  read(): void;
  /** Everything the client read, once the response ended or its connection closed. Starts reading. */
  body(): Promise<string>;
  /** The client leaves: its connection is destroyed. */
  disconnect(): void;
  close(): Promise<void>;
}

/**
 * A real node:http server on 127.0.0.1 with one request in flight, so that the code under test
 * meets real ServerResponse semantics (lazy headers, writableNeedDrain, 'drain', 'close').
 */
export async function openResponse(): Promise<OneResponse> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const arrived = once(server, 'request') as Promise<[IncomingMessage, ServerResponse]>;
  const client = request({ host: '127.0.0.1', port, path: '/', agent: false });
  client.on('error', () => {}); // a disconnect is the point of some tests
  client.end();
  const [, res] = await arrived;

  const response = new Promise<IncomingMessage>((resolve, reject) => {
    client.once('response', resolve);
    client.once('close', () => reject(new Error('the connection closed before a response')));
  });
  response.catch(() => {});
  const chunks: Buffer[] = [];
  let reading = false;
  const read = () => {
    if (reading) return;
    reading = true;
    void response.then(
      (incoming) => {
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', () => {});
      },
      () => {},
    );
  };
  const finished = response.then(
    (incoming) => new Promise<void>((resolve) => incoming.once('close', () => resolve())),
    () => undefined,
  );
  return {
    res,
    response,
    read,
    async body() {
      read();
      await finished;
      return Buffer.concat(chunks).toString('utf8');
    },
    disconnect: () => client.destroy(),
    async close() {
      client.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
