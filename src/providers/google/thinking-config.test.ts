import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLevelBasedModel, thinkingConfig } from './thinking-config.ts';

describe('thinkingConfig', () => {
  it('Gemini 2.5: a token budget per effort, thought summaries on', () => {
    const efforts = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
    assert.deepEqual(
      efforts.map((e) => thinkingConfig(e, 'gemini-2.5-flash')),
      [
        { thinkingBudget: 0 },
        { thinkingBudget: 512, includeThoughts: true },
        { thinkingBudget: 1024, includeThoughts: true },
        { thinkingBudget: 8192, includeThoughts: true },
        { thinkingBudget: 24576, includeThoughts: true },
        { thinkingBudget: 24576, includeThoughts: true },
      ],
    );
    assert.deepEqual(thinkingConfig('xhigh', 'gemini-2.5-pro'), { thinkingBudget: 32768, includeThoughts: true });
  });

  it('Gemini 3: a thinking level per effort', () => {
    const efforts = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
    assert.deepEqual(
      efforts.map((e) => thinkingConfig(e, 'gemini-3-pro-preview')),
      [
        { thinkingLevel: 'minimal' },
        { thinkingLevel: 'minimal', includeThoughts: true },
        { thinkingLevel: 'low', includeThoughts: true },
        { thinkingLevel: 'medium', includeThoughts: true },
        { thinkingLevel: 'high', includeThoughts: true },
        { thinkingLevel: 'high', includeThoughts: true },
      ],
    );
  });

  it('no reasoning_effort leaves the model default alone', () => {
    assert.equal(thinkingConfig(undefined, 'gemini-2.5-pro'), undefined);
    assert.equal(thinkingConfig(null, 'gemini-3-flash-preview'), undefined);
  });

  it('tells level-based models from budget-based ones', () => {
    const names = [
      'gemini-3-pro-preview',
      'gemini-3.1-pro-preview',
      'models/gemini-3-flash-preview',
      'gemini-2.5-flash',
      'gemini-2.0-flash',
      'gemini-exp-1206',
    ];
    assert.deepEqual(names.map(isLevelBasedModel), [true, true, true, false, false, false]);
  });
});
