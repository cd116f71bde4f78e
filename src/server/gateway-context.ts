import type { AuditLog } from '../governance/audit/audit-log.ts';
import type { ConsoleState } from '../console/console-state.ts';
import type { LimitsAndBudgets } from '../governance/admit.ts';
import type { Governance } from '../governance/keys/governance.ts';
import type { Authenticate } from '../admission/admission.ts';
import type { PipelineContext } from '../pipeline/context.ts';
import type { StreamBuffer } from '../resume/stream-buffer.ts';
import type { ClientAddressing } from '../protocol/http/client-address.ts';
import type { LedgerStore } from '../store/ledger-store.ts';
import type { McpOnDemand } from '../mcp/on-demand.ts';
import type { GatewayMetrics } from '../telemetry/metrics.ts';
import type { Reconciler } from '../reconcile/reconciler.ts';
import type { InstanceReload } from './reload-result.ts';
import type { ReadinessReport } from './readiness.ts';

/** What the routes share: the pipeline's context plus what only the HTTP edge reads. */
export interface GatewayContext extends PipelineContext {
  startedAt: number;
  /** The request log's reader; set once the store is open (at listen). */
  ledgerStore: LedgerStore | undefined;
  /** Projects, gateway-issued keys and endpoints (the admin API, endpoint routes). */
  governance: Governance;
  /** Admin changes and console sign-ins (governance/audit/record-audit.ts; GET /admin/audit). */
  audit: AuditLog;
  /** `authenticate` for the admin API, the console and /metrics: a gateway key is read from the store, not the cache. */
  authenticateAdmin: Authenticate;
  /** Recent streams' frames for GET /v1/streams/{id} (stream.resume); undefined when resuming is off. */
  streams: StreamBuffer | undefined;
  /** GET /metrics; undefined when metrics.enabled is false. */
  metrics: GatewayMetrics | undefined;
  /** What callers' limits and budgets hold now (the console's keys page); admission itself goes through `admit`. */
  limits: Pick<LimitsAndBudgets, 'usage'>;
  /** The console's sessions, live log and chart rollups (src/console). */
  console: ConsoleState;
  /** Who a request comes from and whether over HTTPS, behind server.trusted_proxies too. */
  addressing: ClientAddressing;
  /**
   * POST /admin/reload: reloads the config of this process, or under `sluice serve --workers N`
   * of every worker (cli/worker-reload.ts); undefined: the gateway has no config source to read again.
   */
  reloadConfig: (() => Promise<InstanceReload[]>) | undefined;
  /** The MCP gateway (/mcp), one per process: a reload keeps it (its servers change at a restart). */
  mcp: McpOnDemand;
  /** The ledger against the providers' reports (/admin/reconciliations, the schedule), one per process. */
  reconciler: Reconciler;
  /** GET /readyz: the store, Redis and the providers, each checked within a short timeout. */
  readiness: () => Promise<ReadinessReport>;
}
