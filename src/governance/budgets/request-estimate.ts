import type { PricingRegistry } from '../../accounting/pricing.ts';
import type { CanonicalRequest } from '../../protocol/canonical/request.ts';
import type { MediaUnits } from '../../protocol/canonical/usage.ts';
import { NANOS_PER_USD } from './budget-windows.ts';

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

  /** The nano-dollars of a request's media units (the images it asks for, the characters it has spoken), where the model prices them. */
  unitsNanos(provider: string, model: string, units: MediaUnits): number {
    return (
      this.pricing.cost(provider, model, { inputTokens: 0, outputTokens: 0, units, source: 'estimated' }).costUsd * NANOS_PER_USD
    );
  }
}

/** The output a request may produce: its max_completion_tokens / max_tokens, within `bound`. */
export function outputAllowance(request: CanonicalRequest, bound: number): number {
  const max = request.max_completion_tokens ?? request.max_tokens;
  return typeof max === 'number' && max > 0 ? Math.min(max, bound) : bound;
}
