import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import type { LedgerQueryInWriteOrder, WriteOrderPage } from '../store/ledger-store.ts';
import { LiveFeed, type WriteOrderReader } from './live-feed.ts';

/** A response that keeps what is written, and can pretend its client stopped reading. */
class FakeResponse extends EventEmitter {
  written = '';
  writableLength = 0;
  destroyed = false;
  writeHead() {
    return this;
  }
  write(chunk: string) {
    this.written += chunk;
    return true;
  }
  end() {
    this.emit('close');
  }
  destroy() {
    this.destroyed = true;
    this.emit('close');
  }
}

/** A ledger in write order: cursors are positions in `records`. */
function storeOf(records: LedgerRecord[]): WriteOrderReader & { queries: LedgerQueryInWriteOrder[] } {
  const queries: LedgerQueryInWriteOrder[] = [];
  return {
    queries,
    async listInWriteOrder(q): Promise<WriteOrderPage> {
      queries.push(q);
      const from = Number(q.after ?? 0);
      const data = records.slice(from).filter((r) => !q.provider || r.provider === q.provider);
      return { data, nextCursor: String(records.length), hasMore: false };
    },
  };
}

const record = (requestId: string, provider = 'mock') => ({ requestId, provider }) as LedgerRecord;

describe('the live request log', () => {
  it('sends what was stored after the cursor, with the filters passed to the store, then what is stored later', async () => {
    const records = [record('r1'), record('r2'), record('r3', 'other')];
    const store = storeOf(records);
    const feed = new LiveFeed();
    const res = new FakeResponse();
    await feed.watch(res as unknown as ServerResponse, store, { after: '1', provider: 'mock' }, (r) => ({ id: r.requestId }), {});
    assert.match(res.written, /^: watching\n\nevent: request\ndata: \{"id":"r2"\}\n\n$/);
    records.push(record('r4'));
    for (let i = 0; i < 100 && !res.written.includes('r4'); i++) await new Promise((r) => setTimeout(r, 20));
    assert.match(res.written, /"id":"r4"/);
    assert.doesNotMatch(res.written, /r1|r3/);
    assert.deepEqual(
      store.queries.slice(0, 2).map((q) => [q.after, q.provider]),
      [
        ['1', 'mock'],
        ['3', 'mock'],
      ],
    );
    feed.close();
    assert.equal(feed.size, 0);
  });

  it('drops a watcher whose client left a megabyte unread', async () => {
    const feed = new LiveFeed();
    const slow = new FakeResponse();
    slow.writableLength = 2 << 20;
    await feed.watch(slow as unknown as ServerResponse, storeOf([record('r1')]), {}, (r) => ({ id: r.requestId }), {});
    await new Promise((r) => setImmediate(r));
    assert.equal(slow.destroyed, true);
    assert.equal(feed.size, 0);
  });
});
