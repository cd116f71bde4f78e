import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import OpenAI from 'openai';
import { z } from 'zod';
import { projectWithKey } from '../helpers/admin-client.ts';
import { type FakeUpstream, type RecordedRequest, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { startMcpHttpServer } from '../helpers/mcp-http-server.ts';
import { startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';

const MASTER = 'sk-master-mcp-tools';
const MODEL = 'up/gpt-test';

/** An MCP server over Streamable HTTP (stateless) with `add`, which the team may call, and `secret`, which it may not. */
async function startMcpUpstream(): Promise<{ url: string; calls: string[]; close(): Promise<void> }> {
  const calls: string[] = [];
  const build = () => {
    const server = new McpServer({ name: 'calc', version: '1' });
    server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => {
      calls.push(`add ${a} ${b}`);
      return { content: [{ type: 'text', text: String(a + b) }] };
    });
    server.registerTool('secret', {}, () => {
      calls.push('secret');
      return { content: [{ type: 'text', text: 'the secret' }] };
    });
    return server;
  };
  return { ...(await startMcpHttpServer(build)), calls };
}

interface ChatBody {
  stream?: boolean;
  messages: { role: string; content?: string | null }[];
  tools?: { function: { name: string } }[];
}

/** Step 1: 10 tokens in, 5 out; step 2: 20 in, 4 out. */
const USAGE = { call: { prompt_tokens: 10, completion_tokens: 5 }, answer: { prompt_tokens: 20, completion_tokens: 4 } };

/**
 * A model (OpenAI's Chat Completions wire) that calls `calc__add` when it is offered and has no
 * result yet, and answers with the result once it sees one; asked to go on "forever", it calls
 * the tool at every step.
 */
function model(req: RecordedRequest) {
  const body = req.json as ChatBody;
  const last = body.messages.at(-1);
  const forever = body.messages.some((m) => m.role === 'user' && m.content?.includes('forever'));
  const offered = (body.tools ?? []).some((t) => t.function.name === 'calc__add');
  const call = offered && (forever || last?.role !== 'tool');
  const text = last?.role === 'tool' ? `The answer is ${last.content}.` : 'No tools.';
  const n = body.messages.filter((m) => m.role === 'tool').length + 1;
  const usage = call ? USAGE.call : USAGE.answer;
  const toolCall = { index: 0, id: `call_${n}`, type: 'function', function: { name: 'calc__add', arguments: '' } };
  if (!body.stream) {
    const message = call
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [{ ...toolCall, index: undefined, function: { name: 'calc__add', arguments: '{"a":2,"b":3}' } }],
        }
      : { role: 'assistant', content: text };
    const completion = {
      id: 'chatcmpl-up',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-test',
      choices: [{ index: 0, message, finish_reason: call ? 'tool_calls' : 'stop' }],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    };
    return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(completion) };
  }
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const frames = [chunk({ role: 'assistant', content: '' })];
  if (call) {
    frames.push(chunk({ tool_calls: [toolCall] }));
    frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":2,' } }] }));
    frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: '"b":3}' } }] }));
    frames.push(chunk({}, 'tool_calls'));
  } else {
    for (const word of text.split(/(?<= )/)) frames.push(chunk({ content: word }));
    frames.push(chunk({}, 'stop'));
  }
  const total = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
  frames.push(
    `data: ${JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'gpt-test', choices: [], usage: total })}\n\n`,
  );
  frames.push('data: [DONE]\n\n');
  return { headers: { 'content-type': 'text/event-stream' }, pieces: frames };
}

const MCP_TOOL = { type: 'mcp', server_label: 'calc', require_approval: 'never' } as const;

describe('MCP tools from any model: sluice runs the tool loop', () => {
  let upstream: FakeUpstream;
  let mcp: Awaited<ReturnType<typeof startMcpUpstream>>;
  let gw: TestGateway;
  let client: OpenAI;
  /** A key of the same project on a tier whose budget pays for one step, not the conversation sent again. */
  let budgeted: OpenAI;

  before(async () => {
    [upstream, mcp] = await Promise.all([startFakeUpstream(), startMcpUpstream()]);
    upstream.reply(model);
    gw = await startGateway({
      ...upstreamConfig(upstream.url),
      auth: { master_key: MASTER },
      pricing: { [MODEL]: { input_mtok: 1, output_mtok: 2 } },
      mcp: {
        servers: { calc: { url: mcp.url } },
        grants: [{ project: 'team', tools: ['calc__add'] }],
        default_tools: [],
        max_steps: 3,
      },
      tiers: { small: { budgets: [{ period: 'day', limit_usd: 0.0004 }] } },
    });
    const { key } = await projectWithKey(gw.url, MASTER, 'team');
    client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key as string, maxRetries: 0, timeout: 20_000 });
    const small = await projectWithKey(gw.url, MASTER, 'team', { tier: 'small' });
    budgeted = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: small.key as string, maxRetries: 0, timeout: 20_000 });
    for (let i = 0; i < 150 && ((await (await fetch(`${gw.url}/readyz`)).json()) as any).checks.mcp.state !== 'ok'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  after(async () => {
    await gw?.close();
    await Promise.all([upstream?.close(), mcp?.close()]);
  });

  /** A row of the request log, read with the master key. */
  const record = async (id: string): Promise<Record<string, any>> => {
    const res = await fetch(`${gw.url}/v1/requests/${id}`, { headers: { authorization: `Bearer ${MASTER}` } });
    assert.equal(res.status, 200, `the row of ${id}`);
    return (await res.json()) as Record<string, any>;
  };

  /** The model requests since `from`. */
  const since = (from: number) => upstream.requests.slice(from).map((r) => r.json as ChatBody & Record<string, any>);

  it('chat, streamed: the call runs in sluice, the client sees the answer, the call in `sluice`, and the summed usage', async () => {
    const from = upstream.requests.length;
    const { data: stream, response } = await client.chat.completions
      .create({
        model: MODEL,
        messages: [{ role: 'user', content: 'What is 2 + 3?' }],
        tools: [MCP_TOOL as any],
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    const sluice: any[] = [];
    const finishes: (string | null)[] = [];
    for await (const chunk of stream) {
      const c = chunk as typeof chunk & { sluice?: unknown };
      if (c.sluice) sluice.push(c.sluice);
      for (const choice of chunk.choices) {
        assert.equal(choice.delta.tool_calls, undefined, 'the MCP call is never a tool call for the client to run');
        text += choice.delta.content ?? '';
        if (choice.finish_reason) finishes.push(choice.finish_reason);
      }
      if (chunk.usage) usage = chunk.usage;
    }
    assert.equal(text, 'The answer is 5.');
    assert.deepEqual(finishes, ['stop']);
    assert.deepEqual(sluice, [
      {
        mcp_call: { id: 'call_1', type: 'mcp_call', server_label: 'calc', name: 'add', arguments: '{"a":2,"b":3}', output: '5', error: null },
      },
    ]);
    assert.equal(usage?.prompt_tokens, 30);
    assert.equal(usage?.completion_tokens, 9);

    const [first, second] = since(from);
    assert.equal(since(from).length, 2);
    // The grants apply as at /mcp: the team may call add, not secret, which is not offered.
    assert.deepEqual(
      first.tools?.map((t) => t.function.name),
      ['calc__add'],
    );
    assert.deepEqual(second.messages.at(-1), { role: 'tool', tool_call_id: 'call_1', content: '5' });
    assert.equal(second.messages.at(-2)?.role, 'assistant');

    // One row for the model request (both steps summed), one per tool call, under the request's id.
    const requestId = response.headers.get('x-request-id') as string;
    const row = await record(requestId);
    assert.equal(row.usage.input_tokens, 30);
    assert.equal(row.usage.output_tokens, 9);
    assert.equal(row.usage.estimated, false);
    assert.equal(row.cost_usd, (30 * 1 + 9 * 2) / 1e6);
    assert.equal(row.outcome, 'ok');
    const call = await record(`${requestId}-mcp-1`);
    assert.equal(call.surface, 'mcp');
    assert.equal(call.provider, 'calc');
    assert.equal(call.model, 'add');
    assert.equal(call.requested_model, 'calc__add');
    assert.equal(call.project_id, 'team');
  });

  it('chat, whole: the answer, the calls in `sluice.mcp_calls`, the summed usage', async () => {
    const completion = (await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'What is 2 + 3?' }],
      tools: [MCP_TOOL as any],
    })) as OpenAI.ChatCompletion & { sluice?: any };
    assert.equal(completion.choices[0].message.content, 'The answer is 5.');
    assert.equal(completion.choices[0].message.tool_calls, undefined);
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.equal(completion.sluice.mcp_calls.length, 1);
    assert.equal(completion.sluice.mcp_calls[0].output, '5');
    assert.equal(completion.usage?.prompt_tokens, 30);
    assert.equal(completion.usage?.completion_tokens, 9);
  });

  it("Responses, streamed: OpenAI's mcp_list_tools and mcp_call items and events", async () => {
    const stream = await client.responses.create({
      model: MODEL,
      input: 'What is 2 + 3?',
      tools: [MCP_TOOL as any],
      stream: true,
    });
    const types: string[] = [];
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.completed') final = event.response;
    }
    for (const type of [
      'response.mcp_list_tools.in_progress',
      'response.mcp_list_tools.completed',
      'response.mcp_call.in_progress',
      'response.mcp_call_arguments.delta',
      'response.mcp_call_arguments.done',
      'response.mcp_call.completed',
      'response.output_text.delta',
    ]) {
      assert.ok(types.includes(type), `${type} in ${types.join(', ')}`);
    }
    assert.ok(final);
    assert.deepEqual(
      final.output.map((item) => item.type),
      ['mcp_list_tools', 'mcp_call', 'message'],
    );
    const [listed, call] = final.output as any[];
    assert.deepEqual(
      listed.tools.map((t: { name: string }) => t.name),
      ['add'],
    );
    assert.equal(call.server_label, 'calc');
    assert.equal(call.arguments, '{"a":2,"b":3}');
    assert.equal(call.output, '5');
    assert.equal(final.output[2].type === 'message' && (final.output[2].content[0] as { text: string }).text, 'The answer is 5.');
    assert.equal(final.usage?.input_tokens, 30);
    assert.equal(final.usage?.output_tokens, 9);
  });

  it('Responses, whole: the same items', async () => {
    const response = await client.responses.create({ model: MODEL, input: 'What is 2 + 3?', tools: [MCP_TOOL as any] });
    assert.deepEqual(
      response.output.map((item) => item.type),
      ['mcp_list_tools', 'mcp_call', 'message'],
    );
    assert.equal(response.output_text, 'The answer is 5.');
    assert.equal(response.usage?.input_tokens, 30);
    assert.deepEqual(response.tools, [
      {
        type: 'mcp',
        server_label: 'calc',
        server_url: null,
        allowed_tools: null,
        headers: null,
        require_approval: 'never',
        server_description: null,
      },
    ]);
  });

  it('stops at mcp.max_steps: finish length, the last calls not run, and says so', async () => {
    const from = upstream.requests.length;
    const callsBefore = mcp.calls.length;
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Add forever.' }],
      tools: [MCP_TOOL as any],
      stream: true,
    });
    const sluice: any[] = [];
    const finishes: (string | null)[] = [];
    for await (const chunk of stream) {
      const c = chunk as typeof chunk & { sluice?: any };
      if (c.sluice) sluice.push(c.sluice);
      for (const choice of chunk.choices) if (choice.finish_reason) finishes.push(choice.finish_reason);
    }
    assert.equal(since(from).length, 3, 'three model calls');
    assert.equal(mcp.calls.length - callsBefore, 2, 'the call of the third step is not run');
    assert.deepEqual(finishes, ['length']);
    const calls = sluice.filter((s) => s.mcp_call).map((s) => s.mcp_call);
    assert.deepEqual(
      calls.map((c) => c.output),
      ['5', '5', null],
    );
    assert.match(calls[2].error, /mcp\.max_steps \(3\)/);
    assert.deepEqual(sluice.at(-1), { mcp_max_steps: 3 });
  });

  it('a budget that cannot pay for the next step ends the stream there, cleanly, as length', async () => {
    const from = upstream.requests.length;
    const { data: stream, response } = await budgeted.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'What is 2 + 3?' }], tools: [MCP_TOOL as any], stream: true })
      .withResponse();
    const finishes: (string | null)[] = [];
    let ran = 0;
    for await (const chunk of stream) {
      if ((chunk as typeof chunk & { sluice?: unknown }).sluice) ran++;
      for (const choice of chunk.choices) if (choice.finish_reason) finishes.push(choice.finish_reason);
    }
    assert.equal(since(from).length, 1, 'the model is not called again');
    assert.equal(ran, 1, 'the call of the first step ran');
    assert.deepEqual(finishes, ['length']);
    const row = await record(response.headers.get('x-request-id') as string);
    assert.equal(row.usage.input_tokens, 10);
    assert.equal(row.finish_reason, 'budget_exhausted');
    assert.equal(typeof row.ttft_ms, 'number', 'the call is the first token');
  });

  it('a budget that cannot pay for the next step ends a whole answer there too', async () => {
    const from = upstream.requests.length;
    const completion = (await budgeted.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'What is 2 + 3?' }],
      tools: [MCP_TOOL as any],
    })) as OpenAI.ChatCompletion & { sluice?: any };
    assert.equal(since(from).length, 1);
    assert.equal(completion.choices[0].finish_reason, 'length');
    // A whole answer holds what its budget can pay for while its calls run: the call, which needs
    // the budget not used up, is refused, and the model would read why.
    assert.match(completion.sluice.mcp_calls[0].error, /exceeded your current quota/);
  });

  it('Responses at the step limit: incomplete, reason max_steps', async () => {
    const response = await client.responses.create({ model: MODEL, input: 'Add forever.', tools: [MCP_TOOL as any] });
    assert.equal(response.status, 'incomplete');
    assert.equal(response.incomplete_details?.reason, 'max_steps' as any);
  });

  it('a server that is not configured, or a URL of the client, is a 400 naming the field', async () => {
    const ask = (tool: Record<string, unknown>) =>
      client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], tools: [tool as any] });
    await assert.rejects(ask({ type: 'mcp', server_label: 'github' }), (err: any) => err.status === 400 && err.param === 'tools[0].server_label');
    await assert.rejects(
      client.responses.create({
        model: MODEL,
        input: 'hi',
        tools: [{ type: 'mcp', server_label: 'calc', server_url: 'https://x.example/mcp' } as any],
      }),
      (err: any) => err.status === 400 && err.param === 'tools[0].server_url',
    );
    await assert.rejects(
      ask({ type: 'mcp', server_label: 'calc', require_approval: 'always' }),
      (err: any) => err.status === 400 && err.param === 'tools[0].require_approval',
    );
  });
});
