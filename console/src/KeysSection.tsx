import { type FormEvent, useState } from 'react';
import { deleteJson, patchJson, postJson } from './api.ts';
import type { IssuedKey, Key, PageActions, Project } from './admin-types.ts';
import { EditForm } from './EditForm.tsx';
import { KEY_FIELDS, keyDraft } from './edit-fields.ts';
import { LimitsFields, limitsBody, NO_LIMITS } from './LimitsFields.tsx';
import { ProjectName } from './names.tsx';
import { BudgetsCell, LimitsCell, StatusCell, type UsageReport } from './usage-cells.tsx';
import { DataTable } from './DataTable.tsx';

const path = (k: Key) => `/admin/keys/${encodeURIComponent(k.id)}`;
const nameOf = (k: Key) => k.name ?? k.prefix;

/** A key's buttons, each named with the key for a screen reader: what its status allows. */
function KeyActions({ k, edit, page }: { k: Key; edit: () => void; page: PageActions }) {
  const usable = k.status === 'active' || k.status === 'disabled' || k.status === 'expired';
  const name = nameOf(k);
  const setDisabled = (disabled: boolean) => page.act(() => patchJson(path(k), { disabled }));
  const rotate = () => {
    if (!confirm(`Rotate ${name}? It gets a new secret; the current one stops working at once.`)) return;
    page.act(async () => {
      const rotated = await postJson<IssuedKey>(`${path(k)}/rotate`, {});
      page.showSecret(`New secret of key ${rotated.name ?? rotated.prefix}`, rotated.key);
    });
  };
  const revoke = () => {
    if (!confirm(`Revoke ${name}? Requests with it are refused from now on, for good.`)) return;
    page.act(() => postJson(`${path(k)}/revoke`, {}));
  };
  const remove = () => {
    if (!confirm(`Delete ${name}? It is refused like an unknown key and leaves this list; its request log stays.`)) return;
    page.act(() => deleteJson(path(k)));
  };
  return (
    <div className="actions">
      <button type="button" onClick={edit} aria-label={`Edit ${name}`}>
        Edit
      </button>
      {k.status === 'active' && (
        <button type="button" onClick={() => setDisabled(true)} aria-label={`Disable ${name}`}>
          Disable
        </button>
      )}
      {k.status === 'disabled' && (
        <button type="button" onClick={() => setDisabled(false)} aria-label={`Enable ${name}`}>
          Enable
        </button>
      )}
      {usable && (
        <button type="button" onClick={rotate} aria-label={`Rotate ${name}`}>
          Rotate
        </button>
      )}
      {usable && (
        <button type="button" onClick={revoke} aria-label={`Revoke ${name}`}>
          Revoke
        </button>
      )}
      <button type="button" onClick={remove} aria-label={`Delete ${name}`}>
        Delete
      </button>
    </div>
  );
}

/** The keys: create one (its secret shown once), edit, disable and enable, rotate, revoke, delete. */
export function KeysSection({
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
  const [draft, setDraft] = useState({ project: '', name: '', admin: false, ...NO_LIMITS });
  const [editing, setEditing] = useState<Key>();
  // The first project until one is chosen (or when the chosen one is deleted).
  const project = projects.some((p) => p.id === draft.project) ? draft.project : (projects[0]?.id ?? '');

  const create = (e: FormEvent) => {
    e.preventDefault();
    page.act(async () => {
      const body = { project, admin: draft.admin, ...(draft.name && { name: draft.name }), ...limitsBody(draft) };
      const created = await postJson<IssuedKey>('/admin/keys', body);
      page.showSecret(`New key ${created.name ?? created.prefix}`, created.key);
    });
  };

  return (
    <>
      <h2>Keys</h2>
      <form className="filters" onSubmit={create} aria-label="New key">
        <label>
          Project
          <select required value={project} onChange={(e) => setDraft({ ...draft, project: e.target.value })}>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name === p.id ? p.id : `${p.name} (${p.id})`}
              </option>
            ))}
          </select>
        </label>
        <label>
          Key name
          <input value={draft.name} onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
        </label>
        <LimitsFields draft={draft} set={setDraft} whose="Key" />
        <label className="check">
          <input type="checkbox" checked={draft.admin} onChange={(e) => setDraft({ ...draft, admin: e.target.checked })} />
          Admin key
        </label>
        <button type="submit" disabled={!project}>
          Create key
        </button>
      </form>
      {editing && (
        <EditForm
          key={editing.id}
          title={`Edit key ${nameOf(editing)}`}
          fields={KEY_FIELDS}
          initial={keyDraft(editing)}
          save={(body) => patchJson(path(editing), body)}
          onDone={() => {
            setEditing(undefined);
            page.refresh();
          }}
          onCancel={() => setEditing(undefined)}
        />
      )}
      <DataTable
        label="Keys"
        columns={[
          'Key',
          'Name',
          'Project',
          'Status',
          'Tier',
          'Limits, in use now',
          'Budgets, spent',
          'Expires',
          'Last used',
          'Actions',
        ]}
      >
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
            <td>{shortTime(k.expires_at, 'never')}</td>
            <td>{shortTime(k.last_used_at, 'never')}</td>
            <td>
              <KeyActions k={k} edit={() => setEditing(k)} page={page} />
            </td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

function shortTime(iso: string | null, none: string): string {
  return iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'short' }) : none;
}
