import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import type { UpstreamRequest } from '../../upstream/http-client.ts';
import { createRequestSigner } from './sign-request.ts';

const request: UpstreamRequest = {
  url: 'https://bedrock-runtime.us-east-1.amazonaws.com/model/us.amazon.nova-micro-v1%3A0/converse-stream',
  headers: { 'content-type': 'application/json', accept: 'application/vnd.amazon.eventstream' },
  body: '{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{}}',
};
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' };
const now = () => new Date(Date.UTC(2024, 0, 2, 3, 4, 5));

const sha256 = (data: string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** SigV4 written out from the AWS spec ("Create a signed AWS API request"), independent of @smithy. */
function expectedSignature(headers: Record<string, string>, signed: string[], secret: string): string {
  const canonical = [
    'POST',
    // Non-S3 services encode each path segment twice: the `%3A` of the model id becomes `%253A`.
    '/model/us.amazon.nova-micro-v1%253A0/converse-stream',
    '',
    ...signed.map((h) => `${h}:${headers[h]}`),
    '',
    signed.join(';'),
    sha256(request.body ?? ''),
  ].join('\n');
  const scope = '20240102/us-east-1/bedrock/aws4_request';
  const toSign = ['AWS4-HMAC-SHA256', '20240102T030405Z', scope, sha256(canonical)].join('\n');
  let key = hmac(`AWS4${secret}`, '20240102');
  for (const part of ['us-east-1', 'bedrock', 'aws4_request']) key = hmac(key, part);
  return createHmac('sha256', key).update(toSign).digest('hex');
}

describe('bedrock request signing', () => {
  it('signs with SigV4 under the bedrock signing name, reproducibly', async () => {
    const sign = createRequestSigner({ kind: 'sigv4', region: 'us-east-1', credentials }, now);
    const signed = await sign(request);
    const payloadHash = sha256(request.body ?? '');
    const headers = {
      'content-type': 'application/json',
      accept: 'application/vnd.amazon.eventstream',
      host: 'bedrock-runtime.us-east-1.amazonaws.com',
      'x-amz-date': '20240102T030405Z',
      'x-amz-content-sha256': payloadHash,
    };
    const names = ['accept', 'content-type', 'host', 'x-amz-content-sha256', 'x-amz-date'];
    assert.deepEqual(signed, {
      ...request,
      headers: {
        ...headers,
        authorization:
          'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/bedrock/aws4_request, ' +
          `SignedHeaders=${names.join(';')}, Signature=${expectedSignature(headers, names, credentials.secretAccessKey)}`,
      },
    });
    assert.deepEqual(await sign(request), signed);
  });

  it('signs the session token of temporary credentials too', async () => {
    const sign = createRequestSigner(
      { kind: 'sigv4', region: 'us-east-1', credentials: { ...credentials, sessionToken: 'FwoGZXIvYXdzEXAMPLE' } },
      now,
    );
    const signed = await sign(request);
    assert.equal(signed.headers['x-amz-security-token'], 'FwoGZXIvYXdzEXAMPLE');
    const names = ['accept', 'content-type', 'host', 'x-amz-content-sha256', 'x-amz-date', 'x-amz-security-token'];
    assert.equal(
      signed.headers.authorization,
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20240102/us-east-1/bedrock/aws4_request, ' +
        `SignedHeaders=${names.join(';')}, Signature=${expectedSignature(signed.headers, names, credentials.secretAccessKey)}`,
    );
  });

  it('a Bedrock API key is a bearer token, nothing signed', async () => {
    const sign = createRequestSigner({ kind: 'bearer', token: 'ABSKQmVkcm9ja0FQSUtleQ==' });
    assert.deepEqual(await sign(request), {
      ...request,
      headers: { ...request.headers, authorization: 'Bearer ABSKQmVkcm9ja0FQSUtleQ==' },
    });
  });
});
