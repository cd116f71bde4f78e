import { promptText } from '../../accounting/count-tokens.ts';
import type { PricingRegistry } from '../../accounting/pricing.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import { NANOS_PER_USD } from './budget-windows.ts';

/** Per-message framing of the chat format and the reply priming (count-tokens.ts uses the same). */
const TOKENS_PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

/**
 * The prompt's tokens before the request is sent, for the per-minute token charge and the budget
 * reservation: one token per 4 bytes of UTF-8 plus the chat framing. Both are reconciled with the
 * real usage when the request ends. The BPE count (countPromptTokens) was measured at ~60 us of
 * CPU and a worker round trip per request on this machine, three times the whole admission budget
 * (20 us) and on the way to the first token, so it is left to the accountant, which needs it only
 * when the upstream reports no usage.
 */
export function estimatePromptTokens(request: CanonicalRequest): number {
  let bytes = 0;
  for (const part of promptText(request)) bytes += Buffer.byteLength(part, 'utf8');
  return Math.ceil(bytes / 4) + REPLY_PRIMING + request.messages.length * TOKENS_PER_MESSAGE;
}

/** Nano-dollars per input and per output token of one model (0 for a free or unpriced one). */
export interface TokenPrices {
  inputNanos: number;
  outputNanos: number;
}

/**
 * The prices of each (provider, model), resolved once: a per-token price from the registry's
 * price of a million tokens (tiered prices taken at their base tier; the settlement uses the
 * real cost). A model without a price costs 0 and so never meets a budget: it is flagged in the
 * ledger (`price_known: false`) rather than blocked.
 */
export class PriceBook {
  private readonly pricing: PricingRegistry;
  private readonly prices = new Map<string, TokenPrices>();

  constructor(pricing: PricingRegistry) {
    this.pricing = pricing;
  }

  of(provider: string, model: string): TokenPrices {
    const key = `${provider}/${model}`;
    let prices = this.prices.get(key);
    if (!prices) {
      const perMillion = (inputTokens: number, outputTokens: number) =>
        this.pricing.cost(provider, model, { inputTokens, outputTokens, source: 'estimated' }).costUsd;
      prices = {
        inputNanos: (perMillion(1_000_000, 0) * NANOS_PER_USD) / 1_000_000,
        outputNanos: (perMillion(0, 1_000_000) * NANOS_PER_USD) / 1_000_000,
      };
      if (this.prices.size >= 10_000) this.prices.clear();
      this.prices.set(key, prices);
    }
    return prices;
  }
}

/** The output a request may produce: its max_completion_tokens / max_tokens, within `bound`. */
export function outputAllowance(request: CanonicalRequest, bound: number): number {
  const max = request.max_completion_tokens ?? request.max_tokens;
  return typeof max === 'number' && max > 0 ? Math.min(max, bound) : bound;
}
