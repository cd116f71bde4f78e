import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { UpstreamClient } from '../../upstream/http-client.ts';
import { createAzureProvider } from './index.ts';

const settings = {
  name: 'azure',
  endpoint: 'https://res.openai.azure.com/',
  apiVersion: '2024-10-21',
  apiKey: 'azure-key',
  entra: undefined,
  deployments: { 'gpt-realtime': 'rt-deployment' },
  headers: {},
  models: [],
  responsesApi: false,
};

test("a Realtime session goes to the v1 API's realtime URL, the model as its deployment, with api-key", async () => {
  // No HTTP call is made: the connection is only where and with what the socket opens.
  const adapter = createAzureProvider(settings, {} as UpstreamClient);
  const connection = await adapter.realtime!.connection('gpt-realtime');
  assert.equal(connection.url, 'wss://res.openai.azure.com/openai/v1/realtime?model=rt-deployment');
  assert.equal(connection.headers['api-key'], 'azure-key');
  assert.equal(connection.headers.authorization, undefined);
});
