import { Accountant, type CountInput } from '../accounting/accountant.ts';
import { estimatePromptTokens } from '../accounting/count-tokens.ts';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { PricingRegistry } from '../accounting/pricing.ts';
import { type GatewayError, toGatewayError } from '../errors/gateway-error.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { ResolvedModel } from '../providers/registry.ts';
import { type JournaledRequest, NOT_JOURNALED, type RequestJournal } from '../store/ledger-journal.ts';
import type { LedgerWriter } from '../store/ledger-writer.ts';
import type { RejectionCounter } from '../store/rejection-counter.ts';
import type { OutputTranscript } from '../telemetry/output-transcript.ts';
import type { Admission, Caller } from '../admission/admission.ts';

export interface AccountingDeps {
  pricing: PricingRegistry;
  /** Absent when the ledger is disabled: the accountant still feeds usage and cost to the stream. */
  ledger: LedgerWriter | undefined;
  /** Counts refusals of unauthenticated requests per minute and reason, instead of a row each. */
  rejections: RejectionCounter | undefined;
  /** The durable mode's journal of running requests (ledger.durable); absent otherwise. */
  journal?: RequestJournal;
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
  fromCache = false,
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
    fromCache,
  });
}

/**
 * Durable mode: the request is in the journal from its admission on, so that a crash before its
 * record leaves it recorded as interrupted at the next start. What the line holds is built when
 * it is written (at the end of this turn of the event loop), off the way to the upstream call.
 */
export function journalAdmission(
  deps: AccountingDeps,
  accountant: Accountant,
  request: CanonicalRequest,
  admission: Admission,
  tags: string[] | null,
): JournaledRequest {
  const journal = deps.journal;
  if (!journal) return NOT_JOURNALED;
  const holds = admission.holds;
  return journal.admitted(
    accountant.requestId,
    () => {
      const admitted = accountant.admitted(holds?.promptTokens ?? estimatePromptTokens(request), holds);
      return tags ? { ...admitted, tags } : admitted;
    },
    () => accountant.progress(),
  );
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
