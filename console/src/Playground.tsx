import { type FormEvent, useEffect, useRef, useState } from 'react';
import { readStream } from '../../src/client/read-stream.ts';
import { api } from './api.ts';
import { requestHref } from './route.ts';

interface ToolCallView {
  index: number;
  id: string;
  name: string;
  /** The argument deltas as they came, each one shown on its own. */
  deltas: string[];
}

/** A function tool for the tools field: mock/tools calls the first function tool it is given. */
const EXAMPLE_TOOLS = JSON.stringify(
  [
    {
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'The weather at a place',
        parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
      },
    },
  ],
  null,
  2,
);

/** The tools field's JSON: empty is none; anything else must be an array (the gateway checks the rest). */
function parseTools(text: string): unknown[] | undefined {
  if (!text.trim()) return undefined;
  let tools: unknown;
  try {
    tools = JSON.parse(text);
  } catch (err) {
    throw new Error(`tools is not JSON: ${(err as Error).message}`);
  }
  if (!Array.isArray(tools)) throw new Error('tools must be a JSON array of tools');
  return tools;
}

/**
 * A chat completion streamed through sluice with the session: the raw SSE frames on one side,
 * what they add up to on the other (the package's own stream reader, src/client), as they come.
 */
export function Playground() {
  const [models, setModels] = useState<string[]>([]);
  const [model, setModel] = useState('');
  const [profile, setProfile] = useState<'openai' | 'accounting'>('openai');
  const [prompt, setPrompt] = useState('Hello from the console');
  const [raw, setRaw] = useState('');
  const [toolsJson, setToolsJson] = useState('');
  const [text, setText] = useState('');
  const [reasoning, setReasoning] = useState<string[]>([]);
  const [tools, setTools] = useState<ToolCallView[]>([]);
  const [requestId, setRequestId] = useState<string>();
  const [status, setStatus] = useState<string>('');
  const [busy, setBusy] = useState(false);
  const abort = useRef<AbortController>(undefined);

  useEffect(() => {
    api<{ data: { id: string }[] }>('/v1/models')
      .then((list) => {
        const ids = list.data.map((m) => m.id);
        setModels(ids);
        setModel((current) => current || (ids.includes('mock/echo') ? 'mock/echo' : (ids[0] ?? '')));
      })
      .catch((err: Error) => setStatus(err.message));
    return () => abort.current?.abort();
  }, []);

  async function send(event: FormEvent) {
    event.preventDefault();
    let tools: unknown[] | undefined;
    try {
      tools = parseTools(toolsJson);
    } catch (err) {
      setStatus(`not sent: ${(err as Error).message}`);
      return;
    }
    abort.current?.abort();
    const controller = new AbortController();
    abort.current = controller;
    setRaw('');
    setText('');
    setReasoning([]);
    setTools([]);
    setRequestId(undefined);
    setStatus('streaming');
    setBusy(true);
    try {
      const res = await fetch('/v1/chat/completions', {
        method: 'POST',
        credentials: 'same-origin',
        signal: controller.signal,
        headers: { 'content-type': 'application/json', 'x-sluice-profile': profile },
        body: JSON.stringify({
          model,
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: prompt }],
          ...(tools && { tools }),
        }),
      });
      setRequestId(res.headers.get('x-request-id') ?? undefined);
      if (!res.body) throw new Error(`HTTP ${res.status} with no body`);
      // One copy of the bytes is shown as they came, the other is read as a stream.
      const [shown, read] = res.body.tee();
      const showing = showRaw(shown, (chunk) => setRaw((old) => old + chunk));
      const message = await readStream(new Response(read, { status: res.status, headers: res.headers }), {
        onText: (delta) => setText((old) => old + delta),
        onReasoning: (delta) => setReasoning((old) => [...old, delta]),
        onFrame: (frame) => setTools((old) => withToolDeltas(old, frame.data)),
      });
      await showing;
      const usage = message.usage ? `${message.usage.inputTokens} → ${message.usage.outputTokens} tokens` : 'no usage';
      const cost = message.costUsd === undefined ? '' : `, $${message.costUsd.toFixed(6)}`;
      setStatus(`done: ${message.finishReason ?? 'no finish reason'}, ${usage}${cost}`);
    } catch (err) {
      setStatus(controller.signal.aborted ? 'stopped' : `failed: ${(err as Error).message}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="playground-title">
      <h1 id="playground-title">Playground</h1>
      <form className="playground" onSubmit={(e) => void send(e)}>
        <label>
          Model
          <select value={model} onChange={(e) => setModel(e.target.value)}>
            {models.map((m) => (
              <option key={m}>{m}</option>
            ))}
          </select>
        </label>
        <label>
          Stream profile
          <select value={profile} onChange={(e) => setProfile(e.target.value as 'openai' | 'accounting')}>
            <option value="openai">openai</option>
            <option value="accounting">accounting</option>
          </select>
        </label>
        <label className="wide">
          Prompt
          <textarea rows={3} value={prompt} onChange={(e) => setPrompt(e.target.value)} />
        </label>
        <label className="wide">
          Tools (JSON array, optional)
          <textarea
            rows={toolsJson ? 6 : 2}
            value={toolsJson}
            onChange={(e) => setToolsJson(e.target.value)}
            placeholder='[{"type": "function", "function": {"name": "...", "parameters": {...}}}]'
            spellCheck={false}
          />
        </label>
        <button type="button" onClick={() => setToolsJson(EXAMPLE_TOOLS)}>
          Example tool
        </button>
        <button type="submit" disabled={busy || !model}>
          Send
        </button>
        {busy && (
          <button type="button" onClick={() => abort.current?.abort()}>
            Stop
          </button>
        )}
      </form>
      <p role="status">
        {status}
        {requestId && (
          <>
            {' '}
            · <a href={requestHref(requestId)}>request {requestId}</a>
          </>
        )}
      </p>
      <div className="side-by-side">
        <figure>
          <figcaption>Raw SSE frames</figcaption>
          <pre aria-label="Raw SSE frames" data-testid="raw" tabIndex={0}>
            {raw}
          </pre>
        </figure>
        <figure>
          <figcaption>Assembled</figcaption>
          {(reasoning.length > 0 || tools.length > 0) && <p className="note">Each shaded piece is one delta, as it arrived.</p>}
          {reasoning.length > 0 && (
            <>
              <h2>Reasoning</h2>
              <Deltas
                pieces={reasoning}
                label={`Reasoning, ${reasoning.length} deltas`}
                className="reasoning"
                testId="reasoning"
              />
            </>
          )}
          <h2>Text</h2>
          <pre data-testid="assembled">{text}</pre>
          {tools.length > 0 && (
            <>
              <h2>Tool calls</h2>
              {tools.map((t) => (
                <div key={t.index} className="tool-call" data-testid="tool-call">
                  <p>
                    <code>{t.name}</code> {t.id && <span className="note">({t.id})</span>}
                  </p>
                  <Deltas
                    pieces={t.deltas}
                    label={`Arguments of ${t.name}, ${t.deltas.length} deltas`}
                    className="arguments"
                    testId="tool-arguments"
                  />
                </div>
              ))}
            </>
          )}
        </figure>
      </div>
    </section>
  );
}

/** Deltas side by side, each in its own shaded span, so where one ended and the next began shows. */
function Deltas({ pieces, label, className, testId }: { pieces: string[]; label: string; className: string; testId: string }) {
  return (
    <pre className={`deltas ${className}`} aria-label={label} data-testid={testId}>
      {pieces.map((p, i) => (
        <span key={i} className="delta">
          {p}
        </span>
      ))}
    </pre>
  );
}

async function showRaw(body: ReadableStream<Uint8Array>, append: (chunk: string) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    append(decoder.decode(value, { stream: true }));
  }
}

/** A chat chunk's tool-call deltas added to the calls so far, so that their arguments grow as they stream. */
function withToolDeltas(calls: ToolCallView[], chunk: Record<string, unknown>): ToolCallView[] {
  const choices = chunk.choices as { delta?: { tool_calls?: unknown } }[] | undefined;
  const deltas = choices?.[0]?.delta?.tool_calls;
  if (!Array.isArray(deltas)) return calls;
  const next = calls.map((c) => ({ ...c, deltas: [...c.deltas] }));
  for (const d of deltas as { index: number; id?: string; function?: { name?: string; arguments?: string } }[]) {
    let call = next.find((c) => c.index === d.index);
    if (!call) next.push((call = { index: d.index, id: '', name: '', deltas: [] }));
    call.id ||= d.id ?? '';
    call.name += d.function?.name ?? '';
    if (d.function?.arguments) call.deltas.push(d.function.arguments);
  }
  return next;
}
