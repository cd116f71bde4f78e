import type { Usage } from '../protocol/canonical/usage.ts';
import { type PricingRegistry, roundUsd } from './pricing.ts';

/**
 * A batch's usage priced at the batch discount: the registry (@pydantic/genai-prices) has no
 * batch prices of its own, and OpenAI and Anthropic both bill batches at 50% of the model's
 * price (`batches.price_factor`). A model without a price costs 0.0, flagged, as elsewhere.
 */
export function batchCost(
  pricing: PricingRegistry,
  provider: string,
  model: string,
  usage: Usage,
  factor: number,
  at?: Date,
): { costUsd: number; priceKnown: boolean } {
  const full = pricing.cost(provider, model, usage, at);
  return { costUsd: roundUsd(full.costUsd * factor), priceKnown: full.priceKnown };
}
