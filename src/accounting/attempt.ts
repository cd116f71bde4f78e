/** One target tried for a request, as the ledger keeps it (GET /v1/requests/{id}: `attempts`). */
export interface Attempt {
  provider: string;
  model: string;
  /** The upstream's HTTP status (200 for a stream that failed inside), null when it was never reached. */
  status: number | null;
  /** sluice's error code; null for the attempt that answered. */
  errorCode: string | null;
  /** Why the next target was tried (errors/fallback-policy.ts, `ttft_timeout`); null when none was. */
  fallbackReason: string | null;
  /** From the attempt's start to its first output, or to its failure. */
  latencyMs: number;
}
