import type { GatewayError } from '../errors/gateway-error.ts';
import type { Attempt } from '../accounting/attempt.ts';
import type { Candidate } from './plan.ts';

/** Follows each attempt as it goes: the request's trace (telemetry/request-trace.ts) when tracing is on. */
export interface AttemptWatcher {
  /** An attempt starts; returns the headers its upstream request carries (W3C `traceparent`). */
  began(candidate: Candidate): Record<string, string>;
  /** The attempt answered (its first output) or failed, as the ledger keeps it. */
  settled(attempt: Attempt): void;
}

/** The attempts of one request, in order; written with its ledger record. */
export class AttemptLog {
  readonly attempts: Attempt[] = [];
  /** How many targets the request could have tried (set once routing planned it). */
  candidates = 0;
  private readonly watcher: AttemptWatcher | undefined;

  constructor(watcher?: AttemptWatcher) {
    this.watcher = watcher;
  }

  /** An attempt starts: the headers for its upstream request, when a watcher traces it. */
  began(candidate: Candidate): Record<string, string> | undefined {
    return this.watcher?.began(candidate);
  }

  /**
   * What the ledger keeps: every attempt when routing had a choice (a route, or the request's own
   * `models`); null for a request with one target, whose record already says everything.
   */
  forRecord(): Attempt[] | null {
    return this.candidates > 1 && this.attempts.length > 0 ? this.attempts : null;
  }

  succeeded(candidate: Candidate, latencyMs: number): void {
    const { provider, model } = candidate.target;
    this.push({ provider, model, status: 200, errorCode: null, fallbackReason: null, latencyMs });
  }

  failed(candidate: Candidate, error: GatewayError, acknowledged: boolean, reason: string | null, latencyMs: number): void {
    const { provider, model } = candidate.target;
    const status = error.upstreamStatus ?? (acknowledged ? 200 : null);
    this.push({ provider, model, status, errorCode: error.code, fallbackReason: reason, latencyMs });
  }

  private push(attempt: Attempt): void {
    this.attempts.push(attempt);
    this.watcher?.settled(attempt);
  }
}
