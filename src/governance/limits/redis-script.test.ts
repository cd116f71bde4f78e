import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { RedisScript } from './redis-script.ts';

const SOURCE = "return redis.call('GET', KEYS[1])";
const SHA = createHash('sha1').update(SOURCE).digest('hex');
const ARGS = { keys: ['k'], arguments: [] };

/** A client that records what it was sent; `scripts` is what Redis has loaded. */
function stubClient(scripts: Set<string>) {
  const sent: string[] = [];
  const client = {
    eval: async (source: string) => {
      sent.push('EVAL');
      scripts.add(createHash('sha1').update(source).digest('hex'));
      return 'reply';
    },
    evalSha: async (sha: string) => {
      sent.push('EVALSHA');
      if (!scripts.has(sha)) throw new Error('NOSCRIPT No matching script. Please use EVAL.');
      return 'reply';
    },
  };
  return { client: client as unknown as Parameters<RedisScript['run']>[0], sent };
}

describe('RedisScript', () => {
  it('sends the text once (which loads it), then only the SHA1', async () => {
    const scripts = new Set<string>();
    const { client, sent } = stubClient(scripts);
    const script = new RedisScript(SOURCE);
    for (let i = 0; i < 3; i++) assert.equal(await script.run(client, ARGS), 'reply');
    assert.deepEqual(sent, ['EVAL', 'EVALSHA', 'EVALSHA']);
    assert.ok(scripts.has(SHA));
  });

  it('a Redis that lost the script (restart, SCRIPT FLUSH) gets its text again, then the SHA1 works again', async () => {
    const scripts = new Set<string>();
    const { client, sent } = stubClient(scripts);
    const script = new RedisScript(SOURCE);
    await script.run(client, ARGS);
    scripts.clear();
    assert.equal(await script.run(client, ARGS), 'reply');
    assert.equal(await script.run(client, ARGS), 'reply');
    assert.deepEqual(sent, ['EVAL', 'EVALSHA', 'EVAL', 'EVALSHA']);
  });

  it('any other error is the caller’s (the link turns it into Redis unavailable)', async () => {
    const script = new RedisScript(SOURCE);
    const failing = {
      eval: async () => {
        throw new Error('ERR Error running script');
      },
    } as unknown as Parameters<RedisScript['run']>[0];
    await assert.rejects(script.run(failing, ARGS), /ERR Error running script/);
  });
});
