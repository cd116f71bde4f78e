/** What a reload did: applied (the keys changed, and those that wait for a restart), or refused. */
export type ReloadResult = { ok: true; changed: string[]; restartRequired: string[] } | { ok: false; problems: string[] };

/**
 * One process's reload, as POST /admin/reload answers it. Under `sluice serve --workers N`:
 * `worker` is its slot and `pid` its process; `silent`: it did not answer in time (what it did is
 * in its log).
 */
export type InstanceReload = ReloadResult & { worker?: number; pid?: number; silent?: boolean };
