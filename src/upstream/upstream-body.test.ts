import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Dispatcher } from 'undici';
import { UpstreamBody } from './upstream-body.ts';

/** The part of undici's DispatchController the body uses, recording what it was asked. */
function controller() {
  const state = { paused: false, aborted: null as Error | null, pauses: 0, resumes: 0 };
  const c = {
    get paused() {
      return state.paused;
    },
    get aborted() {
      return state.aborted !== null;
    },
    get reason() {
      return state.aborted;
    },
    pause() {
      state.paused = true;
      state.pauses++;
    },
    resume() {
      state.paused = false;
      state.resumes++;
    },
    abort(reason: Error) {
      state.aborted = reason;
    },
  };
  return { c: c as unknown as Dispatcher.DispatchController, state };
}

const decoder = () => ({ push: (b: Uint8Array) => [Buffer.from(b).toString()], end: () => ['<end>'] });

async function collect(body: UpstreamBody): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of body.decode(decoder())) out.push(...batch);
  return out;
}

describe('UpstreamBody', () => {
  it('hands the chunks of one socket read to a waiting consumer together, then the end', async () => {
    const { c } = controller();
    const body = new UpstreamBody(c);
    const result = collect(body);
    await Promise.resolve(); // the consumer is now waiting
    // undici parses one socket read: three HTTP chunks and the end, synchronously.
    body.push(Buffer.from('a'));
    body.push(Buffer.from('b'));
    body.push(Buffer.from('c'));
    body.end();
    assert.deepEqual(await result, ['abc', '<end>']);
  });

  it('merges what arrived while the consumer was busy, and loses nothing at the end', async () => {
    const { c } = controller();
    const body = new UpstreamBody(c);
    body.push(Buffer.from('1'));
    body.push(Buffer.from('2'));
    body.end();
    assert.deepEqual(await collect(body), ['12', '<end>']);
  });

  it('pauses the upstream past its high-water mark and resumes once drained', async () => {
    const { c, state } = controller();
    const body = new UpstreamBody(c);
    for (let i = 0; i < 20; i++) body.push(Buffer.from('x'));
    assert.equal(state.paused, true);
    body.end();
    assert.deepEqual(await collect(body), ['x'.repeat(20), '<end>']);
    assert.equal(state.resumes, 1);
  });

  it('lets a failure win over what is buffered, as a destroyed stream would', async () => {
    const { c } = controller();
    const body = new UpstreamBody(c);
    body.push(Buffer.from('lost'));
    body.fail(new Error('socket reset'));
    await assert.rejects(collect(body), /socket reset/);
  });

  it('rejects a waiting consumer when the upstream fails', async () => {
    const { c } = controller();
    const body = new UpstreamBody(c);
    const result = collect(body);
    await Promise.resolve();
    body.fail(new Error('reset'));
    await assert.rejects(result, /reset/);
  });

  it('aborts the upstream request when the consumer leaves early, not after a normal end', async () => {
    const early = controller();
    const body = new UpstreamBody(early.c);
    body.push(Buffer.from('first'));
    for await (const _ of body.decode(decoder())) break;
    assert.match(String(early.state.aborted), /released early/);

    const done = controller();
    const ended = new UpstreamBody(done.c);
    ended.end();
    await collect(ended);
    assert.equal(done.state.aborted, null);
  });
});
