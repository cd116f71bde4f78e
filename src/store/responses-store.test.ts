import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CanonicalMessage } from '../protocol/canonical/request.ts';
import { openDatabase } from './open-database.ts';
import type { OpenedDatabase } from './store-location.ts';
import { ResponsesStore } from './responses-store.ts';

describe('responses store', () => {
  let opened: OpenedDatabase;
  let store: ResponsesStore;
  before(async () => {
    opened = await openDatabase({ path: ':memory:' });
    store = new ResponsesStore(opened.db);
  });
  after(() => opened.db.destroy());

  it('keeps a conversation of canonical messages as it was saved', async () => {
    const conversation: CanonicalMessage[] = [
      { role: 'system', content: 'Use metric.', developer: true },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'Think.',
        reasoning_signature: 'sig',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ];
    await store.save({ id: 'resp_1', createdAt: 1, model: 'up/m', conversation, response: { id: 'resp_1' } });
    assert.deepEqual((await store.get('resp_1'))?.conversation, conversation);
  });

  it('a row saved before canonical messages reads its developer message as the system message it is', async () => {
    // What /v1/responses stored then: chat messages, a developer input item kept as role developer.
    await opened.db
      .insertInto('responses')
      .values({
        id: 'resp_old',
        created_at: 1,
        model: 'up/m',
        conversation: JSON.stringify([
          { role: 'developer', content: 'Use metric.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello' },
        ]),
        response: '{}',
      })
      .execute();
    assert.deepEqual((await store.get('resp_old'))?.conversation, [
      { role: 'system', content: 'Use metric.', developer: true },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ]);
  });

  it('a lookup waits briefly for a save made elsewhere (another worker), then gives up', async () => {
    // A row written without this handle, as another process writes it, 50 ms after the lookup began.
    const lookup = store.get('resp_elsewhere');
    setTimeout(() => {
      void new ResponsesStore(opened.db).save({ id: 'resp_elsewhere', createdAt: 1, model: 'up/m', conversation: [], response: {} });
    }, 50);
    assert.equal((await lookup)?.id, 'resp_elsewhere');
    assert.equal(await store.get('resp_never_saved'), undefined);
  });
});
