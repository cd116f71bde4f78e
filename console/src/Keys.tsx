import { type FormEvent, useEffect, useState } from 'react';
import { api, formatUsd, postJson } from './api.ts';
import { ProjectName, useNames } from './names.tsx';

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

/** GET /console/api/usage: what each usable key and each project is held to, and how much is in use now. */
interface Usage {
  tier: string | null;
  /** A budget of its (or its project's) has nothing left: every request is refused until it resets. */
  blocked: boolean;
  limits: {
    scope: 'key' | 'project';
    kind: 'requests' | 'tokens' | 'concurrent';
    limit: number;
    used: number;
    reset_ms: number;
  }[];
  budgets: {
    scope: 'key' | 'project';
    period: 'day' | 'month';
    limit_usd: number;
    spent_usd: number;
    exhausted: boolean;
    resets_at: string;
  }[];
}
interface UsageReport {
  keys: Record<string, Usage>;
  projects: Record<string, Usage>;
}

const KIND = { requests: 'requests/min', tokens: 'tokens/min', concurrent: 'in flight' } as const;

/** The limits with what is used of each: a meter and the numbers, named by scope so that a screen reader says which. */
function LimitsCell({ usage }: { usage: Usage | undefined }) {
  if (!usage || usage.limits.length === 0) return <>{usage?.tier ? `${usage.tier}: none` : '–'}</>;
  return (
    <ul className="usage">
      {usage.limits.map((l) => {
        const name = `${KIND[l.kind]} (${l.scope})`;
        return (
          <li key={`${l.scope}-${l.kind}`}>
            <span>
              {name}: {l.used} of {l.limit}
            </span>
            <meter min={0} max={l.limit} high={l.limit * 0.9} value={l.used} aria-label={name} />
          </li>
        );
      })}
    </ul>
  );
}

function BudgetsCell({ usage, configured }: { usage: Usage | undefined; configured: Budgets }) {
  if (!usage) return <>{budgetText(configured)}</>;
  if (usage.budgets.length === 0) return <>–</>;
  return (
    <ul className="usage">
      {usage.budgets.map((b) => {
        const name = `${b.period === 'day' ? 'today' : 'this month'} (${b.scope})`;
        return (
          <li key={`${b.scope}-${b.period}`}>
            <span title={`resets at ${new Date(b.resets_at).toLocaleString()}`}>
              {name}: {formatUsd(b.spent_usd)} of {formatUsd(b.limit_usd)}
              {b.exhausted && <strong className="blocked"> exhausted</strong>}
            </span>
            <meter min={0} max={b.limit_usd} high={b.limit_usd * 0.9} value={b.spent_usd} aria-label={`spent ${name}`} />
          </li>
        );
      })}
    </ul>
  );
}

/** The optional tier and budgets of the create forms, as typed (empty: not set). */
interface LimitsDraft {
  tier: string;
  daily: string;
  monthly: string;
}
const NO_LIMITS: LimitsDraft = { tier: '', daily: '', monthly: '' };

/** Only what was filled in; the admin API checks the values and names a bad one in its 400. */
function limitsBody(d: LimitsDraft): Record<string, unknown> {
  const budgets = {
    ...(d.daily && { daily_usd: Number(d.daily) }),
    ...(d.monthly && { monthly_usd: Number(d.monthly) }),
  };
  return { ...(d.tier && { tier: d.tier }), ...(Object.keys(budgets).length > 0 && { budgets }) };
}

/** Tier and budget inputs for a create form, labelled with whose they are. */
function LimitsFields<T extends LimitsDraft>({ draft, set, whose }: { draft: T; set: (d: T) => void; whose: string }) {
  return (
    <>
      <label>
        {whose} tier (optional)
        <input value={draft.tier} onChange={(e) => set({ ...draft, tier: e.target.value })} />
      </label>
      <label>
        {whose} daily budget, USD (optional)
        <input type="number" min="0" step="any" value={draft.daily} onChange={(e) => set({ ...draft, daily: e.target.value })} />
      </label>
      <label>
        {whose} monthly budget, USD (optional)
        <input
          type="number"
          min="0"
          step="any"
          value={draft.monthly}
          onChange={(e) => set({ ...draft, monthly: e.target.value })}
        />
      </label>
    </>
  );
}

/**
 * The status the admin API gives, or blocked when a budget is spent: the key (or project) is
 * active but every request of it is refused until the budget resets.
 */
function StatusCell({ status, usage }: { status: string; usage: Usage | undefined }) {
  if (status !== 'active' || !usage?.blocked) return <>{status}</>;
  const spent = usage.budgets.find((b) => b.exhausted);
  const until = spent
    ? `until ${new Date(spent.resets_at).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' })}`
    : '';
  return (
    <strong className="blocked" title={until}>
      blocked (budget exhausted)
    </strong>
  );
}

function budgetText(b: Budgets): string {
  const parts = [b.daily_usd !== null && `$${b.daily_usd}/day`, b.monthly_usd !== null && `$${b.monthly_usd}/month`];
  return parts.filter(Boolean).join(', ') || '–';
}

/**
 * Projects and keys through the admin API: create (the key shown once), revoke; and each one's
 * tier limits and budgets with what is used of them now (GET /console/api/usage).
 */
export function Keys() {
  const [projects, setProjects] = useState<Project[]>([]);
  const [keys, setKeys] = useState<Key[]>([]);
  const [usage, setUsage] = useState<UsageReport>();
  const [error, setError] = useState<string>();
  const [usageError, setUsageError] = useState<string>();
  const [issued, setIssued] = useState<{ name: string; key: string }>();
  const [projectDraft, setProjectDraft] = useState({ id: '', name: '', ...NO_LIMITS });
  const [keyDraft, setKeyDraft] = useState({ project: '', name: '', admin: false, ...NO_LIMITS });
  const names = useNames();

  const load = () => {
    // The usage may be unreadable (Redis away) while the keys are not: each says so on its own.
    api<UsageReport>('/console/api/usage')
      .then((u) => {
        setUsage(u);
        setUsageError(undefined);
      })
      .catch((err: Error) => setUsageError(`Usage: ${err.message}`));
    return Promise.all([api<{ data: Project[] }>('/admin/projects'), api<{ data: Key[] }>('/admin/keys')])
      .then(([p, k]) => {
        setProjects(p.data);
        setKeys(k.data);
        setKeyDraft((d) => (d.project || p.data.length === 0 ? d : { ...d, project: p.data[0].id }));
      })
      .catch((err: Error) => setError(err.message));
  };
  useEffect(() => void load(), []);

  async function act(action: () => Promise<unknown>) {
    setError(undefined);
    try {
      await action();
      names.reload(true);
      await load();
    } catch (err) {
      setError((err as Error).message);
    }
  }
  const createProject = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      await postJson('/admin/projects', {
        ...(projectDraft.id && { id: projectDraft.id }),
        name: projectDraft.name,
        ...limitsBody(projectDraft),
      });
      setProjectDraft({ id: '', name: '', ...NO_LIMITS });
    });
  };
  const createKey = (e: FormEvent) => {
    e.preventDefault();
    void act(async () => {
      const body = {
        project: keyDraft.project,
        admin: keyDraft.admin,
        ...(keyDraft.name && { name: keyDraft.name }),
        ...limitsBody(keyDraft),
      };
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
      <div className="row">
        <h1 id="keys-title">Keys and projects</h1>
        {/* Limits refill and spend grows by the second: read again on demand, not on a timer. */}
        <button type="button" onClick={() => void load()}>
          Refresh usage
        </button>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {usageError && <p className="error">{usageError}</p>}
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
        <LimitsFields draft={projectDraft} set={setProjectDraft} whose="Project" />
        <button type="submit">Create project</button>
      </form>
      <div className="table-wrap" role="region" aria-label="Projects" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Tier</th>
              <th scope="col">Project limits, in use now</th>
              <th scope="col">Budgets, spent</th>
            </tr>
          </thead>
          <tbody>
            {projects.map((p) => (
              <tr key={p.id}>
                <td>{p.id}</td>
                <td>{p.name}</td>
                <td>
                  <StatusCell status="active" usage={usage?.projects[p.id]} />
                </td>
                <td>{usage?.projects[p.id]?.tier ?? p.tier ?? '–'}</td>
                <td className="wrap">
                  <LimitsCell usage={usage?.projects[p.id]} />
                </td>
                <td className="wrap">
                  <BudgetsCell usage={usage?.projects[p.id]} configured={p.budgets} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <h2>Keys</h2>
      <form className="filters" onSubmit={createKey} aria-label="New key">
        <label>
          Project
          <select required value={keyDraft.project} onChange={(e) => setKeyDraft({ ...keyDraft, project: e.target.value })}>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name === p.id ? p.id : `${p.name} (${p.id})`}
              </option>
            ))}
          </select>
        </label>
        <label>
          Key name
          <input value={keyDraft.name} onChange={(e) => setKeyDraft({ ...keyDraft, name: e.target.value })} />
        </label>
        <LimitsFields draft={keyDraft} set={setKeyDraft} whose="Key" />
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
      <div className="table-wrap" role="region" aria-label="Keys" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Project</th>
              <th scope="col">Status</th>
              <th scope="col">Tier</th>
              <th scope="col">Limits, in use now</th>
              <th scope="col">Budgets, spent</th>
              <th scope="col">Last used</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.map((k) => (
              <tr key={k.id}>
                <td>{k.prefix}</td>
                <td>{k.name ?? '–'}</td>
                <td>
                  <ProjectName id={k.project} />
                </td>
                <td>
                  <StatusCell status={k.status} usage={usage?.keys[k.id]} />
                  {k.admin && ', admin'}
                </td>
                <td>{usage?.keys[k.id]?.tier ?? k.tier ?? '–'}</td>
                <td className="wrap">
                  <LimitsCell usage={usage?.keys[k.id]} />
                </td>
                <td className="wrap">
                  <BudgetsCell usage={usage?.keys[k.id]} configured={k.budgets} />
                </td>
                <td>
                  {k.last_used_at
                    ? new Date(k.last_used_at).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' })
                    : 'never'}
                </td>
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
      </div>
    </section>
  );
}
