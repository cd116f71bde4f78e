import type { ServerResponse } from 'node:http';
import { errors } from '../errors/catalog.ts';
import type { GatewayError } from '../errors/gateway-error.ts';

export interface RequestScopeOptions {
  /** Total request deadline, `timeout_error`. 0 disables. */
  deadlineMs: number;
  /** Every open scope, so that a shutdown can end them after the drain time. */
  scopes: Set<RequestScope>;
}

/**
 * What one model request owns while it runs, streamed or not: the abort signal that reaches the
 * upstream call, the deadline, and the client's disconnect (which aborts the upstream at once, so
 * a client that leaves stops the spending). The reason of the abort is the request's failure.
 */
export class RequestScope {
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private readonly res: ServerResponse;
  private readonly scopes: Set<RequestScope>;
  private readonly deadlineTimer: NodeJS.Timeout | undefined;

  constructor(res: ServerResponse, options: RequestScopeOptions) {
    this.res = res;
    this.scopes = options.scopes;
    this.signal = this.controller.signal;
    if (options.deadlineMs > 0) {
      this.deadlineTimer = setTimeout(() => this.abort(errors.deadline(options.deadlineMs / 1000)), options.deadlineMs);
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
    this.res.off('close', this.onClose);
    this.scopes.delete(this);
  }

  private onClose = (): void => {
    if (!this.res.writableFinished) this.abort(errors.cancelled('The client closed the connection.'));
  };
}
