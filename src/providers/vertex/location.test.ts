import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { publisherOf, vertexEndpoint, vertexModelUrl } from './location.ts';

describe('Vertex AI locations', () => {
  it("is a region's own endpoint, the global one for global, or the configured base URL", () => {
    assert.equal(vertexEndpoint({ project: 'p', location: 'us-east5' }), 'https://us-east5-aiplatform.googleapis.com');
    assert.equal(vertexEndpoint({ project: 'p', location: 'global' }), 'https://aiplatform.googleapis.com');
    assert.equal(vertexEndpoint({ project: 'p', location: 'global', baseUrl: 'http://127.0.0.1:9/' }), 'http://127.0.0.1:9');
  });

  it("names a publisher's model under the project and location", () => {
    assert.equal(
      vertexModelUrl({ project: 'my-proj', location: 'europe-west1' }, 'anthropic', 'claude-sonnet-4-5@20250929', 'rawPredict'),
      'https://europe-west1-aiplatform.googleapis.com/v1/projects/my-proj/locations/europe-west1/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict',
    );
  });

  it('refuses a model id that would leave its path segment, naming model', () => {
    for (const model of ['../../x', 'a/b', 'gemini?x=1', '']) {
      assert.throws(
        () => vertexModelUrl({ project: 'p', location: 'global' }, 'google', model, 'generateContent'),
        (err: unknown) => err instanceof GatewayError && err.status === 400 && err.param === 'model',
      );
    }
  });

  it("sends claude-… models to Anthropic's publisher and every other to Google's", () => {
    assert.equal(publisherOf('claude-haiku-4-5@20251001'), 'anthropic');
    assert.equal(publisherOf('gemini-2.5-flash'), 'google');
  });
});
