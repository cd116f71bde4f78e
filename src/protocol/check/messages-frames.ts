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
      const index = typeof e.index === 'number' ? e.index : undefined;
      switch (type) {
        case 'content_block_start': {
          const block = asObject(e.content_block);
          if (open) report(f.n, 'messages/blocks', `block ${String(index)} starts while block ${open.index} is open`);
          if (index !== nextIndex)
            report(f.n, 'messages/blocks', `block ${String(index)} starts where block ${nextIndex} was due`);
          open = { index: index ?? nextIndex, type: String(block?.type) };
          nextIndex = open.index + 1;
          return;
        }
        case 'content_block_delta': {
          const delta = String(asObject(e.delta)?.type);
          if (!open || open.index !== index)
            return report(f.n, 'messages/blocks', `a delta for block ${String(index)}, which is not open`);
          const allowed = DELTAS[open.type];
          if (allowed && !allowed.includes(delta)) report(f.n, 'messages/blocks', `a ${delta} in a ${open.type} block`);
          return;
        }
        case 'content_block_stop':
          if (!open || open.index !== index) report(f.n, 'messages/blocks', `block ${String(index)} stops but is not open`);
          open = null;
          return;
        case 'message_delta':
          if (open) report(f.n, 'messages/blocks', `message_delta while block ${open.index} is open`);
          if (asObject(e.delta)?.stop_reason) stopReason = true;
          return;
        case 'message_stop':
          if (!stopReason) report(f.n, 'messages/terminal', 'message_stop without a message_delta carrying the stop_reason');
          ended = { type, at: f.n };
          return;
      }
    },
    end(report: Report) {
      if (!ended) report(null, 'messages/terminal', 'the stream ends without message_stop or an error event');
    },
  };
}
