import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { formOf, readMultipartBody } from './read-multipart-body.ts';

/** A request carrying `form` as multipart bytes, with the headers a client sends. */
async function request(form: FormData, headers: Record<string, string> = { authorization: 'Bearer x' }): Promise<IncomingMessage> {
  const encoded = new Response(form);
  const bytes = Buffer.from(await encoded.arrayBuffer());
  const req = Readable.from([bytes.subarray(0, 10), bytes.subarray(10)]) as unknown as IncomingMessage;
  req.headers = { 'content-type': encoded.headers.get('content-type') ?? '', 'content-length': String(bytes.length), ...headers };
  return req;
}

async function refusal(read: Promise<unknown>): Promise<GatewayError> {
  try {
    await read;
  } catch (err) {
    assert.ok(err instanceof GatewayError);
    return err;
  }
  assert.fail('expected a refusal');
}

describe('readMultipartBody', () => {
  const form = new FormData();
  form.append('model', 'whisper-1');
  form.append('file', new File(['RIFF-audio'], 'a.wav', { type: 'audio/wav' }));
  form.append('timestamp_granularities[]', 'word');
  form.append('timestamp_granularities[]', 'segment');
  form.append('__proto__', 'a field like any other');

  it('reads the fields by name, a repeated name as an array, files as files; formOf sends them back', async () => {
    const fields = await readMultipartBody(await request(form), 1 << 20);
    assert.equal(fields.model, 'whisper-1');
    assert.deepEqual(fields['timestamp_granularities[]'], ['word', 'segment']);
    assert.equal(Object.getPrototypeOf(fields), Object.prototype);
    assert.equal(fields.__proto__, 'a field like any other');
    const file = fields.file as File;
    assert.deepEqual([file.name, file.type, await file.text()], ['a.wav', 'audio/wav', 'RIFF-audio']);
    const again = formOf(fields);
    assert.deepEqual(again.getAll('timestamp_granularities[]'), ['word', 'segment']);
    assert.equal(await (again.get('file') as File).text(), 'RIFF-audio');
  });

  it('413 past the limit, 415 for another type, 400 without credentials in a header or for a broken form', async () => {
    assert.equal((await refusal(readMultipartBody(await request(form), 100))).status, 413);
    const json = await request(form);
    json.headers['content-type'] = 'application/json';
    const wrong = await refusal(readMultipartBody(json, 1 << 20));
    assert.deepEqual([wrong.status, wrong.message], [415, 'Content-Type must be multipart/form-data, not application/json.']);
    assert.equal((await refusal(readMultipartBody(await request(form, {}), 1 << 20))).status, 400);
    // An Anthropic-style key header is credentials too.
    assert.equal((await readMultipartBody(await request(form, { 'x-api-key': 'k' }), 1 << 20)).model, 'whisper-1');
    const broken = await request(form);
    broken.headers['content-type'] = 'multipart/form-data; boundary=not-the-one';
    assert.equal((await refusal(readMultipartBody(broken, 1 << 20))).status, 400);
  });
});
