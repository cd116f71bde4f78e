import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { CONSOLE_ROOT } from '../../src/console/static-files.ts';
import { projectWithKey } from '../helpers/admin-client.ts';
import { startGateway, type TestGateway } from '../helpers/gateway.ts';

const CHROMIUM = '/usr/bin/chromium';
const KEY = 'sk-console-spend';

/** The console's Spend page in Debian's headless Chromium (as console.test.ts drives the others). */
describe('the console Spend page', { skip: existsSync(CHROMIUM) ? false : `no ${CHROMIUM} (apt-get install chromium)` }, () => {
  let gw: TestGateway;
  let browser: BrowserContext;
  let page: Page;
  let profile: string;

  before(async () => {
    if (!existsSync(join(CONSOLE_ROOT, 'index.html'))) {
      const { build } = await import('vite');
      await build({ configFile: new URL('../../console/vite.config.ts', import.meta.url).pathname });
    }
    gw = await startGateway({
      auth: { master_key: KEY },
      ledger: { flush_interval_ms: 10 },
      pricing: { 'mock/echo': { input_mtok: 3, output_mtok: 15 } },
    });
    const key = await projectWithKey(gw.url, KEY, 'search-team', { name: 'indexer', budgets: { daily_usd: 2 } });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key.key}`, 'x-sluice-tags': 'nightly' },
      body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'spend some' }] }),
    });
    assert.equal(res.status, 200);
    profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      viewport: { width: 1366, height: 768 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    await page.goto(`${gw.url}/console`);
    await page.getByLabel('Master key or admin key').fill(KEY);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Requests' }).waitFor();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('shows the totals, the cost over time by group with names beside ids, the burn-down and a CSV link', async () => {
    await page.getByRole('link', { name: 'Spend' }).click();
    await page.getByRole('heading', { level: 1, name: 'Spend' }).waitFor();
    assert.equal(await page.title(), 'Spend · sluice console');
    await page.getByTestId('spend-totals').getByText('1 requests').waitFor();
    await page.getByRole('cell', { name: 'search-team (search-team)' }).waitFor();
    await page.getByRole('figure').filter({ hasText: 'Cost per day' }).locator('canvas').waitFor();
    await page.getByLabel('Group by').selectOption('key');
    await page.getByRole('cell', { name: /^indexer \(/ }).waitFor();
    await page.getByLabel('Group by').selectOption('tag');
    await page.getByRole('cell', { name: 'nightly' }).waitFor();
    await page.getByRole('cell', { name: /^key indexer \(/ }).waitFor();
    await page.getByRole('meter').first().waitFor();
    const href = await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
    assert.equal(href, '/v1/spend?period=day&group_by=tag&format=csv');
    const csv = await page.evaluate<string>(`fetch(${JSON.stringify(href)}).then((r) => r.text())`);
    assert.match(csv, /^period_start,tag,requests,/);
    assert.match(csv, /,nightly,1,0,/);
  });
});
