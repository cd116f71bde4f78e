import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeEmbeddings, encodeFloat32Base64 } from './encode-response.ts';

/** How the openai SDK reads a base64 vector (its toFloat32Array): little-endian float32. */
function decodeBase64(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
}

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
    assert.deepEqual(decodeBase64(first), [Math.fround(0.1), Math.fround(-0.09), 1]);
    assert.equal(body.data[1].embedding, 'AAAAAA==');
    // 1.0 as float32 LE is 00 00 80 3f.
    assert.equal(encodeFloat32Base64([1]), Buffer.from([0, 0, 0x80, 0x3f]).toString('base64'));
  });
});
