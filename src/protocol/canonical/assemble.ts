import type { GatewayError } from '../../errors/gateway-error.ts';
import type { CanonicalEvent, ReasoningEvent, RefusalEvent, StartEvent, TextEvent, TokenLogprob, UrlCitation } from './events.ts';
import type { FinishReason } from './finish-reason.ts';
import type { Usage } from './usage.ts';

export interface AssembledToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface AssembledChoice {
  index: number;
  text: string | null;
  reasoning: string | null;
  reasoningSignature: string | null;
  redactedReasoning: string[];
  refusal: string | null;
  toolCalls: AssembledToolCall[];
  annotations: UrlCitation[];
  finishReason: FinishReason | null;
  logprobs: { content: TokenLogprob[] | null; refusal: TokenLogprob[] | null };
  /** The upstream's content filter verdicts on this choice (Azure), the last it sent. */
  contentFilter: Record<string, unknown> | null;
}

export interface AssembledMessage {
  start: StartEvent | null;
  choices: AssembledChoice[];
  usage: Usage | null;
  error: GatewayError | null;
  /** The upstream's content filter verdicts on the prompt (Azure's `prompt_filter_results`). */
  promptFilter: unknown[] | null;
}

function newChoice(index: number): AssembledChoice {
  return {
    index,
    text: null,
    reasoning: null,
    reasoningSignature: null,
    redactedReasoning: [],
    refusal: null,
    toolCalls: [],
    annotations: [],
    finishReason: null,
    logprobs: { content: null, refusal: null },
    contentFilter: null,
  };
}

/**
 * Folds a canonical event list into whole messages: the non-streaming response, the ledger's view
 * and the tests' "what did the recording say" all come from here.
 */
export function assemble(events: Iterable<CanonicalEvent>): AssembledMessage {
  const out: AssembledMessage = { start: null, choices: [], usage: null, error: null, promptFilter: null };
  // Tool calls are joined by their stream index, which need not be dense.
  const callSlots = new Map<string, AssembledToolCall>();
  for (const e of events) {
    switch (e.type) {
      case 'start':
        out.start = e;
        break;
      case 'text':
        addText(choiceAt(out, e.choice), e);
        break;
      case 'reasoning':
        addReasoning(choiceAt(out, e.choice), e);
        break;
      case 'refusal':
        addRefusal(choiceAt(out, e.choice), e);
        break;
      case 'annotation':
        choiceAt(out, e.choice).annotations.push(e.annotation);
        break;
      case 'tool-call-start': {
        const call = { id: e.id, name: e.name, arguments: '' };
        callSlots.set(`${e.choice}:${e.index}`, call);
        choiceAt(out, e.choice).toolCalls.push(call);
        break;
      }
      case 'tool-call-delta': {
        const call = callSlots.get(`${e.choice}:${e.index}`);
        if (call) call.arguments += e.arguments;
        break;
      }
      case 'finish':
        choiceAt(out, e.choice).finishReason ??= e.reason;
        break;
      case 'usage':
        out.usage = e.usage;
        break;
      case 'error':
        out.error ??= e.error;
        break;
      case 'content-filter':
        if (e.choice === null) out.promptFilter = e.results;
        else choiceAt(out, e.choice).contentFilter = e.results;
        break;
    }
  }
  for (let i = 0; i < out.choices.length; i++) out.choices[i] ??= newChoice(i);
  return out;
}

function choiceAt(out: AssembledMessage, i: number): AssembledChoice {
  let c = out.choices[i];
  if (!c) {
    c = newChoice(i);
    out.choices[i] = c;
  }
  return c;
}

function addText(c: AssembledChoice, e: TextEvent): void {
  c.text = (c.text ?? '') + e.text;
  if (e.logprobs) c.logprobs.content = [...(c.logprobs.content ?? []), ...e.logprobs];
}

function addReasoning(c: AssembledChoice, e: ReasoningEvent): void {
  if (e.text) c.reasoning = (c.reasoning ?? '') + e.text;
  if (e.signature) c.reasoningSignature = e.signature;
  if (e.redacted) c.redactedReasoning.push(e.redacted);
}

function addRefusal(c: AssembledChoice, e: RefusalEvent): void {
  c.refusal = (c.refusal ?? '') + e.text;
  if (e.logprobs) c.logprobs.refusal = [...(c.logprobs.refusal ?? []), ...e.logprobs];
}
