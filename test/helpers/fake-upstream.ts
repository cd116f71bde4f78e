import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface UpstreamReply {
  status?: number;
  headers?: Record<string, string>;
  /** The body, sent in pieces: exactly these bytes, whatever the split. */
  body?: Buffer | string;
  /** Split the body at random byte boundaries (a seeded PRNG, so failures reproduce). */
  randomSplit?: { seed: number; maxPiece?: number };
  /** Explicit pieces instead (each written separately). */
  pieces?: (Buffer | string)[];
  /** Delay before each piece after the first. */
  delayMs?: number;
  /** Per-piece delays (before piece i), overriding `delayMs`: one long gap among fast pieces. */
  delaysMs?: number[];
  /** Delay before the response headers. */
  headerDelayMs?: number;
  /** After sending the body: `end` (default), `hang` (keep the socket open, send nothing), `reset` (destroy the socket). */
  after?: 'end' | 'hang' | 'reset';
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  json: unknown;
}

export interface FakeUpstream {
  url: string;
  requests: RecordedRequest[];
  /** Sockets the fake saw closed by the peer (sluice) while a response was still going. */
  closedEarly: number;
  /**
   * Body bytes written so far, over all responses. The fake honours backpressure like a real
   * server (a `write` that returns false waits for `drain`), so this stops growing when the
   * reader stops reading.
   */
  bytesSent: number;
  /** Times a write found the socket full and had to wait for `drain`. */
  stalls: number;
  reply(handler: UpstreamReply | ((req: RecordedRequest) => UpstreamReply)): void;
  /**
   * Resolves when a response in progress was closed by the client side: once `closedEarly`
   * reaches `count` (default 1; pass `closedEarly + 1` to wait for the next one).
   */
  waitForEarlyClose(timeoutMs?: number, count?: number): Promise<void>;
  close(): Promise<void>;
}

/** A seeded PRNG (mulberry32) so a random split is reproducible from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function splitRandomly(body: Buffer, seed: number, maxPiece = 64): Buffer[] {
  const rand = prng(seed);
  const out: Buffer[] = [];
  for (let i = 0; i < body.length;) {
    const n = 1 + Math.floor(rand() * maxPiece);
    out.push(body.subarray(i, i + n));
    i += n;
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A local upstream on 127.0.0.1 that replays recorded bytes. Only ever listens on loopback. */
export async function startFakeUpstream(): Promise<FakeUpstream> {
  let handler: UpstreamReply | ((req: RecordedRequest) => UpstreamReply) = { status: 500, body: 'no reply configured' };
  const sockets = new Set<Socket>();
  const earlyCloseWaiters: (() => void)[] = [];
  const state = {
    requests: [] as RecordedRequest[],
    closedEarly: 0,
    bytesSent: 0,
    stalls: 0,
  };

  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    let json: unknown;
    try {
      json = body ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    const recorded: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, json };
    state.requests.push(recorded);
    const reply = typeof handler === 'function' ? handler(recorded) : handler;

    let finished = false;
    res.on('close', () => {
      if (!finished) {
        state.closedEarly++;
        for (const w of earlyCloseWaiters.splice(0)) w();
      }
    });
    if (reply.headerDelayMs) await sleep(reply.headerDelayMs);
    if (res.destroyed) return;
    res.writeHead(reply.status ?? 200, { 'content-type': 'text/event-stream', ...reply.headers });
    res.flushHeaders();
    const bodyBuf = reply.body === undefined ? Buffer.alloc(0) : Buffer.from(reply.body);
    const pieces =
      reply.pieces?.map((p) => Buffer.from(p)) ??
      (reply.randomSplit ? splitRandomly(bodyBuf, reply.randomSplit.seed, reply.randomSplit.maxPiece) : [bodyBuf]);
    // Resolves once the last piece has left node for the kernel (http corks writes until the next tick).
    let flushed = Promise.resolve();
    for (let i = 0; i < pieces.length; i++) {
      const delay = reply.delaysMs?.[i] ?? (i > 0 ? reply.delayMs : 0);
      if (delay) await sleep(delay);
      if (res.destroyed) return;
      state.bytesSent += pieces[i].length;
      let accepted = true;
      flushed = new Promise((done) => {
        accepted = res.write(pieces[i], () => done());
      });
      if (!accepted) {
        state.stalls++;
        await new Promise<void>((resume) => {
          const go = () => {
            res.off('drain', go);
            res.off('close', go);
            resume();
          };
          res.on('drain', go);
          res.on('close', go);
        });
        if (res.destroyed) return;
      }
    }
    const after = reply.after ?? 'end';
    if (after === 'end') {
      finished = true;
      res.end();
    } else if (after === 'reset') {
      finished = true;
      // The pieces before a reset must reach the peer: destroying at once would drop them corked.
      await flushed;
      res.socket?.destroy();
    }
    // 'hang': leave it open until the peer goes away.
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    get closedEarly() {
      return state.closedEarly;
    },
    get bytesSent() {
      return state.bytesSent;
    },
    get stalls() {
      return state.stalls;
    },
    reply(h) {
      handler = h;
    },
    waitForEarlyClose(timeoutMs = 2000, count = 1) {
      if (state.closedEarly >= count) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error('upstream connection was not closed')), timeoutMs);
        const check = () => {
          if (state.closedEarly < count) {
            earlyCloseWaiters.push(check);
            return;
          }
          clearTimeout(t);
          resolve();
        };
        earlyCloseWaiters.push(check);
      });
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  } as FakeUpstream;
}

/** The multipart body a fake upstream got (an upload relayed), parsed back into its fields. */
export function recordedForm(req: RecordedRequest): Promise<FormData> {
  return new Request('http://upstream/', {
    method: 'POST',
    headers: { 'content-type': String(req.headers['content-type']) },
    body: req.body,
  }).formData();
}
