import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { errors } from '../../errors/catalog.ts';
import { refuseUpgrade } from './refuse-upgrade.ts';

test('a refused upgrade is an HTTP response with the error JSON, and the socket is ended', async () => {
  const socket = new PassThrough();
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const ended = new Promise((resolve) => socket.on('end', resolve));
  refuseUpgrade(socket, errors.invalidRequest('model is required.', 'model'), 'req_1');
  await ended;
  const [head, body] = Buffer.concat(chunks).toString().split('\r\n\r\n');
  assert.match(head, /^HTTP\/1\.1 400 Bad Request\r\n/);
  assert.match(head, /X-Request-ID: req_1/);
  assert.match(head, new RegExp(`Content-Length: ${Buffer.byteLength(body)}`));
  const parsed = JSON.parse(body) as { error: { param: string; code: string } };
  assert.equal(parsed.error.param, 'model');
  assert.equal(parsed.error.code, 'invalid_request');
});
