import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { azureResourceUrl, azureUrl } from './url.ts';

describe('azureUrl', () => {
  const deployments = { endpoint: 'https://res.openai.azure.com/', apiVersion: '2024-10-21' };
  const v1 = { endpoint: 'https://res.openai.azure.com', apiVersion: 'v1' };

  it('puts a deployment operation under its deployment, with the api-version', () => {
    assert.equal(
      azureUrl(deployments, 'chat/completions', 'gpt-4o-prod'),
      'https://res.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21',
    );
  });

  it("puts a resource operation (no deployment) at the resource's root", () => {
    assert.equal(azureUrl(deployments, 'responses'), 'https://res.openai.azure.com/openai/responses?api-version=2024-10-21');
  });

  it('calls the v1 API without an api-version, deployment or not', () => {
    assert.equal(azureUrl(v1, 'chat/completions', 'gpt-4o-prod'), 'https://res.openai.azure.com/openai/v1/chat/completions');
    assert.equal(azureUrl(v1, 'files'), 'https://res.openai.azure.com/openai/v1/files');
  });

  it('keeps a deployment one path segment', () => {
    assert.equal(
      azureUrl(deployments, 'embeddings', 'a/../b'),
      'https://res.openai.azure.com/openai/deployments/a%2F..%2Fb/embeddings?api-version=2024-10-21',
    );
  });
});

describe('azureResourceUrl', () => {
  const deployments = { endpoint: 'https://res.openai.azure.com', apiVersion: '2024-10-21' };
  const v1 = { endpoint: 'https://res.openai.azure.com/', apiVersion: 'v1' };

  it("adds the client's query after the api-version, in one query", () => {
    assert.equal(
      azureResourceUrl(deployments, '/batches', new URLSearchParams({ limit: '2', after: 'batch_1' })),
      'https://res.openai.azure.com/openai/batches?api-version=2024-10-21&limit=2&after=batch_1',
    );
  });

  it('starts the query itself on the v1 API, which has no api-version', () => {
    assert.equal(
      azureResourceUrl(v1, '/files', new URLSearchParams({ purpose: 'batch' })),
      'https://res.openai.azure.com/openai/v1/files?purpose=batch',
    );
  });

  it('is the bare operation without a query, the id kept as the surface encoded it', () => {
    assert.equal(
      azureResourceUrl(deployments, '/files/file-a%2Fb/content', new URLSearchParams()),
      'https://res.openai.azure.com/openai/files/file-a%2Fb/content?api-version=2024-10-21',
    );
    assert.equal(azureResourceUrl(v1, '/batches/batch_1/cancel'), 'https://res.openai.azure.com/openai/v1/batches/batch_1/cancel');
  });
});
