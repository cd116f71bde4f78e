import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { rejectedRecord } from '../../accounting/accountant.ts';
import type { LedgerRecord } from '../../accounting/ledger-record.ts';
import type { Admission, Caller } from '../../admission/admission.ts';
import { errors } from '../../errors/catalog.ts';
import { type GatewayError, toGatewayError } from '../../errors/gateway-error.ts';
import { logInternalError } from '../../errors/log-internal-error.ts';
import type { PipelineContext } from '../../pipeline/context.ts';
import { refuseUpgrade } from '../../protocol/http/refuse-upgrade.ts';
import type { RealtimeConnection } from '../../providers/types.ts';
import type { ResolvedModel } from '../../providers/registry.ts';
import { chooseProtocol, keyFromProtocols, upstreamProtocols } from './client-key.ts';
import { RelaySession } from './relay-session.ts';
import { writeRow } from '../../pipeline/write-row.ts';

/** One `GET /v1/realtime` upgrade, as the server hands it over. */
export interface RealtimeUpgrade {
  req: IncomingMessage;
  socket: Duplex;
  head: Buffer;
  requestId: string;
  /** The `model` of the query (on a project's endpoint, the endpoint's model when absent). */
  model: string | undefined;
  ctx: PipelineContext;
  /** Accepts the client's handshake (realtimeServer). */
  server: WebSocketServer;
  /** Told each session that opened (the gateway ends them at shutdown). */
  opened: (session: RelaySession) => void;
}

/** The WebSocket server the upgrades are accepted with: no listening socket of its own, no compression. */
export function realtimeServer(): WebSocketServer {
  return new WebSocketServer({ noServer: true, perMessageDeflate: false, handleProtocols: chooseProtocol });
}

/**
 * A Realtime session's opening, the lifecycle of a model request up to its run: the key is
 * checked, the model resolved to its target, the request admitted (limits, budgets, a
 * concurrency slot held for the whole session), the upstream's socket opened with the provider's
 * key; only then is the client's handshake accepted. Any refusal before that is an HTTP error on
 * the socket (OpenAI's error JSON) and no WebSocket opens; once the caller is known it is a ledger
 * row, as every refused request's is.
 */
export async function openRealtimeSession(upgrade: RealtimeUpgrade): Promise<void> {
  const { req, socket, requestId, ctx } = upgrade;
  const startedAt = Date.now();
  let caller: Caller | undefined;
  let target: ResolvedModel | undefined;
  let admission: Admission | undefined;
  let upstreamStatus: number | null = null;
  try {
    keyFromProtocols(req);
    caller = await ctx.authenticate(req);
    const model = upgrade.model;
    if (!model) throw errors.invalidRequest('The query parameter `model` is required: /v1/realtime?model=<model>.', 'model');
    // No fallback: a session's state lives upstream, so it goes to the first target routing gives.
    target = ctx.router.order(ctx.router.plan(model))[0].target;
    const api = target.adapter.realtime;
    if (!api) {
      throw errors.invalidRequest(
        `${target.provider}/${target.model} does not offer the Realtime API: a session goes to an OpenAI-compatible or Azure OpenAI provider only.`,
        'model',
      );
    }
    admission = await ctx.admit({
      requestId,
      caller,
      surface: 'realtime',
      target,
      request: { model, messages: [] },
      inputTokens: 0,
      streamed: true,
    });
    const upstream = await connect(await api.connection(target.model), req, ctx, target.provider, (status) => {
      upstreamStatus = status;
    });
    const deps = { requestId, caller, target, admission, accounting: ctx.accounting, observe: ctx.observe, startedAt };
    const refusal = accept(upgrade, (client) => upgrade.opened(new RelaySession(client, upstream, deps)));
    if (refusal) {
      upstream.on('error', () => {});
      upstream.terminate();
      throw refusal;
    }
  } catch (err) {
    const error = toGatewayError(err);
    if (error.code === 'internal_error') logInternalError(ctx.accounting.log, requestId, err);
    refuseUpgrade(socket, error, requestId);
    recordRefusal(ctx, { requestId, caller, target, admission, upstreamStatus, startedAt, model: upgrade.model ?? '' }, error);
  }
}

/**
 * Accepts the client's handshake, or returns why it cannot be: the client left meanwhile, or its
 * handshake is not a valid WebSocket one (ws's check, which would otherwise answer by itself and
 * leave the upstream open). ws completes the handshake synchronously (no verifyClient), so the
 * listeners below are this upgrade's own.
 */
function accept(upgrade: RealtimeUpgrade, opened: (client: WebSocket) => void): GatewayError | undefined {
  const { server, req, socket, requestId } = upgrade;
  if (socket.destroyed) return errors.cancelled('The client left before the Realtime session opened.');
  let invalid: Error | undefined;
  let accepted = false;
  const onInvalid = (err: Error) => (invalid = err);
  // The handshake's answer names the session's ledger row, as every response's X-Request-ID does.
  const onHeaders = (headers: string[]) => headers.push(`X-Request-ID: ${requestId}`);
  server.once('wsClientError', onInvalid);
  server.once('headers', onHeaders);
  try {
    server.handleUpgrade(req, socket, upgrade.head, (client) => {
      accepted = true;
      opened(client);
    });
  } finally {
    server.off('wsClientError', onInvalid);
    server.off('headers', onHeaders);
  }
  if (accepted) return undefined;
  return errors.invalidRequest(`The WebSocket handshake was refused: ${invalid?.message ?? 'not a valid upgrade'}.`);
}

/**
 * The upstream's socket, open: the provider's URL and key, the client's `OpenAI-Beta` header and
 * subprotocols (never its key), within upstream.connect_timeout_s. A refused handshake is a 502
 * naming the upstream's status. Resolves paused: the session resumes it once it listens.
 */
function connect(
  connection: RealtimeConnection,
  req: IncomingMessage,
  ctx: PipelineContext,
  provider: string,
  onStatus: (status: number) => void,
): Promise<WebSocket> {
  const beta = req.headers['openai-beta'];
  const headers = typeof beta === 'string' ? { ...connection.headers, 'openai-beta': beta } : connection.headers;
  const upstream = new WebSocket(connection.url, upstreamProtocols(req), {
    headers,
    perMessageDeflate: false,
    handshakeTimeout: ctx.config.upstream.connect_timeout_s * 1000,
    followRedirects: false,
  });
  return new Promise((resolve, reject) => {
    upstream.once('upgrade', (res) => onStatus(res.statusCode ?? 101));
    upstream.once('unexpected-response', (_, res) => {
      onStatus(res.statusCode ?? 0);
      res.resume();
      upstream.terminate();
      reject(errors.connection(provider, `the Realtime handshake was answered ${res.statusCode}`));
    });
    upstream.once('error', (err) => reject(errors.connection(provider, err.message, err)));
    upstream.once('open', () => {
      // Held until the session listens: the upstream's first event (session.created) may have come
      // with the handshake, and would be emitted before the promise's continuation runs.
      upstream.pause();
      upstream.removeAllListeners('error');
      resolve(upstream);
    });
  });
}

interface Refused {
  requestId: string;
  caller: Caller | undefined;
  target: ResolvedModel | undefined;
  admission: Admission | undefined;
  upstreamStatus: number | null;
  startedAt: number;
  model: string;
}

/**
 * A refused session's trace: counted when the caller was not known (anyone can send these), else
 * a ledger row with the target it would have gone to, its admission settled.
 */
function recordRefusal(ctx: PipelineContext, refused: Refused, error: GatewayError): void {
  const { caller, target } = refused;
  if (!caller) {
    ctx.accounting.rejections?.count('realtime', error.code);
    return;
  }
  let record: LedgerRecord = rejectedRecord(refused.requestId, error, 'realtime', refused.model, refused.startedAt, caller);
  if (target) record = { ...record, provider: target.provider, model: target.model, upstreamStatus: refused.upstreamStatus };
  writeRow(ctx, refused.admission, record);
}
