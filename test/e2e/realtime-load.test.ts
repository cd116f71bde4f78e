import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { TestGateway } from '../helpers/gateway.ts';
import { recordModuleLoads } from '../helpers/module-loads.ts';

// The gateway is imported once the loads are recorded. The upgrades go over a raw socket, so
// that nothing but the gateway could load `ws`.
const loaded = recordModuleLoads();
const { startGateway } = await import('../helpers/gateway.ts');

const wsLoaded = () => loaded('/node_modules/ws/');

/** A WebSocket handshake on `path`; resolves with the status line and body of the refusal. */
function upgrade(origin: string, path: string): Promise<{ status: string; body: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
      );
    });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: text.split('\r\n')[0], body: text.slice(text.indexOf('\r\n\r\n') + 4) }));
  });
}

describe('the Realtime relay (and ws) is loaded by the first session, not at start', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({});
  });
  after(() => gw.close());

  it('is not loaded by a gateway that started, answered a request and refused an upgrade elsewhere', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200, await res.text());
    const elsewhere = await upgrade(gw.url, '/v1/somewhere');
    assert.equal(elsewhere.status, 'HTTP/1.1 404 Not Found');
    assert.equal(wsLoaded(), false);
  });

  it('is loaded by the first Realtime upgrade, which is answered as before', async () => {
    const refused = await upgrade(gw.url, '/v1/realtime');
    assert.equal(refused.status, 'HTTP/1.1 400 Bad Request');
    assert.equal((JSON.parse(refused.body) as { error: { param: string } }).error.param, 'model');
    assert.equal(wsLoaded(), true);
  });
});
