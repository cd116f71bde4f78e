import type { CanonicalEvent } from '../protocol/canonical/events.ts';
import { type GenAiMessage, type GenAiPart, responsesItems, toolCall } from './genai-messages.ts';

interface Choice {
  parts: GenAiPart[];
  /** Tool calls by their stream index: their arguments come in pieces. */
  calls: Map<number, { id: string; name: string; args: string }>;
  finishReason: string | null;
}

/** The GenAI conventions' finish reasons where sluice's (OpenAI's) names differ. */
const FINISH_REASONS: Record<string, string> = { tool_calls: 'tool_call' };

/**
 * The model's output as gen_ai.output.messages, one message per choice, from the canonical events
 * the accountant sees (every surface, streamed or not). It keeps at most `maxChars` characters of
 * text and arguments, so a long completion costs no more memory than its attribute may hold.
 */
export class OutputTranscript {
  private choices: Choice[] = [];
  /** A relayed Responses answer, as its output items (they name every call; its events do not). */
  private items: readonly unknown[] | undefined;
  private room: number;
  /** Output was left out past maxChars. */
  clipped = false;

  constructor(maxChars: number) {
    this.room = maxChars;
  }

  observe(event: CanonicalEvent): void {
    switch (event.type) {
      case 'text':
        this.addText(event.choice, 'text', event.text);
        break;
      case 'reasoning':
        this.addText(event.choice, 'reasoning', event.text);
        break;
      case 'refusal':
        this.addText(event.choice, 'refusal', event.text);
        break;
      case 'tool-call-start':
        this.choice(event.choice).calls.set(event.index, { id: event.id, name: event.name, args: '' });
        break;
      case 'tool-call-delta': {
        const call = this.choice(event.choice).calls.get(event.index);
        if (call) call.args += this.take(event.arguments);
        break;
      }
      case 'finish':
        this.choice(event.choice).finishReason ??= FINISH_REASONS[event.reason] ?? event.reason;
        break;
    }
  }

  /** A relayed Responses answer's output items: what the client received, every item whole. */
  outputItems(items: readonly unknown[]): void {
    this.items = items;
  }

  /**
   * The output messages; `finishReason` (the ledger's) for a choice whose events said none, and
   * none when neither knows (a stream cut short).
   */
  messages(finishReason: string | null): GenAiMessage[] {
    const fallback = finishReason ? (FINISH_REASONS[finishReason] ?? finishReason) : null;
    const message = (parts: GenAiPart[], reason: string | null): GenAiMessage =>
      reason ? { role: 'assistant', parts, finish_reason: reason } : { role: 'assistant', parts };
    if (this.items)
      return [
        message(
          responsesItems(this.items).flatMap((m) => m.parts),
          fallback,
        ),
      ];
    return this.choices.map((c) =>
      message(
        [...c.parts, ...[...c.calls.values()].map((call) => toolCall(call.id, call.name, call.args))],
        c.finishReason ?? fallback,
      ),
    );
  }

  private choice(index: number): Choice {
    for (let i = this.choices.length; i <= index; i++) this.choices.push({ parts: [], calls: new Map(), finishReason: null });
    return this.choices[index];
  }

  /** Consecutive pieces of one kind make one part. */
  private addText(index: number, type: 'text' | 'reasoning' | 'refusal', piece: string): void {
    // The choice is there even when its text is past the limit.
    const parts = this.choice(index).parts;
    const kept = this.take(piece);
    if (!kept) return;
    const last = parts.at(-1);
    if (last?.type === type) last.content = String(last.content) + kept;
    else parts.push({ type, content: kept });
  }

  private take(piece: string): string {
    if (piece.length <= this.room) {
      this.room -= piece.length;
      return piece;
    }
    this.clipped = true;
    const kept = piece.slice(0, this.room);
    this.room = 0;
    return kept;
  }
}
