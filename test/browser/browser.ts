import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ACCOUNT_KEY } from '../harness.js';

/** Debian's Chromium (`apt-get install chromium`); `CHROMIUM_PATH` overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The flags DESIGN.md prescribes; playwright adds `--user-data-dir` for the fresh profile. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Screenshots land here (gitignored); with `UPDATE_DOCS_SCREENSHOTS=1` the README's copies too. */
export const ARTIFACTS = join(process.cwd(), '.artifacts', 'browser');

/**
 * Why the browser tests cannot run here, printed, or undefined when they can. Without Chromium they
 * are skipped, except under `CI=true`, where they run and fail on launch.
 */
export function browserSkipReason(): string | undefined {
  if (existsSync(CHROMIUM_PATH) || process.env.CI === 'true') return undefined;
  const reason = `Skipping browser tests: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium, or set CHROMIUM_PATH).`;
  console.log(reason);
  return reason;
}

export interface BrowserSession {
  readonly context: BrowserContext;
  readonly page: Page;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile; browser console errors are collected. */
export async function openBrowser(): Promise<BrowserSession & { consoleErrors: string[] }> {
  if (!existsSync(CHROMIUM_PATH)) throw new Error(`No Chromium at ${CHROMIUM_PATH}: install it with apt-get install -y chromium.`);
  const profile = mkdtempSync(join(tmpdir(), 'gateway-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1366, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    context,
    page,
    consoleErrors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Signs in with the keyboard only: the key field has focus on load, Enter submits. */
export async function signIn(page: Page, gatewayUrl: string, key: string = ACCOUNT_KEY): Promise<void> {
  await page.goto(`${gatewayUrl}/dashboard`);
  await page.getByLabel('Account API key').waitFor();
  await page.keyboard.type(key);
  await page.keyboard.press('Enter');
  await page.getByRole('navigation', { name: 'Sections' }).waitFor();
}

/** Saves a screenshot as a test artifact, and into docs/img when asked to refresh the README's. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false });
  if (process.env.UPDATE_DOCS_SCREENSHOTS === '1') {
    mkdirSync(join(process.cwd(), 'docs', 'img'), { recursive: true });
    await page.screenshot({ path: join(process.cwd(), 'docs', 'img', `${name}.png`), fullPage: false });
  }
}
