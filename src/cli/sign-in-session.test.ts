import { describe, expect, it } from 'vitest';
import type { SignInRecord } from '../client/oauth/types.js';
import { publicRecord, withPrompt } from './sign-in-session.js';
import type { TerminalSignInPrompt } from './sign-in-prompt.js';

function countingPrompt() {
  const events: string[] = [];
  const prompt = {
    redirectUri: 'http://127.0.0.1:1/callback',
    authorize: () => Promise.reject(new Error('not asked')),
    start: async () => void events.push('start'),
    close: async () => void events.push('close'),
  } satisfies TerminalSignInPrompt;
  return { prompt, events };
}

describe('the prompt around a sign-in', () => {
  it('listens while a sign-in may need it, and closes after the last of overlapping ones, also on failure', async () => {
    const { prompt, events } = countingPrompt();
    const asking = withPrompt(prompt);
    let release = (): void => undefined;
    const first = asking(() => new Promise<string>((r) => (release = () => r('first'))));
    await expect(asking(() => Promise.reject(new Error('second failed')))).rejects.toThrow('second failed');
    expect(events).toEqual(['start', 'start']);
    release();
    expect(await first).toBe('first');
    expect(events).toEqual(['start', 'start', 'close']);
  });

  it('runs without a prompt as it is', async () => {
    expect(await withPrompt(undefined)(() => Promise.resolve(7))).toBe(7);
  });
});

describe('a sign-in as --output json shows it', () => {
  it('leaves out every token and the client secret', () => {
    const record: SignInRecord = {
      resource: 'https://mcp.example/mcp',
      issuer: 'https://as.example',
      client: {
        clientId: 'c1',
        clientSecret: 'sekret',
        authMethod: 'client_secret_basic',
        registeredBy: 'pre-registered',
      },
      tokens: {
        accessToken: 'at-123',
        refreshToken: 'rt-456',
        tokenType: 'Bearer',
        expiresAt: 0,
        scope: 'mcp',
      },
      updatedAt: '2026-12-06T00:00:00.000Z',
    };
    const shown = publicRecord(record);
    expect(JSON.stringify(shown)).not.toMatch(/sekret|at-123|rt-456/);
    expect(shown).toEqual({
      resource: 'https://mcp.example/mcp',
      issuer: 'https://as.example',
      client: { clientId: 'c1', authMethod: 'client_secret_basic', registeredBy: 'pre-registered' },
      scope: 'mcp',
      expiresAt: '1970-01-01T00:00:00.000Z',
      refreshable: true,
      updatedAt: '2026-12-06T00:00:00.000Z',
    });
  });
});
