import { parseSse } from './gateway.ts';

/**
 * The Responses event grammar (reference/responses-streaming.txt, and what OpenAI, xAI and DeepSeek
 * actually send in fixtures/openai-responses, xai/responses-*, deepseek/responses-*), checked over a
 * raw SSE body. Throws a GrammarError naming the first frame that breaks a rule; on success returns
 * the events and the terminal response for further assertions.
 */
export class GrammarError extends Error {
  override name = 'GrammarError';
}

export interface GrammarOptions {
  /**
   * A stream relayed from a real Responses server rather than built by sluice. Real servers are
   * looser in two documented ways: older OpenAI streams and DeepSeek's first two events carry no
   * `sequence_number` (fixtures/openai-responses/function-call.sse, deepseek/responses-text.sse),
   * and OpenAI's `function_call_arguments.done` has no `call_id` / `name`
   * (openai-responses/reasoning-encrypted-content.jsonl); and OpenAI encrypts a reasoning item's
   * `encrypted_content` afresh in `response.completed` (openai-responses/text-gpt5-nano.sse), so
   * that opaque blob is left out when the output is compared. Every other rule holds for them too.
   */
  upstream?: boolean;
}

// Just the fields the grammar reads; everything else is compared whole.
export interface ResponsesEvent {
  type: string;
  sequence_number?: number;
  output_index?: number;
  content_index?: number;
  summary_index?: number;
  item_id?: string;
  item?: Item;
  part?: { type: string; text?: string; refusal?: string; annotations?: unknown[] };
  annotation_index?: number;
  annotation?: { type?: string };
  delta?: string;
  text?: string;
  refusal?: string;
  arguments?: string;
  call_id?: string;
  name?: string;
  response?: TerminalResponse;
}

interface Item {
  type: string;
  id?: string;
  status?: string;
  call_id?: string;
  name?: string;
  arguments?: string;
  content?: { type: string; text?: string; refusal?: string }[];
  summary?: { type: string; text: string }[];
}

export interface TerminalResponse {
  id: string;
  status: string;
  output: Item[];
  usage: { input_tokens: number; output_tokens: number; total_tokens: number } | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: string } | null;
  [key: string]: unknown;
}

export interface CheckedStream {
  /** Every event before `[DONE]`, parsed. */
  events: ResponsesEvent[];
  /** response.completed, response.incomplete or response.failed. */
  terminal: ResponsesEvent & { response: TerminalResponse };
  /** Heartbeat comments seen between frames. */
  comments: string[];
}

const TERMINAL: Record<string, string> = {
  'response.completed': 'completed',
  'response.incomplete': 'incomplete',
  'response.failed': 'failed',
};

/** An open part of an item: a content part (text, refusal, reasoning_text) or a summary part. */
interface OpenPart {
  type: string;
  open: boolean;
  /** The concatenated deltas. */
  text: string;
  /** The `*.done` event for the text came. */
  textDone: boolean;
  /** output_text: the annotations added, in order. */
  annotations: unknown[];
}

interface OpenItem {
  added: Item;
  open: boolean;
  content: OpenPart[];
  summary: OpenPart[];
  /** Function calls: the arguments as announced plus every delta. */
  args: string;
  argsDone: boolean;
  done?: Item;
}

export function checkResponsesStream(body: string, options: GrammarOptions = {}): CheckedStream {
  const { frames, comments } = parseSse(body);
  const fail = (at: number, rule: string): never => {
    throw new GrammarError(`event ${at}${events[at] ? ` (${events[at].type})` : ''}: ${rule}`);
  };

  if (frames.at(-1)?.data !== '[DONE]' || frames.at(-1)?.event !== undefined) {
    throw new GrammarError('the stream does not end with `data: [DONE]`');
  }
  const events: ResponsesEvent[] = [];
  frames.slice(0, -1).forEach((frame, i) => {
    if (frame.data === '[DONE]') throw new GrammarError(`frame ${i}: [DONE] before the end`);
    let event: ResponsesEvent;
    try {
      event = JSON.parse(frame.data) as ResponsesEvent;
    } catch {
      throw new GrammarError(`frame ${i}: data is not JSON: ${frame.data.slice(0, 80)}`);
    }
    events.push(event);
    if (frame.event !== event.type) fail(i, `\`event: ${frame.event}\` but the data's type is ${event.type}`);
    if (event.sequence_number !== undefined || !options.upstream) {
      if (event.sequence_number !== i) fail(i, `sequence_number ${event.sequence_number}, expected ${i}`);
    }
  });

  if (events[0]?.type !== 'response.created') fail(0, 'the first event must be response.created');
  if (events[1]?.type !== 'response.in_progress') fail(1, 'the second event must be response.in_progress');

  const items: OpenItem[] = [];
  const responseId = events[0].response?.id;
  let terminal: CheckedStream['terminal'] | undefined;

  const openItem = (at: number, e: ResponsesEvent): OpenItem => {
    const item = items[e.output_index ?? -1];
    if (!item) return fail(at, `no output item at output_index ${e.output_index}`);
    if (!item.open) return fail(at, `output item ${e.output_index} is already done`);
    if (e.item_id !== undefined && e.item_id !== item.added.id) fail(at, `item_id ${e.item_id} is not item ${item.added.id}`);
    return item;
  };
  const openPart = (at: number, e: ResponsesEvent, kind: 'content' | 'summary', type: string): OpenPart => {
    const item = openItem(at, e);
    const index = kind === 'content' ? e.content_index : e.summary_index;
    const part = item[kind][index ?? -1];
    if (!part?.open) return fail(at, `no open ${kind} part ${index} in output item ${e.output_index}`);
    if (part.type !== type) fail(at, `the ${kind} part is ${part.type}, not ${type}`);
    return part;
  };
  const textDone = (at: number, part: OpenPart, text: string | undefined) => {
    if (text !== part.text) fail(at, `done text ${JSON.stringify(text)} is not the deltas ${JSON.stringify(part.text)}`);
    part.textDone = true;
  };

  events.forEach((e, at) => {
    if (terminal) fail(at, `an event after ${terminal.type}`);
    if (e.response !== undefined && e.response.id !== responseId) fail(at, `response id ${e.response.id} is not ${responseId}`);
    switch (e.type) {
      case 'response.created':
      case 'response.in_progress':
        if (at > 1) fail(at, 'a second lifecycle start');
        if (e.response?.status !== 'in_progress') fail(at, `status ${e.response?.status}`);
        return;
      case 'response.output_item.added': {
        if (e.output_index !== items.length) fail(at, `output_index ${e.output_index}, expected ${items.length}`);
        if (!e.item?.type) return fail(at, 'no item');
        items.push({ added: e.item, open: true, content: [], summary: [], args: e.item.arguments ?? '', argsDone: false });
        return;
      }
      case 'response.output_item.done': {
        const item = openItem(at, e);
        const done = e.item;
        if (!done || done.type !== item.added.type || done.id !== item.added.id) fail(at, 'the item is not the one added');
        for (const p of [...item.content, ...item.summary]) if (p.open) fail(at, 'a part of the item is still open');
        checkBuilt(at, item, done as Item, fail);
        item.open = false;
        item.done = done;
        return;
      }
      case 'response.content_part.added':
      case 'response.reasoning_summary_part.added': {
        const kind = e.type === 'response.content_part.added' ? 'content' : 'summary';
        const item = openItem(at, e);
        const index = kind === 'content' ? e.content_index : e.summary_index;
        if (index !== item[kind].length) fail(at, `${kind} index ${index}, expected ${item[kind].length}`);
        if (!e.part?.type) return fail(at, 'no part');
        if ((e.part.text ?? e.part.refusal ?? '') !== '') fail(at, 'a part must be announced empty');
        item[kind].push({ type: e.part.type, open: true, text: '', textDone: false, annotations: [] });
        return;
      }
      case 'response.content_part.done':
      case 'response.reasoning_summary_part.done': {
        const kind = e.type === 'response.content_part.done' ? 'content' : 'summary';
        const part = openPart(at, e, kind, e.part?.type ?? '?');
        if (!part.textDone) fail(at, 'the part closes before its text is done');
        if ((e.part?.text ?? e.part?.refusal) !== part.text) fail(at, 'the part is not its deltas');
        if (part.type === 'output_text' && JSON.stringify(e.part?.annotations ?? []) !== JSON.stringify(part.annotations)) {
          fail(at, 'the part does not hold the annotations added to it');
        }
        part.open = false;
        return;
      }
      case 'response.output_text.delta':
        openPart(at, e, 'content', 'output_text').text += e.delta ?? '';
        return;
      case 'response.output_text.done':
        return textDone(at, openPart(at, e, 'content', 'output_text'), e.text);
      case 'response.output_text.annotation.added': {
        const part = openPart(at, e, 'content', 'output_text');
        if (e.annotation_index !== part.annotations.length) fail(at, `annotation_index ${e.annotation_index}, expected ${part.annotations.length}`);
        if (!e.annotation?.type) fail(at, 'an annotation without a type');
        part.annotations.push(e.annotation);
        return;
      }
      case 'response.refusal.delta':
        openPart(at, e, 'content', 'refusal').text += e.delta ?? '';
        return;
      case 'response.refusal.done':
        return textDone(at, openPart(at, e, 'content', 'refusal'), e.refusal);
      case 'response.reasoning_text.delta':
        openPart(at, e, 'content', 'reasoning_text').text += e.delta ?? '';
        return;
      case 'response.reasoning_text.done':
        return textDone(at, openPart(at, e, 'content', 'reasoning_text'), e.text);
      case 'response.reasoning_summary_text.delta':
        openPart(at, e, 'summary', 'summary_text').text += e.delta ?? '';
        return;
      case 'response.reasoning_summary_text.done':
        return textDone(at, openPart(at, e, 'summary', 'summary_text'), e.text);
      case 'response.function_call_arguments.delta': {
        const item = openItem(at, e);
        if (item.added.type !== 'function_call') fail(at, `arguments for a ${item.added.type} item`);
        if (item.argsDone) fail(at, 'a delta after function_call_arguments.done');
        item.args += e.delta ?? '';
        return;
      }
      case 'response.function_call_arguments.done': {
        const item = openItem(at, e);
        if (item.added.type !== 'function_call') fail(at, `arguments for a ${item.added.type} item`);
        if (item.argsDone) fail(at, 'a second function_call_arguments.done');
        if (e.arguments !== item.args) fail(at, `arguments ${JSON.stringify(e.arguments)} are not the deltas ${JSON.stringify(item.args)}`);
        if (e.call_id !== undefined || !options.upstream) {
          if (e.call_id !== item.added.call_id || e.name !== item.added.name) fail(at, `call_id/name ${e.call_id}/${e.name} are not the item's`);
        }
        item.argsDone = true;
        return;
      }
      case 'error': {
        // OpenAI sends `error` just before `response.failed` (openai-responses/failed-insufficient-quota.jsonl).
        if (events[at + 1]?.type !== 'response.failed') fail(at, 'an error event not followed by response.failed');
        return;
      }
      default: {
        const status = TERMINAL[e.type];
        if (status) {
          terminal = checkTerminal(at, e, status, items, fail, options);
          return;
        }
        // Hosted tool progress and annotations (response.web_search_call.*, …): inside their item.
        if (e.output_index !== undefined) openItem(at, e);
        else fail(at, 'an unknown event outside any item');
      }
    }
  });
  if (!terminal) throw new GrammarError('no terminal event (response.completed, .incomplete or .failed)');
  return { events, terminal, comments };
}

/** The done item is what its events built: text parts, summary parts, arguments. */
function checkBuilt(at: number, item: OpenItem, done: Item, fail: (at: number, rule: string) => never): void {
  const built = (parts: OpenPart[]) => parts.map((p) => ({ type: p.type, text: p.text }));
  const given = (parts: { type: string; text?: string; refusal?: string }[] | undefined) =>
    (parts ?? []).map((p) => ({ type: p.type, text: p.text ?? p.refusal ?? '' }));
  if (done.type === 'message' || item.content.length > 0) {
    if (JSON.stringify(given(done.content)) !== JSON.stringify(built(item.content))) fail(at, 'the item content is not its parts');
  }
  if (done.type === 'reasoning' && JSON.stringify(given(done.summary)) !== JSON.stringify(built(item.summary))) {
    fail(at, 'the reasoning summary is not its parts');
  }
  if (done.type === 'function_call') {
    if (!item.argsDone) fail(at, 'a function call closes without function_call_arguments.done');
    if (done.arguments !== item.args) fail(at, 'the item arguments are not its deltas');
    if (done.call_id !== item.added.call_id || done.name !== item.added.name) fail(at, 'call_id/name changed');
  }
}

function checkTerminal(
  at: number,
  e: ResponsesEvent,
  status: string,
  items: OpenItem[],
  fail: (at: number, rule: string) => never,
  options: GrammarOptions,
): CheckedStream['terminal'] {
  const response = e.response;
  if (!response) return fail(at, 'no response');
  if (response.status !== status) fail(at, `status ${response.status}, expected ${status}`);
  if (items.some((i) => i.open)) fail(at, 'an output item is still open');
  const output = items.map((i) => i.done);
  const drop = options.upstream ? ['encrypted_content'] : [];
  if (JSON.stringify(canonical(response.output, drop)) !== JSON.stringify(canonical(output, drop))) {
    fail(at, 'the response output is not the items of the stream');
  }
  if (status === 'failed') {
    if (typeof response.error?.code !== 'string' || typeof response.error.message !== 'string') fail(at, 'no error code and message');
  } else {
    if (response.error !== null && response.error !== undefined) fail(at, 'an error on a response that did not fail');
    const u = response.usage;
    if (!u || u.total_tokens !== u.input_tokens + u.output_tokens) fail(at, `usage ${JSON.stringify(u)}`);
    const reason = response.incomplete_details?.reason;
    if (status === 'incomplete' ? !reason : reason) fail(at, `incomplete_details ${JSON.stringify(response.incomplete_details)}`);
  }
  return e as CheckedStream['terminal'];
}

/** Key order does not matter in JSON objects; array order does. `drop`: keys left out. */
function canonical(value: unknown, drop: string[]): unknown {
  if (Array.isArray(value)) return value.map((v) => canonical(v, drop));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .filter((k) => !drop.includes(k))
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k], drop)]),
    );
  }
  return value;
}
