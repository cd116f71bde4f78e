import { type FormEvent, useState } from 'react';
import { ApiError, deleteJson, patchJson, postJson } from './api.ts';
import type { Key, PageActions, Project } from './admin-types.ts';
import { EditForm } from './EditForm.tsx';
import { PROJECT_FIELDS, projectDraft } from './edit-fields.ts';
import { LimitsFields, limitsBody, NO_LIMITS } from './LimitsFields.tsx';
import { BudgetsCell, LimitsCell, StatusCell, type UsageReport } from './usage-cells.tsx';
import { DataTable } from './DataTable.tsx';

const path = (p: Project) => `/admin/projects/${encodeURIComponent(p.id)}`;

/** Keys that still work or may again (neither revoked nor deleted): what makes the API refuse to delete their project. */
const liveKeys = (keys: readonly Key[], p: Project) => keys.filter((k) => k.project === p.id && k.status !== 'revoked').length;

/**
 * The projects: create one, edit it (name, tier, models, budgets), delete it. A project with live
 * keys is refused (409 project_has_keys): the page says why and offers to delete it with its keys.
 */
export function ProjectsSection({
  projects,
  keys,
  usage,
  page,
}: {
  projects: Project[];
  keys: Key[];
  usage: UsageReport | undefined;
  page: PageActions;
}) {
  const [draft, setDraft] = useState({ id: '', name: '', ...NO_LIMITS });
  const [editing, setEditing] = useState<Project>();
  const [hasKeys, setHasKeys] = useState<Project>();

  const create = (e: FormEvent) => {
    e.preventDefault();
    page.act(async () => {
      await postJson('/admin/projects', { ...(draft.id && { id: draft.id }), name: draft.name, ...limitsBody(draft) });
      setDraft({ id: '', name: '', ...NO_LIMITS });
    });
  };
  const remove = (p: Project, force: boolean) => {
    if (!force && !confirm(`Delete project ${p.name}? Its endpoints go with it; its request log stays.`)) return;
    setHasKeys(undefined);
    page.act(async () => {
      try {
        await deleteJson(`${path(p)}${force ? '?force=true' : ''}`);
      } catch (err) {
        // Not a failure to report: a question to ask.
        if (err instanceof ApiError && err.code === 'project_has_keys') return setHasKeys(p);
        throw err;
      }
    });
  };

  return (
    <>
      <h2>Projects</h2>
      <form className="filters" onSubmit={create} aria-label="New project">
        <label>
          Project id (optional)
          <input value={draft.id} onChange={(e) => setDraft({ ...draft, id: e.target.value })} />
        </label>
        <label>
          Project name
          <input required value={draft.name} onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
        </label>
        <LimitsFields draft={draft} set={setDraft} whose="Project" />
        <button type="submit">Create project</button>
      </form>
      {hasKeys && (
        <div role="alert" className="confirm">
          <p>
            Project <strong>{hasKeys.name}</strong> still has {liveKeys(keys, hasKeys)} live key(s), so it was not deleted: a
            deleted project must not leave keys that still work. Revoke or delete them first, or delete the project with its keys.
          </p>
          <div className="row">
            <button type="button" onClick={() => remove(hasKeys, true)}>
              Delete {hasKeys.name} with its keys
            </button>
            <button type="button" onClick={() => setHasKeys(undefined)}>
              Keep it
            </button>
          </div>
        </div>
      )}
      {editing && (
        <EditForm
          key={editing.id}
          title={`Edit project ${editing.name}`}
          fields={PROJECT_FIELDS}
          initial={projectDraft(editing)}
          save={(body) => patchJson(path(editing), body)}
          onDone={() => {
            setEditing(undefined);
            page.refresh();
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
      <DataTable
        label="Projects"
        columns={['Id', 'Name', 'Status', 'Tier', 'Project limits, in use now', 'Budgets, spent', 'Actions']}
      >
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
            <td>
              <div className="actions">
                <button type="button" onClick={() => setEditing(p)} aria-label={`Edit project ${p.name}`}>
                  Edit
                </button>
                <button type="button" onClick={() => remove(p, false)} aria-label={`Delete project ${p.name}`}>
                  Delete
                </button>
              </div>
            </td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}
