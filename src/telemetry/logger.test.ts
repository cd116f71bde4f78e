import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pino from 'pino';
import { createLogger, logDestination, readable } from './logger.ts';

describe('the readable log lines (a terminal)', () => {
  it('puts the time, the level and the message first, then the fields as key=value', () => {
    const lines: string[] = [];
    const logger = pino({ base: undefined }, readable({ write: (line: string) => void lines.push(line) }));
    logger.info({ request_id: 'req_1', model: 'gpt-4o', cost_usd: 0.0014, ttft_ms: null }, 'request');
    logger.warn('ledger: the store is slow');
    assert.match(lines[0], /^\d\d:\d\d:\d\d\.\d{3} INFO  request  request_id=req_1 model=gpt-4o cost_usd=0.0014 ttft_ms=null\n$/);
    assert.match(lines[1], /^\d\d:\d\d:\d\d\.\d{3} WARN  ledger: the store is slow\n$/);
  });
});

/** C0, DEL, C1, U+2028 and U+2029. */
const isControl = (code: number) => code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;

describe("log injection: a client's text cannot write terminal escapes or forged lines, in any format", () => {
  const hostile = 'gpt\u001b[31m-red\n{"level":30,"msg":"forged"}\u009b2J';
  for (const format of ['json', 'pretty'] as const) {
    it(`${format}: one line per entry, no raw control character, the text kept in escaped form`, () => {
      let out = '';
      const logger = createLogger({ level: 'info', format }, { write: (line: string) => void (out += line) });
      logger.info({ requested_model: hostile, 'key\nforged': 1 }, `msg ${hostile}`);
      assert.equal(out.split('\n').length, 2, out);
      assert.ok(out.endsWith('\n'));
      const raw = Array.from({ length: out.length - 1 }, (_, i) => out.charCodeAt(i)).filter(isControl);
      assert.deepEqual(raw, []);
      if (format === 'json') {
        const entry = JSON.parse(out) as Record<string, unknown>;
        assert.deepEqual([entry.requested_model, entry.msg, entry['key\nforged']], [hostile, `msg ${hostile}`, 1]);
      } else {
        assert.ok(out.includes(`requested_model=${JSON.stringify(hostile).replace('\u009b', '\\u009b')}`), out);
        assert.ok(out.includes('msg gpt\\u001b[31m-red\\u000a{"level":30'), out);
      }
    });
  }

  it('pretty: a value with a space or an = is quoted, so it cannot pass for another field', () => {
    const lines: string[] = [];
    const logger = pino({ base: undefined }, readable({ write: (line: string) => void lines.push(line) }));
    logger.info({ model: 'x outcome=ok', empty: '' }, 'request');
    assert.match(lines[0], / model="x outcome=ok" empty=""\n$/);
  });
});

describe('the log destination (batched, as bytes)', () => {
  const scratch = () => join(mkdtempSync(join(tmpdir(), 'sluice-log-')), 'out.log');

  it('writes every line whole and in order, multi-byte text included, across many batches', async () => {
    const path = scratch();
    const destination = logDestination(openSync(path, 'w'));
    const logger = pino({ base: undefined }, destination);
    // ~300 bytes a line: a few hundred lines fill several 16 KiB batches, with turns of the loop between.
    for (let i = 0; i < 600; i++) {
      logger.info({ i, text: `é—漢字 ${'x'.repeat(i % 200)}` }, 'request');
      if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
    }
    await new Promise<void>((resolve, reject) => destination.flush((err) => (err ? reject(err) : resolve())));
    const lines = readFileSync(path, 'utf8').split('\n').slice(0, -1);
    assert.equal(lines.length, 600);
    lines.forEach((line, i) => {
      const entry = JSON.parse(line) as { i: number; text: string; msg: string };
      assert.deepEqual([entry.i, entry.text, entry.msg], [i, `é—漢字 ${'x'.repeat(i % 200)}`, 'request']);
    });
  });

  it('loses no line when the process exits right after writing it', () => {
    const path = scratch();
    const script = [
      `import { openSync } from 'node:fs';`,
      `import pino from 'pino';`,
      `import { logDestination } from ${JSON.stringify(new URL('./logger.ts', import.meta.url).href)};`,
      `const logger = pino({ base: undefined }, logDestination(openSync(${JSON.stringify(path)}, 'w')));`,
      `for (let i = 0; i < 100; i++) logger.info({ i }, 'request');`,
      'process.exit(0);',
    ].join('\n');
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    const lines = readFileSync(path, 'utf8').split('\n').slice(0, -1);
    assert.deepEqual(
      lines.map((line) => (JSON.parse(line) as { i: number }).i),
      Array.from({ length: 100 }, (_, i) => i),
    );
  });
});
