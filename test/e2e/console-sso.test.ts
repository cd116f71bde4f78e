import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { CONSOLE_ROOT } from '../../src/console/static-files.ts';
import { adminCall, chatWith, projectWithKey } from '../helpers/admin-client.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { freePort, startIdentityProvider, type TestIdentityProvider } from '../helpers/oidc-provider.ts';

const CHROMIUM = '/usr/bin/chromium';
const MASTER = 'sk-console-sso';
/** A phone and a desktop screen. */
const WIDTHS = [390, 1440] as const;
/** Two projects, each with a named key and a request: the member (of Alpha) must never see Beta's. */
const TEAMS = {
  a: { project: 'proj_a', name: 'Alpha team', key: 'alpha-runner' },
  b: { project: 'proj_b', name: 'Beta team', key: 'beta-runner' },
};

/**
 * Sign-in with SSO and sign-out, in Debian's headless Chromium, against a local OpenID provider;
 * every page walked as the owner and as a project member, at a phone's and a desktop's width.
 */
describe('SSO in the console, in a browser', { skip: existsSync(CHROMIUM) ? false : `no ${CHROMIUM} (apt-get install chromium)` }, () => {
  let gw: TestGateway;
  let idp: TestIdentityProvider;
  let browser: BrowserContext;
  let page: Page;
  let profile: string;
  /** Screenshots of the walks, in a temporary folder (not kept in the repository). */
  let shots: string;
  /** Each team's request id. */
  const requests = { a: '', b: '' };

  before(async () => {
    if (!existsSync(join(CONSOLE_ROOT, 'index.html'))) {
      const { build } = await import('vite');
      await build({ configFile: new URL('../../console/vite.config.ts', import.meta.url).pathname });
    }
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    idp = await startIdentityProvider({
      accounts: {
        alice: { email: 'alice@example.com', name: 'Alice Owner', groups: ['sluice-owners'] },
        bob: { email: 'bob@example.com', name: 'Bob Member', groups: ['team-a'] },
      },
      redirectUri: `${origin}/console/api/sso/callback`,
      postLogoutRedirectUri: `${origin}/console/`,
    });
    gw = await startGateway({
      server: { port },
      auth: {
        master_key: MASTER,
        sso: {
          issuer: idp.issuer,
          client_id: idp.clientId,
          client_secret: idp.clientSecret,
          redirect_url: `${origin}/console/api/sso/callback`,
          scopes: ['openid', 'email', 'profile', 'groups'],
          roles: { 'sluice-owners': 'owner' },
          projects: { 'team-a': ['proj_a'] },
        },
      },
      ledger: { flush_interval_ms: 10 },
    });
    for (const team of ['a', 'b'] as const) {
      const { project, name, key } = TEAMS[team];
      assert.equal((await adminCall(gw.url, MASTER, 'POST', '/admin/projects', { id: project, name })).status, 201);
      const issued = await projectWithKey(gw.url, MASTER, project, { name: key });
      const done = await chatWith(gw.url, issued.key, { model: 'mock/echo' });
      assert.equal(done.status, 200, done.text);
      requests[team] = done.requestId;
    }
    for (const id of Object.values(requests)) await waitForRecord(id);
    shots = mkdtempSync(join(tmpdir(), 'sluice-console-sso-shots-'));
    profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      viewport: { width: 1366, height: 768 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'],
    });
    // The provider's pages name web fonts elsewhere: this machine reaches nothing but itself.
    await browser.route(/^https?:\/\/(?!127\.0\.0\.1[:/])/, (route) => route.abort());
    page = browser.pages()[0] ?? (await browser.newPage());
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await idp?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    if (shots) console.log(`screenshots: ${shots}`);
  });

  async function waitForRecord(id: string): Promise<void> {
    for (let tries = 0; ; tries++) {
      if ((await adminCall(gw.url, MASTER, 'GET', `/v1/requests/${id}`)).status === 200) return;
      assert.ok(tries < 200, `${id} was never stored`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** From the console's login page through the provider's login and consent pages, back to the console. */
  async function signIn(login: string): Promise<void> {
    await page.goto(`${gw.url}/console/`);
    await page.getByRole('link', { name: 'Sign in with SSO' }).click();
    await page.waitForURL((url) => url.origin === idp.issuer);
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('any');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(`${gw.url}/console/`);
    await page.getByRole('button', { name: 'Log out' }).waitFor();
  }

  it('signs in with SSO beside the key login, and out of sluice and the provider', async () => {
    await page.goto(`${gw.url}/console/`);
    await page.getByLabel('Master key or admin key').waitFor();
    await signIn('alice');
    const session = await page.evaluate(() =>
      fetch('/console/api/session').then((r) => r.json() as Promise<{ role: string; projects: string[] | null }>),
    );
    assert.equal(session.role, 'owner');
    await page.getByRole('button', { name: 'Log out' }).click();
    // RP-initiated logout: the provider asks, then sends the browser back to the console's login.
    await page.waitForURL((url) => url.origin === idp.issuer);
    await page.getByRole('button', { name: /Yes, sign me out/i }).click();
    await page.waitForURL(`${gw.url}/console/`);
    await page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
    const after = await page.evaluate(() => fetch('/console/api/session').then((r) => r.status));
    assert.equal(after, 401);
  });

  it('signs a project member in with its projects', async () => {
    await signIn('bob');
    const session = await page.evaluate(() =>
      fetch('/console/api/session').then((r) => r.json() as Promise<{ role: string; projects: string[] | null }>),
    );
    assert.equal(session.role, 'member');
    assert.deepEqual(session.projects, ['proj_a']);
  });

  /** Back to the console's login, signed out here and at the provider. */
  async function signOut(): Promise<void> {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL((url) => url.origin === idp.issuer);
    await page.getByRole('button', { name: /Yes, sign me out/i }).click();
    await page.getByRole('link', { name: 'Sign in with SSO' }).waitFor();
  }

  /** How much wider than the window the page is (0: no sideways scroll). Expressions as text: the tests' TypeScript has no DOM library. */
  const overflow = (width: number) => page.evaluate<number>(`document.documentElement.scrollWidth - ${width}`);

  /** The requests the charts count in the last hour, read with the browser's session. */
  const charted = () =>
    page.evaluate<number>(
      `fetch('/console/api/stats?minutes=60').then((r) => r.json()).then((s) => Object.values(s.by_model).flatMap((m) => m.requests).reduce((a, b) => a + b, 0))`,
    );

  /**
   * Every page of the navigation at both widths, each with its data in (what could scroll
   * sideways), then what it shows: `sees` the teams whose key, project and request it must
   * show, and none of the others'.
   */
  async function walk(who: string, sees: readonly ('a' | 'b')[]): Promise<void> {
    await page.goto(`${gw.url}/console#/`);
    await page.getByRole('navigation', { name: 'Console' }).waitFor();
    const nav = await page.evaluate<string[]>(`[...document.querySelectorAll('header nav a')].map((a) => a.getAttribute('href'))`);
    assert.ok(nav.length >= 6, nav.join(', '));
    const hidden = (['a', 'b'] as const).filter((t) => !sees.includes(t));
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      for (const hash of nav) {
        await page.goto(`${gw.url}/console${hash}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await settled(hash, sees, who);
        const name = `${who}-${hash.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '') || 'log'}-${width}`;
        await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
        const over = await overflow(width);
        assert.ok(over <= 0, `${who}: ${hash} at ${width} px: the page is ${over}px wider than the window`);
        const text = (await page.locator('main').textContent()) ?? '';
        for (const team of hidden) {
          for (const shown of [TEAMS[team].key, TEAMS[team].name, TEAMS[team].project, requests[team]]) {
            assert.ok(!text.includes(shown), `${who} sees ${shown} on ${hash}`);
          }
        }
      }
    }
    assert.equal(await charted(), sees.length, `${who}'s charts count ${sees.length} request(s)`);
  }

  /** The page with its data in: each team it sees by what the page lists. */
  async function settled(hash: string, sees: readonly ('a' | 'b')[], who: string): Promise<void> {
    const main = page.locator('main');
    for (const team of sees) {
      if (hash === '#/') await main.getByRole('link', { name: requests[team] }).waitFor();
      else if (hash === '#/keys') await main.getByRole('cell', { name: TEAMS[team].key }).first().waitFor();
      else if (hash === '#/spend') await main.getByText(TEAMS[team].name).first().waitFor();
    }
    if (hash === '#/charts') await main.locator('.u-legend').first().waitFor();
    else if (hash === '#/audit') {
      // The owner reads the audit log; a member is told it is not its to read, and the page stands.
      if (who === 'owner') await main.getByRole('region', { name: 'Audit entries' }).getByRole('row').nth(1).waitFor();
      else
        await main
          .getByRole('alert')
          .getByText(/needs the admin role; the caller's role is member/)
          .waitFor();
    } else if (hash === '#/playground') await page.waitForTimeout(300);
  }

  it('walks every page as a project member, then as the owner: each width, no sideways scroll, only what is theirs', async () => {
    // Still signed in as bob, the member of Alpha, from the test before.
    await walk('member', ['a']);
    await signOut();
    await signIn('alice');
    await walk('owner', ['a', 'b']);
  });
});
