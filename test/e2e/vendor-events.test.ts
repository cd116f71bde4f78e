import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import OpenAI from 'openai';
import { adminCall, projectWithKey } from '../helpers/admin-client.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { parseSse, rawStream, startGateway, type TestGateway, upstreamConfig } from '../helpers/gateway.ts';
import { recordedFrames, recordedText } from './faults-support.ts';

// Vendor events (shared/reference/chat-streaming-full.txt "Vendor Events"): `data:` lines whose
// JSON `type` starts with `x_`, inline among the chunks. Dropped by default, passed through
// unchanged and in order when the config or the project's endpoint says `passthrough`.

const VENDOR_LINES = [
  '{"type":"x_research.searching","name":"web_search","arguments":"{\\"query\\":\\"capital of France\\"}"}',
  '{"type":"x_research.result","name":"web_search","arguments":"{}","metadata":{"summary":"Paris"}}',
  '{"type":"x_artifact.created","artifact_id":"a1","identifier":"answer","title":"Answer","language":"md","content_type":"text/markdown","content":"# Paris"}',
  '{"type":"x_chat.metadata","messageId":"msg_ext_abc123","sequence":4,"usage":{"input_tokens":3648,"output_tokens":256,"total_tokens":3904}}',
];

/**
 * The recorded stream with the vendor lines among its chunks: two before the first content, one
 * in the middle, and x_chat.metadata as the last data event before [DONE] (as the reference has it).
 */
function interleaved(): string {
  const frames = recordedFrames();
  const vendor = VENDOR_LINES.map((line) => `data: ${line}\n\n`);
  const done = frames.findIndex((f) => f.startsWith('data: [DONE]'));
  return [frames[0], vendor[0], vendor[1], ...frames.slice(1, 4), vendor[2], ...frames.slice(4, done), vendor[3], ...frames.slice(done)].join('');
}

const MASTER = 'sk-master-vendor-events';
const PROJECT = 'proj_vendor';
const request = { model: 'up/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Capital of France?' }], stream: true as const };

/** The data lines of a raw stream that are vendor events, in order. */
const vendorLines = (text: string) =>
  parseSse(text)
    .frames.filter((f) => f.data.startsWith('{"type":"x_'))
    .map((f) => f.data);

describe('vendor events (x_*) in a chat stream', () => {
  let upstream: FakeUpstream;
  /** Config default (drop), with an endpoint set to passthrough. */
  let gw: TestGateway;
  /** Config `stream.vendor_events: passthrough`. */
  let passGw: TestGateway;
  let key: Record<string, any>;

  before(async () => {
    upstream = await startFakeUpstream();
    upstream.reply({ headers: { 'content-type': 'text/event-stream' }, body: interleaved(), randomSplit: { seed: 13, maxPiece: 40 } });
    gw = await startGateway({ ...upstreamConfig(upstream.url), auth: { master_key: MASTER } });
    passGw = await startGateway({ ...upstreamConfig(upstream.url), stream: { vendor_events: 'passthrough' } });
    key = await projectWithKey(gw.url, MASTER, PROJECT);
    const created = await adminCall(gw.url, MASTER, 'POST', '/admin/endpoints', {
      project: PROJECT,
      name: 'research',
      model: 'up/gpt-4o-mini',
      vendor_events: 'passthrough',
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.vendor_events, 'passthrough');
  });
  after(async () => {
    await gw?.close();
    await passGw?.close();
    await upstream?.close();
  });

  it('drops them by default: the openai SDK reads the answer, and no x_ line reaches the client', async () => {
    const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key.key, maxRetries: 0 });
    let text = '';
    for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) {
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    assert.equal(text, recordedText());
    const raw = await rawStream(gw.url, request, { authorization: `Bearer ${key.key}` });
    assert.equal(raw.status, 200);
    assert.deepEqual(vendorLines(raw.text), []);
    assert.doesNotMatch(raw.text, /x_research|x_artifact|x_chat/);
  });

  it('passes them through unchanged and in order with stream.vendor_events: passthrough, after the role chunk (was: the first x_ event before it)', async () => {
    const raw = await rawStream(passGw.url, request);
    assert.equal(raw.status, 200);
    assert.deepEqual(vendorLines(raw.text), VENDOR_LINES);
    // In place: the role chunk first (the reference's lifecycle starts with it, and a client keys
    // the assistant turn on it), then the two events the upstream sent before its first content,
    // the content with one among it, x_chat.metadata after the finish.
    const kinds = parseSse(raw.text).frames.map(({ data }) => {
      if (data === '[DONE]') return data;
      const json = JSON.parse(data);
      return json.type ?? (json.choices[0]?.finish_reason ? 'finish' : json.choices[0]?.delta?.role ? 'role' : 'content');
    });
    const at = (type: string) => kinds.indexOf(type);
    assert.deepEqual(kinds.slice(0, 4), ['role', 'x_research.searching', 'x_research.result', 'content']);
    assert.ok(at('content') < at('x_artifact.created') && at('x_artifact.created') < at('finish'));
    assert.ok(at('finish') < at('x_chat.metadata') && at('x_chat.metadata') < at('[DONE]'));
  });

  it('the openai SDK still reads a passed-through stream', async () => {
    const client = new OpenAI({ baseURL: `${passGw.url}/v1`, apiKey: 'unused', maxRetries: 0 });
    let text = '';
    for await (const chunk of await client.chat.completions.create({ ...request, stream: true })) {
      text += chunk.choices?.[0]?.delta?.content ?? '';
    }
    assert.equal(text, recordedText());
  });

  it("passes them through on a project's endpoint set to passthrough, while /v1 keeps the config's drop", async () => {
    const headers = { authorization: `Bearer ${key.key}` };
    const viaEndpoint = await rawStream(gw.url, { ...request, model: 'gpt-4o-mini' }, headers, `/${PROJECT}/research/v1/chat/completions`);
    assert.equal(viaEndpoint.status, 200);
    assert.deepEqual(vendorLines(viaEndpoint.text), VENDOR_LINES);
    const viaV1 = await rawStream(gw.url, request, headers);
    assert.deepEqual(vendorLines(viaV1.text), []);
  });
});
