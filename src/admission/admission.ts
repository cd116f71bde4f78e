import type { IncomingMessage } from 'node:http';
import type { RequestHolds } from '../accounting/journal-entries.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { MediaUnits } from '../protocol/canonical/usage.ts';
import type { ResolvedModel } from '../providers/registry.ts';

/** Who is calling, as authentication established it. */
export interface Caller {
  /** Gateway-issued key id; null for the master key or a gateway without keys. */
  keyId: string | null;
  /** The project the key belongs to; null for the master key. */
  projectId: string | null;
  /** The tier (config `tiers`) whose limits apply; null: none. */
  tier: string | null;
  /** Models the key may call (as the client names them); null: any. */
  allowedModels: readonly string[] | null;
  /** May call the admin API. */
  admin: boolean;
  /** USD budgets of the key and of its project (governance fills them; none for the master key). */
  budgets: readonly Budget[];
  /** A person signed in to the console through SSO (absent for keys): their role and projects. */
  user?: UserAccess;
}

/**
 * A console user's role (docs/governance/users.md): `owner` may do everything (users too),
 * `admin` projects, keys and endpoints, `viewer` reads everything, `member` reads and manages
 * the keys of its projects only.
 */
export type Role = 'owner' | 'admin' | 'viewer' | 'member';

export interface UserAccess {
  userId: string;
  role: Role;
  /** A member's projects (empty for the other roles, which reach every project). */
  projects: readonly string[];
}

/** A spending limit in USD over a calendar period (UTC). */
export interface Budget {
  scope: 'key' | 'project';
  period: 'day' | 'month';
  limitUsd: number;
}

/** The master key, or anyone when no key is configured (loopback only). */
export const MASTER: Caller = Object.freeze({
  keyId: null,
  projectId: null,
  tier: null,
  allowedModels: null,
  admin: true,
  budgets: [],
});

/**
 * Establishes the caller from the request's credentials, or throws a 401. May be async: a
 * gateway-issued key is looked up in the store (and cached).
 */
export type Authenticate = (req: IncomingMessage) => Caller | Promise<Caller>;

/** What a request is charged as: a model's target, or an MCP tool (provider `mcp`, model `server/tool`). */
export type AdmissionTarget = Pick<ResolvedModel, 'provider' | 'model' | 'requested'>;

export interface AdmissionRequest {
  requestId: string;
  caller: Caller;
  surface: LedgerRecord['surface'];
  target: AdmissionTarget;
  request: CanonicalRequest;
  /** The input's estimated tokens when it is not `request`'s chat prompt (embeddings). */
  inputTokens?: number;
  /** The media units the request will be billed for, as far as its body tells (images asked for, characters to speak). */
  units?: MediaUnits;
  streamed: boolean;
  /**
   * Answered from the response cache: charged to the per-minute request limits and the in-flight
   * slots, not to the token limits nor the budgets (it costs nothing upstream).
   */
  cached?: boolean;
  /**
   * A dry run: the admission is read, never taken (nothing charged, reserved or held); a refusal
   * is thrown as for any request, else the admission carries the `preview`.
   */
  dryRun?: boolean;
}

/** A request let in; told once how it ended (the place to settle reservations and release slots). */
export interface Admission {
  /** Headers every response to this request carries (x-ratelimit-*, RateLimit...), set before any byte. */
  headers?: Record<string, string>;
  /** The caller's tier's deadline, in place of the surface's (ms; 0: none), and its error (naming the tier). */
  deadline?: { ms: number; error: () => GatewayError };
  /** The tier's stream idle timeout, in place of stream.idle_timeout_s (ms; 0: none). */
  idleTimeoutMs?: number;
  /** The tier's disconnect policy for a stream, in place of stream.on_disconnect. */
  onDisconnect?: 'cancel' | 'drain';
  /** The accounting profile's `rate_limit_warning`: the caller is within 10% of a per-minute limit. */
  warning?: RateLimitWarning;
  /**
   * Asked once per upstream read of a stream with the output so far (UTF-8 bytes): true ends the
   * stream cleanly (finish_reason `length`, usage, `[DONE]`) because its budget is spent.
   * Synchronous but for the rare read that must wait for a reservation to grow.
   */
  watch?: (outputBytes: number) => boolean | Promise<boolean>;
  /**
   * A Realtime session's: asked after each priced response with the session's cost so far (USD);
   * true when its budget cannot pay for more (the session's next response is refused).
   */
  watchCost?: (costUsd: number) => boolean | Promise<boolean>;
  /**
   * A non-streamed request's output limit (max_completion_tokens, max_output_tokens) lowered to
   * what its budget reservation pays for: an answer that cannot be cut must fit the budget.
   */
  maxOutputTokens?: number;
  /**
   * What the request took in the limits and budgets (slots, a budget reservation), for the
   * durable journal: a crash's next start settles them from there (LimitsAndBudgets.settleInterrupted).
   */
  holds?: RequestHolds;
  /**
   * Called once with the request's final record; returns the record to write instead when the
   * admission amends it (a voided abandoned stream costs 0, a budget stop is named).
   */
  settle(record: LedgerRecord): LedgerRecord | void;
  /** A dry run's: every limit and budget with what the request would leave of it. */
  preview?: AdmissionPreview;
}

/** One per-minute or in-flight limit as a dry run reports it: where it stands, and what this request would leave of it. */
export interface PreviewLimit {
  scope: 'key' | 'project';
  kind: 'requests' | 'tokens' | 'concurrent';
  limit: number;
  remaining: number;
  /** `remaining` less what the request would take (a request, its prompt's tokens, a slot); below 0: refused. */
  remainingAfter: number;
  /** Until the bucket is full again (ms; 0 for concurrent). */
  resetMs: number;
}

/** One budget window as a dry run reports it: its spend, the request's reservation, and what would remain. */
export interface PreviewBudget {
  scope: 'key' | 'project';
  period: 'day' | 'month';
  limitUsd: number;
  spentUsd: number;
  /** What the request would reserve in this window (its prompt and output allowance, at the target's price). */
  reservationUsd: number;
  remainingAfterUsd: number;
  /** Epoch ms when the period ends. */
  resetsAt: number;
}

/**
 * The admit step's answer to a dry run (x-sluice-dry-run: docs/api/dry-run.md), charging nothing:
 * every limit and budget of the caller with what the request would leave of it.
 */
export interface AdmissionPreview {
  /** The caller's tier (else the default); null: none. */
  tier: string | null;
  /** The prompt's estimated tokens (0 when nothing was charged by tokens). */
  estimatedInputTokens: number;
  /** The largest reservation the request would hold in its budgets, in USD (0 without a budget). */
  reservationUsd: number;
  limits: PreviewLimit[];
  budgets: PreviewBudget[];
}

/** Where the caller stands against its tightest per-minute limit (README: rate_limit_warning). */
export interface RateLimitWarning {
  scope: 'key' | 'project';
  limitType: 'requests' | 'tokens';
  limit: number;
  remaining: number;
  resetMs: number;
}

/**
 * The admit step of the lifecycle: between resolving the target and calling it, every model
 * request of every surface passes here. Throws a GatewayError (429, 403, ...) to refuse.
 */
export type Admit = (request: AdmissionRequest) => Admission | Promise<Admission>;
