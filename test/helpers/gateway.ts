import { after, before } from 'node:test';
import OpenAI from 'openai';
import { configSchema } from '../../src/config/schema.ts';
import { createGateway, type Gateway } from '../../src/server/app.ts';
import { type FakeUpstream, startFakeUpstream } from './fake-upstream.ts';
import { tapStreams } from './stream-tap.ts';

export interface TestGateway {
  url: string;
  gateway: Gateway;
  /** The official SDK pointed at sluice, retries off so errors surface at once. */
  client: OpenAI;
  /** What the gateway logged, one JSON line each (errors are printed to stderr as well). */
  logs: string[];
  close(): Promise<void>;
}

/** An in-process gateway on an ephemeral loopback port. `config` is the YAML config as an object. */
export async function startGateway(config: Record<string, unknown> = {}, env: NodeJS.ProcessEnv = {}): Promise<TestGateway> {
  const parsed = configSchema.parse({
    ...config,
    server: { port: 0, host: '127.0.0.1', ...(config.server as object) },
    // A throwaway embedded ledger per gateway unless the test names a store.
    store: { path: ':memory:', ...(config.store as object) },
    // The batch settlement poller is off unless the test sets its interval.
    batches: { poll_interval_s: 0, ...(config.batches as object) },
  });
  const logs: string[] = [];
  const gateway = createGateway(parsed, env, undefined, {
    write(line: string) {
      logs.push(line);
      if (/"level":(50|60)/.test(line)) process.stderr.write(line);
    },
  });
  // Every stream this gateway sends is checked against the stream contract (stream-tap.ts).
  tapStreams(gateway.server);
  const address = await gateway.listen();
  const url = `http://127.0.0.1:${address.port}`;
  const apiKey = parsed.auth.master_key ?? 'unused';
  return {
    url,
    gateway,
    logs,
    client: new OpenAI({ baseURL: `${url}/v1`, apiKey, maxRetries: 0, timeout: 20_000 }),
    close: () => gateway.shutdown(0),
  };
}

/** A gateway with one OpenAI-compatible provider `up` pointing at a fake upstream. */
export function upstreamConfig(baseUrl: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { providers: { up: { base_url: `${baseUrl}/v1`, api_key: 'sk-upstream', ...extra } } };
}

/** Raw SSE read with fetch: the exact bytes a client receives. */
export async function rawStream(url: string, body: unknown, headers: Record<string, string> = {}, path = '/v1/chat/completions') {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Parses an SSE body into frames (comments kept separately), for byte-level assertions. */
export function parseSse(text: string): { frames: { event?: string; data: string }[]; comments: string[] } {
  const frames: { event?: string; data: string }[] = [];
  const comments: string[] = [];
  for (const block of text.split('\n\n')) {
    if (!block) continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments.push(line.slice(1).trim());
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length > 0) frames.push(event ? { event, data: data.join('\n') } : { data: data.join('\n') });
  }
  return { frames, comments };
}

/**
 * GET /v1/requests/{id}: the ledger record of a request. One lookup, no retry: the request log
 * reads its writes (a record still being written is waited for by the server), so every suite
 * that calls this checks that guarantee too.
 */
export async function requestRecord(gw: TestGateway, requestId: string): Promise<Record<string, any>> {
  const res = await fetch(`${gw.url}/v1/requests/${requestId}`);
  if (res.status !== 200) throw new Error(`no ledger record for ${requestId}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, any>;
}

/**
 * The usual suite setup: a fake upstream and a gateway whose provider `up` points at it, started
 * in `before` and closed in `after`. The two handles can be destructured at once: they forward to
 * the real objects once the suite has started (using one before that throws, naming it).
 */
export function useUpstreamGateway(
  setup: (upstreamUrl: string) => { config?: Record<string, unknown>; env?: NodeJS.ProcessEnv } = (url) => ({ config: upstreamConfig(url) }),
): { upstream: FakeUpstream; gw: TestGateway } {
  let upstream: FakeUpstream | undefined;
  let gw: TestGateway | undefined;
  before(async () => {
    upstream = await startFakeUpstream();
    const { config, env } = setup(upstream.url);
    gw = await startGateway(config, env);
  });
  after(async () => {
    await gw?.close();
    await upstream?.close();
  });
  return { upstream: lateBound(() => upstream, 'the fake upstream'), gw: lateBound(() => gw, 'the gateway') };
}

function lateBound<T extends object>(current: () => T | undefined, name: string): T {
  const target = (): T => {
    const value = current();
    if (!value) throw new Error(`${name} is used before the suite started it`);
    return value;
  };
  return new Proxy({} as T, {
    get(_, key) {
      const value = target();
      const field = Reflect.get(value, key, value) as unknown;
      return typeof field === 'function' ? (field as (...args: unknown[]) => unknown).bind(value) : field;
    },
    set: (_, key, field) => Reflect.set(target(), key, field),
  });
}
