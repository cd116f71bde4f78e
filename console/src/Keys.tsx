import { type FormEvent, useEffect, useState } from 'react';
import { api, postJson } from './api.ts';

interface Budgets {
  daily_usd: number | null;
  monthly_usd: number | null;
}
interface Project {
  id: string;
  name: string;
  tier: string | null;
  budgets: Budgets;
}
interface Key {
  id: string;
  prefix: string;
  name: string | null;
  project: string;
  tier: string | null;
  admin: boolean;
  status: 'active' | 'revoked' | 'expired';
  budgets: Budgets;
  last_used_at: string | null;
  expires_at: string | null;
}

function budgetText(b: Budgets): string {
  const parts = [b.daily_usd !== null && `$${b.daily_usd}/day`, b.monthly_usd !== null && `$${b.monthly_usd}/month`];
  return parts.filter(Boolean).join(', ') || '–';
}

/** Projects and keys through the admin API: create (the key shown once), revoke. */
export function Keys() {
  const [projects, setProjects] = useState<Project[]>([]);
  const [keys, setKeys] = useState<Key[]>([]);
  const [error, setError] = useState<string>();
  const [issued, setIssued] = useState<{ name: string; key: string }>();
  const [projectDraft, setProjectDraft] = useState({ id: '', name: '' });
  const [keyDraft, setKeyDraft] = useState({ project: '', name: '', admin: false });

  const load = () =>
    Promise.all([api<{ data: Project[] }>('/admin/projects'), api<{ data: Key[] }>('/admin/keys')])
      .then(([p, k]) => {
        setProjects(p.data);
        setKeys(k.data);
        setKeyDraft((d) => (d.project || p.data.length === 0 ? d : { ...d, project: p.data[0].id }));
      })
      .catch((err: Error) => setError(err.message));
  useEffect(() => void load(), []);

  async function act(action: () => Promise<unknown>) {
    setError(undefined);
    try {
      await action();
      await load();
    } catch (err) {
      setError((err as Error).message);
    }
  }
  const createProject = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      await postJson('/admin/projects', { ...(projectDraft.id && { id: projectDraft.id }), name: projectDraft.name });
      setProjectDraft({ id: '', name: '' });
    });
  };
  const createKey = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      const body = { project: keyDraft.project, admin: keyDraft.admin, ...(keyDraft.name && { name: keyDraft.name }) };
      const created = await postJson<{ key: string; name: string | null; prefix: string }>('/admin/keys', body);
      setIssued({ name: created.name ?? created.prefix, key: created.key });
    });
  };
  const revoke = (k: Key) => {
    if (!confirm(`Revoke ${k.name ?? k.prefix}? Requests with it are refused from now on.`)) return;
    void act(() => postJson(`/admin/keys/${encodeURIComponent(k.id)}/revoke`, {}));
  };

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">Keys and projects</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {issued && (
        <div role="status" className="issued">
          <p>
            New key <strong>{issued.name}</strong>: copy it now, it is not shown again.
          </p>
          <pre data-testid="issued-key">{issued.key}</pre>
          <button type="button" onClick={() => setIssued(undefined)}>
            Done
          </button>
        </div>
      )}
      <h2>Projects</h2>
      <form className="filters" onSubmit={createProject} aria-label="New project">
        <label>
          Project id (optional)
          <input value={projectDraft.id} onChange={(e) => setProjectDraft({ ...projectDraft, id: e.target.value })} />
        </label>
        <label>
          Project name
          <input
            required
            value={projectDraft.name}
            onChange={(e) => setProjectDraft({ ...projectDraft, name: e.target.value })}
          />
        </label>
        <button type="submit">Create project</button>
      </form>
      <table>
        <thead>
          <tr>
            <th scope="col">Id</th>
            <th scope="col">Name</th>
            <th scope="col">Tier</th>
            <th scope="col">Budgets</th>
          </tr>
        </thead>
        <tbody>
          {projects.map((p) => (
            <tr key={p.id}>
              <td>{p.id}</td>
              <td>{p.name}</td>
              <td>{p.tier ?? '–'}</td>
              <td>{budgetText(p.budgets)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Keys</h2>
      <form className="filters" onSubmit={createKey} aria-label="New key">
        <label>
          Project
          <select required value={keyDraft.project} onChange={(e) => setKeyDraft({ ...keyDraft, project: e.target.value })}>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.id}
              </option>
            ))}
          </select>
        </label>
        <label>
          Key name
          <input value={keyDraft.name} onChange={(e) => setKeyDraft({ ...keyDraft, name: e.target.value })} />
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={keyDraft.admin}
            onChange={(e) => setKeyDraft({ ...keyDraft, admin: e.target.checked })}
          />
          Admin key
        </label>
        <button type="submit" disabled={!keyDraft.project}>
          Create key
        </button>
      </form>
      <table>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Name</th>
            <th scope="col">Project</th>
            <th scope="col">Status</th>
            <th scope="col">Admin</th>
            <th scope="col">Tier</th>
            <th scope="col">Budgets</th>
            <th scope="col">Last used</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id}>
              <td>{k.prefix}</td>
              <td>{k.name ?? '–'}</td>
              <td>{k.project}</td>
              <td>{k.status}</td>
              <td>{k.admin ? 'yes' : 'no'}</td>
              <td>{k.tier ?? '–'}</td>
              <td>{budgetText(k.budgets)}</td>
              <td>{k.last_used_at ? new Date(k.last_used_at).toLocaleString() : 'never'}</td>
              <td>
                {k.status === 'active' && (
                  <button type="button" onClick={() => revoke(k)} aria-label={`Revoke ${k.name ?? k.prefix}`}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
