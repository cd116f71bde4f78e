import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import pino from 'pino';
import { readable } from './logger.ts';

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
