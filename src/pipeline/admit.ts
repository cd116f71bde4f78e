import type { IncomingMessage } from 'node:http';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { ResolvedModel } from '../providers/registry.ts';

/** Who is calling, as authentication established it. */
export interface Caller {
  /** Gateway-issued key id; null for the master key or a gateway without keys. */
  keyId: string | null;
}

/** Establishes the caller from the request's credentials, or throws a 401. */
export type Authenticate = (req: IncomingMessage) => Caller;

export interface AdmissionRequest {
  requestId: string;
  caller: Caller;
  surface: LedgerRecord['surface'];
  target: ResolvedModel;
  request: CanonicalRequest;
  streamed: boolean;
}

/** A request let in; told once how it ended (the place to settle reservations and release slots). */
export interface Admission {
  settle(record: LedgerRecord): void;
}

/**
 * The admit step of the lifecycle: between resolving the target and calling it, every model
 * request of every surface passes here. Throws a GatewayError (429, 403, ...) to refuse.
 */
export type Admit = (request: AdmissionRequest) => Admission | Promise<Admission>;

const NOTHING_TO_SETTLE: Admission = { settle: () => {} };

/** A gateway with no keys, limits or budgets configured lets every authenticated request in. */
export const admitAll: Admit = () => NOTHING_TO_SETTLE;
