import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { startMcpHttpServer } from '../helpers/mcp-http-server.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const MASTER = 'sk-master-mcp';
const stdioScript = fileURLToPath(new URL('../helpers/mcp-stdio-server.ts', import.meta.url));

/** An upstream MCP server over Streamable HTTP (stateless: a server per request), recording each tool it runs. */
async function startHttpUpstream(): Promise<{ url: string; calls: string[]; close(): Promise<void> }> {
  const calls: string[] = [];
  const build = () => {
    const server = new McpServer({ name: 'http-fixture', version: '1' });
    server.registerTool('add', { inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => {
      calls.push('add');
      return { content: [{ type: 'text', text: String(a + b) }] };
    });
    server.registerTool('slow', { inputSchema: { ms: z.number() } }, async ({ ms }, extra) => {
      calls.push('slow');
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, ms);
        extra.signal.addEventListener('abort', () => (clearTimeout(timer), resolve(undefined)));
      });
      return { content: [{ type: 'text', text: 'done' }] };
    });
    server.registerTool('steps', {}, async (extra) => {
      calls.push('steps');
      const progressToken = extra._meta?.progressToken;
      for (let step = 1; step <= 3; step++) {
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: step, total: 3, message: `step ${step}` },
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return { content: [{ type: 'text', text: 'three steps' }] };
    });
    server.registerTool('secret', {}, () => {
      calls.push('secret');
      return { content: [{ type: 'text', text: 'the secret' }] };
    });
    server.registerTool('big', {}, () => {
      calls.push('big');
      return { content: [{ type: 'text', text: 'x'.repeat(20_000) }] };
    });
    return server;
  };
  return { ...(await startMcpHttpServer(build)), calls };
}

async function connect(url: string, key: string): Promise<Client> {
  const client = new Client({ name: 'test-client', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

async function until<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, withinMs = 15_000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${withinMs} ms (last: ${JSON.stringify(value)})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const names = async (client: Client) => (await client.listTools()).tools.map((t) => t.name).sort();
const textOf = (result: Record<string, unknown>) => (result.content as { text: string }[])[0].text;

describe('MCP gateway: /mcp in front of a Streamable HTTP and a stdio server', () => {
  let upstream: Awaited<ReturnType<typeof startHttpUpstream>>;
  let gw: TestGateway;
  let teamKey: string;
  let admin: Client;
  let team: Client;

  before(async () => {
    upstream = await startHttpUpstream();
    gw = await startGateway({
      auth: { master_key: MASTER },
      providers: { mock: {} },
      ledger: { store_content: true },
      mcp: {
        servers: {
          web: { url: upstream.url, headers: { 'x-team': 'a' }, call_timeout_s: 1 },
          files: { command: process.execPath, args: [stdioScript], env: { FIXTURE_GREETING: 'hello' } },
        },
        // A stdio server that exits stays down this long: long enough for the test to see its tools hidden.
        restart_initial_ms: 1500,
        max_result_bytes: 10_000,
        grants: [
          { project: 'team', tools: ['web__add', 'web__slow', 'web__steps', 'web__big', 'files__*'] },
          { project: 'team', endpoint: 'support', tools: ['web__secret'] },
        ],
      },
      tiers: { tight: { requests_per_minute: 2 } },
    });
    teamKey = (await projectWithKey(gw.url, MASTER, 'team')).key as string;
    await until(
      'both servers up',
      async () => (await fetch(`${gw.url}/readyz`)).json(),
      (body: any) => body.checks.mcp.state === 'ok',
    );
    admin = await connect(`${gw.url}/mcp`, MASTER);
    team = await connect(`${gw.url}/mcp`, teamKey);
  });
  after(async () => {
    await Promise.all([admin?.close(), team?.close()]);
    await gw?.close();
    await upstream?.close();
  });

  it('lists the tools of both servers, prefixed, and only those the key may call', async () => {
    assert.deepEqual(await names(admin), [
      'files__echo',
      'files__exit',
      'files__pid',
      'web__add',
      'web__big',
      'web__secret',
      'web__slow',
      'web__steps',
    ]);
    assert.deepEqual(await names(team), ['files__echo', 'files__exit', 'files__pid', 'web__add', 'web__big', 'web__slow', 'web__steps']);
  });

  it('calls a tool on each server', async () => {
    assert.equal(textOf(await team.callTool({ name: 'web__add', arguments: { a: 2, b: 3 } })), '5');
    assert.equal(textOf(await team.callTool({ name: 'files__echo', arguments: { text: 'hi' } })), 'echo: hi');
  });

  it('gets a prompt and reads a resource of the stdio server', async () => {
    const prompts = await team.listPrompts();
    assert.deepEqual(
      prompts.prompts.map((p) => p.name),
      ['files__greeting'],
    );
    const prompt = await team.getPrompt({ name: 'files__greeting', arguments: { name: 'Ada' } });
    assert.deepEqual(prompt.messages[0].content, { type: 'text', text: 'Say hello to Ada.' });
    const resources = await team.listResources();
    assert.deepEqual(
      resources.resources.map((r) => r.uri),
      ['fixture://readme'],
    );
    const read = await team.readResource({ uri: 'fixture://readme' });
    assert.equal((read.contents[0] as { text: string }).text, 'the stdio fixture readme');
  });

  it('streams the progress notifications of a call back to the client as they come', async () => {
    const seen: { progress: number; total?: number; message?: string }[] = [];
    const result = await team.request({ method: 'tools/call', params: { name: 'web__steps', arguments: {} } }, CallToolResultSchema, {
      onprogress: (p) => seen.push(p),
    });
    assert.equal(textOf(result), 'three steps');
    assert.deepEqual(
      seen.map((p) => [p.progress, p.total, p.message]),
      [
        [1, 3, 'step 1'],
        [2, 3, 'step 2'],
        [3, 3, 'step 3'],
      ],
    );
  });

  it('refuses a tool the key may not call with a JSON-RPC error, never forwarding it', async () => {
    const before = upstream.calls.length;
    const err = await team.callTool({ name: 'web__secret', arguments: {} }).then(
      () => assert.fail('the call went through'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof McpError);
    assert.equal(err.code, -32602);
    assert.deepEqual(err.data, { code: 'mcp_tool_not_allowed', type: 'permission_error', status: 403 });
    assert.deepEqual(upstream.calls.slice(before), []);
    const unknown = await team.callTool({ name: 'web__nothing', arguments: {} }).catch((e: McpError) => e);
    assert.equal((unknown as McpError).data && (unknown as any).data.code, 'mcp_tool_not_found');
  });

  it('answers a slow tool past its timeout with a JSON-RPC error, and caps a large result', async () => {
    const started = Date.now();
    const slow = (await team.callTool({ name: 'web__slow', arguments: { ms: 5000 } }).catch((e: unknown) => e)) as McpError;
    assert.ok(slow instanceof McpError);
    assert.equal((slow.data as any).code, 'mcp_tool_timeout');
    assert.ok(Date.now() - started < 4000, 'answered at the timeout, not when the tool finished');
    const big = (await team.callTool({ name: 'web__big', arguments: {} }).catch((e: unknown) => e)) as McpError;
    assert.equal((big.data as any).code, 'mcp_result_too_large');
  });

  it('records every tool call in the request log, and counts them in /metrics', async () => {
    const res = await fetch(`${gw.url}/v1/requests?provider=web&limit=50`, { headers: { authorization: `Bearer ${MASTER}` } });
    const rows = ((await res.json()) as { data: Record<string, any>[] }).data;
    const add = rows.find((r) => r.requested_model === 'web__add');
    assert.ok(add, 'a row for web__add');
    assert.equal(add.surface, 'mcp');
    assert.equal(add.model, 'add');
    assert.equal(add.project_id, 'team');
    assert.equal(add.outcome, 'ok');
    assert.equal(add.prompt, '{"a":2,"b":3}');
    assert.equal(add.bytes_in, 13);
    assert.ok(add.bytes_out > 0);
    const refused = rows.find((r) => r.requested_model === 'web__secret');
    assert.equal(refused?.error?.code, 'mcp_tool_not_allowed');
    assert.equal(rows.find((r) => r.requested_model === 'web__slow')?.error?.code, 'mcp_tool_timeout');
    const metrics = await (await fetch(`${gw.url}/metrics`, { headers: { authorization: `Bearer ${MASTER}` } })).text();
    assert.match(metrics, /sluice_mcp_tool_calls_total\{server="web",tool="add",outcome="ok"\} [1-9]/);
    assert.match(metrics, /sluice_mcp_tool_calls_total\{server="web",tool="secret",outcome="mcp_tool_not_allowed"\} 1/);
    assert.match(metrics, /sluice_mcp_tool_call_duration_seconds_count\{server="files",tool="echo"\} [1-9]/);
    assert.match(metrics, /sluice_mcp_server_up\{server="files"\} 1/);
  });

  it("logs the stdio server's stderr lines", () => {
    assert.ok(gw.logs.some((line) => line.includes('"mcp_server":"files"') && line.includes('stdio fixture started hello')));
  });

  it('hides the tools of a stdio server that died, reports it, and shows them again once restarted', async () => {
    const pid = textOf(await admin.callTool({ name: 'files__pid', arguments: {} }));
    const exit = await admin.callTool({ name: 'files__exit', arguments: {} }).catch((e: unknown) => e);
    assert.equal(((exit as McpError).data as any).code, 'mcp_server_unavailable');
    assert.deepEqual(await names(team), ['web__add', 'web__big', 'web__slow', 'web__steps']);
    const ready = (await (await fetch(`${gw.url}/readyz`)).json()) as any;
    assert.deepEqual(ready.checks.mcp, { state: 'down', required: false, reason: 'not up: files' });
    assert.equal(ready.status, 'ready', 'a server down fails no one else');
    assert.equal(textOf(await team.callTool({ name: 'web__add', arguments: { a: 1, b: 1 } })), '2');
    // Within 45 s on a loaded machine: starting a Node process that loads the SDK can take seconds there.
    await until(
      'the stdio server back',
      () => names(team),
      (list) => list.includes('files__echo'),
      45_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; the log: ${gw.logs.filter((line) => line.includes('"mcp_server"')).join('')}`);
    });
    assert.notEqual(textOf(await admin.callTool({ name: 'files__pid', arguments: {} })), pid, 'a new process');
  });

  it("serves a project's endpoint, where the endpoint's grants apply, to that project's keys only", async () => {
    assert.equal((await adminCall(gw.url, MASTER, 'POST', '/admin/endpoints', { project: 'team', name: 'support', model: 'mock/echo' })).status, 201);
    const atEndpoint = await connect(`${gw.url}/team/support/mcp`, teamKey);
    try {
      assert.ok((await names(atEndpoint)).includes('web__secret'));
      assert.equal(textOf(await atEndpoint.callTool({ name: 'web__secret', arguments: {} })), 'the secret');
    } finally {
      await atEndpoint.close();
    }
    const otherKey = (await projectWithKey(gw.url, MASTER, 'other')).key as string;
    const res = await fetch(`${gw.url}/team/support/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${otherKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    assert.equal(res.status, 404);
  });

  it("charges tool calls to the key's tier: past requests_per_minute, a JSON-RPC error, not forwarded", async () => {
    const tightKey = (await projectWithKey(gw.url, MASTER, 'team', { tier: 'tight' })).key as string;
    const tight = await connect(`${gw.url}/mcp`, tightKey);
    try {
      for (let i = 0; i < 2; i++) await tight.callTool({ name: 'web__add', arguments: { a: i, b: 0 } });
      const before = upstream.calls.length;
      const refused = (await tight.callTool({ name: 'web__add', arguments: { a: 9, b: 9 } }).catch((e: unknown) => e)) as McpError;
      assert.ok(refused instanceof McpError);
      assert.equal((refused.data as any).code, 'rate_limit_exceeded');
      assert.equal(upstream.calls.length, before);
    } finally {
      await tight.close();
    }
  });

  it('refuses a wrong key with 401, before any session', async () => {
    const res = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: { authorization: 'Bearer sk-sluice-wrong', 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    assert.equal(res.status, 401);
    await assert.rejects(connect(`${gw.url}/mcp`, 'sk-sluice-wrong'));
  });

  it('keeps a session to the key that opened it, and ends it on DELETE', async () => {
    const session = await connect(`${gw.url}/mcp`, teamKey);
    const transport = session.transport as StreamableHTTPClientTransport;
    const id = transport.sessionId ?? '';
    const stolen = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${MASTER}`,
        'mcp-session-id': id,
        'mcp-protocol-version': '2025-06-18',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }),
    });
    assert.equal(stolen.status, 404);
    await transport.terminateSession();
    await session.close();
    const gone = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${teamKey}`,
        'mcp-session-id': id,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/list' }),
    });
    assert.equal(gone.status, 404);
  });
});
