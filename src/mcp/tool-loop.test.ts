import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LedgerRecord } from '../accounting/ledger-record.ts';
import { MASTER } from '../admission/admission.ts';
import { mcpSchema } from '../config/mcp-schema.ts';
import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import type { CanonicalRequest } from '../protocol/canonical/request.ts';
import type { McpHub } from './hub.ts';
import { toolLoop, type ToolLoopRun, type ToolLoopSetup } from './tool-loop.ts';

const request: CanonicalRequest = { model: 'up/m', messages: [{ role: 'user', content: 'What is 2 + 3?' }] };
const usage = (inputTokens: number, outputTokens: number): CanonicalEvent => ({
  type: 'usage',
  usage: { inputTokens, outputTokens, source: 'provider' },
});

/** A model step that calls calc__add (`call`) or answers with text. */
function step(kind: 'call' | 'answer', n = 1): CanonicalEvent[] {
  if (kind === 'answer') {
    return [{ type: 'text', choice: 0, text: 'It is 5.' }, { type: 'finish', choice: 0, reason: 'stop' }, usage(20, 4), { type: 'end' }];
  }
  return [
    { type: 'tool-call-start', choice: 0, index: 0, id: `call_${n}`, name: 'calc__add' },
    { type: 'tool-call-delta', choice: 0, index: 0, arguments: '{"a":2,"b":3}' },
    { type: 'finish', choice: 0, reason: 'tool_calls' },
    usage(10, 5),
    { type: 'end' },
  ];
}

async function* batches(events: CanonicalEvent[]): AsyncGenerator<CanonicalEvent[]> {
  yield events;
}

/** A loop over scripted model steps and a calc server whose add answers 5; what it sent and recorded. */
function harness(steps: CanonicalEvent[][], over: { maxSteps?: number; budgetSpent?: (spent: number) => boolean } = {}) {
  const records: LedgerRecord[] = [];
  const requests: CanonicalRequest[] = [];
  const server = { name: 'calc', connected: { request: async () => ({ content: [{ type: 'text', text: '5' }] }) } };
  const hub = { tool: (prefixed: string) => (prefixed === 'calc__add' ? { server, name: 'add' } : undefined) } as unknown as McpHub;
  const setup: ToolLoopSetup = {
    offer: {
      functions: [],
      listed: [{ server: 'calc', tools: [{ name: 'add', inputSchema: { type: 'object' } }] }],
      names: new Map([['calc__add', { server: 'calc', name: 'add' }]]),
    },
    scope: {
      caller: MASTER,
      access: { tool: () => true, server: () => true },
      config: mcpSchema.parse({ max_steps: over.maxSteps ?? 8 }),
      storeContentChars: 0,
    },
    deps: { hub, admit: () => ({ settle: () => {} }), record: (r) => void records.push(r), newId: () => 'unused' },
  };
  let next = 1;
  const run: ToolLoopRun = {
    requestId: 'req1',
    open: async (sent) => {
      requests.push(sent);
      return batches(steps[next++]);
    },
    budgetSpent: over.budgetSpent,
    signal: new AbortController().signal,
  };
  const events = async () => {
    const out: CanonicalEvent[] = [];
    for await (const batch of toolLoop(setup, run, request, batches(steps[0]))) out.push(...batch);
    return out;
  };
  return { events, records, requests };
}

const kinds = (events: CanonicalEvent[]) => events.map((e) => (e.type === 'mcp' ? `mcp:${e.step.kind}` : e.type));

describe('toolLoop', () => {
  it('runs the call, sends the result back, and ends with the answer, one finish and the summed usage', async () => {
    const h = harness([step('call'), step('answer')]);
    const events = await h.events();
    assert.deepEqual(kinds(events), [
      'mcp:list-tools',
      'mcp:call-start',
      'mcp:call-arguments',
      'mcp:call-done',
      'usage',
      'mcp:next-step',
      'text',
      'finish',
      'usage',
      'end',
    ]);
    const done = events.find((e) => e.type === 'mcp' && e.step.kind === 'call-done');
    assert.deepEqual(done, {
      type: 'mcp',
      step: { kind: 'call-done', id: 'call_1', server: 'calc', name: 'add', arguments: '{"a":2,"b":3}', output: '5', error: null },
    });
    assert.deepEqual(events.at(-2), { type: 'usage', usage: { inputTokens: 30, outputTokens: 9, source: 'provider' } });
    assert.deepEqual(h.requests[0].messages.slice(1), [
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'calc__add', arguments: '{"a":2,"b":3}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '5' },
    ]);
    // One ledger row per call, under the request's id.
    assert.deepEqual(
      h.records.map((r) => [r.requestId, r.surface, r.provider, r.model]),
      [['req1-mcp-1', 'mcp', 'calc', 'add']],
    );
  });

  it('stops at max_steps: the last calls are not run, the finish is length', async () => {
    const h = harness([step('call', 1), step('call', 2)], { maxSteps: 2 });
    const events = await h.events();
    assert.equal(h.records.length, 1);
    const done = events.filter((e) => e.type === 'mcp' && e.step.kind === 'call-done');
    assert.match(JSON.stringify(done[1]), /Not run: the answer reached mcp.max_steps \(2\)/);
    assert.deepEqual(kinds(events).slice(-5), ['mcp:call-done', 'mcp:max-steps', 'finish', 'usage', 'end']);
    assert.deepEqual(
      events.find((e) => e.type === 'finish'),
      { type: 'finish', choice: 0, reason: 'length' },
    );
  });

  it('ends as length when the budget is spent between steps, without calling the model again', async () => {
    let asked = 0;
    const h = harness([step('call'), step('answer')], {
      budgetSpent: (spent) => {
        asked = spent;
        return true;
      },
    });
    const events = await h.events();
    assert.equal(h.requests.length, 0);
    assert.deepEqual(kinds(events).slice(-3), ['finish', 'usage', 'end']);
    assert.deepEqual(
      events.find((e) => e.type === 'finish'),
      { type: 'finish', choice: 0, reason: 'length' },
    );
    // The step's output (the call's name and arguments), and the conversation the next call would be sent.
    const conversation = [
      ...request.messages,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'calc__add', arguments: '{"a":2,"b":3}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '5' },
    ];
    assert.equal(asked, 'calc__add{"a":2,"b":3}'.length + JSON.stringify({ messages: conversation }).length);
  });

  it('answers the model with an error for arguments that are not a JSON object', async () => {
    const h = harness([
      [
        { type: 'tool-call-start', choice: 0, index: 0, id: 'call_1', name: 'calc__add' },
        { type: 'tool-call-delta', choice: 0, index: 0, arguments: '[1]' },
        { type: 'finish', choice: 0, reason: 'tool_calls' },
      ],
      step('answer'),
    ]);
    await h.events();
    assert.equal(h.requests[0].messages.at(-1)?.role, 'tool');
    assert.match(String(h.requests[0].messages.at(-1)?.content), /^Error: The arguments of calc__add must be a JSON object/);
  });

  it("ends with the client's own tool call after running the step's MCP calls", async () => {
    const h = harness([
      [
        ...step('call').slice(0, 2),
        { type: 'tool-call-start', choice: 0, index: 1, id: 'call_c', name: 'lookup' },
        { type: 'finish', choice: 0, reason: 'tool_calls' },
      ],
    ]);
    const events = await h.events();
    assert.equal(h.requests.length, 0);
    assert.equal(h.records.length, 1);
    assert.deepEqual(kinds(events).slice(-3), ['tool-call-start', 'mcp:call-done', 'finish']);
  });
});
