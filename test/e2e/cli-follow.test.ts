import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const bin = fileURLToPath(new URL('../../bin/sluice.js', import.meta.url));
const KEY = 'sk-follow';

/** A chat request through the gateway, read to the end; resolves with its X-Request-ID. */
async function chat(gw: TestGateway, model: string, content = 'hello'): Promise<string> {
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content }] }),
  });
  await res.text();
  return res.headers.get('x-request-id') ?? '';
}

/** The request id of each line `sluice logs` printed (its second column). */
const idsOf = (lines: string[]) => lines.map((l) => l.split('  ')[1]);

describe('sluice logs --follow', () => {
  let gw: TestGateway;
  let follower: ChildProcess | undefined;
  const lines: string[] = [];

  before(async () => {
    gw = await startGateway({ auth: { master_key: KEY }, ledger: { flush_interval_ms: 10 } });
  });
  after(async () => {
    follower?.kill('SIGTERM');
    await gw.close();
  });

  /** Waits (bounded) until the follower printed `count` lines. */
  async function printed(count: number): Promise<void> {
    for (let waited = 0; lines.length < count; waited += 50) {
      if (waited > 20_000) assert.fail(`after 20 s the follower printed ${lines.length} of ${count} lines:\n${lines.join('\n')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('prints every request exactly once, in the order they ended: bursts beyond --limit and a stream longer than the poll interval', async () => {
    const earlier = [await chat(gw, 'mock/echo'), await chat(gw, 'mock/echo')];
    follower = spawn(process.execPath, [bin, 'logs', '--follow', '--limit', '5', '--url', gw.url], {
      env: { PATH: process.env.PATH ?? '', SLUICE_MASTER_KEY: KEY },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let partial = '';
    follower.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      lines.push(...parts);
    });
    await printed(2);
    assert.deepEqual(idsOf(lines), earlier);

    // mock/slow: 500 ms a token ("You said: one two three four five six seven"), 4.5 s, over
    // several poll intervals: it starts before the burst and ends after it, with room for a burst
    // that takes seconds on a loaded machine (2.5 s did not always do).
    const slow = chat(gw, 'mock/slow', 'one two three four five six seven');
    await new Promise((r) => setTimeout(r, 200));
    // 30 requests (six times --limit) end between two polls of the follower.
    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => chat(gw, i % 5 === 4 ? 'mock/error' : 'mock/echo')));
    const slowId = await slow;

    await printed(2 + 30 + 1);
    await new Promise((r) => setTimeout(r, 1500)); // one more poll: nothing may come twice
    const ids = idsOf(lines);
    assert.equal(ids.length, 33, lines.join('\n'));
    assert.equal(new Set(ids).size, 33, 'no request printed twice');
    assert.deepEqual(ids.slice(0, 2), earlier);
    assert.deepEqual(new Set(ids.slice(2, 32)), new Set(burst));
    // The long stream is printed when it ends, after the rows newer than it.
    assert.equal(ids[32], slowId);
    assert.match(lines[32], /mock\/slow {2}ok/);
    const startedAt = (line: string) => Date.parse(line.split('  ')[0]);
    assert.ok(startedAt(lines[32]) < startedAt(lines[31]), 'the stream started before the last burst request');
  });
});
