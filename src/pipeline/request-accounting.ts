import { Accountant, type CountInput } from '../accounting/accountant.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { PricingRegistry } from '../accounting/pricing.ts';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { ResolvedModel } from '../providers/registry.ts';
import type { LedgerWriter } from '../store/ledger-writer.ts';
import type { RejectionCounter } from '../store/rejection-counter.ts';
import type { OutputTranscript } from '../telemetry/output-transcript.ts';
import type { Caller } from '../admission/admission.ts';

export interface AccountingDeps {
  pricing: PricingRegistry;
  /** Absent when the ledger is disabled: the accountant still feeds usage and cost to the stream. */
  ledger: LedgerWriter | undefined;
  /** Counts refusals of unauthenticated requests per minute and reason, instead of a row each. */
  rejections: RejectionCounter | undefined;
  storeContentChars: number;
  log: (message: string) => void;
}

export function createAccountant(
  deps: AccountingDeps,
  requestId: string,
  caller: Caller,
  request: CanonicalRequest,
  target: ResolvedModel,
  surface: LedgerRecord['surface'],
  streamed: boolean,
  transcript?: OutputTranscript,
  countInput?: CountInput,
): Accountant {
  return new Accountant({
    requestId,
    keyId: caller.keyId,
    projectId: caller.projectId,
    provider: target.provider,
    model: target.model,
    requestedModel: target.requested,
    surface,
    streamed,
    request,
    pricing: deps.pricing,
    storeContentChars: deps.storeContentChars,
    transcript,
    countInput,
  });
}

/**
 * The one ledger record of a request that reached the accountant; never throws (a ledger problem
 * must not fail a request, nor lose its row: if the usage cannot be settled, the row says so).
 */
export async function finalizeRecord(
  deps: AccountingDeps,
  accountant: Accountant,
  error: GatewayError | null,
): Promise<LedgerRecord> {
  try {
    return await accountant.finalize(error);
  } catch (err) {
    deps.log(`ledger: could not settle the usage of ${accountant.requestId}: ${(err as Error).message}`);
    return accountant.unsettledRecord(error ?? toGatewayError(err));
  }
}
