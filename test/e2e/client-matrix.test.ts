import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { UpstreamReply } from '../helpers/fake-upstream.ts';
import { upstreamConfig, useUpstreamGateway } from '../helpers/gateway.ts';
import { libraries, type Reading } from './client-matrix/libraries.ts';
import { targets, type Expected, type Target } from './client-matrix/targets.ts';

/**
 * The client matrix (issue 13): each client library streams text, calls a tool and reads usage
 * through sluice, against the mock and a recording of each native provider replayed by a fake
 * upstream (Azure OpenAI and Vertex AI replay the OpenAI, Anthropic and Gemini recordings, which is
 * what their APIs send). A failure's test name says the library, the call and the target.
 */
describe('client matrix', () => {
  const { upstream, gw } = useUpstreamGateway((url) => ({
    config: { providers: { ...(upstreamConfig(url).providers as object), vertex: { base_url: url, project: 'matrix' } } },
    env: {
      AZURE_OPENAI_ENDPOINT: url,
      AZURE_OPENAI_API_KEY: 'az-matrix',
      VERTEX_ACCESS_TOKEN: 'ya29.matrix',
      ANTHROPIC_API_KEY: 'sk-ant-matrix',
      ANTHROPIC_BASE_URL: url,
      GEMINI_API_KEY: 'AIza-matrix',
      GEMINI_BASE_URL: url,
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL_BEDROCK_RUNTIME: url,
    },
  }));

  /** The upstream answers these bodies in turn, the last one again for any later call. */
  const replay = (replies: (() => UpstreamReply)[]): void => {
    let next = 0;
    upstream.reply(() => replies[Math.min(next++, replies.length - 1)]());
  };

  for (const library of libraries) {
    for (const target of targets) {
      it(`${library.name} / streams text / ${target.name}`, async () => {
        if (target.textReply) replay([target.textReply]);
        const reading = await library.run(gw.url, target.textModel, undefined);
        assertText(reading.text, target.text);
        assertUsage(reading, target.text.usage);
      });

      it(`${library.name} / calls a tool / ${target.name}`, async () => {
        if (target.toolReply && target.textReply) replay(library.agentLoop ? [target.toolReply, target.textReply] : [target.toolReply]);
        const reading = await library.run(gw.url, target.toolModel, target.tool.name);
        assert.deepEqual(reading.toolCall, { name: target.tool.name, args: target.tool.args });
        if (library.agentLoop) {
          // The run ends with the model's answer after the tool; its usage is both calls'.
          assert.ok(reading.text.length > 0, 'the agent run ends with text');
          assertUsage(reading, sum(target.tool.usage, target.text.usage));
        } else assertUsage(reading, target.tool.usage);
      });
    }
  }
});

function assertText(text: string, expected: Expected): void {
  if (expected.textPrefix) assert.ok(text.startsWith(expected.text), `text ${JSON.stringify(text.slice(0, 80))}`);
  else assert.equal(text, expected.text);
}

function assertUsage(reading: Reading, expected: Target['text']['usage']): void {
  if (expected === 'reported') {
    assert.ok(reading.usage.input > 0 && reading.usage.output > 0, `usage ${JSON.stringify(reading.usage)}`);
  } else assert.deepEqual(reading.usage, expected);
}

function sum(a: Target['text']['usage'], b: Target['text']['usage']): Target['text']['usage'] {
  return a === 'reported' || b === 'reported' ? 'reported' : { input: a.input + b.input, output: a.output + b.output };
}
