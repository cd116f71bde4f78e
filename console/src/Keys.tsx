import { useEffect, useState } from 'react';
import { api } from './api.ts';
import type { Endpoint, Key, PageActions, Project } from './admin-types.ts';
import { EndpointsSection } from './EndpointsSection.tsx';
import { KeysSection } from './KeysSection.tsx';
import { useNames } from './names.tsx';
import { ProjectsSection } from './ProjectsSection.tsx';
import type { UsageReport } from './usage-cells.tsx';

/**
 * Projects, keys and endpoints through the admin API: create, edit, disable, rotate, revoke and
 * delete (a new secret shown once); and each key's and project's tier limits and budgets with
 * what is used of them now (GET /console/api/usage).
 */
export function Keys() {
  const [projects, setProjects] = useState<Project[]>([]);
  const [keys, setKeys] = useState<Key[]>([]);
  const [endpoints, setEndpoints] = useState<Endpoint[]>([]);
  const [usage, setUsage] = useState<UsageReport>();
  const [error, setError] = useState<string>();
  const [usageError, setUsageError] = useState<string>();
  const [issued, setIssued] = useState<{ what: string; key: string }>();
  const names = useNames();

  const load = () => {
    // The usage may be unreadable (Redis away) while the keys are not: each says so on its own.
    api<UsageReport>('/console/api/usage')
      .then((u) => {
        setUsage(u);
        setUsageError(undefined);
      })
      .catch((err: Error) => setUsageError(`Usage: ${err.message}`));
    return Promise.all([
      api<{ data: Project[] }>('/admin/projects'),
      api<{ data: Key[] }>('/admin/keys'),
      api<{ data: Endpoint[] }>('/admin/endpoints'),
    ])
      .then(([p, k, e]) => {
        setProjects(p.data);
        setKeys(k.data);
        setEndpoints(e.data);
      })
      .catch((err: Error) => setError(err.message));
  };
  useEffect(() => void load(), []);

  const refresh = () => {
    names.reload(true);
    void load();
  };
  const page: PageActions = {
    act: (action) => {
      setError(undefined);
      action().then(refresh, (err: Error) => setError(err.message));
    },
    refresh,
    showSecret: (what, key) => setIssued({ what, key }),
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
            <strong>{issued.what}</strong>: copy it now, it is not shown again.
          </p>
          <pre data-testid="issued-key">{issued.key}</pre>
          <button type="button" onClick={() => setIssued(undefined)}>
            Done
          </button>
        </div>
      )}
      <ProjectsSection projects={projects} keys={keys} usage={usage} page={page} />
      <KeysSection projects={projects} keys={keys} usage={usage} page={page} />
      <EndpointsSection projects={projects} endpoints={endpoints} page={page} />
    </section>
  );
}
