import { quote } from './read-sse.ts';
import { asObject, type Frame, type Report, type RuleFamily } from './types.ts';

/** The delta types each block type streams (Anthropic "Streaming Messages"). */
const DELTAS: Record<string, string[]> = {
  text: ['text_delta', 'citations_delta'],
  thinking: ['thinking_delta', 'signature_delta'],
  tool_use: ['input_json_delta'],
  server_tool_use: ['input_json_delta'],
};

/**
 * Anthropic's Messages stream (POST /v1/messages): each `event:` line names its payload's type;
 * `message_start` comes first (`ping` and `error` aside); content blocks are numbered 0, 1, 2...
 * in order, one open at a time, each delta of its block's kind and each block stopped once; then
 * `message_delta` with the stop_reason and `message_stop`, after which nothing follows; an
 * `error` event ends the stream.
 */
export function messagesFrameRules(): RuleFamily {
  let started = false;
  let open: { index: number; type: string } | null = null;
  let nextIndex = 0;
  let stopReason = false;
  let ended: { type: string; at: number } | null = null;

  /** Blocks start in index order, one open at a time. */
  const blockStart = (n: number, index: number | undefined, block: Record<string, unknown> | undefined, report: Report) => {
    if (open) report(n, 'messages/blocks', `block ${String(index)} starts while block ${open.index} is open`);
    if (index !== nextIndex) report(n, 'messages/blocks', `block ${String(index)} starts where block ${nextIndex} was due`);
    open = { index: index ?? nextIndex, type: String(block?.type) };
    nextIndex = open.index + 1;
  };

  /** A delta belongs to the open block and is of its kind (DELTAS). */
  const blockDelta = (n: number, index: number | undefined, delta: string, report: Report) => {
    if (!open || open.index !== index)
      return report(n, 'messages/blocks', `a delta for block ${String(index)}, which is not open`);
    const allowed = DELTAS[open.type];
    if (allowed && !allowed.includes(delta)) report(n, 'messages/blocks', `a ${delta} in a ${open.type} block`);
  };

  const blockStop = (n: number, index: number | undefined, report: Report) => {
    if (!open || open.index !== index) report(n, 'messages/blocks', `block ${String(index)} stops but is not open`);
    open = null;
  };

  const messageDelta = (n: number, delta: Record<string, unknown> | undefined, report: Report) => {
    if (open) report(n, 'messages/blocks', `message_delta while block ${open.index} is open`);
    if (delta?.stop_reason) stopReason = true;
  };

  const messageStop = (n: number, report: Report) => {
    if (!stopReason) report(n, 'messages/terminal', 'message_stop without a message_delta carrying the stop_reason');
    ended = { type: 'message_stop', at: n };
  };

  /** The events of a message once it started: its blocks, then message_delta and message_stop. */
  const messageEvent = (n: number, type: string | undefined, e: Record<string, unknown>, report: Report) => {
    const index = typeof e.index === 'number' ? e.index : undefined;
    switch (type) {
      case 'content_block_start':
        return blockStart(n, index, asObject(e.content_block), report);
      case 'content_block_delta':
        return blockDelta(n, index, String(asObject(e.delta)?.type), report);
      case 'content_block_stop':
        return blockStop(n, index, report);
      case 'message_delta':
        return messageDelta(n, asObject(e.delta), report);
      case 'message_stop':
        return messageStop(n, report);
    }
  };

  return {
    frame(f: Frame, report: Report) {
      const e = f.json;
      if (!e) return;
      const type = typeof e.type === 'string' ? e.type : undefined;
      if (f.event !== type)
        report(f.n, 'messages/event-type', `\`event: ${f.event ?? ''}\` for a payload of type ${quote(String(type))}`);
      if (type === 'ping') return;
      if (ended) return report(f.n, 'messages/terminal', `${quote(String(type))} after ${ended.type} (frame ${ended.at})`);
      if (type === 'error') {
        ended = { type, at: f.n };
        return;
      }
      if (type === 'message_start') {
        if (started) report(f.n, 'messages/start-first', 'a second message_start');
        started = true;
        return;
      }
      if (!started) report(f.n, 'messages/start-first', `${quote(String(type))} before message_start`);
      messageEvent(f.n, type, e, report);
    },
    end(report: Report) {
      if (!ended) report(null, 'messages/terminal', 'the stream ends without message_stop or an error event');
    },
  };
}
