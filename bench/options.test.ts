import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOptions } from './options.ts';

describe('bench options', () => {
  it('defaults to both modes, 32 and 64 streams, 20 ms pacing, two rounds', () => {
    assert.deepEqual(parseOptions([]), {
      modes: ['fast', 'paced'],
      concurrency: 32,
      pacedConcurrency: 64,
      paceMs: 20,
      fastSeconds: 4,
      pacedSeconds: 5,
      warmupSeconds: 3,
      rounds: 2,
      json: false,
      pin: true,
      profileDir: undefined,
      ledger: true,
    });
  });

  it('takes durations, concurrency, modes and switches', () => {
    const o = parseOptions(['--duration', '2', '--concurrency', '8', '--modes', 'paced', '--json', '--no-pin', '--profile', '/tmp/p', '--no-ledger']);
    assert.notEqual(o, 'help');
    if (o === 'help') return;
    assert.deepEqual(
      [o.fastSeconds, o.pacedSeconds, o.concurrency, o.modes, o.json, o.pin, o.profileDir, o.ledger],
      [2, 2, 8, ['paced'], true, false, '/tmp/p', false],
    );
  });

  it('refuses nonsense', () => {
    assert.throws(() => parseOptions(['--concurrency', '0']), /--concurrency must be a positive number/);
    assert.throws(() => parseOptions(['--rounds', '1.5']), /--rounds must be a positive number/);
    assert.throws(() => parseOptions(['--modes', 'slow']), /unknown mode 'slow'/);
    assert.equal(parseOptions(['--help']), 'help');
  });
});
