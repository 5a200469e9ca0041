// Headless Chromium for the tests that need a real browser (browser.test.ts, and the runtime
// smoke suite in test/runtimes/): Debian's `chromium` package, driven through playwright-core.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Where Debian's package installs it; .ci/run installs it in CI. */
export const CHROMIUM = '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Whether this run is CI's (`CI` set to anything but '', '0' or 'false'), where nothing may be skipped. */
export const IN_CI = process.env.CI !== undefined && !['', '0', 'false'].includes(process.env.CI);

/** Why a test that needs Chromium cannot run here. */
export const MISSING_CHROMIUM = `headless Chromium not found at ${CHROMIUM}. Install Debian's package (apt-get install -y chromium); .ci/run installs it in CI.`;

/** Whether Chromium is installed. */
export function hasChromium(): boolean {
  return existsSync(CHROMIUM);
}

/** Runs `use` with a fresh headless Chromium (its own profile in a temporary folder), then closes it. */
export async function withChromium<T>(use: (context: BrowserContext) => Promise<T>): Promise<T> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'tenacious-chromium-'));
  try {
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
    });
    try {
      return await use(context);
    } finally {
      await context.close();
    }
  } finally {
    await rm(userDataDir, { recursive: true, force: true });
  }
}
