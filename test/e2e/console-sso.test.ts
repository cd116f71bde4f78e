import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { CONSOLE_ROOT } from '../../src/console/static-files.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';
import { freePort, startIdentityProvider, type TestIdentityProvider } from '../helpers/oidc-provider.ts';

const CHROMIUM = '/usr/bin/chromium';

/** Sign-in with SSO and sign-out, in Debian's headless Chromium, against a local OpenID provider. */
describe('SSO in the console, in a browser', { skip: existsSync(CHROMIUM) ? false : `no ${CHROMIUM} (apt-get install chromium)` }, () => {
  let gw: TestGateway;
  let idp: TestIdentityProvider;
  let browser: BrowserContext;
  let page: Page;
  let profile: string;

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
        master_key: 'sk-console-sso',
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
    });
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
  });

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
});
