import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openAIStreamBody } from '../../../test/helpers/fixtures.ts';
import { openAICompatibleRecordings } from '../../../test/helpers/openai-recordings.ts';
import { relayBodies, responsesRecordings } from '../../../test/helpers/responses-recordings.ts';
import { checkStream } from './check-stream.ts';

const ROLE_ON_EVERY_DELTA = 'repeats `role: "assistant"` on every delta (the reference: "present only in the first chunk")';

/**
 * What real servers send that the contract forbids, read from each recording: every one is that
 * server's own deviation (the rule stands; sluice's decoders absorb it and its clients never see
 * it). Every recording not listed conforms.
 */
const UPSTREAM_DEVIATIONS: Record<string, { violations: string[]; why: string }> = {
  'openai-chat/azure-gpt35-text-content-filter.sse': {
    violations: ['2:chat/stable-id'],
    why: 'Azure\'s first chunk (prompt_filter_results only, choices: []) has the id "", the others the real one',
  },
  'huggingface/router-together-deepseek-r1-think-tags.sse': { violations: ['2:chat/role-first'], why: `Together ${ROLE_ON_EVERY_DELTA}` },
  'groq/midstream-error-tool-use-failed.sse': {
    violations: ['95:chat/error-then-done', 'end:done/missing'],
    why: 'Groq closes the stream after its `event: error` frame, with no [DONE]',
  },
  'ollama/openai-compat-qwen3-reasoning-2.sse': { violations: ['2:chat/role-first'], why: `Ollama ${ROLE_ON_EVERY_DELTA}` },
  'ollama/openai-compat-qwen3-reasoning.sse': { violations: ['2:chat/role-first'], why: `Ollama ${ROLE_ON_EVERY_DELTA}` },
  'ollama/openai-compat-qwen3-tool-call.sse': { violations: ['2:chat/role-first'], why: `Ollama ${ROLE_ON_EVERY_DELTA}` },
  'openrouter/native-options-cached-tokens.sse': { violations: ['2:chat/role-first'], why: `OpenRouter ${ROLE_ON_EVERY_DELTA}` },
  'openrouter/reasoning-details.sse': { violations: ['2:chat/role-first'], why: `OpenRouter ${ROLE_ON_EVERY_DELTA}` },
  'openrouter/stream-error-chunk.sse': {
    violations: ['2:chat/role-first', '3:chat/finish-once'],
    why: `OpenRouter ${ROLE_ON_EVERY_DELTA}, and repeats the finish_reason on its usage chunk`,
  },
  'openrouter/text-claude-haiku45.sse': {
    violations: ['2:chat/role-first', '3:chat/finish-once'],
    why: `OpenRouter ${ROLE_ON_EVERY_DELTA}, and repeats the finish_reason on its usage chunk`,
  },
  'openrouter/web-search-annotations.sse': {
    violations: ['2:chat/role-first', '19:chat/finish-once'],
    why: `OpenRouter ${ROLE_ON_EVERY_DELTA}, and repeats the finish_reason on its usage chunk`,
  },
  'gpustack/qwen3-reasoning-content.sse': {
    violations: ['1:chat/role-first', 'end:done/missing'],
    why: 'GPUStack sends no role and no [DONE]',
  },
  'zai/glm-thinking-reasoning-content.sse': { violations: ['2:chat/role-first'], why: `Z.ai ${ROLE_ON_EVERY_DELTA}` },
  'openai-responses/function-call.sse': {
    violations: ['1:responses/sequence'],
    why: 'recorded (March 2025) before OpenAI added sequence_number to Responses events',
  },
  'openai-responses/text-after-function-output.sse': {
    violations: ['1:responses/sequence'],
    why: 'recorded (March 2025) before OpenAI added sequence_number to Responses events',
  },
};

const found = (body: string | Buffer) => checkStream(body).violations.map((v) => `${v.frame ?? 'end'}:${v.rule}`);

describe('sluice check on every recorded client-facing stream', () => {
  for (const name of openAICompatibleRecordings) {
    it(`${name}: a chat completions stream, ${UPSTREAM_DEVIATIONS[name]?.why ?? 'conforming'}`, () => {
      const body = openAIStreamBody(name);
      assert.equal(checkStream(body).kind, 'chat');
      assert.deepEqual(found(body), UPSTREAM_DEVIATIONS[name]?.violations ?? []);
    });
  }

  for (const name of responsesRecordings) {
    it(`${name}: Responses stream(s), ${UPSTREAM_DEVIATIONS[name]?.why ?? 'conforming'}`, () => {
      // A .jsonl recording may hold several streams in a row: each is checked alone.
      for (const body of relayBodies(name)) {
        assert.equal(checkStream(body).kind, 'responses');
        assert.deepEqual(found(body), UPSTREAM_DEVIATIONS[name]?.violations ?? []);
      }
    });
  }

  it('lists no recording that does not exist', () => {
    const all = new Set([...openAICompatibleRecordings, ...responsesRecordings]);
    assert.deepEqual(
      Object.keys(UPSTREAM_DEVIATIONS).filter((name) => !all.has(name)),
      [],
    );
  });
});
