import { createContext, type ReactNode, useCallback, useContext, useEffect, useRef, useState } from 'react';
import { api } from './api.ts';

/** What the console knows of each key and project by id: their names, from the admin API. */
interface Directory {
  keys: ReadonlyMap<string, { name: string | null }>;
  projects: ReadonlyMap<string, string>;
}

interface Names {
  directory: Directory;
  /** Reads the keys and projects again (after a change, or an id not seen yet): at most every few seconds unless forced. */
  reload: (force?: boolean) => void;
}

const EMPTY: Directory = { keys: new Map(), projects: new Map() };
const NamesContext = createContext<Names>({ directory: EMPTY, reload: () => {} });
/** A live log full of a new key's requests asks for it once, not once per row. */
const RELOAD_EVERY_MS = 10_000;

/**
 * The names of keys and projects for every page: the ledger and the usage report carry ids
 * only, and a platform team knows its keys by name. Read once per session from /admin/projects
 * and /admin/keys (both small), and again when an id turns up that is not known yet.
 */
export function NamesProvider({ children }: { children: ReactNode }) {
  const [directory, setDirectory] = useState<Directory>(EMPTY);
  const loadedAt = useRef(0);
  const reload = useCallback((force = false) => {
    if (!force && Date.now() - loadedAt.current < RELOAD_EVERY_MS) return;
    loadedAt.current = Date.now();
    Promise.all([
      api<{ data: { id: string; name: string }[] }>('/admin/projects'),
      api<{ data: { id: string; name: string | null }[] }>('/admin/keys'),
    ])
      .then(([p, k]) =>
        setDirectory({
          projects: new Map(p.data.map((x) => [x.id, x.name])),
          keys: new Map(k.data.map((x) => [x.id, { name: x.name }])),
        }),
      )
      // Names are an aid: without them every page still shows the ids.
      .catch(() => undefined);
  }, []);
  useEffect(() => reload(true), [reload]);
  return <NamesContext value={{ directory, reload }}>{children}</NamesContext>;
}

export const useNames = (): Names => useContext(NamesContext);

/** A name with its id beside it, smaller: the name to read, the id to search and paste. */
function Named({ name, id }: { name: string | null | undefined; id: string }) {
  if (!name || name === id) return <code className="id">{id}</code>;
  return (
    <span className="named">
      {name} <code className="id">{id}</code>
    </span>
  );
}

/** A key by its name and id (a key without a name: its id); the master key has none. */
export function KeyName({ id }: { id: string | null }) {
  const { directory, reload } = useNames();
  const key = id === null ? undefined : directory.keys.get(id);
  useEffect(() => {
    if (id !== null && !key) reload();
  }, [id, key, reload]);
  if (id === null) return <>master key</>;
  return <Named name={key?.name} id={id} />;
}

export function ProjectName({ id }: { id: string | null }) {
  const { directory, reload } = useNames();
  const name = id === null ? undefined : directory.projects.get(id);
  useEffect(() => {
    if (id !== null && name === undefined) reload();
  }, [id, name, reload]);
  if (id === null) return <>–</>;
  return <Named name={name} id={id} />;
}
