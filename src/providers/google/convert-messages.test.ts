import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalMessage } from '../../protocol/canonical/request.ts';
import { chatMessage } from '../../surfaces/chat/request-schema.ts';
import { chatMessageToCanonical } from '../../surfaces/chat/to-canonical.ts';
import { convertMessages, SKIP_SIGNATURE } from './convert-messages.ts';
import { paramPolicy } from './params.ts';

const messages = (...list: unknown[]): CanonicalMessage[] => list.map((m) => chatMessageToCanonical(chatMessage.parse(m)));
const convert = (list: CanonicalMessage[], model = 'gemini-2.5-flash', dropParams = false) =>
  convertMessages(list, model, paramPolicy('google', dropParams));

/** A 400 naming `param`. */
const badRequest = (param: string) => (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === param;

describe('convertMessages', () => {
  it('system and developer messages, wherever they are, become the system instruction', () => {
    const out = convert(
      messages(
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        {
          role: 'developer',
          content: [
            { type: 'text', text: 'Answer in French.' },
            { type: 'text', text: 'No emoji.' },
          ],
        },
      ),
    );
    assert.deepEqual(out, {
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Answer in French.' }, { text: 'No emoji.' }] },
      contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
    });
  });

  it('user content parts: text, inline and referenced images, audio, inline files', () => {
    const out = convert(
      messages({
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.JPG?size=large', detail: 'high' } },
          { type: 'image_url', image_url: { url: 'gs://bucket/scan' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          { type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
          { type: 'image_url', image_url: { url: 'data:image/svg+xml,%3Csvg%2F%3E' } },
        ],
      }),
    );
    assert.deepEqual(out.contents, [
      {
        role: 'user',
        parts: [
          { text: 'What is in these?' },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { fileData: { fileUri: 'https://example.com/cat.JPG?size=large', mimeType: 'image/jpeg' } },
          { fileData: { fileUri: 'gs://bucket/scan' } },
          { inlineData: { mimeType: 'audio/wav', data: 'UklGRg==' } },
          { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0=' } },
          { inlineData: { mimeType: 'image/svg+xml', data: Buffer.from('<svg/>').toString('base64') } },
        ],
      },
    ]);
  });

  it('a multi-turn tool conversation: calls, named responses merged into one turn, the signature on the first call', () => {
    const out = convert(
      messages(
        { role: 'user', content: 'Weather in Paris and Oslo?' },
        {
          role: 'assistant',
          content: 'Checking both.',
          reasoning_content: 'Two cities, two calls.',
          reasoning_signature: 'c2ln',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'weather', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '18°C' },
        {
          role: 'tool',
          tool_call_id: 'call_b',
          content: [
            { type: 'text', text: '9' },
            { type: 'text', text: '°C' },
          ],
        },
        { role: 'user', content: 'Thanks!' },
      ),
    );
    assert.deepEqual(out.contents, [
      { role: 'user', parts: [{ text: 'Weather in Paris and Oslo?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking both.' },
          { functionCall: { id: 'call_a', name: 'weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
          { functionCall: { id: 'call_b', name: 'weather', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'call_a', name: 'weather', response: { output: '18°C' } } },
          { functionResponse: { id: 'call_b', name: 'weather', response: { output: '9°C' } } },
        ],
      },
      { role: 'user', parts: [{ text: 'Thanks!' }] },
    ]);
  });

  it('a signature without calls goes on the first part; a reasoning-only turn keeps it on an empty text part', () => {
    const out = convert(
      messages(
        { role: 'user', content: 'Count the r in strawberry.' },
        { role: 'assistant', content: [{ type: 'text', text: 'Three.' }], reasoning_signature: 'c2lnMQ==' },
        { role: 'user', content: 'Sure?' },
        { role: 'assistant', content: null, reasoning_content: 'Recounting.', reasoning_signature: 'c2lnMg==' },
      ),
    );
    assert.deepEqual(out.contents.slice(1), [
      { role: 'model', parts: [{ text: 'Three.', thoughtSignature: 'c2lnMQ==' }] },
      { role: 'user', parts: [{ text: 'Sure?' }] },
      { role: 'model', parts: [{ text: '', thoughtSignature: 'c2lnMg==' }] },
    ]);
  });

  it('Gemini 3: a call sent back without its signature gets the documented stand-in', () => {
    const history = messages(
      { role: 'user', content: 'Time?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'now', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '12:00' },
    );
    assert.deepEqual(convert(history, 'gemini-3-pro-preview').contents[1], {
      role: 'model',
      parts: [{ functionCall: { id: 'c1', name: 'now', args: {} }, thoughtSignature: SKIP_SIGNATURE }],
    });
    // Gemini 2.5 does not require one: nothing is invented.
    assert.deepEqual(convert(history, 'gemini-2.5-flash').contents[1], {
      role: 'model',
      parts: [{ functionCall: { id: 'c1', name: 'now', args: {} } }],
    });
  });

  it('refusals are what the model said; an empty assistant turn is left out; legacy function results are named', () => {
    const out = convert(
      messages(
        { role: 'user', content: 'Do the bad thing.' },
        { role: 'assistant', content: null, refusal: 'I cannot help with that.' },
        { role: 'assistant', content: '' },
        { role: 'function', name: 'lookup', content: null },
      ),
    );
    assert.deepEqual(out.contents.slice(1), [
      { role: 'model', parts: [{ text: 'I cannot help with that.' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: '' } } }] },
    ]);
  });

  it('requests Gemini cannot take are 400s naming the field', () => {
    assert.throws(
      () =>
        convert(
          messages(
            { role: 'user', content: 'x' },
            { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] },
          ),
        ),
      badRequest('messages[1].tool_calls[0].function.arguments'),
    );
    assert.throws(
      () => convert(messages({ role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '[1]' } }] })),
      badRequest('messages[0].tool_calls[0].function.arguments'),
    );
    assert.throws(
      () => convert(messages({ role: 'user', content: 'x' }, { role: 'tool', tool_call_id: 'nowhere', content: 'y' })),
      badRequest('messages[1].tool_call_id'),
    );
    assert.throws(
      () => convert(messages({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:;base64,AAAA' } }] })),
      badRequest('messages[0].content[0].image_url.url'),
    );
    assert.throws(
      () => convert(messages({ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] })),
      badRequest('messages[0].content[0].file'),
    );
  });

  it('with drop_params an uploaded-file reference is dropped (and an emptied turn with it)', () => {
    const out = convert(
      messages(
        { role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Summarize.' },
            { type: 'file', file: { file_id: 'file-abc' } },
          ],
        },
      ),
      'gemini-2.5-flash',
      true,
    );
    assert.deepEqual(out, { contents: [{ role: 'user', parts: [{ text: 'Summarize.' }] }] });
  });
});
