import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { prng } from '../../../test/helpers/fake-upstream.ts';
import { openAIPayloads } from '../../../test/helpers/fixtures.ts';
import { openAICompatibleRecordings } from '../../../test/helpers/openai-recordings.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { ChunkDecoder } from './decode-chunk.ts';
import { TextChunkReader } from './text-only-chunk.ts';

/** One chunk through a reader that has seen none. */
const textOnlyChunk = (json: string) => new TextChunkReader().read(json);

/** A recording's chunks through a ChunkDecoder, each parsed, or read by textOnlyChunk where it can. */
function decodeRecording(name: string, scan: boolean, splitThinkTags: boolean): { events: CanonicalEvent[]; scanned: number } {
  const chunks = new ChunkDecoder({ provider: 'up', splitThinkTags });
  const texts = new TextChunkReader();
  const events: CanonicalEvent[] = [];
  let scanned = 0;
  for (const { event, data } of openAIPayloads(name)) {
    if (data === '[DONE]' || event === 'error') break;
    if (scan) {
      const text = texts.read(data);
      if (text !== undefined && chunks.decodeText(text, events)) {
        scanned++;
        continue;
      }
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      break;
    }
    chunks.decode(parsed, events);
    if (chunks.failed) break;
  }
  chunks.end(events);
  return { events, scanned };
}

/** A decoder past its first chunk: where textOnlyChunk's result is used. */
function startedDecoder(): ChunkDecoder {
  const chunks = new ChunkDecoder({ provider: 'up', splitThinkTags: false });
  chunks.decode({ id: 'c', model: 'm', choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] }, []);
  return chunks;
}

/** The events the full path (JSON.parse, the checks, the decoder) gives a chunk, or why it gives none. */
function parsedEvents(json: string): CanonicalEvent[] | 'not JSON' | 'vendor event' {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    return 'not JSON';
  }
  if (parsed && typeof parsed === 'object' && typeof (parsed as { type?: unknown }).type === 'string') return 'vendor event';
  const out: CanonicalEvent[] = [];
  startedDecoder().decode(parsed, out);
  return out;
}

/** A reader that has read `json` (and kept its head and tail, if it took it). */
function readerAfter(json: string): TextChunkReader {
  const reader = new TextChunkReader();
  reader.read(json);
  return reader;
}

const textEvent = (text: string): CanonicalEvent[] => [{ type: 'text', choice: 0, text, logprobs: undefined }];

const OPENAI =
  '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1782955818,"model":"gpt-4o-mini","service_tier":"default",' +
  '"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":" capital"},"logprobs":null,"finish_reason":null}],' +
  '"usage":null,"obfuscation":"oHb"}';

describe('textOnlyChunk', () => {
  it('decodes every recording exactly as parsing every chunk does, and reads most text chunks', () => {
    let scanned = 0;
    let texts = 0;
    for (const name of openAICompatibleRecordings) {
      for (const split of [false, true]) {
        const full = decodeRecording(name, false, split);
        const fast = decodeRecording(name, true, split);
        assert.deepEqual(fast.events, full.events, `${name} (think tags split: ${split})`);
        if (!split) {
          scanned += fast.scanned;
          texts += full.events.filter((e) => e.type === 'text').length;
        }
      }
    }
    // What is left to JSON.parse: first chunks, logprobs, Mistral's content parts, reasoning, tool calls.
    assert.ok(scanned / texts > 0.7, `${scanned} of ${texts} text events read without parsing`);
  });

  it('reads the usual chunk shapes of OpenAI, DeepSeek, Groq, Mistral and Ollama', () => {
    const shapes: [string, string][] = [
      [OPENAI, ' capital'],
      [
        '{"id":"e6","object":"chat.completion.chunk","created":1,"model":"deepseek","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":","},"logprobs":null,"finish_reason":null}],"usage":null}',
        ',',
      ],
      [
        '{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"\'"},"finish_reason":null}],"p":"abcde"}',
        "'",
      ],
      [
        '{"id":"c","object":"chat.completion.chunk","created":1,"model":"q","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"a"},"finish_reason":null}]}',
        'a',
      ],
      ['{"choices":[{"delta":{"content":"line\\nbreak \\"q\\" \\u00e9\\ud83d\\ude00"}}],"id":"c","model":"m"}', 'line\nbreak "q" é😀'],
    ];
    for (const [json, text] of shapes) {
      assert.equal(textOnlyChunk(json), text, json);
      assert.deepEqual(parsedEvents(json), textEvent(text), json);
    }
  });

  it('leaves every chunk with more than text, or not in compact JSON, to JSON.parse', () => {
    const edit = (from: string, to: string) => {
      assert.ok(OPENAI.includes(from), from);
      return OPENAI.replace(from, to);
    };
    const refused: [string, string][] = [
      ['a finish reason', edit('"finish_reason":null', '"finish_reason":"stop"')],
      ['logprobs', edit('"logprobs":null', '"logprobs":{"content":[]}')],
      ['usage', edit('"usage":null', '"usage":{"prompt_tokens":1}')],
      ['a second choice', edit('}],"usage"', '},{"index":1,"delta":{"content":"b"}}],"usage"')],
      ['choice 1', edit('"index":0', '"index":1')],
      ['an index 00', edit('"index":0', '"index":00')],
      ['a repeated choices', edit('"usage":null', '"choices":[{"delta":{"content":"b"}}]')],
      ['a repeated content', edit('{"content":" capital"}', '{"content":" capital","content":"b"}')],
      ['reasoning', edit('{"content":" capital"}', '{"content":" capital","reasoning":"r"}')],
      ['tool calls', edit('{"content":" capital"}', '{"content":" capital","tool_calls":[]}')],
      ['empty content', edit('" capital"', '""')],
      ['a choice without a delta', edit('"delta":{"content":" capital"},', '')],
      ['a delta without content', edit('{"content":" capital"}', '{"role":"assistant"}')],
      ['content parts', edit('" capital"', '[{"type":"text","text":"x"}]')],
      ['an error', edit('"usage":null', '"error":"boom"')],
      ['a vendor event type', edit('"usage":null', '"type":"x_search"')],
      ['a numeric id', edit('"id":"chatcmpl-1"', '"id":1')],
      ['an object under an unknown key', edit('"obfuscation":"oHb"', '"extra":{}')],
      ['whitespace', edit('"content":', '"content": ')],
      ['an invalid escape', edit('" capital"', '"\\x41"')],
      ['a raw control character', edit('" capital"', '"a\tb"')],
      ['a trailing comma', edit('"oHb"}', '"oHb",}')],
      ['trailing text', `${OPENAI} `],
      ['a fraction', edit('1782955818', '1782955818.5')],
    ];
    for (const [what, json] of refused) {
      assert.equal(textOnlyChunk(json), undefined, what);
      assert.equal(readerAfter(OPENAI).read(json), undefined, `${what}, after a text chunk`);
    }
  });

  it('takes nothing the full path decodes otherwise, over seeded random edits of recorded chunks', () => {
    const recorded = openAICompatibleRecordings.flatMap((name) => openAIPayloads(name).map((p) => p.data)).filter((data) => data.startsWith('{'));
    // Edits that break the JSON, anywhere, and members that keep it valid with another meaning,
    // at the start of an object's members.
    const pieces = ['"', '\\', '{', '}', '[', ']', ',', ':', ' ', '0', '1', '-', '.', 'e', 'n', 'null', 'true', '"x"', '\\u00', '\n'];
    const members = [
      '"error":"x"',
      '"usage":{"prompt_tokens":1}',
      '"logprobs":{"content":[]}',
      '"finish_reason":"stop"',
      '"index":1',
      '"tool_calls":[]',
      '"reasoning":"r"',
      '"reasoning_content":"r"',
      '"refusal":"no"',
      '"annotations":[]',
      '"type":"x_a"',
      '"content":"y"',
      '"content":""',
      '"choices":[]',
      '"delta":{"content":"z"}',
      '"x_groq":{"usage":{}}',
      '"message":{"content":"m"}',
      '"id":null',
      '"model":7',
      '"system_fingerprint":1',
      '"service_tier":{}',
      '"extra":"s"',
    ];
    const random = prng(15);
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)] as T;
    const taken = { whole: 0, 'after the original': 0 };
    for (let n = 0; n < 20_000; n++) {
      const original = pick(recorded);
      let json = original;
      for (let edits = 1 + Math.floor(random() * 3); edits > 0; edits--) {
        if (random() < 0.5) {
          const starts = [...json.matchAll(/[{,]"/g)].map((m) => m.index + 1);
          const at = starts.length > 0 ? pick(starts) : 0;
          json = `${json.slice(0, at)}${pick(members)},${json.slice(at)}`;
        } else {
          const at = Math.floor(random() * (json.length + 1));
          const cut = random() < 0.5 ? Math.floor(random() * 3) : 0;
          json = json.slice(0, at) + (random() < 0.7 ? pick(pieces) : '') + json.slice(at + cut);
        }
      }
      // Scanned whole, and by a reader that took the unedited chunk (only its content string scanned).
      for (const [how, reader] of [
        ['whole', new TextChunkReader()],
        ['after the original', readerAfter(original)],
      ] as const) {
        const text = reader.read(json);
        if (text === undefined) continue;
        taken[how]++;
        assert.deepEqual(parsedEvents(json), textEvent(text), `${how}: ${json}`);
      }
    }
    for (const [how, count] of Object.entries(taken))
      assert.ok(count > 1_000, `only ${count} edited chunks were taken ${how}: the edits no longer exercise the scanner`);
  });

  it('gives the decoder nothing to do before the first chunk', () => {
    const out: CanonicalEvent[] = [];
    assert.equal(new ChunkDecoder({ provider: 'up', splitThinkTags: false }).decodeText('x', out), false);
    assert.deepEqual(out, []);
  });
});
