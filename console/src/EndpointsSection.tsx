import { useState } from 'react';
import { deleteJson, patchJson, postJson } from './api.ts';
import type { Endpoint, PageActions, Project } from './admin-types.ts';
import { EditForm, type FieldSpec } from './EditForm.tsx';
import { ENDPOINT_FIELDS, endpointDraft } from './edit-fields.ts';
import { ProjectName } from './names.tsx';
import { DataTable } from './DataTable.tsx';

const path = (e: Endpoint) => `/admin/endpoints/${encodeURIComponent(e.project)}/${encodeURIComponent(e.name)}`;
const EMPTY = { project: '', name: '', model: '', stream_profile: '', usage: '', error_style: '', vendor_events: '', cache: '' };

/** The stream settings that differ from the config's, or "config". */
function settings(e: Endpoint): string {
  const set = [e.stream_profile, e.usage && `usage ${e.usage}`, e.error_style && `errors ${e.error_style}`, e.vendor_events];
  return set.filter(Boolean).join(', ') || 'the config’s';
}

/** Its own response cache, or none (its route's or tier's may still apply). */
const cacheOf = (e: Endpoint): string =>
  e.cache ? `${e.cache.ttl_s} s, answers up to ${e.cache.max_bytes} bytes` : 'none of its own';

/** The projects' endpoints (`/{project}/{endpoint}/v1`): create, edit the model, stream settings and cache, delete. */
export function EndpointsSection({
  projects,
  endpoints,
  page,
}: {
  projects: Project[];
  endpoints: Endpoint[];
  page: PageActions;
}) {
  const [editing, setEditing] = useState<Endpoint | 'new'>();
  const createFields: FieldSpec[] = [
    {
      param: 'project',
      label: 'Project',
      type: 'select',
      required: true,
      options: [{ value: '', text: 'choose…' }, ...projects.map((p) => ({ value: p.id, text: p.name }))],
      parse: (v) => v,
    },
    { param: 'name', label: 'Endpoint name (letters, digits, _ or -)', required: true, parse: (v) => v.trim() },
    ...ENDPOINT_FIELDS,
  ];
  const done = () => {
    setEditing(undefined);
    page.refresh();
  };
  const remove = (e: Endpoint) => {
    if (!confirm(`Delete endpoint ${e.base_path}? Clients using it get 404 from now on.`)) return;
    page.act(() => deleteJson(path(e)));
  };

  return (
    <>
      <div className="row">
        <h2>Endpoints</h2>
        <button type="button" onClick={() => setEditing('new')} disabled={projects.length === 0}>
          New endpoint
        </button>
      </div>
      {editing === 'new' && (
        <EditForm
          title="New endpoint"
          fields={createFields}
          initial={EMPTY}
          submitText="Create endpoint"
          save={(body) => postJson('/admin/endpoints', body)}
          onDone={done}
          onCancel={() => setEditing(undefined)}
        />
      )}
      {editing && editing !== 'new' && (
        <EditForm
          key={editing.base_path}
          title={`Edit endpoint ${editing.base_path}`}
          fields={ENDPOINT_FIELDS}
          initial={endpointDraft(editing)}
          save={(body) => patchJson(path(editing), body)}
          onDone={done}
          onCancel={() => setEditing(undefined)}
        />
      )}
      {endpoints.length === 0 ? (
        <p className="note">No endpoints yet.</p>
      ) : (
        <DataTable label="Endpoints" columns={['Base path', 'Project', 'Model', 'Stream settings', 'Response cache', 'Actions']}>
          {endpoints.map((e) => (
            <tr key={e.base_path}>
              <td>{e.base_path}</td>
              <td>
                <ProjectName id={e.project} />
              </td>
              <td>{e.model}</td>
              <td className="wrap">{settings(e)}</td>
              <td className="wrap">{cacheOf(e)}</td>
              <td>
                <div className="actions">
                  <button type="button" onClick={() => setEditing(e)} aria-label={`Edit endpoint ${e.base_path}`}>
                    Edit
                  </button>
                  <button type="button" onClick={() => remove(e)} aria-label={`Delete endpoint ${e.base_path}`}>
                    Delete
                  </button>
                </div>
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </>
  );
}
