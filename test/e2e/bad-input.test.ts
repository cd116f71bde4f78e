import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

/**
 * The bad-input table: malformed requests across every route, each answered with a 4xx in the
 * OpenAI error shape (`{"error":{"message","type","param","code"}}`), naming the parameter where
 * there is one, and never a 500; /v1/messages answers in Anthropic's shape
 * (`{"type":"error","error":{"type","message"}}`), its message naming the parameter. Raw
 * node:http requests, so that bodies and headers reach sluice exactly as written (invalid UTF-8,
 * CR/LF, lying Content-Length...).
 */

const KEY = 'sk-master-bad-input';

interface Case {
  name: string;
  method?: string;
  path?: string;
  /** A JSON value (serialized), a raw string or raw bytes. */
  body?: unknown;
  raw?: string | Buffer;
  headers?: Record<string, string>;
  status: number;
  /** The `param` the error must name; undefined: not checked. */
  param?: string | null;
}

const chat = (body: Record<string, unknown>) => ({ model: 'mock/echo', messages: [{ role: 'user', content: 'hi' }], ...body });
const responses = (body: Record<string, unknown>) => ({ model: 'mock/echo', input: 'hi', ...body });
const messages = (body: Record<string, unknown>) => ({
  model: 'mock/echo',
  max_tokens: 64,
  messages: [{ role: 'user', content: 'hi' }],
  ...body,
});
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** Every typed chat parameter with values of the wrong type or out of range. */
const chatFieldCases: [string, unknown[]][] = [
  ['model', [null, 42, '', [], {}]],
  ['messages', [null, 'hi', {}, [], [null], [42]]],
  ['stream', ['yes', 1, {}]],
  ['temperature', ['hot', -0.1, 2.5, 1e308, []]],
  ['top_p', ['x', -1, 1.5]],
  ['n', [0, -1, 1.5, 1e9, 'two']],
  ['max_tokens', [0, -5, 1.5, 'many']],
  ['max_completion_tokens', [0, 2.5, 'x']],
  ['stop', [42, [1, 2], ['a', 'b', 'c', 'd', 'e']]],
  ['presence_penalty', [3, -3, 'x']],
  ['frequency_penalty', [3, 'x']],
  ['logit_bias', ['x', { 50256: 1000 }, []]],
  ['logprobs', ['true', 1]],
  ['seed', [1.5, 'x']],
  ['user', [42, {}]],
  ['metadata', ['x', { a: 1 }]],
  ['tools', ['x', [42], [{ type: 'function' }], [{ type: 'function', function: { name: 'bad name!' } }]]],
  ['tool_choice', ['sometimes', 42, { type: 'function' }]],
  ['parallel_tool_calls', ['x']],
  ['response_format', ['json', { type: 'xml' }, { type: 'json_schema' }]],
  ['reasoning_effort', ['max', 3]],
  ['stream_options', ['x']],
];

/** The same for /v1/responses. */
const responsesFieldCases: [string, unknown[]][] = [
  ['model', [null, 42, '']],
  ['input', [null, 42, {}, [42], [{ role: 'wizard', content: 'x' }]]],
  ['instructions', [42, []]],
  ['tools', ['x', [{ type: 'function' }], [{ type: 'function', name: 'has space' }]]],
  ['tool_choice', ['maybe', 42]],
  ['max_output_tokens', [0, -1, 1.5, 'x']],
  ['temperature', [-1, 3, 'x']],
  ['top_p', [2, 'x']],
  ['reasoning', ['x', { effort: 'max' }]],
  ['stream', ['x']],
  ['store', ['x']],
  ['previous_response_id', [42]],
];

/** The same for /v1/messages (Anthropic's Messages API). */
const messagesFieldCases: [string, unknown[]][] = [
  ['model', [null, 42, '']],
  ['max_tokens', [null, 0, 1.5, 'x']],
  ['messages', [null, 'hi', [], [{ role: 'system', content: 'x' }], [{ role: 'user', content: 42 }]]],
  ['system', [42, [{ type: 'text' }]]],
  ['temperature', [-0.1, 1.5, 'x']],
  ['top_p', [2, 'x']],
  ['top_k', [-1, 1.5]],
  ['stop_sequences', ['END', [1]]],
  ['stream', ['yes']],
  ['tools', ['x', [{ input_schema: {} }]]],
  ['tool_choice', ['auto', { type: 'sometimes' }, { type: 'tool' }]],
  ['thinking', [{ type: 'enabled' }, { type: 'enabled', budget_tokens: 100 }, { type: 'enabled', budget_tokens: 4096 }]],
  ['service_tier', ['fastest']],
];

const cases: Case[] = [];
for (const [field, values] of chatFieldCases) {
  for (const value of values) {
    cases.push({ name: `chat ${field} = ${JSON.stringify(value) ?? String(value)}`, body: chat({ [field]: value }), status: 400, param: field });
  }
}
for (const [field, values] of responsesFieldCases) {
  for (const value of values) {
    cases.push({
      name: `responses ${field} = ${JSON.stringify(value) ?? String(value)}`,
      path: '/v1/responses',
      body: responses({ [field]: value }),
      status: 400,
      param: field,
    });
  }
}

for (const [field, values] of messagesFieldCases) {
  for (const value of values) {
    cases.push({
      name: `messages ${field} = ${JSON.stringify(value) ?? String(value)}`,
      path: '/v1/messages',
      body: messages({ [field]: value }),
      status: 400,
      // A budget not below max_tokens is the budget's fault.
      param: field === 'thinking' ? 'thinking' : field,
    });
  }
}

cases.push(
  { name: 'messages: no max_tokens', path: '/v1/messages', body: { model: 'mock/echo', messages: [] }, status: 400, param: 'max_tokens' },
  {
    name: 'messages: image without data',
    path: '/v1/messages',
    body: messages({ messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }] }] }),
    status: 400,
    param: 'messages',
  },
  {
    name: 'messages: server tool for a mock model',
    path: '/v1/messages',
    body: messages({ tools: [{ type: 'web_search_20250305', name: 'web_search' }] }),
    status: 400,
    param: 'tools',
  },
  { name: 'messages: JSON array', path: '/v1/messages', raw: '[1]', status: 400 },
  { name: 'messages: truncated JSON', path: '/v1/messages', raw: '{"model":', status: 400 },
  { name: 'messages: unknown model', path: '/v1/messages', body: messages({ model: 'nope/x' }), status: 404 },
  { name: 'messages: no key', path: '/v1/messages', body: messages({}), headers: { authorization: '' }, status: 401 },
  { name: 'messages: text/plain', path: '/v1/messages', body: messages({}), headers: { 'content-type': 'text/plain' }, status: 415 },
  { name: 'count_tokens: no messages', path: '/v1/messages/count_tokens', body: { model: 'mock/echo' }, status: 400, param: 'messages' },
  { name: 'count_tokens: unknown model', path: '/v1/messages/count_tokens', body: messages({ model: 'nope/x' }), status: 404 },
  // POST /v1/embeddings: OpenAI's error shape, the field named.
  { name: 'embeddings: no input', path: '/v1/embeddings', body: { model: 'mock/echo' }, status: 400, param: 'input' },
  { name: 'embeddings: no model', path: '/v1/embeddings', body: { input: 'hi' }, status: 400, param: 'model' },
  { name: 'embeddings: empty input list', path: '/v1/embeddings', body: { model: 'mock/echo', input: [] }, status: 400, param: 'input' },
  {
    name: 'embeddings: empty string among inputs',
    path: '/v1/embeddings',
    body: { model: 'mock/echo', input: ['a', ''] },
    status: 400,
    param: 'input',
  },
  {
    name: 'embeddings: input of a wrong type',
    path: '/v1/embeddings',
    body: { model: 'mock/echo', input: { text: 'a' } },
    status: 400,
    param: 'input',
  },
  {
    name: 'embeddings: unknown encoding_format',
    path: '/v1/embeddings',
    body: { model: 'mock/echo', input: 'a', encoding_format: 'int8' },
    status: 400,
    param: 'encoding_format',
  },
  {
    name: 'embeddings: dimensions 0',
    path: '/v1/embeddings',
    body: { model: 'mock/echo', input: 'a', dimensions: 0 },
    status: 400,
    param: 'dimensions',
  },
  { name: 'embeddings: a model without embeddings', path: '/v1/embeddings', body: { model: 'mock/echo', input: 'a' }, status: 400, param: 'model' },
  { name: 'embeddings: unknown model', path: '/v1/embeddings', body: { model: 'nope/x', input: 'a' }, status: 404 },
  { name: 'embeddings: JSON array', path: '/v1/embeddings', raw: '[1]', status: 400 },
  // The images and audio endpoints: OpenAI's error shape, the field named; uploads are multipart.
  { name: 'images: no prompt', path: '/v1/images/generations', body: { model: 'mock/echo' }, status: 400, param: 'prompt' },
  { name: 'images: n over 10', path: '/v1/images/generations', body: { model: 'mock/echo', prompt: 'a', n: 11 }, status: 400, param: 'n' },
  { name: 'images: a model without images', path: '/v1/images/generations', body: { model: 'mock/echo', prompt: 'a' }, status: 400, param: 'model' },
  { name: 'images: JSON array', path: '/v1/images/generations', raw: '[1]', status: 400 },
  { name: 'image edits: JSON', path: '/v1/images/edits', body: { model: 'mock/echo', prompt: 'a' }, status: 415 },
  {
    name: 'image edits: a broken form',
    path: '/v1/images/edits',
    raw: '--x\r\nnot a part',
    headers: { 'content-type': 'multipart/form-data; boundary=x' },
    status: 400,
  },
  { name: 'transcriptions: JSON', path: '/v1/audio/transcriptions', body: { model: 'mock/echo' }, status: 415 },
  { name: 'translations: JSON', path: '/v1/audio/translations', body: { model: 'mock/echo' }, status: 415 },
  { name: 'speech: no voice', path: '/v1/audio/speech', body: { model: 'mock/echo', input: 'hi' }, status: 400, param: 'voice' },
  {
    name: 'speech: input over 4096 characters',
    path: '/v1/audio/speech',
    body: { model: 'mock/echo', input: 'x'.repeat(4097), voice: 'alloy' },
    status: 400,
    param: 'input',
  },
  {
    name: 'speech: a model without audio',
    path: '/v1/audio/speech',
    body: { model: 'mock/echo', input: 'hi', voice: 'alloy' },
    status: 400,
    param: 'model',
  },
  // Missing fields.
  { name: 'chat: no model', body: { messages: [{ role: 'user', content: 'hi' }] }, status: 400, param: 'model' },
  { name: 'chat: no messages', body: { model: 'mock/echo' }, status: 400, param: 'messages' },
  { name: 'chat: message without role', body: chat({ messages: [{ content: 'x' }] }), status: 400 },
  { name: 'chat: message with an unknown role', body: chat({ messages: [{ role: 'wizard', content: 'x' }] }), status: 400 },
  { name: 'chat: tool message without tool_call_id', body: chat({ messages: [{ role: 'tool', content: 'x' }] }), status: 400 },
  { name: 'chat: user content of a wrong type', body: chat({ messages: [{ role: 'user', content: 42 }] }), status: 400 },
  {
    name: 'chat: image part without url',
    body: chat({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: {} }] }] }),
    status: 400,
  },
  { name: 'chat: unknown content part', body: chat({ messages: [{ role: 'user', content: [{ type: 'hologram' }] }] }), status: 400 },
  { name: 'responses: no input', path: '/v1/responses', body: { model: 'mock/echo' }, status: 400, param: 'input' },
  { name: 'responses: no model', path: '/v1/responses', body: { input: 'hi' }, status: 400, param: 'model' },
  {
    name: 'responses: unknown previous_response_id',
    path: '/v1/responses',
    body: responses({ previous_response_id: 'resp_nope' }),
    status: 404,
    param: 'previous_response_id',
  },
  // Bodies that are not a JSON object.
  { name: 'chat: empty body', raw: '', status: 400 },
  { name: 'chat: whitespace body', raw: '   \n', status: 400 },
  { name: 'chat: truncated JSON', raw: '{"model":"mock/echo","messages":[', status: 400 },
  { name: 'chat: JSON array', raw: '[]', status: 400 },
  { name: 'chat: JSON string', raw: '"hello"', status: 400 },
  { name: 'chat: JSON null', raw: 'null', status: 400 },
  { name: 'chat: JSON number', raw: '42', status: 400 },
  { name: 'chat: trailing garbage', raw: '{"model":"mock/echo"} x', status: 400 },
  { name: 'chat: single quotes', raw: "{'model':'mock/echo'}", status: 400 },
  { name: 'responses: JSON array', path: '/v1/responses', raw: '[1]', status: 400 },
  { name: 'responses: empty body', path: '/v1/responses', raw: '', status: 400 },
  // Huge and fractional numbers.
  {
    name: 'chat: max_tokens 1e400 in raw JSON',
    raw: '{"model":"mock/echo","messages":[{"role":"user","content":"x"}],"max_tokens":1e400}',
    status: 400,
    param: 'max_tokens',
  },
  { name: 'chat: n as 1.0000000001', body: chat({ n: 1.0000000001 }), status: 400, param: 'n' },
  { name: 'chat: temperature -0', body: chat({ temperature: -1e-300 }), status: 400, param: 'temperature' },
  {
    name: 'chat: seed 2^80',
    raw: '{"model":"mock/echo","messages":[{"role":"user","content":"x"}],"seed":1208925819614629174706176}',
    status: 400,
    param: 'seed',
  },
  // NUL bytes, invalid UTF-8, lone surrogates.
  { name: 'chat: NUL in model', body: chat({ model: 'mock/echo\u0000' }), status: 404, param: 'model' },
  { name: 'chat: NUL in a provider prefix', body: chat({ model: 'mo\u0000ck/echo' }), status: 404, param: 'model' },
  { name: 'responses: NUL in model', path: '/v1/responses', body: responses({ model: '\u0000/x' }), status: 404, param: 'model' },
  {
    name: 'chat: invalid UTF-8 in the body',
    raw: Buffer.concat([
      Buffer.from('{"model":"mock/echo","messages":[{"role":"user","content":"'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"}],"stream":"no"}'),
    ]),
    status: 400,
    param: 'stream',
  },
  {
    name: 'chat: lone surrogate escape',
    raw: '{"model":"mock/\\ud800echo","messages":[{"role":"user","content":"x"}]}',
    status: 404,
    param: 'model',
  },
  {
    name: 'chat: lone low surrogate in a wrongly typed field',
    raw: '{"model":"mock/echo","messages":[{"role":"user","content":"x"}],"user":["\\udc00"]}',
    status: 400,
    param: 'user',
  },
  // Deep nesting.
  {
    name: 'chat: 10k-deep array in a passed-through field',
    raw: `{"model":"mock/echo","messages":[{"role":"user","content":"x"}],"extra":${nested(10_000)}}`,
    status: 400,
    param: 'extra',
  },
  { name: 'chat: 100k-deep array as the body', raw: nested(100_000), status: 400 },
  {
    name: 'chat: 10k-deep object in metadata',
    raw: `{"model":"mock/echo","messages":[{"role":"user","content":"x"}],"metadata":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}`,
    status: 400,
    param: 'metadata',
  },
  {
    name: 'responses: 10k-deep array as input',
    path: '/v1/responses',
    raw: `{"model":"mock/echo","input":${nested(10_000)}}`,
    status: 400,
    param: 'input',
  },
  // Oversize bodies.
  { name: 'chat: declared body over the limit', raw: '{}', headers: { 'content-length': String(64 * 1024 * 1024) }, status: 413 },
  { name: 'chat: body over the limit', raw: `{"model":"mock/echo","pad":"${'x'.repeat(2 * 1024 * 1024)}"}`, status: 413 },
  // Wrong content types.
  { name: 'chat: text/plain', body: chat({}), headers: { 'content-type': 'text/plain' }, status: 415 },
  { name: 'chat: form-encoded', body: chat({}), headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415 },
  { name: 'chat: multipart', body: chat({}), headers: { 'content-type': 'multipart/form-data; boundary=x' }, status: 415 },
  { name: 'chat: no content type', body: chat({}), headers: { 'content-type': '' }, status: 415 },
  { name: 'chat: application/jsonx', body: chat({}), headers: { 'content-type': 'application/jsonx' }, status: 415 },
  { name: 'responses: text/plain', path: '/v1/responses', body: responses({}), headers: { 'content-type': 'text/plain' }, status: 415 },
  // Header abuse.
  { name: 'no key', body: chat({}), headers: { authorization: '' }, status: 401 },
  { name: 'wrong key', body: chat({}), headers: { authorization: 'Bearer sk-wrong' }, status: 401 },
  { name: 'Bearer with no key', body: chat({}), headers: { authorization: 'Bearer ' }, status: 401 },
  { name: 'a 16 KiB key (headers over the limit)', body: chat({}), headers: { authorization: `Bearer ${'k'.repeat(16 * 1024)}` }, status: 431 },
  { name: 'a 4 KiB wrong key', body: chat({}), headers: { authorization: `Bearer ${'k'.repeat(4 * 1024)}` }, status: 401 },
  { name: 'key in a non-Bearer scheme', body: chat({}), headers: { authorization: `Basic ${KEY}` }, status: 401 },
  {
    name: 'unknown stream profile header is ignored, bad body still named',
    body: chat({ n: 0 }),
    headers: { 'x-sluice-profile': 'evil' },
    status: 400,
    param: 'n',
  },
  // Routes, methods and path tricks.
  { name: 'GET chat completions', method: 'GET', status: 405 },
  { name: 'PUT responses', method: 'PUT', path: '/v1/responses', body: responses({}), status: 405 },
  { name: 'DELETE models', method: 'DELETE', path: '/v1/models', status: 405 },
  { name: 'POST requests', method: 'POST', path: '/v1/requests', body: {}, status: 405 },
  { name: 'unknown route', method: 'GET', path: '/v1/nothing', status: 404 },
  { name: 'path traversal', method: 'GET', path: '/v1/../etc/passwd', status: 404 },
  { name: 'encoded traversal', method: 'GET', path: '/v1/%2e%2e/%2e%2e/etc/passwd', status: 404 },
  { name: 'double slash', method: 'POST', path: '//v1/chat/completions', body: chat({}), status: 404 },
  { name: 'trailing slash', method: 'POST', path: '/v1/chat/completions/', body: chat({}), status: 404 },
  { name: 'upper case path', method: 'POST', path: '/V1/CHAT/COMPLETIONS', body: chat({}), status: 404 },
  // Model names that try to leave the provider's namespace.
  { name: 'model: no provider', body: chat({ model: 'echo' }), status: 404, param: 'model' },
  { name: 'model: unknown provider', body: chat({ model: 'nope/x' }), status: 404, param: 'model' },
  { name: 'model: only a slash', body: chat({ model: '/' }), status: 404, param: 'model' },
  { name: 'model: traversal', body: chat({ model: 'google/../../../v1/admin' }), status: 404, param: 'model' },
  // Stored ids and the request log.
  { name: 'response id: bad percent-encoding', method: 'GET', path: '/v1/responses/%ZZ', status: 400, param: 'response_id' },
  { name: 'response id: truncated percent-encoding', method: 'GET', path: '/v1/responses/%E0%A4%A', status: 400, param: 'response_id' },
  { name: 'response id: encoded NUL', method: 'GET', path: '/v1/responses/resp_%00', status: 400, param: 'response_id' },
  { name: 'response id: unknown', method: 'GET', path: '/v1/responses/resp_unknown', status: 404 },
  { name: 'request id: bad percent-encoding', method: 'GET', path: '/v1/requests/%E0%A4%A', status: 400, param: 'request_id' },
  { name: 'request id: encoded NUL', method: 'GET', path: '/v1/requests/%00abc', status: 400, param: 'request_id' },
  { name: 'request id: unknown', method: 'GET', path: '/v1/requests/0000000000000000000000', status: 404 },
  { name: 'request id: 10 KiB', method: 'GET', path: `/v1/requests/${'a'.repeat(10_000)}`, status: 404 },
  { name: 'requests: limit 0', method: 'GET', path: '/v1/requests?limit=0', status: 400, param: 'limit' },
  { name: 'requests: limit 1.5', method: 'GET', path: '/v1/requests?limit=1.5', status: 400, param: 'limit' },
  { name: 'requests: limit huge', method: 'GET', path: '/v1/requests?limit=1e309', status: 400, param: 'limit' },
  { name: 'requests: limit negative', method: 'GET', path: '/v1/requests?limit=-1', status: 400, param: 'limit' },
  { name: 'requests: outcome unknown', method: 'GET', path: '/v1/requests?outcome=maybe', status: 400, param: 'outcome' },
  { name: 'requests: since not a date', method: 'GET', path: '/v1/requests?since=yesterday', status: 400, param: 'since' },
  { name: 'requests: since fractional', method: 'GET', path: '/v1/requests?since=1.5', status: 400, param: 'since' },
  { name: 'requests: since beyond 2^53', method: 'GET', path: '/v1/requests?since=99999999999999999999', status: 400, param: 'since' },
  { name: 'requests: until oversized', method: 'GET', path: `/v1/requests?until=${'9'.repeat(400)}`, status: 400, param: 'until' },
  { name: 'requests: cursor garbage', method: 'GET', path: '/v1/requests?cursor=%%%', status: 400, param: 'cursor' },
  { name: 'requests: cursor not ours', method: 'GET', path: '/v1/requests?cursor=bm90LWEtY3Vyc29y', status: 400, param: 'cursor' },
  { name: 'requests: cursor with a NUL', method: 'GET', path: '/v1/requests?cursor=%00', status: 400, param: 'cursor' },
  { name: 'requests: model filter with a NUL', method: 'GET', path: '/v1/requests?model=a%00b', status: 400, param: 'model' },
  { name: 'requests: provider filter with a NUL', method: 'GET', path: '/v1/requests?provider=%00', status: 400, param: 'provider' },
  // Query parameters a route does not read: a 400 naming them, never silently ignored (issue 25).
  { name: 'requests: unknown parameter project', method: 'GET', path: '/v1/requests?project=team-a', status: 400, param: 'project' },
  { name: 'request: any parameter', method: 'GET', path: '/v1/requests/0000000000000000000000?x=1', status: 400, param: 'x' },
  { name: 'admin projects: any parameter', method: 'GET', path: '/admin/projects?project=a', status: 400, param: 'project' },
  { name: 'admin keys: unknown parameter', method: 'GET', path: '/admin/keys?project_id=a', status: 400, param: 'project_id' },
  { name: 'admin endpoints: unknown parameter', method: 'GET', path: '/admin/endpoints?projects=a', status: 400, param: 'projects' },
  { name: 'console session: any parameter', method: 'GET', path: '/console/api/session?a=1', status: 400, param: 'a' },
  { name: 'console events: unknown parameter', method: 'GET', path: '/console/api/events?project=a', status: 400, param: 'project' },
  { name: 'console stats: unknown parameter', method: 'GET', path: '/console/api/stats?days=7', status: 400, param: 'days' },
  { name: 'console usage: any parameter', method: 'GET', path: '/console/api/usage?key=x', status: 400, param: 'key' },
  { name: 'console price: any parameter', method: 'GET', path: '/console/api/price/abc?x=1', status: 400, param: 'x' },
);

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(url: URL, c: Case): Promise<Answer> {
  const method = c.method ?? 'POST';
  let payload: Buffer | undefined;
  if (c.raw !== undefined) payload = Buffer.isBuffer(c.raw) ? c.raw : Buffer.from(c.raw);
  else if (c.body !== undefined) payload = Buffer.from(JSON.stringify(c.body));
  const headers: Record<string, string> = { authorization: `Bearer ${KEY}` };
  if (payload) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(payload.length);
  }
  for (const [k, v] of Object.entries(c.headers ?? {})) {
    if (v === '') delete headers[k];
    else headers[k] = v;
  }
  return new Promise((resolve, reject) => {
    // No connection reuse: each case stands alone (a lying Content-Length must not leak into the next).
    const req = request({ agent: false, host: url.hostname, port: url.port, method, path: c.path ?? '/v1/chat/completions', headers }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    // A 413 may close the connection before the whole body is sent: that is an answer, not an error.
    req.on('error', reject);
    if (payload && c.headers?.['content-length'] === undefined) req.end(payload);
    else req.end(payload?.subarray(0, Math.min(payload.length, 1024)));
  });
}

describe('the bad-input table', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startGateway({ auth: { master_key: KEY }, server: { body_limit_bytes: 1024 * 1024 } });
  });
  after(async () => {
    await gw.close();
  });

  it(`has at least 150 cases (${cases.length})`, () => {
    assert.ok(cases.length >= 150, `${cases.length} cases`);
  });

  for (const c of cases) {
    it(`${c.name}: ${c.status}${c.param ? ` naming ${c.param}` : ''}`, async () => {
      const answer = await send(new URL(gw.url), c);
      assert.notEqual(answer.status, 500, `never a 500: ${answer.body.slice(0, 300)}`);
      assert.equal(answer.status, c.status, answer.body.slice(0, 300));
      if (c.path?.startsWith('/v1/messages')) {
        const anthropic = JSON.parse(answer.body) as { type: string; error: { type: string; message: string } };
        assert.equal(anthropic.type, 'error');
        assert.equal(typeof anthropic.error.type, 'string');
        assert.ok(anthropic.error.message.length > 0);
        if (c.param) assert.ok(anthropic.error.message.includes(c.param), anthropic.error.message);
        assert.ok(answer.headers['x-request-id'], 'every answer carries X-Request-ID');
        return;
      }
      const body = JSON.parse(answer.body) as { error: { message: string; type: string; param: string | null; code: string } };
      assert.equal(typeof body.error.message, 'string');
      assert.ok(body.error.message.length > 0);
      assert.equal(typeof body.error.type, 'string');
      assert.equal(typeof body.error.code, 'string');
      assert.ok('param' in body.error, 'the error names its param, or says null');
      if (c.param !== undefined) assert.equal(body.error.param?.split(/[.[]/)[0], c.param, body.error.message);
      assert.ok(answer.headers['x-request-id'], 'every answer carries X-Request-ID');
    });
  }

  it('a 413 closes the connection: the unread rest of the body cannot become the next request', async () => {
    const answer = await send(new URL(gw.url), {
      name: 'lying content-length',
      raw: '{}',
      headers: { 'content-length': String(64 * 1024 * 1024) },
      status: 413,
    });
    assert.equal(answer.status, 413);
    assert.equal(answer.headers.connection, 'close');
  });

  it('the gateway still serves after the table', async () => {
    const answer = await send(new URL(gw.url), { name: 'ok', body: chat({}), status: 200 });
    assert.equal(answer.status, 200, answer.body);
  });
});
