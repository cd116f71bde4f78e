import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminCall, chatWith, projectWithKey } from '../helpers/admin-client.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { freePort, startIdentityProvider, type TestIdentityProvider } from '../helpers/oidc-provider.ts';

const MASTER = 'sk-sso-master';
const ACCOUNTS = {
  alice: { email: 'alice@example.com', name: 'Alice Owner', groups: ['sluice-owners', 'team-a'] },
  bob: { email: 'bob@example.com', name: 'Bob Member', groups: ['team-a'] },
  carol: { email: 'carol@example.com', name: 'Carol Viewer', groups: ['sluice-viewers'] },
  eve: { email: 'eve@example.com', name: 'Eve Outsider', groups: ['somewhere-else'] },
};

/** Cookies by name, as a browser keeps them for one site (paths and expiry are not needed here). */
class CookieJar {
  readonly cookies = new Map<string, string>();
  take(res: Response): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair.indexOf('=');
      const value = pair.slice(eq + 1);
      if (/Max-Age=0/i.test(line) || value === '') this.cookies.delete(pair.slice(0, eq));
      else this.cookies.set(pair.slice(0, eq), value);
    }
  }
  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/** The form of the provider's development login or consent page, filled in as a person would. */
function formOf(html: string, base: string, login: string): { action: string; body: URLSearchParams } {
  const form = /<form[^>]*action="([^"]+)"[^>]*method="post"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) throw new Error(`no form on the provider's page: ${html.slice(0, 300)}`);
  const body = new URLSearchParams();
  for (const [, name, value] of form[2].matchAll(/<input[^>]*type="hidden"[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) {
    body.set(name, value);
  }
  if (/name="login"/.test(form[2])) {
    body.set('login', login);
    body.set('password', 'any');
  }
  return { action: new URL(form[1].replace(/&amp;/g, '&'), base).href, body };
}

/**
 * The browser's part of a sign-in: sluice's login redirect, the provider's login and consent
 * pages, and back to sluice's callback. Returns the callback's answer and the gateway's cookies.
 */
async function signIn(gw: TestGateway, login: string): Promise<{ res: Response; jar: CookieJar }> {
  const jar = new CookieJar();
  const idp = new CookieJar();
  let res = await fetch(`${gw.url}/console/api/sso/login`, { redirect: 'manual' });
  assert.equal(res.status, 302);
  jar.take(res);
  let url = res.headers.get('location')!;
  for (let step = 0; step < 20; step++) {
    if (url.startsWith(gw.url)) {
      res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
      jar.take(res);
      return { res, jar };
    }
    res = await fetch(url, { redirect: 'manual', headers: { cookie: idp.header() } });
    idp.take(res);
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      continue;
    }
    const { action, body } = formOf(await res.text(), url, login);
    res = await fetch(action, { method: 'POST', redirect: 'manual', headers: { cookie: idp.header() }, body });
    idp.take(res);
    url = new URL(res.headers.get('location')!, action).href;
  }
  throw new Error('the sign-in did not come back to sluice');
}

async function sessionOf(gw: TestGateway, login: string): Promise<string> {
  const { res, jar } = await signIn(gw, login);
  assert.equal(res.status, 303, await res.clone().text());
  assert.equal(res.headers.get('location'), '/console/');
  assert.ok(jar.cookies.has('sluice_console'));
  assert.ok(!jar.cookies.has('sluice_sso'), 'the pending sign-in cookie is cleared');
  return jar.header();
}

/** A call with a console session's cookie instead of a key. */
async function asUser(gw: TestGateway, cookie: string, method: 'GET' | 'POST', path: string, body?: unknown) {
  const init: RequestInit = { method, headers: { cookie } };
  if (method === 'POST') init.headers = { cookie, 'content-type': 'application/json' };
  if (method === 'POST') init.body = JSON.stringify(body ?? {});
  const res = await fetch(`${gw.url}${path}`, init);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, any> };
}

describe('single sign-on against a local OpenID provider', () => {
  let gw: TestGateway;
  let idp: TestIdentityProvider;
  const keys: Record<string, Record<string, any>> = {};

  before(async () => {
    const port = await freePort();
    const redirect = `http://127.0.0.1:${port}/console/api/sso/callback`;
    idp = await startIdentityProvider({ accounts: ACCOUNTS, redirectUri: redirect, postLogoutRedirectUri: `http://127.0.0.1:${port}/console/` });
    gw = await startGateway({
      server: { port },
      auth: {
        master_key: MASTER,
        sso: {
          issuer: idp.issuer,
          client_id: idp.clientId,
          client_secret: idp.clientSecret,
          redirect_url: redirect,
          scopes: ['openid', 'email', 'profile', 'groups'],
          claim: 'groups',
          roles: { 'sluice-owners': 'owner', 'sluice-viewers': 'viewer' },
          projects: { 'team-a': ['proj_a'] },
        },
      },
      ledger: { flush_interval_ms: 10 },
    });
    keys.a = await projectWithKey(gw.url, MASTER, 'proj_a');
    keys.b = await projectWithKey(gw.url, MASTER, 'proj_b');
    keys.admin = await projectWithKey(gw.url, MASTER, 'proj_ops', { admin: true });
    for (const key of [keys.a, keys.b]) {
      const done = await chatWith(gw.url, key.key, { model: 'mock/echo', messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(done.status, 200, done.text);
    }
  });
  after(async () => {
    await gw?.close();
    await idp?.close();
  });

  it('offers SSO on the login page', async () => {
    const res = await fetch(`${gw.url}/console/api/sso`);
    assert.deepEqual(await res.json(), { object: 'sluice.sso', enabled: true });
  });

  it('signs an owner in, creating the user with the role its groups map to', async () => {
    const cookie = await sessionOf(gw, 'alice');
    const session = await asUser(gw, cookie, 'GET', '/console/api/session');
    assert.equal(session.status, 200);
    assert.equal(session.body.role, 'owner');
    assert.equal(session.body.projects, null);
    const users = await asUser(gw, cookie, 'GET', '/admin/users');
    assert.equal(users.status, 200);
    const alice = users.body.data.find((u: any) => u.subject === 'alice');
    assert.equal(alice.email, 'alice@example.com');
    assert.equal(alice.issuer, idp.issuer);
    assert.equal(alice.roles_from, 'claims');
    // The owner may do everything: a project, here.
    assert.equal((await asUser(gw, cookie, 'POST', '/admin/projects', { id: 'proj_c', name: 'c' })).status, 201);
  });

  it("scopes a project member to its projects' keys, requests and spend", async () => {
    const cookie = await sessionOf(gw, 'bob');
    const session = await asUser(gw, cookie, 'GET', '/console/api/session');
    assert.equal(session.body.role, 'member');
    assert.deepEqual(session.body.projects, ['proj_a']);
    const listed = await asUser(gw, cookie, 'GET', '/admin/keys');
    assert.deepEqual(
      listed.body.data.map((k: any) => k.project),
      ['proj_a'],
    );
    assert.deepEqual(
      (await asUser(gw, cookie, 'GET', '/admin/projects')).body.data.map((p: any) => p.id),
      ['proj_a'],
    );
    const requests = await asUser(gw, cookie, 'GET', '/v1/requests');
    assert.equal(requests.status, 200);
    assert.ok(requests.body.data.length >= 1);
    assert.ok(requests.body.data.every((r: any) => r.project_id === 'proj_a'));
    // Asking for another project's requests reads its own, as a project key does.
    const asked = (await asUser(gw, cookie, 'GET', '/v1/requests?project_id=proj_b')).body.data;
    assert.ok(asked.length >= 1 && asked.every((r: any) => r.project_id === 'proj_a'));
    const usage = await asUser(gw, cookie, 'GET', '/console/api/usage');
    assert.deepEqual(Object.keys(usage.body.projects), ['proj_a']);
    assert.deepEqual(Object.keys(usage.body.keys), [keys.a.id]);
    // Its own project's keys: issued and revoked.
    const issued = await asUser(gw, cookie, 'POST', '/admin/keys', { project: 'proj_a', name: 'bob' });
    assert.equal(issued.status, 201);
    assert.equal((await asUser(gw, cookie, 'POST', `/admin/keys/${issued.body.id}/revoke`)).status, 200);
    // Another project's things are 404s, as for a project key.
    const other = await asUser(gw, cookie, 'POST', '/admin/keys', { project: 'proj_b' });
    assert.equal(other.status, 404);
    assert.equal(other.body.error.code, 'project_not_found');
    const revoke = await asUser(gw, cookie, 'POST', `/admin/keys/${keys.b.id}/revoke`);
    assert.equal(revoke.status, 404);
    assert.equal(revoke.body.error.code, 'key_not_found');
    const record = (await adminCall(gw.url, MASTER, 'GET', '/v1/requests?project_id=proj_b')).body.data[0];
    assert.equal((await asUser(gw, cookie, 'GET', `/v1/requests/${record.request_id}`)).status, 404);
    assert.equal((await asUser(gw, cookie, 'GET', `/console/api/price/${record.request_id}`)).status, 404);
    // No admin key, no projects, no users.
    const admin = await asUser(gw, cookie, 'POST', '/admin/keys', { project: 'proj_a', admin: true });
    assert.equal(admin.status, 403);
    assert.equal(admin.body.error.code, 'role_required');
    const project = await asUser(gw, cookie, 'POST', '/admin/projects', { name: 'mine' });
    assert.equal(project.status, 403);
    assert.equal(project.body.error.message, "This needs the admin role; the caller's role is member.");
    assert.equal((await asUser(gw, cookie, 'GET', '/admin/users')).status, 403);
  });

  it("charts a member's projects only, and every project for the owner", async () => {
    const count = async (query: string) => (await adminCall(gw.url, MASTER, 'GET', `/v1/requests?limit=100${query}`)).body.data.length;
    const charted = async (cookie: string) => {
      const stats = await asUser(gw, cookie, 'GET', '/console/api/stats?minutes=60');
      assert.equal(stats.status, 200);
      return Object.values(stats.body.by_model as Record<string, { requests: number[] }>)
        .flatMap((s) => s.requests)
        .reduce((a, b) => a + b, 0);
    };
    const [ownA, all] = [await count('&project_id=proj_a'), await count('')];
    assert.ok(ownA >= 1 && all > ownA && (await count('&project_id=proj_b')) >= 1);
    assert.equal(await charted(await sessionOf(gw, 'bob')), ownA);
    assert.equal(await charted(await sessionOf(gw, 'alice')), all);
  });

  it('lets a viewer read everything and change nothing', async () => {
    const cookie = await sessionOf(gw, 'carol');
    const listed = await asUser(gw, cookie, 'GET', '/admin/keys');
    assert.equal(listed.status, 200);
    assert.ok(listed.body.data.some((k: any) => k.project === 'proj_b'));
    assert.equal((await asUser(gw, cookie, 'GET', '/console/api/stats')).status, 200);
    for (const [path, body] of [
      ['/admin/keys', { project: 'proj_a' }],
      ['/admin/projects', { name: 'x' }],
      [`/admin/keys/${keys.a.id}/revoke`, {}],
      ['/admin/reload', {}],
    ] as const) {
      const refused = await asUser(gw, cookie, 'POST', path, body);
      assert.equal(refused.status, 403, path);
      assert.equal(refused.body.error.type, 'permission_error');
      assert.equal(refused.body.error.code, 'role_required');
      assert.match(refused.body.error.message, /needs the admin role; the caller's role is viewer/);
    }
    // A viewer is no model caller.
    const chat = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(chat.status, 403);
  });

  it("lets an owner set a user's role, which holds at once and over the claims", async () => {
    const owner = await sessionOf(gw, 'alice');
    const carol = await sessionOf(gw, 'carol');
    const id = (await asUser(gw, owner, 'GET', '/admin/users')).body.data.find((u: any) => u.subject === 'carol').id;
    const bad = await asUser(gw, owner, 'POST', `/admin/users/${id}`, { role: 'member' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.param, 'projects');
    const unknown = await asUser(gw, owner, 'POST', `/admin/users/${id}`, { role: 'member', projects: ['nope'] });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 'project_not_found');
    assert.equal((await asUser(gw, owner, 'POST', '/admin/users/usr_none', { role: 'viewer' })).body.error.code, 'user_not_found');
    const set = await asUser(gw, owner, 'POST', `/admin/users/${id}`, { role: 'member', projects: ['proj_b'] });
    assert.equal(set.status, 200);
    assert.equal(set.body.roles_from, 'owner');
    // Carol's open session, and her next sign-in (whose claims still say viewer), are a member's.
    assert.deepEqual(
      (await asUser(gw, carol, 'GET', '/admin/keys')).body.data.map((k: any) => k.project),
      ['proj_b'],
    );
    const again = await sessionOf(gw, 'carol');
    assert.deepEqual((await asUser(gw, again, 'GET', '/console/api/session')).body.projects, ['proj_b']);
  });

  it('keeps admin keys working for automation, but not on users; the master key is the owner', async () => {
    assert.equal((await adminCall(gw.url, keys.admin.key, 'POST', '/admin/projects', { name: 'auto' })).status, 201);
    const users = await adminCall(gw.url, keys.admin.key, 'GET', '/admin/users');
    assert.equal(users.status, 403);
    assert.equal(users.body.error.message, "This needs the owner role; the caller's role is admin.");
    assert.equal((await adminCall(gw.url, MASTER, 'GET', '/admin/users')).status, 200);
    assert.equal((await adminCall(gw.url, keys.a.key, 'GET', '/admin/users')).body.error.code, 'admin_key_required');
  });

  it('refuses a user whose claims map to nothing, and a callback that is not the sign-in begun', async () => {
    const { res } = await signIn(gw, 'eve');
    assert.equal(res.status, 403);
    assert.equal(((await res.json()) as any).error.code, 'sso_no_role');
    const none = await fetch(`${gw.url}/console/api/sso/callback?code=x&state=y`);
    assert.equal(none.status, 401);
    assert.equal(((await none.json()) as any).error.code, 'sso_failed');
    const started = await fetch(`${gw.url}/console/api/sso/login`, { redirect: 'manual' });
    const pending = started.headers.getSetCookie()[0].split(';')[0];
    const forged = await fetch(`${gw.url}/console/api/sso/callback?code=x&state=forged&iss=${encodeURIComponent(idp.issuer)}`, {
      headers: { cookie: pending },
    });
    assert.equal(forged.status, 401);
    const error = ((await forged.json()) as any).error;
    assert.equal(error.code, 'sso_failed');
    assert.match(error.message, /state/);
  });

  it('signs out here and sends the browser to sign out at the provider', async () => {
    const cookie = await sessionOf(gw, 'bob');
    const out = await asUser(gw, cookie, 'POST', '/console/api/logout');
    assert.equal(out.status, 200);
    const end = new URL(out.body.end_session_url);
    assert.equal(end.origin, idp.issuer);
    assert.ok(end.searchParams.get('id_token_hint'));
    assert.equal(end.searchParams.get('post_logout_redirect_uri'), `${gw.url}/console/`);
    assert.equal((await asUser(gw, cookie, 'GET', '/console/api/session')).status, 401);
    // A key's session has no provider to sign out of.
    const login = await fetch(`${gw.url}/console/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: MASTER }),
    });
    const master = login.headers.getSetCookie()[0].split(';')[0];
    assert.equal((await asUser(gw, master, 'POST', '/console/api/logout')).body.end_session_url, null);
  });

  it("audits users' sign-ins, sign-outs, refused sign-ins and changes under the user's name", async () => {
    const audit = async (query: string) => {
      const res = await fetch(`${gw.url}/admin/audit?${query}`, { headers: { authorization: `Bearer ${MASTER}` } });
      assert.equal(res.status, 200);
      return ((await res.json()) as { data: Record<string, any>[] }).data;
    };
    const signIns = await audit('action=console.sign_in&limit=100');
    // A user is named by its name, or its email when the provider gives no name.
    assert.ok(
      signIns.some((e) => e.actor.kind === 'user' && typeof e.actor.id === 'string' && typeof e.actor.name === 'string'),
      JSON.stringify(signIns),
    );
    const created = (await audit('action=project.create&limit=100')).find((e) => e.target.id === 'proj_c');
    assert.equal(created?.actor.kind, 'user', JSON.stringify(created));
    const outs = await audit('action=console.sign_out&limit=100');
    assert.ok(
      outs.some((e) => e.actor.kind === 'user'),
      JSON.stringify(outs),
    );
    const roles = await audit('action=user.set_access&limit=100');
    assert.ok(roles.length > 0 && roles.every((e) => e.target.type === 'user' && 'role' in (e.after ?? {})), JSON.stringify(roles));
    const failed = await audit('action=console.sign_in_failed&limit=100');
    assert.ok(
      failed.some((e) => e.error_code === 'sso_no_role'),
      JSON.stringify(failed),
    );
    assert.ok(
      failed.some((e) => e.error_code === 'sso_failed'),
      JSON.stringify(failed),
    );
  });
});

describe('without auth.sso', () => {
  it('offers no SSO, and its routes are 404s', async () => {
    const gw = await startGateway({ auth: { master_key: MASTER } });
    try {
      assert.deepEqual(await (await fetch(`${gw.url}/console/api/sso`)).json(), { object: 'sluice.sso', enabled: false });
      assert.equal((await fetch(`${gw.url}/console/api/sso/login`, { redirect: 'manual' })).status, 404);
    } finally {
      await gw.close();
    }
  });
});
