import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, it } from 'node:test';
import { MASTER } from '../pipeline/admit.ts';
import { ConsoleSessions, SESSION_COOKIE } from './sessions.ts';

const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;

describe('console sessions', () => {
  it('presents the key that opened a session for a request that carries its cookie and no key', () => {
    const sessions = new ConsoleSessions();
    const id = sessions.open('sk-master');
    const seen: (string | undefined)[] = [];
    const authenticate = sessions.wrap((req) => {
      seen.push(req.headers.authorization);
      return MASTER;
    });
    void authenticate(request({ cookie: `other=1; ${SESSION_COOKIE}=${id}` }));
    // A key sent with the request wins over the cookie: the key path is unchanged.
    void authenticate(request({ cookie: `${SESSION_COOKIE}=${id}`, authorization: 'Bearer sk-own' }));
    void authenticate(request({ cookie: `${SESSION_COOKIE}=unknown` }));
    assert.deepEqual(seen, ['Bearer sk-master', 'Bearer sk-own', undefined]);
  });

  it('ends a session at logout and after 12 idle hours', () => {
    let now = 0;
    const sessions = new ConsoleSessions(() => now);
    const a = sessions.open('sk-a');
    const b = sessions.open('sk-b');
    sessions.close(request({ cookie: `${SESSION_COOKIE}=${a}` }));
    assert.equal(sessions.keyOf(request({ cookie: `${SESSION_COOKIE}=${a}` })), undefined);
    now = 12 * 60 * 60 * 1000;
    assert.equal(sessions.keyOf(request({ cookie: `${SESSION_COOKIE}=${b}` })), 'sk-b');
    now += 12 * 60 * 60 * 1000 + 1;
    assert.equal(sessions.keyOf(request({ cookie: `${SESSION_COOKIE}=${b}` })), undefined);
  });
});
