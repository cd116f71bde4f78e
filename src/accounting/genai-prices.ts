import { createRequire } from 'node:module';

type GenaiPrices = typeof import('@pydantic/genai-prices');

let loaded: GenaiPrices | undefined;

/**
 * @pydantic/genai-prices, loaded at its first use (a price from the registry, a bare model name,
 * a model list) rather than at start: its price tables are a large module, and loading it sorts
 * with localeCompare, which maps ICU's collation data. An idle gateway, or one whose models are
 * all priced in the config, never needs it: idle `sluice serve --workers 1`, medians of 5 starts
 * (bench/idle-rss.ts), 103.9 and 105.6 MiB before, 97.7 and 98.0 after. The first request that
 * needs it waits for the load, ~45 ms of CPU, once. Loaded with require (the package's CommonJS
 * build), as its callers are synchronous.
 */
export function genaiPrices(): GenaiPrices {
  loaded ??= createRequire(import.meta.url)('@pydantic/genai-prices') as GenaiPrices;
  return loaded;
}
