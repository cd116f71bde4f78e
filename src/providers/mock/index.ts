import { setTimeout as sleep } from 'node:timers/promises';
import { errors } from '../../errors/catalog.ts';
import { upstreamFailure } from '../../upstream/http-client.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { EventBatches, ProviderAdapter } from '../types.ts';
import { type ScriptStep, scenarios } from './scenarios.ts';

async function* play(steps: ScriptStep[], signal: AbortSignal): EventBatches {
  for (const step of steps) {
    if (step.delayMs > 0) {
      try {
        await sleep(step.delayMs, undefined, { signal });
      } catch (err) {
        throw upstreamFailure('mock', err, signal);
      }
    }
    yield step.events;
  }
}

/** The built-in simulator: no key, no network. See scenarios.ts for the models. */
export function createMockProvider(): ProviderAdapter {
  const scenarioFor = (model: string) => {
    // Own keys only: `mock/constructor` must not find Object.prototype's.
    const s = Object.hasOwn(scenarios, model) ? scenarios[model] : undefined;
    if (!s) throw errors.modelNotFound(`mock/${model}`, `the mock provider has ${Object.keys(scenarios).join(', ')}`);
    if (s.refuse) throw s.refuse;
    return s;
  };
  return {
    name: 'mock',
    listModels: () => Object.keys(scenarios),
    async stream(request, model, ctx) {
      return play(scenarioFor(model).script(request), ctx.signal);
    },
    async complete(request, model, ctx) {
      const events: CanonicalEvent[] = [];
      for await (const batch of play(scenarioFor(model).script(request), ctx.signal)) events.push(...batch);
      return events;
    },
  };
}
