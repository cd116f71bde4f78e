import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MASTER } from '../../admission/admission.ts';
import { inputFileModels, messageBatchModels, refuseDisallowedBatchModels } from './allowed-models.ts';

describe("a batch's models against the key's model list", () => {
  const caller = { ...MASTER, admin: false, allowedModels: ['openai/gpt-4o', 'cheap'] };

  it('allows a model by its name or provider/name, refuses any other with model_not_allowed naming it', () => {
    refuseDisallowedBatchModels(caller, 'openai', ['gpt-4o', 'cheap']);
    assert.throws(() => refuseDisallowedBatchModels(caller, 'openai', ['gpt-4o', 'gpt-4o-mini']), {
      code: 'model_not_allowed',
      message: /gpt-4o-mini/,
    });
    refuseDisallowedBatchModels(MASTER, 'openai', ['anything']);
  });

  it("reads an input file's body.model per line and a create body's params.model per request", () => {
    const jsonl = ['{"body":{"model":"a"}}', '{"body":{"model":"b"}}', '{"body":{}}', 'not json', '', '{"body":{"model":"a"}}'].join('\n');
    assert.deepEqual([...inputFileModels(jsonl)], ['a', 'b']);
    assert.deepEqual([...messageBatchModels([{ params: { model: 'c' } }, { params: {} }, null, { params: { model: 'c' } }])], ['c']);
  });
});
