import { Accountant } from '../accounting/accountant.ts';
import type { PricingRegistry } from '../accounting/pricing.ts';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { ChatRequest } from '../protocol/openai-chat/request-schema.ts';
import type { ResolvedModel } from '../providers/registry.ts';
import type { LedgerWriter } from '../store/ledger-writer.ts';

export interface AccountingDeps {
  pricing: PricingRegistry;
  /** Absent when the ledger is disabled: the accountant still feeds usage and cost to the stream. */
  ledger: LedgerWriter | undefined;
  storeContentChars: number;
  log: (message: string) => void;
}

export function createAccountant(
  deps: AccountingDeps,
  requestId: string,
  request: ChatRequest,
  target: ResolvedModel,
  surface: 'chat' | 'responses',
  streamed: boolean,
): Accountant {
  return new Accountant({
    requestId,
    keyId: null,
    provider: target.provider,
    model: target.model,
    requestedModel: target.requested,
    surface,
    streamed,
    request,
    pricing: deps.pricing,
    storeContentChars: deps.storeContentChars,
  });
}

/** The one ledger record of a request; never throws (a ledger problem must not fail a request). */
export async function recordOutcome(deps: AccountingDeps, accountant: Accountant, error: GatewayError | null): Promise<void> {
  try {
    const record = await accountant.finalize(error);
    deps.ledger?.write(record);
  } catch (err) {
    deps.log(`ledger: could not build the record: ${(err as Error).message}`);
  }
}
