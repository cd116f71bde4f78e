import { loadConfig } from '../config/load-config.ts';
import { PricingRegistry, providerKinds } from '../accounting/pricing.ts';

export interface PricingOptions {
  model: string;
  config?: string;
  input: number;
  output: number;
  cached: number;
}

/** `sluice pricing provider/model`: what sluice will charge, and where the price comes from. */
export function pricing(options: PricingOptions): void {
  const config = loadConfig({ file: options.config, env: process.env });
  const target = config.model_list.find((m) => m.model_name === options.model)?.model ?? options.model;
  const slash = target.indexOf('/');
  if (slash <= 0) {
    console.error(`Name the model as provider/model (e.g. openai/gpt-4o-mini), not "${options.model}".`);
    process.exitCode = 2;
    return;
  }
  const provider = target.slice(0, slash);
  const model = target.slice(slash + 1);
  const registry = new PricingRegistry(config.pricing, providerKinds(config.providers));
  const usage = {
    inputTokens: options.input,
    outputTokens: options.output,
    cachedInputTokens: options.cached || undefined,
    source: 'provider' as const,
  };
  const cost = registry.cost(provider, model, usage);
  console.log(`model:   ${provider}/${model}${target !== options.model ? ` (alias ${options.model})` : ''}`);
  if (cost.source === 'unknown') {
    console.log('price:   unknown: requests are recorded with cost 0.0 and price_known false.');
    console.log(`         add it under pricing: "${provider}/${model}" in the config file.`);
    return;
  }
  console.log(`source:  ${cost.source}${cost.registryModel ? ` (@pydantic/genai-prices model ${cost.registryModel})` : ''}`);
  if (cost.price) console.log(`per 1M tokens (USD): ${JSON.stringify(cost.price)}`);
  console.log(
    `cost of ${options.input} input (${options.cached} cached) + ${options.output} output tokens: $${cost.costUsd.toFixed(8)}`,
  );
}
