import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GatewayError } from '../../errors/gateway-error.ts';
import { chatMessage } from '../../surfaces/chat/request-schema.ts';
import { chatMessageToCanonical } from '../../surfaces/chat/to-canonical.ts';
import { convertMessages } from './convert-messages.ts';
import { unsupportedParams } from './unsupported.ts';

const strict = unsupportedParams(false);
const convert = (messages: unknown[], drop = false) =>
  convertMessages(
    messages.map((m) => chatMessageToCanonical(chatMessage.parse(m))),
    drop ? unsupportedParams(true) : strict,
  );

function rejects(messages: unknown[], param: string): void {
  assert.throws(
    () => convert(messages),
    (e: unknown) => e instanceof GatewayError && e.status === 400 && e.param === param,
    param,
  );
}

describe('anthropic message conversion', () => {
  it('marks the last block of a message carrying cache_control, on every role', () => {
    const cc = { type: 'ephemeral' };
    assert.deepEqual(
      convert([
        { role: 'system', content: 'Long instructions', cache_control: cc },
        { role: 'user', content: 'Doc', cache_control: { type: 'ephemeral', ttl: '1h' } },
        { role: 'assistant', content: 'Ok', cache_control: cc },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
          cache_control: cc,
        },
      ]),
      {
        system: [{ type: 'text', text: 'Long instructions', cache_control: { type: 'ephemeral' } }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Doc', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
          { role: 'assistant', content: [{ type: 'text', text: 'Ok', cache_control: { type: 'ephemeral' } }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b', cache_control: { type: 'ephemeral' } },
            ],
          },
        ],
      },
    );
    rejects([{ role: 'user', content: 'x', cache_control: { type: 'forever' } }], 'messages[0].cache_control');
  });

  it('keeps cache_control on individual text parts (the per-part form of prompt caching)', () => {
    assert.deepEqual(
      convert([
        {
          role: 'system',
          content: [
            { type: 'text', text: 'Rules', cache_control: { type: 'ephemeral' } },
            { type: 'text', text: 'More' },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Big document', cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'text', text: 'Question' },
          ],
        },
      ]),
      {
        system: [
          { type: 'text', text: 'Rules', cache_control: { type: 'ephemeral' } },
          { type: 'text', text: 'More' },
        ],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Big document', cache_control: { type: 'ephemeral', ttl: '1h' } },
              { type: 'text', text: 'Question' },
            ],
          },
        ],
      },
    );
    rejects([{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'nope' } }] }], 'messages[0].content[0].cache_control');
  });

  it('drops empty text and empty assistant turns, which Anthropic rejects', () => {
    assert.deepEqual(
      convert([
        { role: 'system', content: '' },
        {
          role: 'user',
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: 'hi' },
          ],
        },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'again' },
      ]),
      {
        system: [],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          { role: 'user', content: 'again' },
        ],
      },
    );
  });

  it('sends reasoning back only with its signature', () => {
    const { messages } = convert([
      { role: 'user', content: 'q' },
      { role: 'assistant', content: 'a', reasoning_content: 'unsigned thoughts' },
      { role: 'user', content: 'q2' },
      { role: 'assistant', content: 'b', reasoning_content: null, reasoning_signature: 'sig' },
    ]);
    assert.deepEqual(messages[1], { role: 'assistant', content: [{ type: 'text', text: 'a' }] });
    assert.deepEqual(messages[3], {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: '', signature: 'sig' },
        { type: 'text', text: 'b' },
      ],
    });
  });

  it('maps assistant content parts, and tool results given as text parts', () => {
    assert.deepEqual(
      convert([
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'one' },
            { type: 'refusal', refusal: 'no' },
          ],
        },
        { role: 'tool', tool_call_id: 't1', content: [{ type: 'text', text: 'r' }] },
      ]).messages,
      [
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'one' },
            { type: 'text', text: 'no' },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'r' }] }] },
      ],
    );
    rejects([{ role: 'assistant', content: [{ type: 'audio', id: 'a' }] }], 'messages[0].content[0]');
  });

  it('sends inline PDF and text files as documents', () => {
    const text = Buffer.from('hello file').toString('base64');
    assert.deepEqual(
      convert([
        {
          role: 'user',
          content: [
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
            { type: 'file', file: { file_data: `data:text/plain;base64,${text}` } },
          ],
        },
      ]).messages,
      [
        {
          role: 'user',
          content: [
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'hello file' } },
          ],
        },
      ],
    );
    rejects([{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }], 'messages[0].content[0]');
    assert.deepEqual(convert([{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-abc' } }] }], true).messages, []);
  });

  it('rejects what cannot be translated whatever drop_params says', () => {
    rejects([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }], 'messages[0].content[0].image_url.url');
    const call = (args: string) => [
      { role: 'assistant', content: null, tool_calls: [{ id: 't', type: 'function', function: { name: 'f', arguments: args } }] },
    ];
    rejects(call('{not json'), 'messages[0].tool_calls[0].function.arguments');
    rejects(call('[1,2]'), 'messages[0].tool_calls[0].function.arguments');
  });
});
