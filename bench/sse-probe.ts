/** What the load generator reads: OpenAI chat chunks (direct or through sluice) or Anthropic Messages (direct). */
export type ClientProtocol = 'openai' | 'anthropic';

const TERMINATOR: Record<ClientProtocol, string> = {
  openai: 'data: [DONE]\n\n',
  anthropic: 'event: message_stop\ndata: {"type":"message_stop"}\n\n',
};

/** Only the fields the probe reads, of either protocol. */
interface Payload {
  usage?: unknown;
  choices?: { delta?: { content?: unknown } }[];
  delta?: { text?: unknown };
}

/**
 * Reads one streamed response as it arrives: notices the first frame that carries non-empty text
 * (time to first token) and whether the stream ended with its terminator. With `full`, every
 * frame is parsed and the text, content frames and usage are collected (to validate a sample);
 * otherwise parsing stops at the first token, which keeps the load generator cheap.
 */
export class SseProbe {
  readonly protocol: ClientProtocol;
  readonly full: boolean;
  firstToken = false;
  text = '';
  contentFrames = 0;
  usage = false;
  private buffer = '';
  private tail = '';

  constructor(protocol: ClientProtocol, full: boolean) {
    this.protocol = protocol;
    this.full = full;
  }

  /** Feeds the next piece of the body; true when this piece carried the first token. */
  push(piece: string): boolean {
    this.tail = (this.tail + piece).slice(-64);
    if (this.firstToken && !this.full) return false;
    this.buffer += piece;
    let found = false;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) !== -1) {
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      if (this.frame(frame) && !this.firstToken) {
        this.firstToken = true;
        found = true;
        if (!this.full) {
          this.buffer = '';
          break;
        }
      }
    }
    return found;
  }

  /** The body ended with the protocol's terminator. */
  get complete(): boolean {
    return this.tail.endsWith(TERMINATOR[this.protocol]);
  }

  private frame(block: string): boolean {
    let event: string | undefined;
    let data = '';
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data += line.slice(6);
    }
    if (!data || data === '[DONE]') return false;
    const json = JSON.parse(data) as Payload;
    let text: unknown;
    if (this.protocol === 'openai') {
      if (json.usage) this.usage = true;
      text = json.choices?.[0]?.delta?.content;
    } else if (event === 'content_block_delta') {
      text = json.delta?.text;
    } else if (event === 'message_delta' && json.usage) {
      this.usage = true;
    }
    if (typeof text !== 'string' || text === '') return false;
    this.contentFrames++;
    if (this.full) this.text += text;
    return true;
  }
}
