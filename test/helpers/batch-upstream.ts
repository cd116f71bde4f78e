import type { RecordedRequest, UpstreamReply } from './fake-upstream.ts';

/**
 * A fake of OpenAI's Files and Batch API and of Anthropic's Message Batches, with the objects'
 * documented shapes (the API references' file, batch, message_batch and results lines). Batches
 * stay as created until the test ends them (`completeBatch`, `endMessageBatch`).
 */
export class BatchUpstream {
  readonly files = new Map<string, { object: Record<string, unknown>; content: string }>();
  readonly batches = new Map<string, Record<string, unknown>>();
  readonly messageBatches = new Map<string, { object: Record<string, unknown>; results: string }>();
  private n = 0;

  /** The fake upstream's handler (FakeUpstream.reply). */
  readonly reply = (req: RecordedRequest): UpstreamReply => {
    const path = req.url.split('?')[0];
    const parts = path.split('/').filter(Boolean);
    if (parts[0] !== 'v1') return notFound('route', path);
    if (parts[1] === 'files') return this.filesCall(req, parts.slice(2));
    if (parts[1] === 'batches') return this.batchesCall(req, parts.slice(2));
    if (parts[1] === 'messages' && parts[2] === 'batches') return this.messageBatchesCall(req, parts.slice(3));
    return notFound('route', path);
  };

  /** The batch is done: its output file holds one line per result, with `usage` as chat completions report it. */
  completeBatch(id: string, results: { model: string; prompt: number; completion: number; cached?: number }[]): string {
    const batch = this.batches.get(id);
    if (!batch) throw new Error(`no batch ${id}`);
    const outputId = `file-out-${++this.n}`;
    const content = results
      .map((r, i) =>
        JSON.stringify({
          id: `batch_req_${i}`,
          custom_id: `request-${i}`,
          response: {
            status_code: 200,
            request_id: `req_${i}`,
            body: {
              id: `chatcmpl-${i}`,
              object: 'chat.completion',
              created: 1_711_652_795,
              model: r.model,
              choices: [{ index: 0, message: { role: 'assistant', content: 'Hello.' }, logprobs: null, finish_reason: 'stop' }],
              usage: {
                prompt_tokens: r.prompt,
                completion_tokens: r.completion,
                total_tokens: r.prompt + r.completion,
                prompt_tokens_details: { cached_tokens: r.cached ?? 0 },
                completion_tokens_details: { reasoning_tokens: 0 },
              },
            },
          },
          error: null,
        }),
      )
      .join('\n');
    this.files.set(outputId, { object: fileObject(outputId, content.length, 'batch_output.jsonl', 'batch_output'), content: `${content}\n` });
    Object.assign(batch, {
      status: 'completed',
      output_file_id: outputId,
      completed_at: now(),
      request_counts: { total: results.length, completed: results.length, failed: 0 },
    });
    return outputId;
  }

  /** The message batch has ended: its results are these lines (Anthropic's `succeeded` results). */
  endMessageBatch(id: string, results: { model: string; input: number; output: number; cacheRead?: number }[]): void {
    const batch = this.messageBatches.get(id);
    if (!batch) throw new Error(`no message batch ${id}`);
    batch.results = results
      .map((r, i) =>
        JSON.stringify({
          custom_id: `request-${i}`,
          result: {
            type: 'succeeded',
            message: {
              id: `msg_${i}`,
              type: 'message',
              role: 'assistant',
              model: r.model,
              content: [{ type: 'text', text: 'Hello.' }],
              stop_reason: 'end_turn',
              stop_sequence: null,
              usage: {
                input_tokens: r.input,
                output_tokens: r.output,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: r.cacheRead ?? 0,
              },
            },
          },
        }),
      )
      .join('\n');
    Object.assign(batch.object, {
      processing_status: 'ended',
      ended_at: new Date().toISOString(),
      request_counts: { processing: 0, succeeded: results.length, errored: 0, canceled: 0, expired: 0 },
      results_url: `https://api.anthropic.com/v1/messages/batches/${id}/results`,
    });
  }

  private filesCall(req: RecordedRequest, rest: string[]): UpstreamReply {
    if (rest.length === 0 && req.method === 'POST') {
      const id = `file-${++this.n}`;
      const { filename, content, purpose } = multipartFile(req);
      const object = fileObject(id, Buffer.byteLength(content), filename, purpose);
      this.files.set(id, { object, content });
      return json(object);
    }
    if (rest.length === 0) return json(list([...this.files.values()].map((f) => f.object)));
    const file = this.files.get(rest[0]);
    if (!file) return notFound('File', rest[0]);
    if (rest[1] === 'content') return { headers: { 'content-type': 'application/octet-stream' }, body: file.content };
    if (req.method === 'DELETE') {
      this.files.delete(rest[0]);
      return json({ id: rest[0], object: 'file', deleted: true });
    }
    return json(file.object);
  }

  private batchesCall(req: RecordedRequest, rest: string[]): UpstreamReply {
    if (rest.length === 0 && req.method === 'POST') {
      const body = req.json as { input_file_id: string; endpoint: string; completion_window: string; metadata?: unknown };
      if (!this.files.has(body.input_file_id)) return notFound('File', body.input_file_id);
      const id = `batch_${++this.n}`;
      const batch = {
        id,
        object: 'batch',
        endpoint: body.endpoint,
        errors: null,
        input_file_id: body.input_file_id,
        completion_window: body.completion_window,
        status: 'validating',
        output_file_id: null,
        error_file_id: null,
        created_at: now(),
        in_progress_at: null,
        expires_at: now() + 86_400,
        finalizing_at: null,
        completed_at: null,
        failed_at: null,
        expired_at: null,
        cancelling_at: null,
        cancelled_at: null,
        request_counts: { total: 0, completed: 0, failed: 0 },
        metadata: body.metadata ?? null,
      };
      this.batches.set(id, batch);
      return json(batch);
    }
    if (rest.length === 0) return json(list([...this.batches.values()]));
    const batch = this.batches.get(rest[0]);
    if (!batch) return notFound('Batch', rest[0]);
    if (rest[1] === 'cancel') Object.assign(batch, { status: 'cancelling', cancelling_at: now() });
    return json(batch);
  }

  private messageBatchesCall(req: RecordedRequest, rest: string[]): UpstreamReply {
    if (rest.length === 0 && req.method === 'POST') {
      const body = req.json as { requests: unknown[] };
      const id = `msgbatch_${String(++this.n).padStart(6, '0')}`;
      const created = new Date();
      const object = {
        id,
        type: 'message_batch',
        processing_status: 'in_progress',
        request_counts: { processing: body.requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
        ended_at: null,
        created_at: created.toISOString(),
        expires_at: new Date(created.getTime() + 86_400_000).toISOString(),
        archived_at: null,
        cancel_initiated_at: null,
        results_url: null,
      };
      this.messageBatches.set(id, { object, results: '' });
      return json(object);
    }
    if (rest.length === 0) {
      const data = [...this.messageBatches.values()].map((b) => b.object);
      return json({ data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
    }
    const batch = this.messageBatches.get(rest[0]);
    if (!batch) return anthropicNotFound();
    if (rest[1] === 'results') {
      if (batch.object.processing_status !== 'ended') return anthropicNotFound();
      return { headers: { 'content-type': 'application/binary' }, body: batch.results };
    }
    if (rest[1] === 'cancel') Object.assign(batch.object, { processing_status: 'canceling', cancel_initiated_at: new Date().toISOString() });
    if (req.method === 'DELETE') {
      this.messageBatches.delete(rest[0]);
      return json({ id: rest[0], type: 'message_batch_deleted' });
    }
    return json(batch.object);
  }
}

const now = () => Math.floor(Date.now() / 1000);

function json(body: unknown, status = 200): UpstreamReply {
  return { status, headers: { 'content-type': 'application/json', 'x-request-id': `req_up_${Date.now()}` }, body: JSON.stringify(body) };
}

function list(data: Record<string, unknown>[]): Record<string, unknown> {
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false };
}

function fileObject(id: string, bytes: number, filename: string, purpose: string): Record<string, unknown> {
  return { id, object: 'file', bytes, created_at: now(), expires_at: null, filename, purpose, status: 'processed', status_details: null };
}

function notFound(what: string, id: string): UpstreamReply {
  return json({ error: { message: `No such ${what} object: ${id}`, type: 'invalid_request_error', param: 'id', code: null } }, 404);
}

function anthropicNotFound(): UpstreamReply {
  return json({ type: 'error', error: { type: 'not_found_error', message: 'Not found' } }, 404);
}

/** The `file` part (its name and content) and the `purpose` field of a multipart/form-data upload. */
function multipartFile(req: RecordedRequest): { filename: string; content: string; purpose: string } {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(String(req.headers['content-type']));
  const delimiter = `--${boundary?.[1] ?? boundary?.[2]}`;
  let filename = 'upload';
  let content = '';
  let purpose = '';
  for (const part of req.body.split(delimiter)) {
    const split = part.indexOf('\r\n\r\n');
    if (split === -1) continue;
    const head = part.slice(0, split);
    const value = part.slice(split + 4).replace(/\r\n$/, '');
    if (/name="file"/.test(head)) {
      filename = /filename="([^"]*)"/.exec(head)?.[1] ?? filename;
      content = value;
    } else if (/name="purpose"/.test(head)) {
      purpose = value;
    }
  }
  return { filename, content, purpose };
}
