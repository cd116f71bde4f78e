import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { LedgerQueryInWriteOrder, WriteOrderPage } from '../store/ledger-store.ts';

/** The store's read in write order (LedgerStore.listInWriteOrder), the one thing the feed needs. */
export interface WriteOrderReader {
  listInWriteOrder(q: LedgerQueryInWriteOrder): Promise<WriteOrderPage>;
}

/** Between two reads of a watcher that has read everything; a comment now and then keeps proxies from closing the stream. */
const POLL_MS = 1_000;
const HEARTBEAT_MS = 15_000;
const PAGE = 200;
/**
 * What a watcher may leave unread before it is dropped: a browser tab that stopped reading must
 * not make the gateway hold every request since (EventSource reconnects on its own).
 */
const MAX_UNREAD_BYTES = 1 << 20;

/**
 * The console's live request log: each watcher follows the ledger in write order from its
 * cursor (the `follow_cursor` of the page it shows, as `sluice logs --follow` does), with its
 * filters applied by the store, and gets every record as an SSE frame. Read from the store, so
 * it sees the requests of every worker and instance writing it, once their batch is stored.
 */
export class LiveFeed {
  private readonly watchers = new Map<ServerResponse, AbortController>();

  get size(): number {
    return this.watchers.size;
  }

  /**
   * Reads the first page before answering, so that a cursor the store refuses is the caller's
   * 400 (InvalidLedgerQuery) rather than a stream that ends at once.
   */
  async watch(
    res: ServerResponse,
    store: WriteOrderReader,
    query: LedgerQueryInWriteOrder,
    render: (r: LedgerRecord) => unknown,
    headers: Record<string, string>,
  ): Promise<void> {
    const first = await store.listInWriteOrder({ ...query, limit: PAGE });
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      ...headers,
    });
    res.write(': watching\n\n');
    const stop = new AbortController();
    this.watchers.set(res, stop);
    res.on('close', () => {
      stop.abort();
      this.watchers.delete(res);
    });
    void this.follow(res, store, query, first, render, stop.signal);
  }

  /** Ends every watcher's stream (shutdown). */
  close(): void {
    for (const [res, stop] of this.watchers) {
      stop.abort();
      res.end();
    }
    this.watchers.clear();
  }

  private async follow(
    res: ServerResponse,
    store: WriteOrderReader,
    query: LedgerQueryInWriteOrder,
    first: WriteOrderPage,
    render: (r: LedgerRecord) => unknown,
    signal: AbortSignal,
  ): Promise<void> {
    let page: WriteOrderPage | undefined = first;
    let after = first.nextCursor;
    let quietSince = Date.now();
    while (!signal.aborted) {
      if (page) {
        for (const r of page.data) res.write(`event: request\ndata: ${JSON.stringify(render(r))}\n\n`);
        after = page.nextCursor;
        if (page.data.length > 0) quietSince = Date.now();
        if (res.writableLength > MAX_UNREAD_BYTES) {
          res.destroy();
          return;
        }
      }
      if (!page?.hasMore) {
        if (Date.now() - quietSince >= HEARTBEAT_MS) {
          res.write(': heartbeat\n\n');
          quietSince = Date.now();
        }
        await sleep(POLL_MS, undefined, { signal }).catch(() => undefined);
        if (signal.aborted) return;
      }
      // A store that fails a read (an outage) is asked again at the next poll; the stream stays open.
      page = await store.listInWriteOrder({ ...query, after, limit: PAGE }).catch(() => undefined);
    }
  }
}
