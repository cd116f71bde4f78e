import type { Config } from '../config/schema.ts';
import type { AccountingDeps } from '../pipeline/request-accounting.ts';
import type { StreamSession } from '../protocol/sse/stream-session.ts';
import type { ProviderRegistry } from '../providers/registry.ts';
import type { LedgerStore } from '../store/ledger-store.ts';
import type { ResponsesStore } from '../store/responses-store.ts';

/** What the routes share: built once at startup, no module-level state. */
export interface GatewayContext {
  config: Config;
  registry: ProviderRegistry;
  sessions: Set<StreamSession>;
  startedAt: number;
  accounting: AccountingDeps;
  /** The request log's reader; set once the store is open (at listen). */
  ledgerStore: LedgerStore | undefined;
  /** Responses created through sluice (GET /v1/responses/{id}, previous_response_id). */
  responsesStore: ResponsesStore | undefined;
}
