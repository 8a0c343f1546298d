// Headless Chromium (Debian's package) for the dashboard's browser tests, driven by playwright-core: where it is, how
// it is started, and the rule that without it a suite is skipped with a reason, except with CI=true, where it fails.
import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';

export const CHROMIUM = process.env.DURABLE_MCP_CHROMIUM ?? '/usr/bin/chromium';
export const SHOTS = 'test-results/screenshots';
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
export const chromiumAvailable = existsSync(CHROMIUM);

/** Says why a browser suite is skipped, or (CI=true) fails the run without Chromium. */
export function requireChromium(suite: string): void {
  if (!chromiumAvailable && process.env.CI !== 'true')
    console.log(`${suite} skipped: no Chromium at ${CHROMIUM} (set DURABLE_MCP_CHROMIUM)`);
  if (!chromiumAvailable && process.env.CI === 'true')
    describe(`${suite} in CI`, () => {
      it('needs Chromium', () => {
        throw new Error(`CI=true: ${suite} need Chromium at ${CHROMIUM} (apt-get install chromium)`);
      });
    });
}
