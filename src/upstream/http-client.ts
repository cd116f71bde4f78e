import type { IncomingHttpHeaders } from 'node:http';
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { UpstreamBody } from './upstream-body.ts';

export interface UpstreamRequest {
  url: string;
  method?: 'POST' | 'GET' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  /** Bytes sent as they came, in place of `body` (a file upload relayed to the Files API). */
  bytes?: Uint8Array;
}

/** A request whose body is bytes: a multipart upload relayed to an upstream's media endpoint. */
export interface UpstreamUpload extends Omit<UpstreamRequest, 'body'> {
  body: Uint8Array;
}

export interface UpstreamResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: UpstreamBody;
}

export interface UpstreamClientOptions {
  connectTimeoutMs: number;
  headersTimeoutMs: number;
}

/**
 * Upstream HTTP over undici's dispatch() on a keep-alive Agent (request() costs 45-80 us CPU per
 * streamed response here, fetch 270-325 us; dispatch skips request()'s Readable body as well).
 * Body timeouts are off: the stream session owns idle time.
 */
export class UpstreamClient {
  private readonly agent: Agent;
  private readonly targets = new Map<string, { origin: string; path: string }>();

  constructor(options: UpstreamClientOptions) {
    this.agent = new Agent({
      connect: { timeout: options.connectTimeoutMs },
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: 0,
      keepAliveTimeout: 30_000,
    });
  }

  send(provider: string, req: UpstreamRequest | UpstreamUpload, signal: AbortSignal): Promise<UpstreamResponse> {
    if (signal.aborted) return Promise.reject(upstreamFailure(provider, signal.reason, signal));
    const { origin, path } = this.target(req.url);
    const options = { origin, path, method: req.method ?? 'POST', headers: req.headers, body: req.bytes ?? req.body };
    return new Promise((resolve, reject) => this.agent.dispatch(options, responseHandler(provider, signal, resolve, reject)));
  }

  /** Upstream URLs repeat (one per provider and model): parse each once. */
  private target(url: string): { origin: string; path: string } {
    let t = this.targets.get(url);
    if (!t) {
      const parsed = new URL(url);
      t = { origin: parsed.origin, path: parsed.pathname + parsed.search };
      if (this.targets.size >= 1024) this.targets.clear();
      this.targets.set(url, t);
    }
    return t;
  }

  close(): Promise<void> {
    return this.agent.close();
  }
}

/**
 * The dispatch handler of one upstream request. A function of its own so that its closures, which
 * live as long as the response (a whole stream), hold none of the request: built inside send(),
 * they kept its body (the prompt, serialized) and headers alive until the stream ended.
 */
function responseHandler(
  provider: string,
  signal: AbortSignal,
  resolve: (response: UpstreamResponse) => void,
  reject: (err: GatewayError) => void,
): Dispatcher.DispatchHandler {
  let body: UpstreamBody | undefined;
  let controller: Dispatcher.DispatchController | undefined;
  const onAbort = () => controller?.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  const settle = () => signal.removeEventListener('abort', onAbort);
  return {
    onRequestStart(c) {
      controller = c;
      if (signal.aborted) c.abort(signal.reason);
    },
    onResponseStart(c, statusCode, headers) {
      // undici keeps the raw header Buffers on the controller for the response's life (~2 KiB
      // a stream, measured in the soak's heap); the parsed `headers` are all sluice reads.
      c.rawHeaders = null;
      body = new UpstreamBody(c);
      resolve({ statusCode, headers, body });
    },
    onResponseData(_c, chunk) {
      body?.push(chunk);
    },
    onResponseEnd() {
      settle();
      body?.end();
    },
    onResponseError(_c, err) {
      settle();
      const failure = upstreamFailure(provider, err, signal);
      if (body) body.fail(failure);
      else reject(failure);
    },
  };
}

/** Maps a thrown network error (or our own abort reason) to a GatewayError. */
export function upstreamFailure(provider: string, err: unknown, signal: AbortSignal): GatewayError {
  if (signal.aborted && signal.reason instanceof GatewayError) return signal.reason;
  if (err instanceof GatewayError) return err;
  if (err instanceof undiciErrors.HeadersTimeoutError) {
    return new GatewayError({
      code: 'upstream_timeout',
      status: 504,
      type: 'timeout_error',
      provider,
      message: `${provider} did not answer within the upstream headers timeout.`,
      retryable: true,
      fallbackable: true,
    });
  }
  if (err instanceof undiciErrors.ConnectTimeoutError) {
    return errors.connection(provider, 'connect timeout', err);
  }
  const detail = err instanceof Error ? `${err.message}${codeOf(err)}` : String(err);
  return errors.connection(provider, detail, err);
}

function codeOf(err: Error): string {
  const code = (err as { code?: string }).code ?? (err.cause as { code?: string } | undefined)?.code;
  return code ? ` (${code})` : '';
}
