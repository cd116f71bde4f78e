import type { RawData, WebSocket } from 'ws';
import type { LedgerRecord } from '../../accounting/ledger-record.ts';
import { roundUsd } from '../../accounting/pricing.ts';
import type { Admission, Caller } from '../../admission/admission.ts';
import { errors } from '../../errors/catalog.ts';
import type { GatewayError } from '../../errors/gateway-error.ts';
import type { AccountingDeps } from '../../pipeline/request-accounting.ts';
import type { ResolvedModel } from '../../providers/registry.ts';
import { type ClosedBy, isNormalClose, sessionRecord } from './session-record.ts';
import { writeRow } from '../../pipeline/write-row.ts';
import { addResponse, NO_SESSION_USAGE, responseCreateId, responseDoneUsage, type SessionUsage } from './session-usage.ts';

/** What a session needs beside its two sockets. */
export interface SessionDeps {
  requestId: string;
  caller: Caller;
  target: ResolvedModel;
  admission: Admission;
  accounting: AccountingDeps;
  /** Metrics and the request's log line, told the session's row. */
  observe?: (record: LedgerRecord) => void;
  startedAt: number;
}

/**
 * Past this many bytes queued towards one side, sluice stops reading the other: a client that
 * does not read stops the upstream's audio from piling up in sluice's memory, and the other way round.
 */
const HIGH_WATER_BYTES = 4 * 1024 * 1024;
/** How long a side may take to finish its closing handshake before its socket is cut. */
const CLOSE_GRACE_MS = 2_000;

/**
 * One Realtime session: the client's socket and the upstream's, their frames passed on unchanged
 * both ways (text as text, binary as binary). Each `response.done` of the upstream is priced as it
 * passes and asked of the budget; once the budget cannot pay for more, the client's next
 * `response.create` is answered with an `insufficient_quota` error event instead of forwarded.
 * When either side closes (or sluice shuts down) the other is closed too, and the session's one
 * ledger row is written and its admission settled.
 */
export class RelaySession {
  /** Settles once the session's row is written. */
  readonly ended: Promise<void>;
  private readonly deps: SessionDeps;
  private readonly client: WebSocket;
  private readonly upstream: WebSocket;
  private usage: SessionUsage = NO_SESSION_USAGE;
  private costUsd = 0;
  private priceKnown = true;
  /** The budget cannot pay for another response. */
  private exhausted = false;
  private closedBy: ClosedBy | undefined;
  private error: GatewayError | undefined;
  private markEnded!: () => void;

  constructor(client: WebSocket, upstream: WebSocket, deps: SessionDeps) {
    this.client = client;
    this.upstream = upstream;
    this.deps = deps;
    this.ended = new Promise((resolve) => (this.markEnded = resolve));
    relay(client, upstream, (frame) => this.fromClient(frame));
    relay(upstream, client, (frame) => this.fromUpstream(frame));
    client.on('close', (code, reason) => this.close('client', code, reason));
    upstream.on('close', (code, reason) => this.close('upstream', code, reason));
    client.on('error', (err) => this.fail('client', err));
    upstream.on('error', (err) => this.fail('upstream', err));
    // Opened paused (open-session.ts): its first events are read now that they have a listener.
    upstream.resume();
  }

  /** sluice is stopping: both sides are told so (1001) and the row is written now. */
  shutdown(): void {
    if (this.closedBy) return;
    this.error = errors.shuttingDown();
    this.end('shutdown', 1001, Buffer.from('sluice is shutting down'));
  }

  /** A client text frame: forwarded, unless it asks for a response the budget cannot pay. */
  private fromClient(frame: Buffer): boolean {
    if (!this.exhausted) return true;
    const eventId = responseCreateId(frame);
    if (eventId === undefined) return true;
    const error = {
      type: 'insufficient_quota',
      code: 'insufficient_quota',
      message: 'The budget of this key or project is spent: no further response is created in this session.',
      param: null,
      event_id: eventId,
    };
    this.client.send(JSON.stringify({ type: 'error', event_id: `event_${this.deps.requestId}`, error }));
    return false;
  }

  /** An upstream text frame: always forwarded; a `response.done` is priced and charged. */
  private fromUpstream(frame: Buffer): boolean {
    const usage = responseDoneUsage(frame);
    if (!usage) return true;
    const { pricing } = this.deps.accounting;
    const { provider, model } = this.deps.target;
    const cost = pricing.cost(provider, model, usage);
    this.usage = addResponse(this.usage, usage);
    this.costUsd = roundUsd(this.costUsd + cost.costUsd);
    this.priceKnown &&= cost.priceKnown;
    const verdict = this.deps.admission.watchCost?.(this.costUsd);
    if (verdict === true) this.exhausted = true;
    else if (verdict)
      verdict.then(
        (spent) => (this.exhausted ||= spent),
        () => {},
      );
    return true;
  }

  private close(side: 'client' | 'upstream', code: number, reason: Buffer): void {
    if (this.closedBy) return;
    if (side === 'upstream' && !isNormalClose(code)) {
      const why = reason.length > 0 ? `: ${reason.toString('utf8')}` : '';
      this.error = errors.connection(this.deps.target.provider, `the Realtime socket closed with code ${code}${why}`);
    }
    this.end(side, code, reason);
  }

  private fail(side: 'client' | 'upstream', err: Error): void {
    if (this.closedBy) return;
    if (side === 'upstream') this.error = errors.connection(this.deps.target.provider, err.message, err);
    this.end(side, 1011, Buffer.alloc(0));
  }

  /** Closes both sides (the one that closed already is left as it is) and writes the row once. */
  private end(by: ClosedBy, code: number, reason: Buffer): void {
    this.closedBy = by;
    const sent = sendableCode(code);
    for (const socket of [this.client, this.upstream]) {
      if (socket.readyState === socket.CLOSED) continue;
      socket.close(sent, reason.subarray(0, 123));
      setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
    }
    this.record(by);
  }

  private record(by: ClosedBy): void {
    const { deps } = this;
    const record = sessionRecord({
      requestId: deps.requestId,
      caller: deps.caller,
      provider: deps.target.provider,
      model: deps.target.model,
      requestedModel: deps.target.requested,
      startedAt: deps.startedAt,
      endedAt: Date.now(),
      usage: this.usage,
      costUsd: this.costUsd,
      priceKnown: this.priceKnown,
      upstreamStatus: 101,
      closedBy: by,
      error: this.error,
    });
    try {
      writeRow(deps, deps.admission, record);
    } finally {
      this.markEnded();
    }
  }
}

/**
 * Frames from `from` to `to` as they came, text or binary; `keep` sees each text frame and may
 * hold it back. Reading `from` pauses while `to` has HIGH_WATER_BYTES queued, and resumes once
 * the frame that passed the mark has been written out.
 */
function relay(from: WebSocket, to: WebSocket, keep: (frame: Buffer) => boolean): void {
  from.on('message', (data, isBinary) => {
    const frame = asBuffer(data);
    if (!isBinary && !keep(frame)) return;
    if (to.readyState !== to.OPEN) return;
    to.send(frame, { binary: isBinary }, () => {
      if (from.isPaused && to.bufferedAmount < HIGH_WATER_BYTES) from.resume();
    });
    if (to.bufferedAmount >= HIGH_WATER_BYTES) from.pause();
  });
}

/** ws hands a message as one Buffer (its default binaryType), or its fragments. */
function asBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/**
 * The close code to pass on to the other side: the one received, unless it may not be sent
 * (1005 no code, 1006 abnormal, 1015 TLS: the protocol reserves them), then 1000 or 1011.
 */
function sendableCode(code: number): number {
  if ((code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999))
    return code;
  return code === 1005 ? 1000 : 1011;
}
