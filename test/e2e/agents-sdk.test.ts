import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent, OpenAIProvider, Runner, setTracingDisabled, tool } from '@openai/agents';
import OpenAI from 'openai';
import { z } from 'zod';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * The OpenAI Agents SDK's tool loop against sluice's mock: mock/tools calls the agent's tool, then
 * answers with text once the tool's result is in the conversation, so the run ends (it used to call
 * again until the SDK's MaxTurnsExceededError).
 */
describe('@openai/agents against mock/tools', () => {
  let gw: TestGateway;
  before(async () => {
    setTracingDisabled(true);
    gw = await startGateway();
  });
  after(() => gw.close());

  for (const useResponses of [false, true]) {
    it(`runs a tool and ends with the mock's answer (${useResponses ? 'responses' : 'chat completions'})`, async () => {
      const calls: string[] = [];
      const lookup = tool({
        name: 'lookup_weather',
        description: 'The weather in a city.',
        parameters: z.object({ location: z.string(), unit: z.string() }),
        execute: async ({ location, unit }) => {
          calls.push(location);
          return `18 degrees ${unit} in ${location}`;
        },
      });
      const openAIClient = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const runner = new Runner({ modelProvider: new OpenAIProvider({ openAIClient, useResponses }) });
      // The settings the SDK's users set routinely, which /v1/responses used to refuse.
      const modelSettings = { truncation: 'auto' as const, providerData: { prompt_cache_key: 'agent-1', safety_identifier: 'user-1' } };
      const agent = new Agent({ name: 'weather', instructions: 'Use the tool.', model: 'mock/tools', tools: [lookup], modelSettings });
      const result = await runner.run(agent, 'What is the weather in Paris?', { maxTurns: 3 });
      assert.deepEqual(calls, ['Paris']);
      assert.equal(result.finalOutput, 'The tool returned: 18 degrees celsius in Paris');
    });
  }
});
