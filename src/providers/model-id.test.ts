import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../errors/gateway-error.ts';
import { checkModelId, type ModelIdRule, modelIdRules } from './model-id.ts';

/** Names a client could use to move the request elsewhere on the provider's host. */
const HOSTILE = [
  '../../../v1/admin/delete?x=',
  '..',
  '.',
  'gemini-2.5-flash/../../admin',
  'gemini?key=x',
  'gemini#frag',
  'gemini%2F..%2Fadmin',
  'gemini\r\nX-Injected: 1',
  'gemini\u0000',
  'models/../tunedModels/x',
  '/gemini',
  'gemini/',
  '',
];

function refuses(rule: ModelIdRule, model: string): boolean {
  try {
    checkModelId('acme', model, rule);
    return false;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.status, 400);
    assert.equal(err.param, 'model');
    assert.equal(err.code, 'invalid_request');
    return true;
  }
}

describe('regression: model-name path traversal to a provider API with the operator key', () => {
  it('Gemini takes plain ids and models/ or tunedModels/ names, nothing that leaves the path segment', () => {
    for (const ok of ['gemini-2.5-flash', 'gemini-2.0-flash-001', 'models/gemini-2.5-pro', 'tunedModels/my-tune-123', 'gemma-3-27b-it']) {
      assert.equal(refuses(modelIdRules.google, ok), false, ok);
    }
    for (const bad of [...HOSTILE, 'publishers/google/models/x', 'models/a/b', 'gemini:generateContent']) {
      assert.equal(refuses(modelIdRules.google, bad), true, JSON.stringify(bad));
    }
  });

  it('Bedrock takes model ids, inference profiles and ARNs (with / and :), no dot segments or query', () => {
    const ok = [
      'anthropic.claude-3-sonnet-20240229-v1:0',
      'us.anthropic.claude-sonnet-4-20250514-v1:0',
      'amazon.nova-micro-v1:0',
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-3-7-sonnet-20250219-v1:0',
      'arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-v2',
      'arn:aws:bedrock:us-east-1:123456789012:custom-model/amazon.titan-text-express-v1:0:8k/abc123def456',
      'arn:aws-us-gov:bedrock:us-gov-west-1:123456789012:provisioned-model/abc123def456',
      'arn:aws:sagemaker:us-east-1:123456789012:endpoint/my-endpoint',
    ];
    for (const id of ok) assert.equal(refuses(modelIdRules.bedrock, id), false, id);
    const bad = [
      ...HOSTILE,
      'anthropic.claude/../../admin',
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/../x',
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/./x',
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/',
      'x'.repeat(2049),
    ];
    for (const id of bad) assert.equal(refuses(modelIdRules.bedrock, id), true, JSON.stringify(id.slice(0, 60)));
  });

  it('a model in the body may be any text without control characters, up to 512 characters', () => {
    for (const ok of ['gpt-4o-mini', 'meta-llama/Llama-3.1-8B-Instruct', 'qwen3:8b', 'anthropic/claude-3.5-sonnet:beta', 'x'.repeat(512)]) {
      assert.equal(refuses(modelIdRules.body, ok), false, ok.slice(0, 40));
    }
    for (const bad of ['', 'a\nb', 'a\u0000', 'a\u007f', 'a\u0085', 'x'.repeat(513)]) {
      assert.equal(refuses(modelIdRules.body, bad), true, JSON.stringify(bad.slice(0, 40)));
    }
  });

  it('the 400 names the id, JSON-quoted and cut short', () => {
    assert.throws(
      () => checkModelId('google', '../admin?x=', modelIdRules.google),
      (err: GatewayError) => err.message.startsWith(`"../admin?x=" is not a valid google model id: expected letters`),
    );
    assert.throws(
      () => checkModelId('google', `a${'/'.repeat(200)}`, modelIdRules.google),
      (err: GatewayError) => err.message.startsWith(`"a${'/'.repeat(79)}…" is not a valid google model id`),
    );
  });
});
