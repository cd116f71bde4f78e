import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import type { LedgerRecord } from '../../src/accounting/ledger-record.ts';
import type { Gateway } from '../../src/server/app.ts';
import { parseSse } from '../helpers/gateway.ts';

/** Every ledger row the gateway's store holds, in write order (paged: the store answers 1,000 at most). */
export async function ledgerRows(gateway: Gateway): Promise<LedgerRecord[]> {
  const store = gateway.context.ledgerStore;
  assert.ok(store, 'the gateway has a ledger store');
  const rows: LedgerRecord[] = [];
  for (let after: string | undefined; ;) {
    const page = await store.listInWriteOrder({ after, limit: 1000 });
    rows.push(...page.data);
    if (page.data.length < 1000) return rows;
    after = page.nextCursor;
  }
}

/**
 * The rows written since `before` (the request ids seen then), once there are `count` of them:
 * polled (records are written in batches), then checked again after a settle, so a second row for
 * the same request would show.
 */
export async function rowsSince(gateway: Gateway, before: ReadonlySet<string>, count: number, timeoutMs = 5000): Promise<LedgerRecord[]> {
  const deadline = Date.now() + timeoutMs;
  let fresh: LedgerRecord[] = [];
  while (Date.now() < deadline) {
    fresh = (await ledgerRows(gateway)).filter((r) => !before.has(r.requestId));
    if (fresh.length >= count) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  await new Promise((r) => setTimeout(r, 60));
  fresh = (await ledgerRows(gateway)).filter((r) => !before.has(r.requestId));
  assert.equal(fresh.length, count, `ledger rows written: ${fresh.map((r) => `${r.requestId} ${r.outcome} ${r.errorCode}`).join(', ')}`);
  return fresh;
}

export async function requestIds(gateway: Gateway): Promise<Set<string>> {
  return new Set((await ledgerRows(gateway)).map((r) => r.requestId));
}

export interface ClientResult {
  status: number;
  contentType: string | undefined;
  requestId: string | undefined;
  text: string;
  /** The client hung up before the response ended. */
  aborted: boolean;
}

export interface StreamClient {
  /** The request, for a test that hangs up. */
  req: ClientRequest;
  /** The response, once its headers came. */
  response: Promise<IncomingMessage>;
  /** What the client read, once the response ended or the client hung up. */
  done: Promise<ClientResult>;
  /** Text read so far. */
  readonly text: string;
}

/**
 * A streaming POST through node:http, which lets a test hang up at any point (after the request
 * went out, after a given frame) and read the exact bytes. `hangUpWhen` is checked on every read.
 */
export function streamClient(url: string, body: unknown, hangUpWhen?: (text: string) => boolean): StreamClient {
  let text = '';
  let res: IncomingMessage | undefined;
  let aborted = false;
  let resolveResponse!: (r: IncomingMessage) => void;
  const response = new Promise<IncomingMessage>((r) => (resolveResponse = r));
  const req = request(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false });
  const done = new Promise<ClientResult>((resolve) => {
    const finish = () =>
      resolve({
        status: res?.statusCode ?? 0,
        contentType: res?.headers['content-type'],
        requestId: res?.headers['x-request-id'] as string | undefined,
        text,
        aborted,
      });
    req.on('response', (r) => {
      res = r;
      resolveResponse(r);
      r.setEncoding('utf8');
      r.on('data', (chunk: string) => {
        text += chunk;
        if (hangUpWhen?.(text)) {
          aborted = true;
          req.destroy();
        }
      });
      r.on('end', finish);
      r.on('close', finish);
    });
    req.on('error', () => {
      aborted = true;
      finish();
    });
    req.on('close', () => {
      if (!res) finish();
    });
  });
  req.end(JSON.stringify(body));
  return {
    req,
    response,
    done,
    get text() {
      return text;
    },
  };
}

/** Every data frame is JSON or `[DONE]`, and `[DONE]` is the last one: what a client parser can read. */
export function expectValidFrames(text: string): void {
  const { frames } = parseSse(text);
  frames.forEach((f, i) => {
    if (f.data === '[DONE]') assert.equal(i, frames.length - 1, '[DONE] is the last frame');
    else assert.doesNotThrow(() => JSON.parse(f.data), `frame ${i} is JSON: ${f.data.slice(0, 120)}`);
  });
}

/** An HTTP error before any stream, in the OpenAI shape; its code. */
export function expectHttpError(
  result: ClientResult,
  status: number,
  code: string,
): { message: string; type: string; upstream?: { status: number | null; type: string | null; code: string | null } } {
  assert.equal(result.status, status, result.text.slice(0, 300));
  assert.equal(result.contentType, 'application/json');
  const body = JSON.parse(result.text) as {
    error: {
      message: string;
      type: string;
      param: unknown;
      code: string;
      upstream?: { status: number | null; type: string | null; code: string | null };
    };
  };
  // What the upstream itself said may follow, in its own field (errors/render.ts).
  assert.deepEqual(
    Object.keys(body.error).filter((k) => k !== 'upstream'),
    ['message', 'type', 'param', 'code'],
  );
  assert.equal(body.error.code, code);
  assert.ok(body.error.message.length > 0);
  return body.error;
}

/**
 * A listener whose accept queue is full: a child node process that listens (backlog 1), is
 * stopped with SIGSTOP so it never accepts, and gets two connections that fill its queue. The
 * kernel then drops further SYNs, so a client's connect attempt times out: all on 127.0.0.1.
 */
export async function fullListener(): Promise<{ port: number; close(): void }> {
  const child = spawn(
    process.execPath,
    ['-e', "const s=require('net').createServer();s.listen({port:0,host:'127.0.0.1',backlog:1},()=>console.log(s.address().port))"],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const port = await new Promise<number>((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
  child.kill('SIGSTOP');
  const fillers: Socket[] = [];
  for (let i = 0; i < 4; i++) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    const connected = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 300);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    fillers.push(socket);
    if (!connected) break;
  }
  return {
    port,
    close() {
      for (const s of fillers) s.destroy();
      child.kill('SIGKILL');
    },
  };
}

/** A TCP server that accepts and reads but never answers: no status line, no headers. */
export async function muteServer(): Promise<{ port: number; accepted: number; closedByPeer: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { accepted: 0, closedByPeer: 0 };
  let closing = false;
  const server = createServer((socket) => {
    state.accepted++;
    sockets.add(socket);
    socket.resume();
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      if (!closing) state.closedByPeer++;
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    get accepted() {
      return state.accepted;
    },
    get closedByPeer() {
      return state.closedByPeer;
    },
    close() {
      closing = true;
      for (const s of sockets) s.destroy();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
