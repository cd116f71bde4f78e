/** The admin API over fetch, for tests: status, parsed body and the raw text (to grep). */
export async function adminCall(
  url: string,
  key: string | undefined,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, any>; text: string }> {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const init: RequestInit = { method, headers };
  if (method === 'POST' || method === 'PATCH') {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body ?? {});
  }
  const res = await fetch(`${url}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, any>, text };
}

/** A project and a key in it (extra fields for the key: models, tier, admin, ...); returns the key's JSON, plaintext in `key`. */
export async function projectWithKey(
  url: string,
  masterKey: string | undefined,
  projectId: string,
  keyFields: Record<string, unknown> = {},
): Promise<Record<string, any>> {
  const project = await adminCall(url, masterKey, 'POST', '/admin/projects', { id: projectId, name: projectId });
  if (project.status !== 201 && project.status !== 409) throw new Error(`project: ${project.status} ${project.text}`);
  const created = await adminCall(url, masterKey, 'POST', '/admin/keys', { project: projectId, ...keyFields });
  if (created.status !== 201) throw new Error(`key: ${created.status} ${created.text}`);
  return created.body;
}

/** A chat completion with a key; returns the status, the X-Request-ID and the parsed body. */
export async function chatWith(
  url: string,
  key: string | undefined,
  body: Record<string, unknown>,
  path = '/v1/chat/completions',
): Promise<{ status: number; requestId: string; body: Record<string, any>; text: string }> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
  const text = await res.text();
  let parsed: Record<string, any> = {};
  try {
    parsed = JSON.parse(text) as Record<string, any>;
  } catch {
    // A stream: the caller reads `text`.
  }
  return { status: res.status, requestId: res.headers.get('x-request-id') ?? '', body: parsed, text };
}
