import { randomBytes } from 'node:crypto';
import { createClient } from '@redis/client';

/**
 * The tier of the bench's governed requests (gateway-process.ts, admission.ts): every limit a tier
 * has, per key and per project, and a budget of the key's and one of its project's, all far above
 * what the bench sends (a refusal would be a failed request, not a measurement).
 */
export const BENCH_TIER = {
  requests_per_minute: 10_000_000,
  tokens_per_minute: 1_000_000_000,
  concurrent_requests: 10_000,
  project: { requests_per_minute: 10_000_000, concurrent_requests: 10_000 },
  budgets: [
    { period: 'day', limit_usd: 1_000_000 },
    { scope: 'project', period: 'month', limit_usd: 10_000_000 },
  ],
};

/** A price for the bench's models, so that budgets reserve and settle real amounts (an unpriced model costs 0). */
export const BENCH_PRICES = { input_mtok: 0.15, output_mtok: 0.6 };

/** A fresh Redis key prefix per run: runs sharing a Redis never meet. */
export const benchRedisPrefix = () => `sluice-bench:${randomBytes(4).toString('hex')}:`;

/** Deletes what a run left in Redis (budget windows would otherwise stay until a day past their month). */
export async function deleteBenchKeys(url: string, prefix: string): Promise<void> {
  const client = createClient({ url, socket: { connectTimeout: 2_000, reconnectStrategy: false } });
  client.on('error', () => {});
  try {
    await client.connect();
    for await (const keys of client.scanIterator({ MATCH: `${prefix}*`, COUNT: 1_000 })) {
      if (keys.length > 0) await client.del(keys);
    }
  } finally {
    if (client.isOpen) client.destroy();
  }
}
