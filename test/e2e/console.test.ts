import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { CONSOLE_ROOT } from '../../src/console/static-files.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const CHROMIUM = '/usr/bin/chromium';
const KEY = 'sk-console-browser';
/** Screenshots, kept as the run's artifacts (git-ignored). */
const SHOTS = new URL('../../test-artifacts/console/', import.meta.url);

/** The console in Debian's headless Chromium, driven by playwright-core (no browser download). */
describe('the console in a browser', { skip: existsSync(CHROMIUM) ? false : `no ${CHROMIUM} (apt-get install chromium)` }, () => {
  let gw: TestGateway;
  let browser: BrowserContext;
  let page: Page;
  let profile: string;

  before(async () => {
    // A checkout that never ran `npm install`'s prepare (or `npm run build`) has no bundle yet.
    if (!existsSync(join(CONSOLE_ROOT, 'index.html'))) {
      const { build } = await import('vite');
      await build({ configFile: new URL('../../console/vite.config.ts', import.meta.url).pathname });
    }
    mkdirSync(SHOTS, { recursive: true });
    gw = await startGateway({
      auth: { master_key: KEY },
      ledger: { flush_interval_ms: 10, store_content: true },
      // A price for the mock, so that the request page has a cost to show.
      pricing: { 'mock/echo': { input_mtok: 3, output_mtok: 15 } },
    });
    profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
    // A fresh, empty profile per run (playwright takes it as the persistent context's directory).
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      viewport: { width: 1366, height: 800 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = browser.pages()[0] ?? (await browser.newPage());
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  const shot = (name: string) => page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });

  it('logs in with the master key', async () => {
    await page.goto(`${gw.url}/console`);
    await page.getByLabel('Master key or admin key').fill(KEY);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Requests' }).waitFor();
    const cookies = await browser.cookies();
    const session = cookies.find((c) => c.name === 'sluice_console');
    assert.ok(session?.httpOnly && session.sameSite === 'Strict');
    assert.ok(!cookies.some((c) => c.value.includes(KEY)));
  });

  let requestId = '';
  it('shows a request made during the test in the live log, without a reload', async () => {
    await page.getByText('live', { exact: true }).waitFor();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'seen in the log' }] }),
    });
    await res.text();
    requestId = res.headers.get('x-request-id') ?? '';
    await page.getByRole('link', { name: requestId }).waitFor();
    await shot('request-log');
  });

  it("opens the request's page with its cost and the price used", async () => {
    const record = (await (await fetch(`${gw.url}/v1/requests/${requestId}`, { headers: { authorization: `Bearer ${KEY}` } })).json()) as {
      cost_usd: number;
    };
    assert.ok(record.cost_usd > 0);
    await page.getByRole('link', { name: requestId }).click();
    await page.getByRole('heading', { name: `Request ${requestId}` }).waitFor();
    const cost = page.getByTestId('cost');
    assert.equal(await cost.textContent(), `$${record.cost_usd.toFixed(6)}`);
    await page.getByText('config: {"input_mtok":3,"output_mtok":15} USD per million tokens').waitFor();
    await page.getByText('seen in the log').first().waitFor();
    await shot('request-page');
  });

  it('draws the charts from the rollups', async () => {
    await page.getByRole('link', { name: 'Charts' }).click();
    const chart = page.getByRole('figure').filter({ hasText: 'Requests per minute by model' });
    await chart.locator('canvas').waitFor();
    // uPlot's legend lists a series per model that had requests in the window.
    await chart.locator('.u-legend').getByText('mock/echo').waitFor();
    await shot('charts');
  });

  it('streams from the mock in the playground: raw frames and the assembled text, linked to the request', async () => {
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Model').selectOption('mock/echo');
    await page.getByLabel('Stream profile').selectOption('accounting');
    await page.getByLabel('Prompt').fill('streamed in the browser');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('assembled').getByText('streamed in the browser').waitFor();
    await page
      .getByRole('status')
      .getByText(/^done: stop/)
      .waitFor();
    const raw = (await page.getByTestId('raw').textContent()) ?? '';
    assert.match(raw, /^data: \{/m);
    assert.match(raw, /usage/);
    await shot('playground');
    await page.getByRole('link', { name: /^request / }).click();
    await page.getByRole('heading', { name: /^Request / }).waitFor();
  });

  it("shows the playground's reasoning and tool-call deltas", async () => {
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByLabel('Stream profile').selectOption('openai');
    await page.getByLabel('Prompt').fill('think first');
    await page.getByLabel('Model').selectOption('mock/reasoning');
    await page.getByRole('button', { name: 'Send' }).click();
    await page
      .getByRole('status')
      .getByText(/^done: /)
      .waitFor();
    await page.getByRole('heading', { name: 'Reasoning' }).waitFor();
    await page.getByLabel('Model').selectOption('mock/tools');
    await page.getByRole('button', { name: 'Send' }).click();
    await page
      .getByRole('status')
      .getByText(/^done: tool_calls/)
      .waitFor();
    await page.getByRole('heading', { name: 'Tool calls' }).waitFor();
    await page.getByText(/^get_weather\(\{/).waitFor();
    await shot('playground-tools');
  });

  it('creates a project and a key (shown once) and revokes the key on the keys page', async () => {
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByLabel('Project name').fill('Browser project');
    await page.getByLabel('Project id (optional)').fill('browser-proj');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('cell', { name: 'Browser project' }).waitFor();
    await page.getByRole('form', { name: 'New key' }).getByRole('combobox').selectOption('browser-proj');
    await page.getByLabel('Key name').fill('from-the-browser');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('issued-key').textContent()) ?? '';
    assert.match(key, /^sk-sluice-/);
    const chat = (auth: string) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` },
        body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'with the new key' }] }),
      }).then(async (res) => (await res.text(), res.status));
    assert.equal(await chat(key), 200);
    await shot('keys');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke from-the-browser' }).click();
    await page.getByRole('cell', { name: 'revoked' }).waitFor();
    assert.equal(await chat(key), 401);
  });
});
