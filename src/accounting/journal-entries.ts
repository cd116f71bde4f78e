import type { Usage } from '../protocol/canonical/usage.ts';
import type { LedgerRecord } from './ledger-record.ts';

/**
 * What the durable ledger journal knows of a request that is still running (store/ledger-journal.ts):
 * its admission, then its progress. A request whose record never followed (a crash, a kill, an
 * out-of-memory end) is recorded at the next start from these, as outcome `interrupted`
 * (interrupted-record.ts), and what it held in the limits and budgets is settled.
 */

/** One budget window a request reserved in: the shape of governance's BudgetWindow. */
export interface HeldWindow {
  id: string;
  subject: string;
  period: 'day' | 'month';
  start: number;
  end: number;
  limitNanos: number;
}

/** What an admitted request holds in the limits and budgets until it settles (governance/admit.ts). */
export interface RequestHolds {
  /** The budget windows it reserved in, and the amount (nano-dollars) granted at admission. */
  budget?: { windows: HeldWindow[]; reservedNanos: number };
  /** The concurrency slots it took (per subject). */
  slots?: { subject: string; limit: number }[];
  /** The prompt's estimated tokens, when the admission computed them (for the token buckets). */
  promptTokens?: number;
}

/** A request as it was admitted: its identity, and what it holds. */
export interface AdmittedRequest {
  requestId: string;
  createdAt: number;
  keyId: string | null;
  projectId: string | null;
  provider: string;
  model: string;
  requestedModel: string;
  surface: LedgerRecord['surface'];
  streamed: boolean;
  /** The prompt's estimated tokens (count-tokens.ts estimatePromptTokens). */
  promptTokens: number;
  holds?: RequestHolds;
  /** The request's tags (pipeline/request-tags.ts), so that its interrupted row keeps them. */
  tags?: string[];
}

/** How far a running request got, as last journaled. */
export interface RequestProgress {
  requestId: string;
  /** When this was read (epoch ms): the request was still running then. */
  at: number;
  /** The target it is on now (routing may have moved it before any output). */
  provider: string;
  model: string;
  /** The upstream answered 2xx. */
  acknowledged: boolean;
  firstOutputAt: number | null;
  /** The output's tokens so far: counted where the counter got to, estimated for the rest. */
  outputTokens: number;
  /** The usage the upstream reported so far (it may still have grown), or null. */
  reported: Usage | null;
}

/** A request the journal saw admitted and never saw end. */
export interface UnfinishedRequest {
  admitted: AdmittedRequest;
  progress?: RequestProgress;
}
