import type { Config } from '../config/schema.ts';
import { errors } from '../errors/catalog.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import { classifyStoreError } from './classify-store-error.ts';
import type { LedgerStore } from './ledger-store.ts';

/** What a read of the request log needs of the gateway's context. */
export interface StoreReader {
  config: Pick<Config, 'ledger' | 'store'>;
  ledgerStore: LedgerStore | undefined;
}

/**
 * The request log's store, for a read: a 400 when the ledger is off (there is none), a 503
 * `store_unavailable` while it is not open (a database down since start-up, retried in the
 * background), never "disabled" for a store that is only late.
 */
export function openLedgerStore(ctx: StoreReader): LedgerStore {
  if (!ctx.config.ledger.enabled) throw errors.invalidRequest('The request log is disabled (ledger.enabled: false).');
  if (!ctx.ledgerStore) throw errors.storeUnavailable('the store is not open yet (sluice retries it; see its log)');
  return ctx.ledgerStore;
}

/**
 * Awaits a read of the store for an API answer, within `timeoutMs` (default store.query_timeout_ms,
 * less for a read that is the rest of an answer already under way): a database that
 * is down, resets the connection or stops answering is a 503 `store_unavailable` (retryable),
 * not a 500 `internal_error`, and the client is not held past the timeout whatever the pool's
 * own connect and query timeouts are (a stalled connection attempt takes connect_timeout_ms).
 * Other errors (a bad query parameter, a sluice bug) go on as they are.
 */
export async function readStore<T>(
  ctx: StoreReader,
  read: Promise<T>,
  timeoutMs = ctx.config.store.query_timeout_ms,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(errors.storeUnavailable(`the store did not answer within ${timeoutMs} ms`)), timeoutMs);
  });
  // The read given up on still ends (the pool's timeouts end it); its failure is not this answer's.
  read.catch(() => {});
  try {
    return await Promise.race([read, late]);
  } catch (err) {
    if (!(err instanceof GatewayError) && classifyStoreError(err) === 'connection') {
      throw errors.storeUnavailable('the store is unreachable');
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }
}
