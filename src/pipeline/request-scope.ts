import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { errors } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';

export interface RequestScopeOptions {
  /** Total request deadline, `timeout_error`. 0 disables. */
  deadlineMs: number;
  /** The deadline's error when the caller's tier set it (it names the tier); else errors.deadline. */
  deadlineError?: () => GatewayError;
  /** The tier's stream idle timeout, in place of the surface's (ms; 0: none). */
  idleTimeoutMs?: number;
  /** The budget's check on a running stream (Admission.watch). */
  watch?: (outputBytes: number) => boolean | Promise<boolean>;
  /**
   * A client that leaves: `cancel` (default) aborts the upstream at once; `drain` lets the stream
   * read the upstream to its end (within the deadline) so that its usage is exact.
   */
  onDisconnect?: 'cancel' | 'drain';
  /**
   * `cancel` on a resumable stream (stream.resume.grace_s): the upstream is aborted this long after
   * the client left instead of at once, so that the stream goes on, recorded, for the client to
   * resume (docs/streams/resume.md). 0 or absent: at once.
   */
  disconnectGraceMs?: number;
  /** Every open scope, so that a shutdown can end them after the drain time. */
  scopes: Set<RequestScope>;
  /** The response is a stream (the open-streams gauge counts these). */
  streamed?: boolean;
  /** What a provider's key pool sticks a request to its key by (prompt_cache_key, user, x-sluice-session). */
  affinity?: string;
}

/**
 * What one model request owns while it runs, streamed or not: the abort signal that reaches the
 * upstream call, the deadline, and the client's disconnect (which aborts the upstream at once, so
 * a client that leaves stops the spending, unless the policy is `drain`). The reason of the abort
 * is the request's failure.
 */
export class RequestScope {
  readonly signal: AbortSignal;
  readonly idleTimeoutMs: number | undefined;
  readonly watch: ((outputBytes: number) => boolean | Promise<boolean>) | undefined;
  readonly streamed: boolean;
  /** The upstream's own request id (x-request-id, request-id, x-amzn-requestid), for support tickets. */
  upstreamRequestId: string | undefined;
  /** prompt_cache_key, user or x-sluice-session: the same one goes out with the same provider key. */
  readonly affinity: string | undefined;
  /** The provider key (a key pool's label) the last try went out with, and its provider; the ledger keeps it. */
  providerKey: { provider: string; label: string } | undefined;
  /**
   * `drain` only: the client closed the connection before its response ended. Nothing was aborted;
   * the stream reads on to the upstream's end, and this is the request's failure.
   */
  clientLeft: GatewayError | null = null;
  private readonly drains: boolean;
  private readonly graceMs: number;
  private graceTimer: NodeJS.Timeout | undefined;
  private readonly controller = new AbortController();
  private readonly res: ServerResponse;
  private readonly scopes: Set<RequestScope>;
  private readonly deadlineTimer: NodeJS.Timeout | undefined;

  constructor(res: ServerResponse, options: RequestScopeOptions) {
    this.res = res;
    this.scopes = options.scopes;
    this.signal = this.controller.signal;
    this.idleTimeoutMs = options.idleTimeoutMs;
    this.watch = options.watch;
    this.streamed = options.streamed ?? false;
    this.affinity = options.affinity;
    this.drains = options.onDisconnect === 'drain';
    this.graceMs = options.disconnectGraceMs ?? 0;
    if (options.deadlineMs > 0) {
      const deadlineError = options.deadlineError ?? (() => errors.deadline(options.deadlineMs / 1000));
      this.deadlineTimer = setTimeout(() => this.abort(deadlineError()), options.deadlineMs);
    }
    res.on('close', this.onClose);
    this.scopes.add(this);
  }

  abort(reason: GatewayError): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** Ends the scope's life: no timer and no registration left behind. */
  dispose(): void {
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.graceTimer);
    this.res.off('close', this.onClose);
    this.scopes.delete(this);
  }

  /**
   * The upstream answered (any status): its request id is kept for the ledger and, while no byte
   * has been sent, given to the client as `x-upstream-request-id`. OpenRouter's generation id
   * comes first: it is what its generation record is looked up by (a reconciliation joins on it).
   */
  readonly upstreamResponded = (headers: IncomingHttpHeaders): void => {
    const id = headers['x-generation-id'] ?? headers['x-request-id'] ?? headers['request-id'] ?? headers['x-amzn-requestid'];
    // Only what is safe to echo in a header and store: visible ASCII, bounded.
    if (typeof id !== 'string' || !/^[\x21-\x7e]{1,256}$/.test(id)) return;
    this.upstreamRequestId = id;
    if (!this.res.headersSent) this.res.setHeader('x-upstream-request-id', id);
  };

  readonly providerKeyChosen = (provider: string, label: string): void => {
    this.providerKey = { provider, label };
  };

  private onClose = (): void => {
    if (this.res.writableFinished) return;
    const left = errors.cancelled('The client closed the connection.');
    if (!this.drains) {
      if (this.graceMs > 0) this.graceTimer ??= setTimeout(() => this.abort(left), this.graceMs);
      else this.abort(left);
    }
    // A response sluice had already ended (its last bytes still in flight) was not left.
    else if (!this.res.writableEnded) this.clientLeft ??= left;
  };
}
