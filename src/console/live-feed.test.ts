import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { describe, it } from 'node:test';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { LiveFeed } from './live-feed.ts';

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
  end() {}
  destroy() {
    this.destroyed = true;
    this.emit('close');
  }
}

const record = (fields: Partial<LedgerRecord>) =>
  ({
    requestId: 'r1',
    provider: 'mock',
    model: 'echo',
    requestedModel: 'fast',
    outcome: 'ok',
    keyId: null,
    projectId: null,
    ...fields,
  }) as LedgerRecord;

function watch(feed: LiveFeed, filter: Parameters<LiveFeed['watch']>[1]) {
  const res = new FakeResponse();
  feed.watch(res as unknown as ServerResponse, filter, (r) => ({ id: r.requestId }), {});
  return res;
}

describe('the live request log', () => {
  it('sends each watcher the records its filter matches, the model as named or as served', () => {
    const feed = new LiveFeed();
    const byAlias = watch(feed, { model: 'fast' });
    const byTarget = watch(feed, { model: 'mock/echo', outcome: 'ok' });
    const errors = watch(feed, { outcome: 'error' });
    feed.publish([record({}), record({ requestId: 'r2', outcome: 'error' })]);
    assert.equal((byAlias.written.match(/event: request/g) ?? []).length, 2);
    assert.match(byTarget.written, /data: \{"id":"r1"\}\n\n$/);
    assert.doesNotMatch(byTarget.written, /r2/);
    assert.match(errors.written, /"id":"r2"/);
    assert.doesNotMatch(errors.written, /"id":"r1"/);
    feed.close();
  });

  it('drops a watcher whose client left a megabyte unread', () => {
    const feed = new LiveFeed();
    const slow = watch(feed, {});
    slow.writableLength = 2 << 20;
    feed.publish([record({})]);
    assert.equal(slow.destroyed, true);
    assert.equal(feed.size, 0);
    feed.close();
  });
});
