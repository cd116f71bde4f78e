import type { AddressInfo } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

/** One response's usage, as OpenAI's Realtime API reports it in `response.done`. */
export interface RealtimeUsage {
  input_tokens: number;
  output_tokens: number;
  input_token_details?: { cached_tokens?: number; text_tokens?: number; audio_tokens?: number };
  output_token_details?: { text_tokens?: number; audio_tokens?: number };
}

/** A connection the fake accepted: the headers it came with, and its socket. */
export interface RealtimeConnectionSeen {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  socket: WebSocket;
  /** The client events it received, parsed. */
  received: { type: string }[];
  /** The binary frames it received. */
  binary: Buffer[];
}

export interface FakeRealtimeUpstream {
  /** `http://127.0.0.1:<port>`: a provider's base_url is this plus `/v1`. */
  url: string;
  connections: RealtimeConnectionSeen[];
  /** The usage each `response.done` of a connection reports, in turn (the last one repeats). */
  usages: RealtimeUsage[];
  close(): Promise<void>;
}

/**
 * A Realtime upstream on 127.0.0.1 replaying OpenAI's documented event sequence: `session.created`
 * on connect; for each `response.create`, `response.created`, a `response.output_text.delta` and
 * `response.done` with usage. A binary frame is echoed back as binary.
 */
export async function startFakeRealtimeUpstream(): Promise<FakeRealtimeUpstream> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/v1/realtime' });
  await new Promise<void>((resolve) => wss.once('listening', resolve));
  const fake: FakeRealtimeUpstream = {
    url: `http://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    connections: [],
    usages: [{ input_tokens: 100, output_tokens: 50 }],
    close: () =>
      new Promise((resolve) => {
        for (const client of wss.clients) client.terminate();
        wss.close(() => resolve());
      }),
  };
  wss.on('connection', (socket, req) => {
    let responses = 0;
    const seen: RealtimeConnectionSeen = { url: req.url ?? '', headers: req.headers, socket, received: [], binary: [] };
    fake.connections.push(seen);
    const send = (event: Record<string, unknown>) => socket.send(JSON.stringify({ event_id: `event_${Math.random()}`, ...event }));
    send({ type: 'session.created', session: { id: 'sess_1', object: 'realtime.session', model: 'gpt-realtime' } });
    socket.on('message', (data, isBinary) => {
      if (isBinary) {
        seen.binary.push(data as Buffer);
        socket.send(data, { binary: true });
        return;
      }
      const event = JSON.parse(String(data)) as { type: string };
      seen.received.push(event);
      if (event.type !== 'response.create') return;
      const id = `resp_${++responses}`;
      const usage = fake.usages[Math.min(responses - 1, fake.usages.length - 1)];
      send({ type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress' } });
      send({ type: 'response.output_text.delta', response_id: id, item_id: 'item_1', output_index: 0, content_index: 0, delta: 'Hello' });
      send({
        type: 'response.done',
        response: {
          id,
          object: 'realtime.response',
          status: 'completed',
          usage: { total_tokens: usage.input_tokens + usage.output_tokens, ...usage },
        },
      });
    });
  });
  return fake;
}
