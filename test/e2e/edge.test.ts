import assert from 'node:assert/strict';
import { type IncomingHttpHeaders, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { projectWithKey } from '../helpers/admin-client.ts';
import { parseSse, requestRecord, startGateway, type TestGateway, useUpstreamGateway } from '../helpers/gateway.ts';

/**
 * One HTTP/1.1 exchange with full control of the headers (fetch would set Host itself).
 * `from`: the loopback address to connect from (127.0.0.0/8 is all loopback on Linux), a client of its own.
 */
function call(
  url: string,
  options: { method?: string; path?: string; headers?: Record<string, string>; body?: string; from?: string },
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const target = { hostname, port, method: options.method ?? 'GET', path: options.path ?? '/healthz', headers: options.headers };
    const req = request({ ...target, localAddress: options.from, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')));
    req.end(options.body);
  });
}

const chat = (model = 'mock/echo', extra: Record<string, unknown> = {}) =>
  JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello edge' }], ...extra });
const corsHeaders = (headers: IncomingHttpHeaders) => Object.keys(headers).filter((name) => name.startsWith('access-control-'));

/** Opens a raw TCP connection to the gateway, from `from` (a loopback address). */
function open(url: string, from = '127.0.0.1'): Promise<Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ port: Number(port), host: '127.0.0.1', localAddress: from }, () => resolve(socket));
    socket.once('error', reject);
  });
}

/** The number of connections the server holds, once it is `count` (accepting and closing are asynchronous). */
async function connectionsReach(gw: TestGateway, count: number): Promise<void> {
  let n = -1;
  for (let tries = 0; tries < 200 && n !== count; tries++) {
    if (tries) await new Promise((r) => setTimeout(r, 10));
    n = await new Promise<number>((resolve, reject) => gw.gateway.server.getConnections((err, c) => (err ? reject(err) : resolve(c))));
  }
  assert.equal(n, count, 'the connections the server holds');
}

/** mock/slow: 500 ms a word, "You said: a b c d" is six words: a 3 s stream. */
const slowStream = JSON.stringify({ model: 'mock/slow', stream: true, messages: [{ role: 'user', content: 'a b c d' }] });

/** Connections each streaming a 3 s answer, once the gateway has them all in progress. */
async function busy(gw: TestGateway, count: number): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < count; i++) {
    const socket = await open(gw.url);
    socket.on('error', () => {});
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${slowStream.length}\r\n\r\n${slowStream}`,
    );
    sockets.push(socket);
  }
  for (let tries = 0; tries < 200 && gw.gateway.context.scopes.size < count; tries++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(gw.gateway.context.scopes.size, count, 'streams in progress');
  return sockets;
}

/** GET /healthz on a new keep-alive connection from `from`: the status, and the connection, left open. */
async function healthOn(url: string, from: string): Promise<{ status: number; socket: Socket }> {
  const socket = await open(url, from);
  socket.on('error', () => {});
  const answer = new Promise<string>((resolve, reject) => {
    socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1')));
    socket.once('close', () => reject(new Error(`the connection from ${from} was closed unanswered`)));
  });
  socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(await answer)?.[1]), socket };
}

/** One sample of GET /metrics (no key: the gateways here are keyless, so anyone is their operator). */
async function metric(gw: TestGateway, line: string): Promise<number> {
  const text = await (await fetch(`${gw.url}/metrics`)).text();
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  assert.ok(found, `${line} in /metrics`);
  return Number(found.slice(line.length + 1));
}

/** Milliseconds until the server closes `socket` (bounded), and what it sent before. */
function untilClosed(socket: Socket, limitMs: number): Promise<{ ms: number; received: string }> {
  const started = performance.now();
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  socket.on('error', () => {});
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after ${limitMs} ms`));
    }, limitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ ms: performance.now() - started, received });
    });
  });
}

describe('Content-Type: a JSON body must be declared as JSON (no cross-site "simple" POST)', () => {
  const { upstream, gw } = useUpstreamGateway();

  for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded']) {
    it(`${type} gets 415 in the OpenAI error shape, and the upstream is never called`, async () => {
      const seen = upstream.requests.length;
      const res = await call(gw.url, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': type },
        body: chat('up/gpt-4o-mini'),
      });
      assert.equal(res.status, 415);
      assert.deepEqual(JSON.parse(res.body), {
        error: {
          message: `Content-Type must be application/json, not ${type}.`,
          type: 'invalid_request_error',
          param: null,
          code: 'unsupported_media_type',
        },
      });
      assert.equal(upstream.requests.length, seen);
      // A refused model request, recorded like any other refusal.
      const record = await requestRecord(gw, String(res.headers['x-request-id']));
      assert.deepEqual([record.outcome, record.error?.code], ['error', 'unsupported_media_type']);
    });
  }

  it('a POST without body or Content-Type gets 415 too, on both model routes', async () => {
    for (const path of ['/v1/chat/completions', '/v1/responses']) {
      const res = await call(gw.url, { method: 'POST', path });
      assert.equal(res.status, 415, path);
      assert.equal(JSON.parse(res.body).error.code, 'unsupported_media_type');
    }
  });

  it('application/json with a charset in any case is served', async () => {
    const res = await call(gw.url, {
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { 'content-type': 'Application/JSON; charset=utf-8' },
      body: chat(),
    });
    assert.equal(res.status, 200);
    assert.equal(JSON.parse(res.body).object, 'chat.completion');
  });
});

describe('Host check (DNS rebinding)', () => {
  it('without a key, a non-loopback Host is refused with 403 host_not_allowed; loopback names are served', async () => {
    const gw = await startGateway();
    try {
      for (const host of ['evil.example', `evil.example:${new URL(gw.url).port}`, '192.168.1.10']) {
        const res = await call(gw.url, {
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { host, 'content-type': 'application/json' },
          body: chat(),
        });
        assert.equal(res.status, 403, host);
        assert.deepEqual(JSON.parse(res.body), {
          error: {
            message: `Host ${host} is not allowed here (see server.allowed_hosts).`,
            type: 'invalid_request_error',
            param: null,
            code: 'host_not_allowed',
          },
        });
      }
      for (const host of ['localhost:8080', 'app.localhost', '127.0.0.1', '[::1]:8080']) {
        assert.equal((await call(gw.url, { headers: { host } })).status, 200, host);
      }
    } finally {
      await gw.close();
    }
  });

  it('an HTTP/1.1 request without Host gets 400 missing_host_header', async () => {
    const gw = await startGateway({ auth: { master_key: 'sk-master' } });
    try {
      const socket = await open(gw.url);
      const closed = untilClosed(socket, 5000);
      socket.write('GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
      const { received } = await closed;
      assert.match(received, /^HTTP\/1\.1 400 /);
      assert.match(received, /"code":"missing_host_header"/);
    } finally {
      await gw.close();
    }
  });

  it('with a key and no allowed_hosts, any Host is served', async () => {
    const gw = await startGateway({ auth: { master_key: 'sk-master' } });
    try {
      const res = await call(gw.url, { path: '/v1/models', headers: { host: 'gateway.example.com', authorization: 'Bearer sk-master' } });
      assert.equal(res.status, 200);
    } finally {
      await gw.close();
    }
  });

  it('with a key, allowed_hosts is enforced (exact names and *. subdomains, any port)', async () => {
    const gw = await startGateway({ auth: { master_key: 'sk-master' }, server: { allowed_hosts: ['gw.example.com', '*.internal.example'] } });
    try {
      const auth = { authorization: 'Bearer sk-master' };
      for (const host of ['gw.example.com', 'GW.example.com:8443', 'a.internal.example']) {
        assert.equal((await call(gw.url, { path: '/v1/models', headers: { host, ...auth } })).status, 200, host);
      }
      for (const host of ['evil.example', 'internal.example', '127.0.0.1']) {
        const res = await call(gw.url, { path: '/v1/models', headers: { host, ...auth } });
        assert.equal(res.status, 403, host);
        assert.equal(JSON.parse(res.body).error.code, 'host_not_allowed');
      }
    } finally {
      await gw.close();
    }
  });
});

describe('CORS', () => {
  const APP = 'http://app.example.test:3000';

  it('is off by default: no Access-Control-* header on a response or a preflight', async () => {
    const gw = await startGateway();
    try {
      const post = await call(gw.url, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { origin: APP, 'content-type': 'application/json' },
        body: chat(),
      });
      assert.equal(post.status, 200);
      assert.deepEqual(corsHeaders(post.headers), []);
      const preflight = await call(gw.url, {
        method: 'OPTIONS',
        path: '/v1/chat/completions',
        headers: { origin: APP, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization,content-type' },
      });
      assert.equal(preflight.status, 405);
      assert.deepEqual(corsHeaders(preflight.headers), []);
    } finally {
      await gw.close();
    }
  });

  describe('with server.cors_origins', () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startGateway({ server: { cors_origins: [APP] } });
    });
    after(() => gw.close());

    it('answers the preflight of an allowed origin with 204, its methods, the SDK headers it asked for and max-age', async () => {
      const res = await call(gw.url, {
        method: 'OPTIONS',
        path: '/v1/chat/completions',
        headers: {
          origin: APP,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization,content-type,x-stainless-lang,x-stainless-retry-count',
        },
      });
      assert.equal(res.status, 204);
      assert.equal(res.body, '');
      assert.equal(res.headers['access-control-allow-origin'], APP);
      assert.equal(res.headers['access-control-allow-methods'], 'GET, POST, PATCH, DELETE');
      assert.equal(res.headers['access-control-allow-headers'], 'authorization, content-type, x-stainless-lang, x-stainless-retry-count');
      assert.equal(res.headers['access-control-max-age'], '600');
      assert.match(String(res.headers.vary), /^Origin\b/);
    });

    it("lets an allowed origin's page edit and delete through the admin API (PATCH and DELETE preflights)", async () => {
      for (const method of ['PATCH', 'DELETE']) {
        const res = await call(gw.url, {
          method: 'OPTIONS',
          path: '/admin/keys/key_1',
          headers: { origin: APP, 'access-control-request-method': method, 'access-control-request-headers': 'authorization' },
        });
        assert.equal(res.status, 204);
        assert.ok(String(res.headers['access-control-allow-methods']).split(', ').includes(method), method);
      }
    });

    it('refuses the preflight of another origin with 403 and no CORS header', async () => {
      const res = await call(gw.url, {
        method: 'OPTIONS',
        path: '/v1/chat/completions',
        headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
      });
      assert.equal(res.status, 403);
      assert.equal(JSON.parse(res.body).error.code, 'cors_origin_not_allowed');
      assert.deepEqual(corsHeaders(res.headers), []);
    });

    it('a streamed response to an allowed origin carries the CORS headers next to the SSE ones', async () => {
      const res = await call(gw.url, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { origin: APP, 'content-type': 'application/json' },
        body: chat('mock/echo', { stream: true }),
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-type'], 'text/event-stream');
      assert.equal(res.headers['access-control-allow-origin'], APP);
      assert.match(String(res.headers['access-control-expose-headers']), /^x-request-id, x-sluice-cache, mcp-session-id, retry-after\b/);
      assert.equal(res.headers.vary, 'Origin');
      assert.ok(res.headers['x-request-id']);
      assert.equal(parseSse(res.body).frames.at(-1)?.data, '[DONE]');
    });

    it('an error answer carries them too, so the page can read it', async () => {
      const res = await call(gw.url, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { origin: APP, 'content-type': 'text/plain' },
        body: chat(),
      });
      assert.equal(res.status, 415);
      assert.equal(res.headers['access-control-allow-origin'], APP);
    });

    it('another origin gets the answer without CORS headers (the browser keeps it from the page)', async () => {
      const res = await call(gw.url, { headers: { origin: 'http://evil.example' } });
      assert.equal(res.status, 200);
      assert.deepEqual(corsHeaders(res.headers), []);
    });
  });
});

describe('connection handling', () => {
  it('a slowloris client (headers dribbled in) is answered 408 and closed within headers_timeout_s', async () => {
    const gw = await startGateway({ server: { headers_timeout_s: 1, request_timeout_s: 5 } });
    try {
      const socket = await open(gw.url);
      const closed = untilClosed(socket, 5000);
      socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      const drip = setInterval(() => socket.writable && socket.write('X-Padding: a\r\n'), 200);
      const { ms, received } = await closed.finally(() => clearInterval(drip));
      assert.match(received, /^HTTP\/1\.1 408 /);
      // The timeout plus one sweep (a quarter of it) plus scheduling slack on a busy machine.
      assert.ok(ms >= 900 && ms < 2500, `closed after ${Math.round(ms)} ms`);
    } finally {
      await gw.close();
    }
  });

  it('a connection that never sends a byte is closed within headers_timeout_s', async () => {
    const gw = await startGateway({ server: { headers_timeout_s: 1, request_timeout_s: 5 } });
    try {
      const { ms } = await untilClosed(await open(gw.url), 5000);
      assert.ok(ms >= 900 && ms < 2500, `closed after ${Math.round(ms)} ms`);
    } finally {
      await gw.close();
    }
  });

  it('a body still arriving after request_timeout_s is answered 408', async () => {
    const gw = await startGateway({ server: { headers_timeout_s: 0.5, request_timeout_s: 1 } });
    try {
      const socket = await open(gw.url);
      const closed = untilClosed(socket, 5000);
      socket.write('POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
      const drip = setInterval(() => socket.writable && socket.write(' '), 200);
      const { ms, received } = await closed.finally(() => clearInterval(drip));
      assert.match(received, /^HTTP\/1\.1 408 /);
      assert.ok(ms >= 900 && ms < 2500, `closed after ${Math.round(ms)} ms`);
    } finally {
      await gw.close();
    }
  });

  it('request_timeout_s does not cut a streamed response that outlives it', async () => {
    const gw = await startGateway({ server: { headers_timeout_s: 0.5, request_timeout_s: 1 } });
    try {
      const started = performance.now();
      // mock/slow: 500 ms per word, "You said: a b c d" is six words: a 3 s stream.
      const res = await call(gw.url, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock/slow', stream: true, messages: [{ role: 'user', content: 'a b c d' }] }),
      });
      const ms = performance.now() - started;
      assert.equal(res.status, 200);
      assert.ok(ms > 2500, `the stream took ${Math.round(ms)} ms`);
      const { frames } = parseSse(res.body);
      assert.equal(frames.at(-1)?.data, '[DONE]');
      const text = frames
        .slice(0, -1)
        .map((f) => JSON.parse(f.data).choices[0]?.delta?.content ?? '')
        .join('');
      assert.equal(text, 'You said: a b c d');
    } finally {
      await gw.close();
    }
  });

  it('past max_connections with every connection busy a new one is closed at once, unanswered; a freed slot is usable again', async () => {
    const gw = await startGateway({ server: { max_connections: 3 } });
    const held: Socket[] = [];
    try {
      held.push(...(await busy(gw, 3)));
      const extra = await open(gw.url);
      const closed = untilClosed(extra, 2000);
      extra.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
      const { ms, received } = await closed;
      assert.equal(received, '');
      assert.ok(ms < 1000, `closed after ${Math.round(ms)} ms`);

      held.pop()?.destroy();
      let status = 0;
      for (let attempt = 0; attempt < 50 && status !== 200; attempt++) {
        status = await call(gw.url, { headers: { connection: 'close' } }).then(
          (r) => r.status,
          () => 0,
        );
        if (status !== 200) await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(status, 200);
    } finally {
      for (const socket of held) socket.destroy();
      await gw.close();
    }
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const json = { 'content-type': 'application/json' };
const streamText = (body: string) =>
  parseSse(body)
    .frames.slice(0, -1)
    .map((f) => JSON.parse(f.data).choices[0]?.delta?.content ?? '')
    .join('');

describe('issue 25 defect 6: one client can take every connection', () => {
  it('one client can take every connection no more: past max_connections_per_client its new ones are closed at once, others are served', async () => {
    const gw = await startGateway({ server: { max_connections: 100, max_connections_per_client: 50 } });
    const sockets: Socket[] = [];
    try {
      const closed = new Set<Socket>();
      for (let i = 0; i < 200; i++) {
        const socket = await open(gw.url, '127.0.0.2');
        socket.on('error', () => {});
        socket.once('close', () => closed.add(socket));
        sockets.push(socket);
      }
      await connectionsReach(gw, 50);
      for (let tries = 0; tries < 200 && closed.size < 150; tries++) await sleep(10);
      assert.equal(closed.size, 150);
      const started = performance.now();
      const res = await call(gw.url, { from: '127.0.0.3' });
      assert.equal(res.status, 200);
      assert.ok(performance.now() - started < 1000, `served after ${Math.round(performance.now() - started)} ms`);
      // It cannot reopen them either: its next one is closed at once too.
      assert.equal((await untilClosed(await open(gw.url, '127.0.0.2'), 2000)).received, '');
      assert.equal(await metric(gw, 'sluice_connections_refused_total{reason="per_client"}'), 151);
    } finally {
      for (const socket of sockets) socket.destroy();
      await gw.close();
    }
  });

  it('at max_connections idle connections are reclaimed first: other clients are served meanwhile, a stream in progress is never cut', async () => {
    const gw = await startGateway({ server: { max_connections: 60, max_connections_per_client: 50 } });
    const sockets: Socket[] = [];
    try {
      const stream = call(gw.url, { method: 'POST', path: '/v1/chat/completions', headers: json, body: slowStream, from: '127.0.0.9' });
      await connectionsReach(gw, 1);
      for (let i = 0; i < 59; i++) {
        const socket = await open(gw.url, i < 50 ? '127.0.0.2' : '127.0.0.3');
        socket.on('error', () => {});
        sockets.push(socket);
      }
      await connectionsReach(gw, 60);
      // Twenty other clients, each keeping its connection: each new one takes an idle one's place.
      for (let i = 0; i < 20; i++) {
        const { status, socket } = await healthOn(gw.url, `127.0.0.${10 + i}`);
        sockets.push(socket);
        assert.equal(status, 200, `client ${i}`);
      }
      const streamed = await stream;
      assert.equal(streamed.status, 200);
      assert.equal(streamText(streamed.body), 'You said: a b c d');
      assert.equal(parseSse(streamed.body).frames.at(-1)?.data, '[DONE]');
      assert.ok((await metric(gw, 'sluice_connections_reclaimed_total')) >= 20);
      assert.equal(await metric(gw, 'sluice_connections_refused_total{reason="max_connections"}'), 0);
    } finally {
      for (const socket of sockets) socket.destroy();
      await gw.close();
    }
  });

  it('behind a trusted proxy each forwarded client is held to its requests in flight (429); the proxy is not capped; an untrusted X-Forwarded-For is ignored', async () => {
    const gw = await startGateway({ server: { trusted_proxies: ['127.0.0.1'], max_connections_per_client: 2 } });
    const from = (client: string, body = chat(), via = '127.0.0.1') =>
      call(gw.url, { method: 'POST', path: '/v1/chat/completions', headers: { ...json, 'x-forwarded-for': client }, body, from: via });
    try {
      const streams = [from('198.51.100.7', slowStream), from('198.51.100.7', slowStream)];
      for (let tries = 0; tries < 200 && gw.gateway.context.scopes.size < 2; tries++) await sleep(10);
      assert.equal(gw.gateway.context.scopes.size, 2);
      const third = await from('203.0.113.1, 198.51.100.7');
      assert.equal(third.status, 429);
      assert.equal(third.headers['retry-after'], '1');
      assert.equal(JSON.parse(third.body).error.code, 'too_many_client_requests');
      // Another client through the same proxy (its 3rd and 4th connection), and a client that is not a
      // trusted proxy naming the capped one: counted as itself.
      assert.equal((await from('198.51.100.8')).status, 200);
      assert.equal((await from('198.51.100.7', chat(), '127.0.0.2')).status, 200);
      for (const res of await Promise.all(streams)) assert.equal(streamText(res.body), 'You said: a b c d');
      assert.equal((await from('198.51.100.7')).status, 200);
      assert.equal(await metric(gw, 'sluice_connections_refused_total{reason="per_client_forwarded"}'), 1);
    } finally {
      await gw.close();
    }
  });
});

describe('issue 25 defect 7: guessing keys is free', () => {
  const KEY = 'sk-edge-master';
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ auth: { master_key: KEY } });
  });
  after(() => gw?.close());

  const login = (key: string, from: string) =>
    call(gw.url, { method: 'POST', path: '/console/api/login', headers: json, body: JSON.stringify({ key }), from });

  it('guessing keys is free no more: 300 wrong console logins get 429 with Retry-After after 10; a right key from another client still logs in', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 300; i += 10) {
      const batch = await Promise.all(Array.from({ length: 10 }, (_, j) => login(`sk-guess-${i + j}`, '127.0.0.2')));
      for (const res of batch) {
        statuses.push(res.status);
        if (res.status !== 429) continue;
        assert.ok(Number(res.headers['retry-after']) >= 1);
        assert.deepEqual([JSON.parse(res.body).error.code, JSON.parse(res.body).error.type], ['too_many_auth_failures', 'rate_limit_exceeded']);
      }
    }
    assert.deepEqual([statuses.filter((s) => s === 401).length, statuses.filter((s) => s === 429).length], [10, 290]);
    // The master key is what can be guessed: from the throttled client it is not even checked.
    assert.equal((await login(KEY, '127.0.0.2')).status, 429);
    const other = await login(KEY, '127.0.0.3');
    assert.equal(other.status, 200);
    assert.match(String(other.headers['set-cookie']), /^sluice_console=/);
  });

  it('bearer keys: 429 in the OpenAI shape on /v1, the Anthropic shape on /v1/messages, counted in /metrics', async () => {
    const chatWithKey = (key: string) =>
      call(gw.url, {
        method: 'POST',
        path: '/v1/chat/completions',
        headers: { ...json, authorization: `Bearer ${key}` },
        body: chat(),
        from: '127.0.0.4',
      });
    for (let i = 0; i < 10; i++) assert.equal((await chatWithKey(`sk-guess-${i}`)).status, 401);
    const openai = await chatWithKey('sk-guess-10');
    assert.equal(openai.status, 429);
    assert.equal(JSON.parse(openai.body).error.code, 'too_many_auth_failures');
    const anthropic = await call(gw.url, {
      method: 'POST',
      path: '/v1/messages',
      headers: { ...json, 'x-api-key': 'sk-guess-11', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'mock/echo', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
      from: '127.0.0.4',
    });
    assert.equal(anthropic.status, 429);
    assert.ok(Number(anthropic.headers['retry-after']) >= 1);
    assert.deepEqual(JSON.parse(anthropic.body).type, 'error');
    assert.equal(JSON.parse(anthropic.body).error.type, 'rate_limit_error');
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${KEY}` } })).text();
    const value = (line: string) =>
      Number(
        metrics
          .split('\n')
          .find((l) => l.startsWith(`${line} `))
          ?.slice(line.length + 1),
      );
    assert.ok(value('sluice_auth_throttled_total{scope="address"}') >= 292);
    assert.ok(value('sluice_auth_failures_total') >= 20);
  });

  it('a key id guessed at from many clients answers its wrong secrets 429; its right secret still works', async () => {
    const project = await projectWithKey(gw.url, KEY, 'guessed');
    const wrong = `${project.key.slice(0, -4)}${project.key.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const models = (key: string, from: string) => call(gw.url, { path: '/v1/models', headers: { authorization: `Bearer ${key}` }, from });
    for (let i = 0; i < 10; i++) assert.equal((await models(wrong, `127.0.1.${i + 1}`)).status, 401);
    const refused = await models(wrong, '127.0.1.20');
    assert.equal(refused.status, 429);
    assert.match(JSON.parse(refused.body).error.message, /for this key id/);
    assert.equal((await models(project.key, '127.0.1.21')).status, 200);
  });
});
