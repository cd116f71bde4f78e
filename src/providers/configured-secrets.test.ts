import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configSchema } from '../config/schema.ts';
import { configuredSecrets } from './configured-secrets.ts';

describe('configuredSecrets', () => {
  it('collects the master key, config keys and header values, and every key variable the providers read', () => {
    const config = configSchema.parse({
      auth: { master_key: 'sluice-master-0001' },
      providers: {
        openrouter: { api_key: 'sk-or-file-0002', headers: { 'HTTP-Referer': 'https://app.example', 'X-Token': 'tok-0003' } },
        vllm: { type: 'openai-compatible', base_url: 'http://127.0.0.1:8000/v1', api_key: 'vllm-0004' },
      },
    });
    const env = {
      OPENAI_API_KEY: 'sk-env-0005',
      GEMINI_API_KEY: 'AIza-env-0006',
      AWS_SECRET_ACCESS_KEY: 'aws-secret-0007',
      AWS_SESSION_TOKEN: 'aws-session-0008',
      AWS_BEARER_TOKEN_BEDROCK: 'bedrock-0009',
      ANTHROPIC_API_KEY: '',
      UNRELATED: 'not-a-secret',
    };
    assert.deepEqual(configuredSecrets(config, env).toSorted(), [
      'AIza-env-0006',
      'aws-secret-0007',
      'aws-session-0008',
      'bedrock-0009',
      'https://app.example',
      'sk-env-0005',
      'sk-or-file-0002',
      'sluice-master-0001',
      'tok-0003',
      'vllm-0004',
    ]);
  });
});
