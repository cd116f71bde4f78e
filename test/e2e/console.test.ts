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
      // A tier for the keys page's usage: slow refills, so a request is still counted when the page reads.
      // A route that falls back, so that a request page has attempts to show.
      routes: { steady: { targets: [{ model: 'mock/unavailable' }, { model: 'mock/echo' }] } },
      tiers: { metered: { requests_per_minute: 6, concurrent_requests: 2, budgets: [{ period: 'day', limit_usd: 1 }] } },
      // The mock's requests against a per-generation report: they have no upstream ids to look up,
      // so the report has nothing (and no call is made) and the reconciliation page has a drift to show.
      reconcile: { providers: { mock: { report: 'openrouter', admin_key: 'sk-or-console', base_url: 'http://127.0.0.1:9' } } },
    });
    profile = mkdtempSync(join(tmpdir(), 'sluice-chromium-'));
    // A fresh, empty profile per run (playwright takes it as the persistent context's directory).
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      // A laptop's screen.
      viewport: { width: 1366, height: 768 },
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

  /** The controls without an accessible name in Chromium's accessibility tree (Playwright's ARIA snapshot lists them as a bare role). */
  const unnamedControls = async () =>
    (await page.locator('body').ariaSnapshot())
      .split('\n')
      .filter((line) => /^\s*- (button|textbox|combobox|checkbox|spinbutton|searchbox|link|meter|slider|radio)( \[[^\]]*\])*:?\s*$/.test(line));

  const shot = (name: string) => page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });

  it('logs in with the master key', async () => {
    await page.goto(`${gw.url}/console`);
    await page.getByRole('heading', { level: 1, name: 'sluice console' }).waitFor();
    assert.deepEqual(await unnamedControls(), []);
    assert.equal(await page.title(), 'Log in · sluice console');
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

  it('filters the log by model and by a time range', async () => {
    const filters = page.getByRole('form', { name: 'Filters' });
    const rows = page.getByRole('region', { name: 'Requests' }).getByRole('row');
    const local = (ms: number) => new Date(ms - new Date().getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
    await filters.getByLabel('Model').fill('no-such-model');
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No requests yet.').waitFor();
    await filters.getByLabel('Model').fill('');
    // A range that ended before the test began: nothing in it, and nothing live either.
    await filters.getByLabel('Since').fill(local(Date.now() - 3 * 3_600_000));
    await filters.getByLabel('Until').fill(local(Date.now() - 2 * 3_600_000));
    await filters.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No requests yet.').waitFor();
    await page.getByText('not live', { exact: true }).waitFor();
    // One that holds the request.
    await filters.getByLabel('Since').fill(local(Date.now() - 3_600_000));
    await filters.getByLabel('Until').fill(local(Date.now() + 3_600_000));
    await filters.getByRole('button', { name: 'Apply' }).click();
    await rows.filter({ hasText: requestId }).waitFor();
    await filters.getByRole('button', { name: 'Clear' }).click();
    await page.getByText('live', { exact: true }).waitFor();
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
    await page.getByText('From the config.').waitFor();
    const price = page.getByRole('region', { name: 'Price used' });
    assert.equal(await price.getByRole('row').filter({ hasText: 'Input, per million tokens' }).getByRole('cell').textContent(), '$3');
    await page.getByText('seen in the log').first().waitFor();
    await shot('request-page');
  });

  it('opens a request by the X-Request-ID a user reports, from any page', async () => {
    await page.getByRole('link', { name: 'Playground' }).click();
    await page.getByRole('search').getByLabel('X-Request-ID').fill(` x-request-id: ${requestId} `);
    await page.getByRole('search').getByLabel('X-Request-ID').press('Enter');
    await page.getByRole('heading', { name: `Request ${requestId}` }).waitFor();
    await page.getByTestId('cost').waitFor();
    await page.getByRole('search').getByLabel('X-Request-ID').fill('no-such-request');
    await page.getByRole('search').getByRole('button', { name: 'Open' }).click();
    await page.getByRole('alert').waitFor();
  });

  it("shows a routed request's attempts and fallback, and the model it asked for beside the one that served it", async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: 'steady', messages: [{ role: 'user', content: 'fall back' }] }),
    });
    await res.text();
    const routed = res.headers.get('x-request-id') ?? '';
    await page.getByRole('link', { name: 'Requests' }).click();
    await page.getByRole('link', { name: routed }).waitFor();
    await page.getByRole('search').getByLabel('X-Request-ID').fill(routed);
    await page.getByRole('search').getByLabel('X-Request-ID').press('Enter');
    await page.getByRole('heading', { name: `Request ${routed}` }).waitFor();
    const facts = page.locator('dl.facts').first();
    assert.equal(await facts.locator('div', { hasText: 'Requested model' }).locator('dd').textContent(), 'steady');
    assert.equal(await facts.locator('div', { hasText: 'Served by' }).locator('dd').textContent(), 'mock/echo');
    const attempts = page.getByRole('region', { name: 'Attempts' }).getByRole('row');
    await attempts.nth(2).waitFor();
    assert.match((await attempts.nth(1).textContent()) ?? '', /mock\/unavailable.*upstream_overloaded/);
    assert.match((await attempts.nth(2).textContent()) ?? '', /mock\/echo/);
    await shot('request-attempts');
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

  it("shows the playground's reasoning and tool-call argument deltas, one piece per delta, with the tools it was given", async () => {
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
    const reasoning = page.getByTestId('reasoning');
    assert.equal(await reasoning.textContent(), 'The user wants their message repeated. I will echo it.');
    assert.ok((await reasoning.locator('.delta').count()) > 1);

    await page.getByLabel('Tools (JSON array, optional)').fill('not json');
    await page.getByRole('button', { name: 'Send' }).click();
    await page
      .getByRole('status')
      .getByText(/^not sent: tools is not JSON/)
      .waitFor();
    // mock/tools calls the first function tool it is given: the name shows the tools were sent.
    await page.getByRole('button', { name: 'Example tool' }).click();
    const tools = (await page.getByLabel('Tools (JSON array, optional)').inputValue()).replace('get_weather', 'lookup_city');
    await page.getByLabel('Tools (JSON array, optional)').fill(tools);
    await page.getByLabel('Model').selectOption('mock/tools');
    await page.getByRole('button', { name: 'Send' }).click();
    await page
      .getByRole('status')
      .getByText(/^done: tool_calls/)
      .waitFor();
    await page.getByRole('heading', { name: 'Tool calls' }).waitFor();
    const call = page.getByTestId('tool-call');
    await call.getByText('lookup_city', { exact: true }).waitFor();
    const args = call.getByTestId('tool-arguments');
    assert.deepEqual(await args.locator('.delta').allTextContents(), ['{"location":', ' "Paris",', ' "unit": "celsius"}']);
    await shot('playground-tools');
  });

  it('creates a project and a key (shown once) and revokes the key on the keys page', async () => {
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByLabel('Project name').fill('Browser project');
    await page.getByLabel('Project id (optional)').fill('browser-proj');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('cell', { name: 'Browser project', exact: true }).waitFor();
    await page.getByRole('form', { name: 'New key' }).getByRole('combobox').selectOption('browser-proj');
    await page.getByLabel('Key name').fill('from-the-browser');
    await page.getByLabel('Key tier (optional)').fill('metered');
    await page.getByLabel('Key daily budget, USD (optional)').fill('0.5');
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
    // Its usage: the request out of the tier's bucket, its cost against the day's budget (the
    // tier's $1 and the key's own $0.50 are one window with the lower limit). The spend reaches
    // the store with the ledger row: refresh until it shows.
    await page.getByRole('button', { name: 'Done' }).click();
    const row = page.getByRole('row').filter({ hasText: 'from-the-browser' });
    await page.getByRole('button', { name: 'Refresh usage' }).click();
    await row.getByText('requests/min (key): 1 of 6').waitFor();
    for (let tries = 0; !(await row.getByText(/^today \(key\): \$0\.\d{6} of \$0\.5000$/).count()); tries++) {
      assert.ok(tries < 50, `no spend shown: ${await row.textContent()}`);
      await page.getByRole('button', { name: 'Refresh usage' }).click();
      await new Promise((r) => setTimeout(r, 100));
    }
    await shot('keys');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke from-the-browser' }).click();
    await page.getByRole('cell', { name: 'revoked' }).waitFor();
    assert.equal(await chat(key), 401);
  });

  it('lists what the keys page did, and the sign-in, on the audit page, and filters it by action', async () => {
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    const rows = page.getByRole('region', { name: 'Audit entries' }).getByRole('row');
    await rows.filter({ hasText: 'key.revoke' }).getByText('status: "active" → "revoked"').waitFor();
    for (const action of ['project.create', 'key.create', 'console.sign_in']) await rows.filter({ hasText: action }).first().waitFor();
    await shot('audit');
    await page.getByLabel('Action').fill('key.create');
    await page.getByRole('button', { name: 'Apply' }).click();
    await rows.filter({ hasText: 'key.revoke' }).waitFor({ state: 'detached' });
    // The header row and the one key created.
    assert.equal(await rows.count(), 2);
  });

  it('edits, disables and enables, rotates and deletes a key, edits a project and its endpoint, deletes the project (409, then with its keys)', async () => {
    const admin = (path: string, init: { method?: string; body?: unknown } = {}) =>
      fetch(`${gw.url}${path}`, {
        method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
        headers: { authorization: `Bearer ${KEY}`, ...(init.body !== undefined && { 'content-type': 'application/json' }) },
        ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, any> }));
    const chat = (auth: string) =>
      fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${auth}` },
        body: JSON.stringify({ model: 'mock/echo', messages: [{ role: 'user', content: 'edited' }] }),
      }).then(async (res) => ({ status: res.status, code: ((await res.json()) as { error?: { code: string } }).error?.code }));
    assert.equal((await admin('/admin/projects', { body: { id: 'edit-proj', name: 'Edit project' } })).status, 201);
    const created = await admin('/admin/keys', { body: { project: 'edit-proj', name: 'edit-me' } });
    const keyId = created.body.id as string;
    let secret = created.body.key as string;
    // Every confirmation of this test is accepted.
    const accept = (dialog: { accept: () => Promise<void> }) => void dialog.accept();
    page.on('dialog', accept);
    // Made through the API: the keys page reads them when it is loaded again (the audit page's test ran last).
    await page.goto(`${gw.url}/console#/keys`);
    await page.reload();
    const keyRow = (name: string) => page.getByRole('region', { name: 'Keys', exact: true }).getByRole('row').filter({ hasText: name });
    await keyRow('edit-me').waitFor();

    // A refusal naming a field shows beside it; then the name and the tier change.
    await page.getByRole('button', { name: 'Edit edit-me' }).click();
    const form = page.getByRole('form', { name: 'Edit key edit-me' });
    await form.getByLabel(/^Tier/).fill('no-such-tier');
    await form.getByRole('button', { name: 'Save' }).click();
    await form
      .getByRole('alert')
      .filter({ hasText: /tier no-such-tier is not a tier of the config/ })
      .waitFor();
    assert.equal(await form.getByLabel(/^Tier/).getAttribute('aria-invalid'), 'true');
    assert.deepEqual(await unnamedControls(), []);
    await shot('key-edit-error');
    await form.getByLabel('Name').fill('edited-key');
    await form.getByLabel(/^Tier/).fill('metered');
    await form.getByRole('button', { name: 'Save' }).click();
    await keyRow('edited-key').getByRole('cell', { name: 'metered', exact: true }).waitFor();
    assert.equal(await form.count(), 0);
    const edited = (await admin('/admin/keys?project=edit-proj')).body.data[0];
    assert.deepEqual([edited.name, edited.tier], ['edited-key', 'metered']);

    // Disabled: refused with api_key_disabled through the API until enabled again.
    await page.getByRole('button', { name: 'Disable edited-key' }).click();
    await keyRow('edited-key').getByRole('cell', { name: 'disabled', exact: true }).waitFor();
    assert.deepEqual(await chat(secret), { status: 401, code: 'api_key_disabled' });
    await page.getByRole('button', { name: 'Enable edited-key' }).click();
    await keyRow('edited-key').getByRole('cell', { name: 'active', exact: true }).waitFor();
    assert.equal((await chat(secret)).status, 200);

    // Rotated: the new secret shown once works, the old one stops at once.
    await page.getByRole('button', { name: 'Rotate edited-key' }).click();
    await page.getByText('New secret of key edited-key').waitFor();
    const rotated = (await page.getByTestId('issued-key').textContent()) ?? '';
    assert.match(rotated, new RegExp(`^sk-sluice-${keyId}_`));
    assert.notEqual(rotated, secret);
    assert.deepEqual(await chat(secret), { status: 401, code: 'invalid_api_key' });
    secret = rotated;
    assert.equal((await chat(secret)).status, 200);
    await page.getByRole('button', { name: 'Done' }).click();

    // Deleted: gone from the list, refused like an unknown key.
    await page.getByRole('button', { name: 'Delete edited-key' }).click();
    await keyRow('edited-key').waitFor({ state: 'detached' });
    assert.deepEqual(await chat(secret), { status: 401, code: 'invalid_api_key' });

    // The project's daily budget: a bad amount named beside its field, then a good one.
    await page.getByRole('button', { name: 'Edit project Edit project' }).click();
    const projectForm = page.getByRole('form', { name: 'Edit project Edit project' });
    await projectForm.getByLabel(/^Daily budget/).fill('0');
    await projectForm.getByRole('button', { name: 'Save' }).click();
    await projectForm.getByRole('alert').waitFor();
    assert.equal(await projectForm.getByLabel(/^Daily budget/).getAttribute('aria-invalid'), 'true');
    await projectForm.getByLabel(/^Daily budget/).fill('2.5');
    await projectForm.getByRole('button', { name: 'Save' }).click();
    await projectForm.waitFor({ state: 'detached' });
    const project = (await admin('/admin/projects')).body.data.find((p: { id: string }) => p.id === 'edit-proj');
    assert.deepEqual(project.budgets, { daily_usd: 2.5, monthly_usd: null });
    const projectRow = page.getByRole('region', { name: 'Projects', exact: true }).getByRole('row').filter({ hasText: 'edit-proj' });
    await projectRow.getByText(/of \$2\.5000/).waitFor();

    // An endpoint of the project: created, its stream settings edited, deleted.
    await page.getByRole('button', { name: 'New endpoint' }).click();
    const newEndpoint = page.getByRole('form', { name: 'New endpoint' });
    await newEndpoint.getByLabel('Project').selectOption('edit-proj');
    await newEndpoint.getByLabel(/^Endpoint name/).fill('chat');
    await newEndpoint.getByLabel(/^Model/).fill('mock/echo');
    await newEndpoint.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByRole('button', { name: 'Edit endpoint /edit-proj/chat/v1' }).click();
    const endpointForm = page.getByRole('form', { name: 'Edit endpoint /edit-proj/chat/v1' });
    await endpointForm.getByLabel('Usage chunk').selectOption('always');
    // A bad cache value is refused beside its field, then fixed.
    await endpointForm.getByLabel(/^Response cache/).fill('0');
    await endpointForm.getByRole('button', { name: 'Save' }).click();
    await endpointForm.getByRole('alert').filter({ hasText: 'cache.ttl_s' }).waitFor();
    await endpointForm.getByLabel(/^Response cache/).fill('300/4096');
    await endpointForm.getByRole('button', { name: 'Save' }).click();
    const endpointRow = page.getByRole('region', { name: 'Endpoints', exact: true }).getByRole('row').filter({ hasText: '/edit-proj/chat/v1' });
    await endpointRow.getByText('usage always').waitFor();
    await endpointRow.getByText('300 s, answers up to 4096 bytes').waitFor();
    const saved = (await admin('/admin/endpoints?project=edit-proj')).body.data[0];
    assert.deepEqual([saved.usage, saved.cache], ['always', { ttl_s: 300, max_bytes: 4096 }]);
    await page.getByRole('button', { name: 'Delete endpoint /edit-proj/chat/v1' }).click();
    await endpointRow.waitFor({ state: 'detached' });
    assert.deepEqual((await admin('/admin/endpoints?project=edit-proj')).body.data, []);

    // Deleting a project with a live key: the 409 explained, then deleted with its keys.
    const live = await admin('/admin/keys', { body: { project: 'edit-proj', name: 'still-live' } });
    await page.getByRole('button', { name: 'Refresh usage' }).click();
    await keyRow('still-live').waitFor();
    await page.getByRole('button', { name: 'Delete project Edit project' }).click();
    const refused = page.getByRole('alert').filter({ hasText: 'still has 1 live key(s)' });
    await refused.waitFor();
    await shot('project-has-keys');
    assert.equal(await projectRow.count(), 1);
    await refused.getByRole('button', { name: 'Delete Edit project with its keys' }).click();
    await projectRow.waitFor({ state: 'detached' });
    await keyRow('still-live').waitFor({ state: 'detached' });
    assert.deepEqual(await chat(live.body.key as string), { status: 401, code: 'invalid_api_key' });
    const deleted = (await admin('/admin/keys?include_deleted=true&project=edit-proj')).body.data;
    assert.deepEqual(
      deleted.map((k: { status: string }) => k.status),
      ['deleted', 'deleted'],
    );
    page.off('dialog', accept);
  });

  it('reconciles the mock against its report on the reconciliation page, and opens the run to its lines', async () => {
    await page.goto(`${gw.url}/console#/reconcile`);
    await page.getByRole('heading', { level: 1, name: 'Reconciliation' }).waitFor();
    const today = new Date().toISOString().slice(0, 10);
    const form = page.getByRole('form', { name: 'Reconcile' });
    await form.getByLabel('Provider').fill('mock');
    await form.getByLabel('From').fill(today);
    await form.getByLabel('To').fill(today);
    await form.getByRole('button', { name: 'Reconcile' }).click();
    const run = page.getByRole('region', { name: 'Reconciliations' }).getByRole('row').filter({ hasText: 'mock' });
    await run.getByRole('cell', { name: 'over', exact: true }).waitFor();
    // The run just made is opened: the ledger's requests of today, none in the report.
    const lines = page.getByRole('region', { name: /^Lines of rec_/ });
    await lines.getByRole('cell', { name: 'missing in report' }).first().waitFor();
    await page.getByText(`${today}: no rows in the report`).waitFor();
    await shot('reconcile');
    await run.getByRole('button', { name: `Hide mock ${today}` }).click();
    await lines.waitFor({ state: 'detached' });
    // A provider without a report configured: the refusal, and the page stands.
    await form.getByLabel('Provider').fill('nope');
    await form.getByRole('button', { name: 'Reconcile' }).click();
    await page
      .getByRole('alert')
      .getByText(/No report is configured for provider nope/)
      .waitFor();
  });

  it('names every control, has one h1 and the landmarks on each page, and shows where the keyboard focus is', async () => {
    for (const [hash, heading] of [
      ['#/', 'Requests'],
      [`#/requests/${requestId}`, `Request ${requestId}`],
      ['#/charts', 'Charts'],
      ['#/spend', 'Spend'],
      ['#/playground', 'Playground'],
      ['#/keys', 'Keys and projects'],
      ['#/audit', 'Audit log'],
      ['#/reconcile', 'Reconciliation'],
    ]) {
      await page.goto(`${gw.url}/console${hash}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      assert.deepEqual(await unnamedControls(), [], `${hash}: controls without a name`);
      assert.equal(await page.title(), `${heading} · sluice console`);
      assert.equal(await page.getByRole('heading', { level: 1 }).count(), 1, hash);
      for (const landmark of ['banner', 'navigation', 'main', 'search'] as const) {
        assert.equal(await page.getByRole(landmark).count(), 1, `${hash}: ${landmark}`);
      }
      // Nothing wider than a laptop's screen but the tables, which scroll on their own.
      // (Expressions as text: the tests' TypeScript has no DOM library.)
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
      assert.ok(overflow <= 0, `${hash}: the page is ${overflow}px wider than the window`);
    }
    // Keyboard: Tab goes through the header's controls in order, each with a visible outline, and Enter follows a link.
    await page.goto(`${gw.url}/console#/`);
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Requests' }).waitFor();
    const reached: string[] = [];
    for (let i = 0; i < 3; i++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate<{ text: string; visible: boolean }>(`(() => {
        const el = document.activeElement;
        const style = getComputedStyle(el);
        return { text: el.textContent, visible: style.outlineStyle !== 'none' && style.outlineWidth !== '0px' };
      })()`);
      assert.ok(focused.visible, `no visible focus on ${focused.text}`);
      reached.push(focused.text);
    }
    assert.deepEqual(reached, ['Requests', 'Charts', 'Spend']);
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Charts' }).waitFor();
  });
});
