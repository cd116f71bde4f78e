import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import type { FinishReason } from '../../protocol/canonical/finish-reason.ts';
import type { SseFrame } from '../../protocol/sse/parse-upstream.ts';

type Json = Record<string, unknown>;

/** The delta events of a Responses stream that carry model output (what a budget prices). */
const OUTPUT_DELTAS = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.reasoning_text.delta',
  'response.reasoning_summary_text.delta',
  'response.function_call_arguments.delta',
]);

/** The `*.done` event of a text part, and the field that carries its text. */
const TEXT_DONE: Record<string, [event: string, field: string]> = {
  output_text: ['response.output_text.done', 'text'],
  refusal: ['response.refusal.done', 'refusal'],
  reasoning_text: ['response.reasoning_text.done', 'text'],
  summary_text: ['response.reasoning_summary_text.done', 'text'],
};

interface Part {
  /** The part as announced (`content_part.added` / `reasoning_summary_part.added`). */
  part: Json;
  text: string;
  textDone: boolean;
  open: boolean;
  annotations: unknown[];
}

interface Item {
  /** The item as announced (`output_item.added`). */
  added: Json;
  /** The item as the upstream closed it, once it did. */
  done: Json | null;
  content: Part[];
  summary: Part[];
  args: string;
  argsDone: boolean;
}

/** An event that opens, fills or closes an output item, parsed (only the fields sluice reads). */
interface FollowedEvent {
  type?: unknown;
  output_index?: number;
  content_index?: number;
  summary_index?: number;
  delta?: string;
  item?: Json;
  part?: Json;
  annotation?: unknown;
}

function itemAt(items: Item[], e: FollowedEvent): Item | undefined {
  return typeof e.output_index === 'number' ? items[e.output_index] : undefined;
}

function contentAt(items: Item[], e: FollowedEvent): Part | undefined {
  return itemAt(items, e)?.content[e.content_index ?? -1];
}

function summaryAt(items: Item[], e: FollowedEvent): Part | undefined {
  return itemAt(items, e)?.summary[e.summary_index ?? -1];
}

/** What one followed event does to the items (`items`, by output index); what the accountant sees of it. */
type Follow = (event: FollowedEvent, items: Item[]) => CanonicalEvent | undefined;

function newItem(added: Json): Item {
  const args = typeof added.arguments === 'string' ? added.arguments : '';
  return { added, done: null, content: [], summary: [], args, argsDone: false };
}

function openPart(parts: Part[] | undefined, index: number | undefined, part: Json | undefined): undefined {
  if (parts && typeof index === 'number' && part) parts[index] = { part, text: '', textDone: false, open: true, annotations: [] };
  return undefined;
}

/** A text delta: the part's text grows, and the accountant sees the output as `type`. */
function textDelta(type: 'text' | 'refusal' | 'reasoning', part: Part | undefined, delta: string): CanonicalEvent {
  if (part) part.text += delta;
  return { type, choice: 0, text: delta };
}

const deltaOf = (e: FollowedEvent): string => (typeof e.delta === 'string' ? e.delta : '');

/** What each event that opens, fills or closes an output item does; every other event is relayed unread. */
const FOLLOW: ReadonlyMap<string, Follow> = new Map<string, Follow>([
  [
    'response.output_item.added',
    (e, items) => {
      if (typeof e.output_index === 'number' && e.item) items[e.output_index] = newItem(e.item);
      return undefined;
    },
  ],
  [
    'response.output_item.done',
    (e, items) => {
      const item = itemAt(items, e);
      if (item && e.item) item.done = e.item;
      return undefined;
    },
  ],
  ['response.content_part.added', (e, items) => openPart(itemAt(items, e)?.content, e.content_index, e.part)],
  ['response.reasoning_summary_part.added', (e, items) => openPart(itemAt(items, e)?.summary, e.summary_index, e.part)],
  ['response.content_part.done', (e, items) => closePart(contentAt(items, e))],
  ['response.reasoning_summary_part.done', (e, items) => closePart(summaryAt(items, e))],
  ['response.output_text.done', (e, items) => textDone(contentAt(items, e))],
  ['response.refusal.done', (e, items) => textDone(contentAt(items, e))],
  ['response.reasoning_text.done', (e, items) => textDone(contentAt(items, e))],
  ['response.reasoning_summary_text.done', (e, items) => textDone(summaryAt(items, e))],
  [
    'response.function_call_arguments.done',
    (e, items) => {
      const item = itemAt(items, e);
      if (item) item.argsDone = true;
      return undefined;
    },
  ],
  [
    'response.output_text.annotation.added',
    (e, items) => {
      contentAt(items, e)?.annotations.push(e.annotation);
      return undefined;
    },
  ],
  ['response.output_text.delta', (e, items) => textDelta('text', contentAt(items, e), deltaOf(e))],
  ['response.refusal.delta', (e, items) => textDelta('refusal', contentAt(items, e), deltaOf(e))],
  ['response.reasoning_text.delta', (e, items) => textDelta('reasoning', contentAt(items, e), deltaOf(e))],
  ['response.reasoning_summary_text.delta', (e, items) => textDelta('reasoning', summaryAt(items, e), deltaOf(e))],
  [
    'response.function_call_arguments.delta',
    (e, items) => {
      const delta = deltaOf(e);
      const item = itemAt(items, e);
      if (item) item.args += delta;
      return { type: 'tool-call-delta', choice: 0, index: e.output_index ?? 0, arguments: delta };
    },
  ],
]);

/** A part's text is whole (its `*.done` event). */
function textDone(part: Part | undefined): undefined {
  if (part) part.textDone = true;
  return undefined;
}

/** A part is closed (its `*_part.done` event). */
function closePart(part: Part | undefined): undefined {
  if (part) part.open = false;
  return undefined;
}

/** Writes one event of sluice's own, numbered after the relayed ones. */
export type EmitEvent = (type: string, fields: Json) => string;

/**
 * The output of a relayed Responses stream, which is otherwise passed on unread: only the events
 * of output items are parsed (a check of the type, as the SSE parser read it, first). It tells the accountant the output (a
 * stream cut short, by the client or its budget, is billed for what it produced), prices each
 * read for a budget before it is relayed (the UTF-8 bytes of its output deltas), and, when the
 * budget stops the stream, closes the items the upstream left open as `incomplete`, so that the
 * stream's `response.incomplete` holds the output the client received, as OpenAI ends a stream
 * at max_output_tokens.
 */
export class RelayOutput {
  private readonly items: Item[] = [];
  /** Frames parsed by measure(), read again by follow() for the same frame. */
  private readonly parsed = new WeakMap<SseFrame, FollowedEvent>();
  /** The lifecycle start (response.created, .in_progress) in the last read measured. */
  private starts: SseFrame[] = [];

  /** UTF-8 bytes of model output in a read's frames. */
  measure(frames: readonly SseFrame[]): number {
    let bytes = 0;
    this.starts = [];
    for (const frame of frames) {
      const type = this.typeOf(frame);
      if (type === 'response.created' || type === 'response.in_progress') this.starts.push(frame);
      if (!type || !OUTPUT_DELTAS.has(type)) continue;
      const event = this.read(frame);
      if (typeof event?.delta === 'string') bytes += Buffer.byteLength(event.delta, 'utf8');
    }
    return bytes;
  }

  /** Follows one relayed frame; returns what the accountant should see of it, if anything. */
  follow(type: string, frame: SseFrame): CanonicalEvent | undefined {
    const handle = FOLLOW.get(type);
    if (!handle) return undefined;
    const event = this.read(frame);
    return event ? handle(event, this.items) : undefined;
  }

  /**
   * A frame's type: its `event:` line as the SSE parser read it, else (an upstream that omits the
   * line) its payload's `type`, parsed once for follow() to read again.
   */
  private typeOf(frame: SseFrame): string | undefined {
    if (frame.event !== undefined) return frame.event;
    const type = this.read(frame)?.type;
    return typeof type === 'string' ? type : undefined;
  }

  /**
   * The lifecycle start of the read a budget stop refused: when it was the stream's first read
   * (a grant too small for it), the client still gets the response it ends.
   */
  get refusedStart(): readonly SseFrame[] {
    return this.starts;
  }

  /** The ids of the output items the upstream announced or closed. */
  itemIds(): string[] {
    const ids = new Set<string>();
    for (const item of this.items) {
      for (const id of [item?.added.id, item?.done?.id]) if (typeof id === 'string' && id) ids.add(id);
    }
    return [...ids];
  }

  /** How the upstream's terminal event ended the output, for the ledger. */
  finishReason(terminal: string): FinishReason {
    if (terminal === 'response.incomplete') return 'length';
    return this.items.some((i) => i?.added.type === 'function_call') ? 'tool_calls' : 'stop';
  }

  /**
   * The events that close every item still open, as `incomplete` (the text and arguments as the
   * client received them), and the output the terminal response lists.
   */
  close(emit: EmitEvent): { frames: string; output: Json[] } {
    let frames = '';
    const output: Json[] = [];
    this.items.forEach((item, index) => {
      if (!item) return;
      if (item.done) {
        output.push(item.done);
        return;
      }
      const itemId = item.added.id;
      const closeParts = (parts: Part[], indexField: 'content_index' | 'summary_index', partDone: string) => {
        parts.forEach((p, i) => {
          if (!p?.open) return;
          const where = { item_id: itemId, output_index: index, [indexField]: i };
          const [textDone, field] = TEXT_DONE[String(p.part.type)] ?? [];
          if (!p.textDone && textDone && field) frames += emit(textDone, { ...where, [field]: p.text });
          frames += emit(partDone, { ...where, part: builtPart(p) });
        });
      };
      closeParts(item.content, 'content_index', 'response.content_part.done');
      closeParts(item.summary, 'summary_index', 'response.reasoning_summary_part.done');
      if (item.added.type === 'function_call' && !item.argsDone) {
        frames += emit('response.function_call_arguments.done', { item_id: itemId, output_index: index, arguments: item.args });
      }
      const built: Json = { ...item.added, status: 'incomplete' };
      if (item.content.length > 0 || item.added.type === 'message') built.content = item.content.map(builtPart);
      if (item.summary.length > 0) built.summary = item.summary.map(builtPart);
      if (item.added.type === 'function_call') built.arguments = item.args;
      frames += emit('response.output_item.done', { output_index: index, item: built });
      output.push(built);
    });
    return { frames, output };
  }

  private read(frame: SseFrame): FollowedEvent | undefined {
    let event = this.parsed.get(frame);
    if (event) return event;
    try {
      event = JSON.parse(frame.data) as FollowedEvent;
    } catch {
      // An undecodable frame is relayed as it came and follows nothing.
      return undefined;
    }
    if (event === null || typeof event !== 'object') return undefined;
    this.parsed.set(frame, event);
    return event;
  }
}

/**
 * What the accountant sees of a relayed response that came whole (no stream): the events the
 * stream's deltas would have shown (follow), then its finish as the stream's terminal event gives
 * it (finishReason). The same answer streamed or not records the same output and finish.
 */
export function wholeResponseEvents(response: Json): CanonicalEvent[] {
  const events: CanonicalEvent[] = [];
  const output = Array.isArray(response.output) ? (response.output as unknown[]) : [];
  const text = (type: 'text' | 'refusal' | 'reasoning', value: unknown) => {
    if (typeof value === 'string' && value) events.push({ type, choice: 0, text: value });
  };
  let calls = false;
  output.forEach((entry, index) => {
    if (!entry || typeof entry !== 'object') return;
    const item = entry as Json;
    if (item.type === 'function_call') {
      calls = true;
      if (typeof item.arguments === 'string' && item.arguments) {
        events.push({ type: 'tool-call-delta', choice: 0, index, arguments: item.arguments });
      }
      return;
    }
    for (const part of partsOf(item.summary)) if (part.type === 'summary_text') text('reasoning', part.text);
    for (const part of partsOf(item.content)) {
      if (part.type === 'output_text') text('text', part.text);
      else if (part.type === 'refusal') text('refusal', part.refusal);
      else if (part.type === 'reasoning_text') text('reasoning', part.text);
    }
  });
  if (response.status === 'incomplete') events.push({ type: 'finish', choice: 0, reason: 'length' });
  else if (response.status === 'completed') events.push({ type: 'finish', choice: 0, reason: calls ? 'tool_calls' : 'stop' });
  return events;
}

function partsOf(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter((p): p is Json => p !== null && typeof p === 'object') : [];
}

function builtPart(p: Part): Json {
  if (p.part.type === 'refusal') return { ...p.part, refusal: p.text };
  if (p.part.type === 'output_text') return { ...p.part, text: p.text, annotations: p.annotations };
  return { ...p.part, text: p.text };
}
