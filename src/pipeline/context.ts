import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { ResponseCache } from '../cache/response-cache.ts';
import type { CacheConfig, Config } from '../config/schema.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { Router } from '../routing/router.ts';
import type { RelayedIdsStore } from '../store/relayed-ids-store.ts';
import type { BatchObjectsStore } from '../store/batch-objects-store.ts';
import type { ResponsesStore } from '../store/responses-store.ts';
import type { Tracing } from '../telemetry/traces.ts';
import type { Admit, Authenticate } from '../admission/admission.ts';
import type { BudgetWindow } from '../governance/budgets/budget-windows.ts';
import type { RequestScope } from './request-scope.ts';
import type { AccountingDeps } from './request-accounting.ts';

/** What every model request's lifecycle reads: built once at startup, no module-level state. */
export interface PipelineContext {
  config: Config;
  registry: ProviderRegistry;
  /** The resolve step: a model name (a route, an alias, provider/model, a bare id) to the targets to try. */
  router: Router;
  /** Open request scopes, so that a shutdown can end them after the drain time. */
  scopes: Set<RequestScope>;
  accounting: AccountingDeps;
  /** Responses created through sluice (GET /v1/responses/{id}, previous_response_id). */
  responsesStore: ResponsesStore | undefined;
  /** Whose project each id a relayed Responses API handed out is (a project's key names only its own). */
  relayedIds: RelayedIdsStore | undefined;
  /** Whose each file and batch relayed to a provider's Files and Batch APIs is, and their settlements. */
  batchObjects: BatchObjectsStore | undefined;
  /**
   * Requests whose response has ended but whose record is still being settled (usage counted),
   * by request id: a request-log lookup waits for them instead of answering 404.
   */
  settling: Map<string, Promise<unknown>>;
  authenticate: Authenticate;
  admit: Admit;
  /** Spend known only after its request was answered (a batch's, when it ends), added to the budget books. */
  chargeLate: (windows: readonly BudgetWindow[], requestId: string, costUsd: number) => void;
  /** Told every request's final ledger record (metrics, the request's log line); must not throw. */
  observe?: (record: LedgerRecord) => void;
  /** The exact response cache (docs/operations/response-cache.md); absent: nothing is cached. */
  responseCache?: ResponseCache;
  /**
   * The response cache setting of the endpoint the request came through (endpoint-context.ts),
   * between its route's and its tier's (cache-policy.ts); absent on /v1 and for an endpoint without one.
   */
  endpointCache?: CacheConfig;
  /** OpenTelemetry traces (docs/operations/observability.md "Traces (OpenTelemetry)"); absent when off, so no span is ever made. */
  tracing?: Tracing;
}
