import { afterEach, describe, expect, it, vi } from 'vitest';
import { OAuthFlowError, SignInRequiredError } from '../client/oauth/types.js';
import { EXIT } from './client-flags.js';
import { reportError } from './follow.js';

let printed: string[] = [];

function report(err: unknown, url?: string): number {
  printed = [];
  vi.spyOn(console, 'error').mockImplementation((line: string) => void printed.push(line));
  return reportError(err, url);
}

afterEach(() => vi.restoreAllMocks());

describe('the exit code of a sign-in error', () => {
  it('is 4 when a sign-in is needed and nobody can be asked, naming the login command for the URL given', () => {
    const url = 'https://mcp.example/mcp';
    expect(report(new SignInRequiredError('https://mcp.example/'), url)).toBe(EXIT.inputNeeded);
    expect(printed).toEqual([`sign-in needed for ${url}: run "durable-mcp login --url ${url}"`]);
  });

  it('is 4 also when the transport wrapped it, and names the resource without a URL', () => {
    const wrapped = new Error('request failed', {
      cause: new SignInRequiredError('https://mcp.example/mcp'),
    });
    expect(report(wrapped)).toBe(EXIT.inputNeeded);
    expect(printed[0]).toMatch(/^sign-in needed for https:\/\/mcp\.example\/mcp: run "durable-mcp login/);
  });

  it('is 3 when the sign-in failed, with its message on one line', () => {
    expect(report(new OAuthFlowError('invalid_grant: the grant\nexpired', 'invalid_grant'))).toBe(
      EXIT.serverError,
    );
    expect(printed).toEqual(['sign-in failed: invalid_grant: the grant\\nexpired']);
  });

  it('says how to sign in with a client registered by hand when the server registers none', () => {
    const err = new OAuthFlowError(
      'the authorization server https://as.example offers no client registration: …',
    );
    expect(report(err, 'https://mcp.example/mcp')).toBe(EXIT.serverError);
    expect(printed[1]).toMatch(
      /^register a client with it, then run: durable-mcp login --url https:\/\/mcp\.example\/mcp --client-id ID/,
    );
  });

  it('says how to sign in with a client registered by hand when the server registers none', () => {
    const err = new OAuthFlowError(
      'the authorization server https://as.example offers no client registration: …',
    );
    expect(report(err, 'https://mcp.example/mcp')).toBe(EXIT.serverError);
    expect(printed[1]).toMatch(
      /^register a client with it, then run: durable-mcp login --url https:\/\/mcp\.example\/mcp --client-id ID/,
    );
  });
});
