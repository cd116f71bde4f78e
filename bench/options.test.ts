import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseOptions } from './options.ts';

describe('bench options', () => {
  it('defaults to every mode, 32 streams fast, 64 then 256 paced, a 1-16-64 unary sweep, 20 ms pacing, two rounds', () => {
    assert.deepEqual(parseOptions([]), {
      modes: ['fast', 'paced', 'unary'],
      concurrency: [32],
      pacedConcurrency: [64, 256],
      unaryConcurrency: [1, 16, 64],
      paceMs: 20,
      fastSeconds: 4,
      pacedSeconds: 5,
      unarySeconds: 3,
      warmupSeconds: 3,
      rounds: 2,
      json: false,
      pin: true,
      profileDir: undefined,
      stages: true,
      ledger: true,
      durableLedger: false,
      workers: 1,
      ledgerPageRows: 1_000_000,
      soak: undefined,
    });
  });

  it('skips the stage profile on request', () => {
    const options = parseOptions(['--no-stages']);
    assert.equal(options !== 'help' && options.stages, false);
  });

  it('takes the soak, 10,000 streams for 180 s unless told', () => {
    const soak = (argv: string[]) => {
      const o = parseOptions(argv);
      return o === 'help' ? o : o.soak;
    };
    assert.deepEqual(soak(['--soak']), { streams: 10_000, seconds: 180, nodeArgs: [] });
    assert.deepEqual(soak(['--soak', '--soak-streams', '300', '--soak-seconds', '10', '--soak-node-args=--max-semi-space-size=8']), {
      streams: 300,
      seconds: 10,
      nodeArgs: ['--max-semi-space-size=8'],
    });
    assert.equal(soak(['--soak-streams', '300']), undefined);
    assert.throws(() => parseOptions(['--soak', '--soak-streams', '1.5']), /--soak-streams must be a positive number/);
  });

  it('takes durations, concurrency, modes and switches', () => {
    const o = parseOptions(['--duration', '2', '--concurrency', '8', '--modes', 'paced', '--json', '--no-pin', '--profile', '/tmp/p', '--no-ledger']);
    assert.notEqual(o, 'help');
    if (o === 'help') return;
    assert.deepEqual(
      [o.fastSeconds, o.pacedSeconds, o.concurrency, o.modes, o.json, o.pin, o.profileDir, o.ledger],
      [2, 2, [8], ['paced'], true, false, '/tmp/p', false],
    );
  });

  it('takes a list of concurrencies, one run of the mode each', () => {
    const o = parseOptions(['--paced-concurrency', '64, 256', '--concurrency', '1,32']);
    assert.notEqual(o, 'help');
    if (o === 'help') return;
    assert.deepEqual(
      [o.pacedConcurrency, o.concurrency],
      [
        [64, 256],
        [1, 32],
      ],
    );
  });

  it('runs the ledger durable (its journal) on request, never without the ledger', () => {
    const o = parseOptions(['--durable-ledger']);
    assert.notEqual(o, 'help');
    if (o === 'help') return;
    assert.deepEqual([o.ledger, o.durableLedger], [true, true]);
    assert.throws(() => parseOptions(['--durable-ledger', '--no-ledger']), /--durable-ledger needs the ledger/);
  });

  it('sizes or skips the ledger paging step', () => {
    const sized = parseOptions(['--ledger-page-rows', '20000']);
    const skipped = parseOptions(['--no-ledger-page']);
    assert.ok(sized !== 'help' && skipped !== 'help');
    assert.deepEqual([sized.ledgerPageRows, skipped.ledgerPageRows], [20_000, undefined]);
    assert.throws(() => parseOptions(['--ledger-page-rows', '0']), /--ledger-page-rows must be a positive number/);
  });

  it('refuses nonsense', () => {
    assert.throws(() => parseOptions(['--concurrency', '0']), /--concurrency must be a positive number/);
    assert.throws(() => parseOptions(['--paced-concurrency', '64,x']), /--paced-concurrency must be a positive number/);
    assert.throws(() => parseOptions(['--rounds', '1.5']), /--rounds must be a positive number/);
    assert.throws(() => parseOptions(['--modes', 'slow']), /unknown mode 'slow' \(fast, paced, unary\)/);
    assert.equal(parseOptions(['--help']), 'help');
  });
});
