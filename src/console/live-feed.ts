import type { ServerResponse } from 'node:http';
import type { LedgerRecord } from '../accounting/ledger-record.ts';

/** What one watcher of the live log wants to see. */
export interface FeedFilter {
  model?: string;
  provider?: string;
  outcome?: string;
  keyId?: string;
  projectId?: string;
}

interface Watcher {
  res: ServerResponse;
  filter: FeedFilter;
  render: (r: LedgerRecord) => unknown;
}

/**
 * What a watcher may leave unread before it is dropped: a browser tab that stopped reading must
 * not make the gateway hold every request since (EventSource reconnects on its own).
 */
const MAX_UNREAD_BYTES = 1 << 20;

/** A comment now and then keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;

/**
 * The console's live request log: each batch the ledger writer stores is sent, as SSE, to every
 * watcher whose filter it matches. Only the writes of this instance are seen; a console behind
 * several instances sees the others' requests on reload (GET /v1/requests).
 */
export class LiveFeed {
  private readonly watchers = new Set<Watcher>();
  private heartbeat: NodeJS.Timeout | undefined;

  get size(): number {
    return this.watchers.size;
  }

  watch(res: ServerResponse, filter: FeedFilter, render: Watcher['render'], headers: Record<string, string>): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      Connection: 'keep-alive',
      ...headers,
    });
    res.write(': watching\n\n');
    const watcher = { res, filter, render };
    this.watchers.add(watcher);
    res.on('close', () => {
      this.watchers.delete(watcher);
      if (this.watchers.size === 0) this.stopHeartbeat();
    });
    this.heartbeat ??= setInterval(() => {
      for (const w of this.watchers) w.res.write(': heartbeat\n\n');
    }, HEARTBEAT_MS).unref();
  }

  publish(records: readonly LedgerRecord[]): void {
    for (const w of this.watchers) {
      for (const r of records) {
        if (matches(r, w.filter)) w.res.write(`event: request\ndata: ${JSON.stringify(w.render(r))}\n\n`);
      }
      if (w.res.writableLength > MAX_UNREAD_BYTES) {
        this.watchers.delete(w);
        w.res.destroy();
      }
    }
  }

  /** Ends every watcher's stream (shutdown). */
  close(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
    this.stopHeartbeat();
  }

  private stopHeartbeat(): void {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }
}

function matches(r: LedgerRecord, f: FeedFilter): boolean {
  if (f.model && r.model !== f.model && r.requestedModel !== f.model && `${r.provider}/${r.model}` !== f.model) return false;
  if (f.provider && r.provider !== f.provider) return false;
  if (f.outcome && r.outcome !== f.outcome) return false;
  if (f.keyId && r.keyId !== f.keyId) return false;
  if (f.projectId && r.projectId !== f.projectId) return false;
  return true;
}
