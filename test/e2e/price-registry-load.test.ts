import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestGateway } from '../helpers/gateway.ts';
import { recordModuleLoads } from '../helpers/module-loads.ts';

// The gateway is imported once the loads are recorded.
const loaded = recordModuleLoads();
const { startGateway } = await import('../helpers/gateway.ts');

/** Whether the pricing registry's package (src/accounting/genai-prices.ts) was loaded. */
const registryLoaded = () => loaded('/@pydantic/genai-prices/');

describe('the pricing registry is loaded at its first use, not at start', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ providers: { anthropic: { api_key: 'sk-ant-unused' } } });
  });
  after(() => gw.close());

  it('is not loaded by a gateway that started and answered a request that needs no price', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(res.status, 200, await res.text());
    assert.equal(registryLoaded(), false);
  });

  it('is loaded by the first thing that needs it (the models the registry prices for a native provider)', async () => {
    const res = await fetch(`${gw.url}/v1/models`);
    const list = (await res.json()) as { data: { id: string; owned_by: string }[] };
    assert.equal(registryLoaded(), true);
    assert.ok(list.data.filter((m) => m.owned_by === 'anthropic').length > 5, 'the registry lists its anthropic models');
  });
});
