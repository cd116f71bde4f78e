import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../config/load-config.ts';
import { listeningLines, originOf } from './listening-lines.ts';

describe('listeningLines', () => {
  it('says where, the providers, and that no master key means no auth', () => {
    const config = loadConfig({ env: {} });
    assert.deepEqual(listeningLines('http://127.0.0.1:8080', '2 workers', ['mock', 'openai'], config), [
      'sluice listening on http://127.0.0.1:8080 (2 workers)',
      'providers: mock, openai',
      'no SLUICE_MASTER_KEY set: serving without auth (loopback only)',
    ]);
  });

  it('says nothing of auth when a master key is set, and no note when there is none', () => {
    const config = loadConfig({ env: { SLUICE_MASTER_KEY: 'mk-test' } });
    assert.deepEqual(listeningLines('http://127.0.0.1:8080', undefined, ['mock'], config), [
      'sluice listening on http://127.0.0.1:8080',
      'providers: mock',
    ]);
  });

  it('writes an IPv6 address in brackets', () => {
    assert.equal(originOf({ address: '::1', family: 'IPv6', port: 4000 }), 'http://[::1]:4000');
    assert.equal(originOf({ address: '127.0.0.1', family: 'IPv4', port: 4000 }), 'http://127.0.0.1:4000');
  });
});
