import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { calcPrice } from '@pydantic/genai-prices';
import type { Usage } from '../protocol/canonical/usage.ts';
import { PricingRegistry, providerKinds, roundUsd } from './pricing.ts';

/** Per-million-token prices times token counts, in dollars. */
const mtok = (tokens: number, dollarsPerMillion: number) => (tokens * dollarsPerMillion) / 1_000_000;

/** Floating-point sums in a different order differ in the last bits; a billionth of a cent does not. */
function assertDollars(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) < 1e-12, `${what}: ${actual} != ${expected}`);
}

const usage = (u: Omit<Usage, 'source'>): Usage => ({ source: 'provider', ...u });

/**
 * Known models with the registry's per-million prices (@pydantic/genai-prices 0.1.8, pinned in
 * package.json), checked both against the registry's own calcPrice and by hand.
 */
const cases: {
  name: string;
  provider: string;
  registryProvider: string;
  model: string;
  usage: Usage;
  at?: Date;
  byHand: number;
}[] = [
  {
    name: 'openai gpt-4o-mini, plain',
    provider: 'openai',
    registryProvider: 'openai',
    model: 'gpt-4o-mini',
    usage: usage({ inputTokens: 1200, outputTokens: 350 }),
    byHand: mtok(1200, 0.15) + mtok(350, 0.6),
  },
  {
    name: 'openai gpt-4o, cached input at the cache-read price',
    provider: 'openai',
    registryProvider: 'openai',
    model: 'gpt-4o-2024-08-06',
    usage: usage({ inputTokens: 2048, cachedInputTokens: 1536, outputTokens: 100 }),
    byHand: mtok(2048 - 1536, 2.5) + mtok(1536, 1.25) + mtok(100, 10),
  },
  {
    name: 'anthropic claude-sonnet-4-5, cache read and cache write',
    provider: 'anthropic',
    registryProvider: 'anthropic',
    model: 'claude-sonnet-4-5',
    // sluice's inputTokens include both cache partitions (OpenAI semantics).
    usage: usage({ inputTokens: 10_000, cachedInputTokens: 6000, cacheWriteTokens: 2000, outputTokens: 300 }),
    byHand: mtok(2000, 3) + mtok(6000, 0.3) + mtok(2000, 3.75) + mtok(300, 15),
  },
  {
    name: 'google gemini-2.5-flash, reasoning billed as output',
    provider: 'google',
    registryProvider: 'google',
    model: 'gemini-2.5-flash',
    // outputTokens include the 1000 thinking tokens.
    usage: usage({ inputTokens: 100, outputTokens: 1200, reasoningTokens: 1000 }),
    byHand: mtok(100, 0.3) + mtok(1200, 2.5),
  },
  {
    name: 'deepseek deepseek-chat, standard hours (UTC 00:30-16:30)',
    provider: 'deepseek',
    registryProvider: 'deepseek',
    model: 'deepseek-chat',
    usage: usage({ inputTokens: 1000, cachedInputTokens: 400, outputTokens: 200 }),
    at: new Date('2025-06-02T10:00:00Z'),
    byHand: mtok(600, 0.27) + mtok(400, 0.07) + mtok(200, 1.1),
  },
  {
    name: 'deepseek deepseek-chat, off-peak hours at half price',
    provider: 'deepseek',
    registryProvider: 'deepseek',
    model: 'deepseek-chat',
    usage: usage({ inputTokens: 1000, cachedInputTokens: 400, outputTokens: 200 }),
    at: new Date('2025-06-02T20:00:00Z'),
    byHand: mtok(600, 0.135) + mtok(400, 0.035) + mtok(200, 0.55),
  },
  {
    name: 'xai grok-3-mini (the registry calls the provider x-ai)',
    provider: 'xai',
    registryProvider: 'x-ai',
    model: 'grok-3-mini',
    usage: usage({ inputTokens: 500, cachedInputTokens: 306, outputTokens: 80, reasoningTokens: 60 }),
    byHand: mtok(194, 0.3) + mtok(306, 0.075) + mtok(80, 0.5),
  },
];

describe('PricingRegistry', () => {
  for (const c of cases) {
    it(`costs ${c.name}`, () => {
      const at = c.at ?? new Date();
      const cost = new PricingRegistry().cost(c.provider, c.model, c.usage, at);
      const registry = calcPrice(
        {
          input_tokens: c.usage.inputTokens,
          output_tokens: c.usage.outputTokens,
          cache_read_tokens: c.usage.cachedInputTokens ?? 0,
          cache_write_tokens: c.usage.cacheWriteTokens ?? 0,
        },
        c.model,
        { providerId: c.registryProvider, timestamp: at },
      );
      assert.ok(registry, 'the registry knows the model');
      assert.equal(cost.costUsd, roundUsd(registry.total_price));
      assertDollars(cost.costUsd, c.byHand, 'by hand');
      assert.equal(cost.priceKnown, true);
      assert.equal(cost.source, 'registry');
    });
  }

  it('prices Azure OpenAI and Vertex AI from their registry lists, and a named instance (type: azure / vertex) as its kind', () => {
    const used = usage({ inputTokens: 1000, outputTokens: 100 });
    const pricing = new PricingRegistry({}, providerKinds({ 'azure-eu': { type: 'azure' }, 'vertex-eu': { type: 'vertex' }, up: {} }));
    for (const [provider, model, registryProvider] of [
      ['azure', 'gpt-4o', 'azure'],
      ['azure-eu', 'gpt-4o', 'azure'],
      ['vertex', 'gemini-2.5-flash', 'google'],
      ['vertex-eu', 'claude-sonnet-4-5@20250929', 'google'],
    ]) {
      const registry = calcPrice({ input_tokens: 1000, output_tokens: 100 }, model, { providerId: registryProvider });
      assert.ok(registry, `the registry prices ${model}`);
      assert.equal(pricing.cost(provider, model, used).costUsd, roundUsd(registry.total_price), provider);
    }
    assert.equal(pricing.cost('up', 'gpt-4o', used).priceKnown, false);
  });

  it('cost_usd carries no float noise (was 0.0036764999999999996): rounded to 1e-10 USD', () => {
    const pricing = new PricingRegistry({ 'qwen/qwen3-max': { input_mtok: 1.2, output_mtok: 6 } });
    // The registry's own sum: 9 * 0.15 / 1e6 + 9 * 0.6 / 1e6 is 0.000006749999999999999 in binary floating point.
    const noisy = calcPrice({ input_tokens: 9, output_tokens: 9 }, 'gpt-4o-mini', { providerId: 'openai' });
    assert.equal(String(noisy?.total_price), '0.000006749999999999999');
    const registry = pricing.cost('openai', 'gpt-4o-mini', usage({ inputTokens: 9, outputTokens: 9 }));
    assert.equal(JSON.stringify(registry.costUsd), '0.00000675');
    // A config price goes through the same rounding: (1 * 1.2 + 1 * 6) / 1e6 is 0.0000072000000000000005 unrounded.
    assert.equal(JSON.stringify(pricing.cost('qwen', 'qwen3-max', usage({ inputTokens: 1, outputTokens: 1 })).costUsd), '0.0000072');
    assert.equal(roundUsd(0.0036764999999999996), 0.0036765);
    assert.equal(roundUsd(1.23456789012345e-7), 1.235e-7);
  });

  it('resolves each model once and answers the same afterwards (the cache is per provider/model)', () => {
    const pricing = new PricingRegistry();
    const u = usage({ inputTokens: 1000, outputTokens: 1000 });
    const first = pricing.cost('openai', 'gpt-4o-mini', u);
    assert.deepEqual(pricing.cost('openai', 'gpt-4o-mini', u), first);
    // Same model id under another provider is another price.
    assert.notEqual(pricing.cost('groq', 'llama-3.3-70b-versatile', u).costUsd, first.costUsd);
    assertDollars(pricing.cost('groq', 'llama-3.3-70b-versatile', u).costUsd, mtok(1000, 0.59) + mtok(1000, 0.79), 'groq');
  });

  it('costs an unknown model 0 and flags it, without throwing', () => {
    const pricing = new PricingRegistry();
    const u = usage({ inputTokens: 1000, outputTokens: 1000 });
    assert.deepEqual(pricing.cost('openai', 'gpt-nonexistent-9', u), { costUsd: 0, priceKnown: false, source: 'unknown' });
    // A provider the registry does not have (a self-hosted OpenAI-compatible server).
    assert.deepEqual(pricing.cost('my-vllm', 'llama-3.3-70b', u), { costUsd: 0, priceKnown: false, source: 'unknown' });
  });

  it('charges nothing for mock and ollama, whatever the model', () => {
    const pricing = new PricingRegistry();
    const u = usage({ inputTokens: 1_000_000, outputTokens: 1_000_000 });
    assert.deepEqual(pricing.cost('mock', 'echo', u), { costUsd: 0, priceKnown: true, source: 'free' });
    assert.deepEqual(pricing.cost('ollama', 'qwen3', u), { costUsd: 0, priceKnown: true, source: 'free' });
  });

  it('uses a config price: it wins over the registry and adds providers the registry lacks', () => {
    const qwen = { input_mtok: 1.2, output_mtok: 6, cache_read_mtok: 0.24 };
    const mini = { input_mtok: 1, output_mtok: 2 };
    const pricing = new PricingRegistry({ 'qwen/qwen3-max': qwen, 'openai/gpt-4o-mini': mini, 'ollama/llama3': mini });
    const u = usage({ inputTokens: 1000, cachedInputTokens: 250, cacheWriteTokens: 100, outputTokens: 400 });

    const q = pricing.cost('qwen', 'qwen3-max', u);
    // No cache_write price: cache writes cost the input price.
    assertDollars(q.costUsd, mtok(650, 1.2) + mtok(250, 0.24) + mtok(100, 1.2) + mtok(400, 6), 'qwen');
    assert.deepEqual({ ...q, costUsd: 0 }, { costUsd: 0, priceKnown: true, source: 'config', price: qwen });
    // The registry has no Qwen (DashScope) prices at all: without the override the cost is unknown.
    assert.equal(new PricingRegistry().cost('qwen', 'qwen3-max', u).priceKnown, false);

    // No cache_read price either: cached tokens cost the input price.
    const m = pricing.cost('openai', 'gpt-4o-mini', u);
    assertDollars(m.costUsd, mtok(1000, 1) + mtok(400, 2), 'override of a registry model');
    assert.equal(m.source, 'config');
    // Even a free provider is charged when the config says so.
    assert.equal(pricing.cost('ollama', 'llama3', u).source, 'config');
    // Other models of the same provider still come from the registry.
    assert.equal(pricing.cost('openai', 'gpt-4o', u).source, 'registry');
  });

  it('prices usage whose cached tokens exceed its input (a broken upstream) as all cached, without throwing', () => {
    const pricing = new PricingRegistry();
    const broken = pricing.cost('google', 'gemini-2.5-flash', { inputTokens: 8, outputTokens: 2, cachedInputTokens: 2 ** 53, source: 'provider' });
    const allCached = pricing.cost('google', 'gemini-2.5-flash', { inputTokens: 8, outputTokens: 2, cachedInputTokens: 8, source: 'provider' });
    assert.equal(broken.priceKnown, true);
    assert.equal(broken.costUsd, allCached.costUsd);
  });

  it("prices audio tokens at the model's audio rates where the registry has them, as text elsewhere", () => {
    const pricing = new PricingRegistry();
    // gpt-audio: text 2.5 / 10, audio 32 / 64 per million; audio tokens are part of input and output.
    const audio = usage({ inputTokens: 1000, outputTokens: 400, audioInputTokens: 600, audioOutputTokens: 300 });
    const expected = mtok(400, 2.5) + mtok(600, 32) + mtok(100, 10) + mtok(300, 64);
    assertDollars(pricing.cost('openai', 'gpt-audio', audio).costUsd, expected, 'gpt-audio');
    // gpt-4o-mini has no audio price: the same tokens cost what text does.
    const text = usage({ inputTokens: 1000, outputTokens: 400 });
    assert.equal(pricing.cost('openai', 'gpt-4o-mini', audio).costUsd, pricing.cost('openai', 'gpt-4o-mini', text).costUsd);
    // More audio than input (a broken upstream) is clamped: priced as all audio, without throwing.
    const broken = usage({ inputTokens: 10, outputTokens: 4, audioInputTokens: 2 ** 40, audioOutputTokens: 2 ** 40 });
    const allAudio = usage({ inputTokens: 10, outputTokens: 4, audioInputTokens: 10, audioOutputTokens: 4 });
    assert.equal(pricing.cost('openai', 'gpt-audio', broken).costUsd, pricing.cost('openai', 'gpt-audio', allAudio).costUsd);
  });

  it('bills prediction tokens as the output they are part of: the details do not change the cost', () => {
    const pricing = new PricingRegistry();
    const plain = usage({ inputTokens: 100, outputTokens: 80 });
    const predicted = usage({ inputTokens: 100, outputTokens: 80, acceptedPredictionTokens: 50, rejectedPredictionTokens: 20 });
    assert.equal(pricing.cost('openai', 'gpt-4o', predicted).costUsd, pricing.cost('openai', 'gpt-4o', plain).costUsd);
  });

  it("prices an image edit's input image tokens at the registry's image input price", () => {
    const pricing = new PricingRegistry();
    const u = usage({ inputTokens: 50, outputTokens: 4160, imageInputTokens: 10 });
    // gpt-image-1: text input $5, image input $10, output $40 a million tokens.
    assertDollars(pricing.cost('openai', 'gpt-image-1', u).costUsd, mtok(40, 5) + mtok(10, 10) + mtok(4160, 40), 'gpt-image-1');
    // More image tokens than input (a broken upstream) are priced as all image input, without throwing.
    const broken = usage({ inputTokens: 50, outputTokens: 0, imageInputTokens: 2 ** 40 });
    assertDollars(pricing.cost('openai', 'gpt-image-1', broken).costUsd, mtok(50, 10), 'clamped');
  });

  it('prices media units: seconds from the registry (whisper-1 by the hour), images and characters from the config', () => {
    const pricing = new PricingRegistry({
      'openai/dall-e-3': { input_mtok: 0, output_mtok: 0, per_image: 0.04 },
      'openai/tts-1': { input_mtok: 0, output_mtok: 0, per_million_characters: 15 },
      'groq/whisper-large-v3': { input_mtok: 0, output_mtok: 0, per_audio_minute: 0.002 },
    });
    const units = (u: Usage['units'], tokens = 0) => usage({ inputTokens: tokens, outputTokens: 0, units: u });
    assert.deepEqual(
      [
        pricing.cost('openai', 'whisper-1', units({ audioSeconds: 90 })).costUsd,
        pricing.cost('openai', 'whisper-1', units({ audioSeconds: 90 })).priceKnown,
      ],
      [0.009, true],
    );
    assert.equal(pricing.cost('openai', 'dall-e-3', units({ images: 3 })).costUsd, 0.12);
    assert.equal(pricing.cost('openai', 'tts-1', units({ characters: 1000 })).costUsd, 0.015);
    assert.equal(pricing.cost('groq', 'whisper-large-v3', units({ audioSeconds: 30 })).costUsd, 0.001);
  });

  it('a model billed by units alone without them (a whisper-1 transcript as text) has no known price; one billed by tokens has', () => {
    const pricing = new PricingRegistry({ 'openai/dall-e-3': { input_mtok: 0, output_mtok: 0, per_image: 0.04 } });
    const tokens = usage({ inputTokens: 0, outputTokens: 12 });
    assert.deepEqual([pricing.cost('openai', 'whisper-1', tokens).costUsd, pricing.cost('openai', 'whisper-1', tokens).priceKnown], [0, false]);
    assert.equal(pricing.cost('openai', 'dall-e-3', usage({ inputTokens: 5, outputTokens: 0 })).priceKnown, false);
    // A unit without a price of its own is no gap for a model billed by tokens: gpt-image-1's images.
    const image = pricing.cost('openai', 'gpt-image-1', usage({ inputTokens: 10, outputTokens: 100, units: { images: 1 } }));
    assert.equal(image.priceKnown, true);
    assertDollars(image.costUsd, mtok(10, 5) + mtok(100, 40), 'images not billed apart');
    // A config price of zero tokens and no unit price is the operator saying the model is free.
    assert.equal(new PricingRegistry({ 'up/free': { input_mtok: 0, output_mtok: 0 } }).cost('up', 'free', tokens).priceKnown, true);
  });
});
