import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Authenticate, Caller } from '../admission/admission.ts';
import type { AuditLog } from '../governance/audit/audit-log.ts';
import type { LimitsAndBudgets } from '../governance/admit.ts';
import type { Governance } from '../governance/keys/governance.ts';
import type { PipelineContext } from '../pipeline/context.ts';
import type { ClientAddressing } from '../protocol/http/client-address.ts';
import type { LedgerStore } from '../store/ledger-store.ts';
import type { ConsoleState } from './console-state.ts';

/**
 * What the console's handlers read of the gateway. The server mounts them, so they cannot name the
 * server's own types (the server is the layer above): the server's context has all of this, and
 * its route call fits ConsoleCall, which the type checker verifies where the routes are mounted.
 */
export interface ConsoleContext extends Pick<PipelineContext, 'config' | 'authenticate' | 'scopes' | 'accounting'> {
  ledgerStore: LedgerStore | undefined;
  governance: Governance;
  /** Where sign-ins, sign-outs and failed sign-ins are recorded. */
  audit: AuditLog;
  limits: Pick<LimitsAndBudgets, 'usage'>;
  console: ConsoleState;
  /** `authenticate` for the console's sign-in: a gateway key is read from the store, not the cache. */
  authenticateAdmin: Authenticate;
  /** Who the client is and whether it came over HTTPS, trusted proxies considered. */
  addressing: ClientAddressing;
}

/** One call of a console route (server/route-table.ts's RouteCall, as much of it as the console reads). */
export interface ConsoleCall {
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  ctx: ConsoleContext;
  /** The decoded path parameter of a prefix route. */
  param: string;
  search: URLSearchParams;
  caller: Caller | null;
}
