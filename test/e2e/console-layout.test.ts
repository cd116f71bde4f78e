import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { CONSOLE_ROOT } from '../../src/console/static-files.ts';
import { chatWith, projectWithKey } from '../helpers/admin-client.ts';
import { type FakeUpstream, startFakeUpstream } from '../helpers/fake-upstream.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const CHROMIUM = '/usr/bin/chromium';
const KEY = 'sk-console-layout';
/** A phone and a desktop screen. */
const WIDTHS = [390, 1440] as const;
/** More models than a legend lists (8: seven and "other"). */
const MODELS = Array.from({ length: 10 }, (_, i) => `openai/model-${i}`);

/**
 * The console's layout and what it names, in Debian's headless Chromium (playwright-core): every
 * page at a phone's and a desktop's width without sideways scroll, keys and projects by name,
 * a spent budget as blocked, a refused request's model, bounded chart legends and the price table.
 */
describe('the console at 390 px and 1440 px', { skip: existsSync(CHROMIUM) ? false : `no ${CHROMIUM} (apt-get install chromium)` }, () => {
  let gw: TestGateway;
  let upstream: FakeUpstream;
  let browser: BrowserContext;
  let page: Page;
  let profile: string;
  /** Screenshots of the run, in a temporary folder (not kept in the repository). */
  let shots: string;
  let keyed = '';
  let refused = '';
  let keyId = '';
  let keySecret = '';

  before(async () => {
    if (!existsSync(join(CONSOLE_ROOT, 'index.html'))) {
      const { build } = await import('vite');
      await build({ configFile: new URL('../../console/vite.config.ts', import.meta.url).pathname });
    }
    shots = mkdtempSync(join(tmpdir(), 'sluice-console-shots-'));
    upstream = await startFakeUpstream();
    // Any model answers; openai/costly reports usage worth $2 at its price below.
    upstream.reply((req) => {
      const model = (req.json as { model?: string } | undefined)?.model ?? '';
      const tokens = model === 'costly' ? 1000 : 2;
      return {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: tokens, completion_tokens: tokens, total_tokens: 2 * tokens },
        }),
      };
    });
    gw = await startGateway({
      auth: { master_key: KEY },
      ledger: { flush_interval_ms: 10 },
      providers: { openai: { base_url: `${upstream.url}/v1`, api_key: 'sk-upstream' } },
      pricing: { 'openai/costly': { input_mtok: 1000, output_mtok: 1000 } },
    });
    // A named key of a named project, whose daily budget its first request overspends.
    const project = await fetch(`${gw.url}/admin/projects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ id: 'plat', name: 'Platform team' }),
    });
    assert.equal(project.status, 201);
    const key = await projectWithKey(gw.url, KEY, 'plat', { name: 'ci-runner', budgets: { daily_usd: 1 } });
    keyId = key.id as string;
    keySecret = key.key as string;
    const spent = await chatWith(gw.url, keySecret, { model: 'openai/costly' });
    assert.equal(spent.status, 200);
    keyed = spent.requestId;
    // Refused for its body: the ledger still records the model it asked for.
    const bad = await chatWith(gw.url, KEY, { model: 'mock/tools', messages: 'not a list' });
    assert.equal(bad.status, 400);
    refused = bad.requestId;
    for (const model of MODELS) assert.equal((await chatWith(gw.url, KEY, { model })).status, 200);
    for (const id of [keyed, refused]) await waitForRecord(id);

    profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      viewport: { width: 1440, height: 900 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
    });
    page = browser.pages()[0] ?? (await browser.newPage());
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await upstream?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    if (shots) console.log(`screenshots: ${shots}`);
  });

  async function waitForRecord(id: string): Promise<void> {
    for (let tries = 0; ; tries++) {
      const res = await fetch(`${gw.url}/v1/requests/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
      await res.text();
      if (res.status === 200) return;
      assert.ok(tries < 200, `${id} was never stored`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** How much wider than the window the page is (0: no sideways scroll). Expressions as text: the tests' TypeScript has no DOM library. */
  const overflow = (width: number) => page.evaluate<number>(`document.documentElement.scrollWidth - ${width}`);

  it('logs in at a phone width without sideways scroll', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${gw.url}/console`);
    await page.getByRole('heading', { level: 1, name: 'sluice console' }).waitFor();
    await page.screenshot({ path: join(shots, 'login-390.png'), fullPage: true });
    assert.ok((await overflow(390)) <= 0, 'the login page scrolls sideways');
    await page.getByLabel('Master key or admin key').fill(KEY);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Requests' }).waitFor();
  });

  it('shows keys and projects by name beside their ids in the log, the live feed and a request page', async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${gw.url}/console#/`);
    const row = page.getByRole('row').filter({ hasText: keyed });
    await row.getByText('ci-runner').waitFor();
    await row.getByText('Platform team').waitFor();
    assert.match((await row.textContent()) ?? '', new RegExp(keyId));
    // Live: the blocked key's next request is refused, and arrives in the log with its names.
    await page.getByText('live', { exact: true }).waitFor();
    const blocked = await chatWith(gw.url, keySecret, { model: 'mock/echo' });
    assert.equal(blocked.status, 429);
    const liveRow = page.getByRole('row').filter({ hasText: blocked.requestId });
    await liveRow.getByText('ci-runner').waitFor();
    assert.equal(await liveRow.getByTestId('model').textContent(), 'mock/echo (not sent upstream)');

    await page.goto(`${gw.url}/console#/requests/${keyed}`);
    const facts = page.locator('dl.facts').first();
    await facts.locator('div', { hasText: 'Key' }).getByText('ci-runner').waitFor();
    await facts.locator('div', { hasText: 'Project' }).getByText('Platform team').waitFor();
  });

  it('shows a refused request\'s model, not "/"', async () => {
    await page.goto(`${gw.url}/console#/`);
    const row = page.getByRole('row').filter({ hasText: refused });
    await row.waitFor();
    assert.equal(await row.getByTestId('model').textContent(), 'mock/tools (not sent upstream)');
    assert.doesNotMatch((await row.textContent()) ?? '', /(^|\s)\//);
    await page.goto(`${gw.url}/console#/requests/${refused}`);
    const facts = page.locator('dl.facts').first();
    await facts.locator('div', { hasText: 'Requested model' }).waitFor();
    assert.equal(await facts.locator('div', { hasText: 'Requested model' }).locator('dd').textContent(), 'mock/tools');
    assert.match((await facts.locator('div', { hasText: 'Served by' }).locator('dd').textContent()) ?? '', /^none: refused/);
  });

  it('prints the price used as a table, not JSON', async () => {
    await page.goto(`${gw.url}/console#/requests/${keyed}`);
    const table = page.getByRole('region', { name: 'Price used' });
    await table.waitFor();
    const input = table.getByRole('row').filter({ hasText: 'Input, per million tokens' });
    assert.equal(await input.getByRole('cell').textContent(), '$1000');
    const output = table.getByRole('row').filter({ hasText: 'Output, per million tokens' });
    assert.equal(await output.getByRole('cell').textContent(), '$1000');
    await page.getByText('From the config.').waitFor();
    assert.doesNotMatch((await page.locator('main').textContent()) ?? '', /\{"input_mtok"/);
  });

  it('shows a key and a project past their budget as blocked, not active', async () => {
    await page.goto(`${gw.url}/console#/keys`);
    const row = page.getByRole('region', { name: 'Keys', exact: true }).getByRole('row').filter({ hasText: 'ci-runner' });
    await row.getByText('blocked (budget exhausted)').waitFor();
    await row.getByText('Platform team').waitFor();
    await row.getByText(/today \(key\): .* exhausted/).waitFor();
    // Its project has no budget of its own: it stays active.
    const project = page.getByRole('region', { name: 'Projects', exact: true }).getByRole('row').filter({ hasText: 'Platform team' });
    assert.match((await project.textContent()) ?? '', /active/);
  });

  it('bounds the legends to the busiest models and "other", and names every series', async () => {
    await page.goto(`${gw.url}/console#/charts`);
    const requests = page.getByRole('figure').filter({ hasText: 'Requests per minute by model' });
    await requests.locator('.u-legend').getByText('other', { exact: true }).waitFor();
    // uPlot's legend: the time series, then at most eight.
    const series = await requests.locator('.u-legend .u-series').allTextContents();
    assert.ok(series.length <= 9, `${series.length - 1} series: ${series.join(' | ')}`);
    const errors = page.getByRole('figure').filter({ hasText: 'Error rate by provider' });
    await errors.locator('.u-legend').getByText('refused (no upstream)').waitFor();
    for (const chart of await page.getByRole('figure').all()) {
      assert.doesNotMatch((await chart.locator('.u-legend').textContent()) ?? '', /Value/);
    }
  });

  it('walks every page at 390 px and 1440 px with no sideways scroll', async () => {
    await page.goto(`${gw.url}/console#/`);
    // Every page the navigation offers, whichever pages it has, and both kinds of request page.
    const nav = await page.evaluate<string[]>(`[...document.querySelectorAll('header nav a')].map((a) => a.getAttribute('href'))`);
    assert.ok(nav.length >= 4, nav.join(', '));
    const hashes = [...nav, `#/requests/${keyed}`, `#/requests/${refused}`];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
      for (const hash of hashes) {
        await page.goto(`${gw.url}/console${hash}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await settled(hash);
        const name = `${hash.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '') || 'log'}-${width}`;
        await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
        const over = await overflow(width);
        assert.ok(over <= 0, `${hash} at ${width} px: the page is ${over}px wider than the window`);
      }
    }
  });

  /** The page with its data in: its widest content is what could scroll sideways. */
  async function settled(hash: string): Promise<void> {
    if (hash === '#/') await page.getByRole('link', { name: keyed }).waitFor();
    else if (hash.startsWith('#/requests/')) await page.locator('dl.facts dd').first().waitFor();
    else if (hash === '#/charts') await page.locator('.u-legend').first().waitFor();
    else if (hash === '#/keys') await page.getByRole('cell', { name: 'Platform team' }).first().waitFor();
    // Any other page (added since): its first answers.
    else await page.waitForTimeout(500);
  }
});
