import type { IncomingMessage } from 'node:http';
import type { Caller } from '../../admission/admission.ts';
import type { Config } from '../../config/schema.ts';
import type { ClientAddressing } from '../../protocol/http/client-address.ts';
import type { Governance } from '../keys/governance.ts';
import { type ActorSource, actorOf } from './audit-actor.ts';
import { type AuditFields, auditChanges } from './audit-changes.ts';
import type { AuditLog } from './audit-log.ts';

/** What recording reads of a gateway's context (the server's and the console's contexts have it). */
export interface AuditContext {
  audit: AuditLog;
  addressing: Pick<ClientAddressing, 'clientOf'>;
  governance: Pick<Governance, 'withStore'>;
  config: Pick<Config, 'auth'>;
  /** The console's users, for a user's name (absent: a user is named by its id). */
  console?: { users: { get(id: string): Promise<{ name: string | null; email: string | null } | undefined> } };
}

/** The request being answered (a RouteCall or ConsoleCall fits). */
export interface AuditCall {
  req: IncomingMessage;
  requestId: string;
  caller: Caller | null;
  ctx: AuditContext;
}

export interface AuditChange {
  /** `<target type>.<verb>`: `key.revoke`, `project.create`, `console.sign_in`. */
  action: string;
  target: { type: string; id: string | null };
  /** The target as the admin API shows it, before and after (absent: created, or deleted). */
  before?: AuditFields | null;
  after?: AuditFields | null;
  /** Who acted when it is not the call's caller: a sign-in's key, a sign-out's session; null: nobody known. */
  actor?: ActorSource | null;
  /** A refused attempt's error code (a failed sign-in). */
  errorCode?: string;
}

/**
 * Records one audit entry for the request being answered, before it is answered: the actor, the
 * changed fields (secrets left out here, whatever the caller passes), the request id and the
 * client. One call per mutation:
 *   await recordAudit(call, { action: 'key.revoke', target: { type: 'key', id }, before, after });
 */
export async function recordAudit(call: AuditCall, change: AuditChange): Promise<void> {
  const { ctx } = call;
  const names = {
    key: async (id: string) => (await ctx.governance.withStore((store) => store.getKey(id)))?.name ?? null,
    user: async (id: string) => {
      const user = await ctx.console?.users.get(id);
      return user ? (user.name ?? user.email) : null;
    },
  };
  const actor = await actorOf(change.actor === undefined ? call.caller : change.actor, names);
  const secrets = [ctx.config.auth.master_key, ctx.config.auth.key_pepper].filter((s): s is string => !!s);
  const { before, after } = auditChanges(change.before ?? null, change.after ?? null, secrets);
  await ctx.audit.append({
    ...ctx.audit.stamp(),
    actor,
    action: change.action,
    target: change.target,
    before,
    after,
    requestId: call.requestId,
    clientAddress: ctx.addressing.clientOf(call.req),
    errorCode: change.errorCode ?? null,
  });
}
