import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mapAzureError } from './map-error.ts';

const body = (error: Record<string, unknown>) => JSON.stringify({ error });

describe('mapAzureError', () => {
  it('keeps content_filter as the code of a refused prompt and names what was flagged', () => {
    const err = mapAzureError(
      'azure',
      400,
      {},
      body({
        message: 'The response was filtered due to the prompt triggering Azure OpenAI content management policy.',
        param: 'prompt',
        code: 'content_filter',
        innererror: {
          code: 'ResponsibleAIPolicyViolation',
          content_filter_result: { hate: { filtered: false, severity: 'safe' }, self_harm: { filtered: true, severity: 'medium' } },
        },
      }),
    );
    assert.equal(err.status, 400);
    assert.equal(err.code, 'content_filter');
    assert.equal(err.param, 'prompt');
    assert.match(err.message, /^azure's content filter refused the prompt \(flagged: self_harm\): The response was filtered/);
  });

  it('says only that the filter refused it when the body lists no verdicts', () => {
    const err = mapAzureError('azure', 400, {}, body({ message: 'filtered', code: 'content_filter' }));
    assert.equal(err.message, "azure's content filter refused the prompt: filtered");
  });

  it("reads any other error as OpenAI's shape", () => {
    const err = mapAzureError(
      'azure',
      404,
      {},
      body({ message: 'The API deployment for this resource does not exist.', code: 'DeploymentNotFound' }),
    );
    assert.equal(err.status, 404);
    assert.equal(err.code, 'model_not_found');
    assert.equal(err.upstreamCode, 'DeploymentNotFound');
  });
});
