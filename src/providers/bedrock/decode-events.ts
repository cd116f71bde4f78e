import { errors } from '../../errors/catalog.ts';
import type { CanonicalEvent } from '../../protocol/canonical/events.ts';
import { bedrockFinishReason } from './finish-reason.ts';
import { bedrockStreamException } from './map-error.ts';
import { type BedrockUsage, convertBedrockUsage } from './usage.ts';

/** The ConverseStream event payloads, only the fields sluice reads. */
interface BlockStart {
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string } };
}
interface BlockDelta {
  contentBlockIndex?: number;
  delta?: {
    text?: string;
    toolUse?: { input?: string };
    reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
  };
}
interface BlockStop {
  contentBlockIndex?: number;
}
interface MessageStop {
  stopReason?: string;
}
interface Metadata {
  usage?: BedrockUsage;
}

/** One decoded ConverseStream event (`:event-type` + JSON payload) at a time -> canonical events. */
export interface ConverseEventDecoder {
  event(type: string, payload: unknown, out: CanonicalEvent[]): void;
  /** An exception message: the stream is over. */
  exception(type: string, payload: unknown, out: CanonicalEvent[]): void;
}

interface ToolBlock {
  index: number;
  sawInput: boolean;
}

/**
 * Content blocks carry their own `contentBlockIndex`; tool calls get dense indexes in the order
 * their `contentBlockStart` arrives. Text and reasoning blocks have no start event (see
 * fixtures/bedrock/converse-reasoning-claude-sonnet4.b64), only deltas.
 */
export function createConverseEventDecoder(provider: string): ConverseEventDecoder {
  let started = false;
  let finished = false;
  let nextToolIndex = 0;
  const tools = new Map<number, ToolBlock>();

  const start = (out: CanonicalEvent[]) => {
    if (started) return;
    started = true;
    out.push({ type: 'start' });
  };

  const delta = (p: BlockDelta, out: CanonicalEvent[]) => {
    const d = p.delta;
    if (!d) return;
    if (d.text) out.push({ type: 'text', choice: 0, text: d.text });
    const r = d.reasoningContent;
    if (r?.text) out.push({ type: 'reasoning', choice: 0, text: r.text });
    if (r?.signature) out.push({ type: 'reasoning', choice: 0, text: '', signature: r.signature });
    if (r?.redactedContent) out.push({ type: 'reasoning', choice: 0, text: '', redacted: r.redactedContent });
    if (d.toolUse) {
      const block = tools.get(p.contentBlockIndex ?? -1);
      if (!block) {
        out.push({ type: 'error', error: errors.malformed(provider, 'toolUse delta for a block that never started') });
        return;
      }
      const input = d.toolUse.input;
      if (input) {
        block.sawInput = true;
        out.push({ type: 'tool-call-delta', choice: 0, index: block.index, arguments: input });
      }
    }
  };

  return {
    event(type, payload, out) {
      const p = (payload ?? {}) as Record<string, unknown>;
      switch (type) {
        case 'messageStart':
          start(out);
          return;
        case 'contentBlockStart': {
          start(out);
          const s = p as BlockStart;
          const tool = s.start?.toolUse;
          if (!tool) return;
          const block = { index: nextToolIndex++, sawInput: false };
          tools.set(s.contentBlockIndex ?? -1, block);
          out.push({ type: 'tool-call-start', choice: 0, index: block.index, id: tool.toolUseId ?? '', name: tool.name ?? '' });
          return;
        }
        case 'contentBlockDelta':
          start(out);
          delta(p as BlockDelta, out);
          return;
        case 'contentBlockStop': {
          const block = tools.get((p as BlockStop).contentBlockIndex ?? -1);
          // A call without arguments streams no input at all; clients parse the arguments.
          if (block && !block.sawInput) out.push({ type: 'tool-call-delta', choice: 0, index: block.index, arguments: '{}' });
          return;
        }
        case 'messageStop': {
          if (finished) return;
          finished = true;
          start(out);
          const raw = (p as MessageStop).stopReason ?? 'end_turn';
          out.push({ type: 'finish', choice: 0, reason: bedrockFinishReason(raw, tools.size > 0), rawReason: raw });
          return;
        }
        case 'metadata': {
          const usage = (p as Metadata).usage;
          if (usage && typeof usage === 'object') out.push({ type: 'usage', usage: convertBedrockUsage(usage) });
          return;
        }
        // Anything newer (citations, guardrail traces…) is ignored: lenient upstream.
      }
    },
    exception(type, payload, out) {
      out.push({ type: 'error', error: bedrockStreamException(type, payload) });
    },
  };
}
