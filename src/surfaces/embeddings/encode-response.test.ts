import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeFloat32Base64, encodeEmbeddings, encodeFloat32Base64 } from './encode-response.ts';

describe('encodeEmbeddings', () => {
  it('sends float vectors as they are, in input order, with the usage', () => {
    assert.deepEqual(encodeEmbeddings([[0.5, -1], [2]], 'float', 'google/gemini-embedding-001', 7), {
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.5, -1] },
        { object: 'embedding', index: 1, embedding: [2] },
      ],
      model: 'google/gemini-embedding-001',
      usage: { prompt_tokens: 7, total_tokens: 7 },
    });
  });

  it('encodes floats as little-endian float32 base64 when asked, and leaves an upstream base64 string alone', () => {
    const body = encodeEmbeddings([[0.1, -0.09, 1], 'AAAAAA=='], 'base64', 'm', 1);
    const first = body.data[0].embedding as string;
    assert.equal(first, encodeFloat32Base64([0.1, -0.09, 1]));
    assert.deepEqual(decodeFloat32Base64(first), [Math.fround(0.1), Math.fround(-0.09), 1]);
    assert.equal(body.data[1].embedding, 'AAAAAA==');
    // 1.0 as float32 LE is 00 00 80 3f.
    assert.equal(encodeFloat32Base64([1]), Buffer.from([0, 0, 0x80, 0x3f]).toString('base64'));
  });

  it('decodes an upstream base64 vector for a client that asked for floats', () => {
    const body = encodeEmbeddings([Buffer.from([0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0]).toString('base64')], 'float', 'm', 1);
    assert.deepEqual(body.data[0].embedding, [1, -2]);
  });
});
