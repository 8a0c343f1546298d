import { describe, expect, it } from 'vitest';
import { parseBulkQuery, parseOverviewQuery, parseTaskQuery, parseTime } from './query.js';

const q = (text: string) => parseTaskQuery(new URLSearchParams(text));

describe('the query of a task search', () => {
  it('defaults to 50 newest-first rows and reads every filter', () => {
    expect(q('')).toEqual({ ok: true, value: { limit: 50 } });
    expect(
      q(
        'tenant=A&principal=p&tool=t&toolVersion=2&status=failed,working,failed&outcome=tool_error,failed' +
          '&hasError=true&errorText=boom&errorOutcome=unknown' +
          '&createdFrom=2026-01-01T00:00:00Z&createdTo=1000&updatedFrom=2026-01-01&sort=updated&order=asc&limit=500&cursor=c',
      ),
    ).toEqual({
      ok: true,
      value: {
        tenant: 'A',
        principal: 'p',
        tool: 't',
        toolVersion: '2',
        status: ['failed', 'working'],
        outcome: ['tool_error', 'failed'],
        hasError: true,
        errorText: 'boom',
        errorOutcome: 'unknown',
        createdFrom: Date.parse('2026-01-01T00:00:00Z'),
        createdTo: 1000,
        updatedFrom: Date.parse('2026-01-01'),
        sort: 'updated',
        order: 'asc',
        limit: 500,
        cursor: 'c',
      },
    });
  });

  it('refuses unknown, repeated and malformed parameters with a reason', () => {
    for (const text of [
      'limit=0',
      'limit=501',
      'limit=1.5',
      'status=',
      'status=done',
      'outcome=',
      'outcome=tool_error,crashed',
      'outcome=working',
      'hasError=1',
      'sort=id',
      'order=DESC',
      'createdTo=tomorrow',
      'updatedFrom=2026-13-45',
      'tenant=',
      'nope=1',
      'tool=a&tool=b',
      'errorOutcome=',
      'errorOutcome=Unknown',
      'errorOutcome=not%20sent',
      `errorOutcome=${'x'.repeat(33)}`,
    ]) {
      const parsed = q(text);
      expect(parsed.ok, text).toBe(false);
      if (!parsed.ok) expect(parsed.reason, text).not.toBe('');
    }
  });

  it('reads times as ms or ISO 8601 with an offset', () => {
    expect(parseTime('0')).toBe(0);
    expect(parseTime('2026-12-04T08:00:00+01:00')).toBe(Date.parse('2026-12-04T07:00:00Z'));
    expect(parseTime('-5')).toBeUndefined();
    expect(parseTime('Dec 4 2026')).toBeUndefined();
  });
});

describe('the query of a bulk change', () => {
  const parse = (query: string) => parseBulkQuery(new URLSearchParams(query));

  it('takes the filters of a search and dryRun, nothing of its order or page', () => {
    expect(parse('tool=t&status=failed,cancelled&hasError=true&dryRun=true')).toEqual({
      ok: true,
      value: { filter: { tool: 't', status: ['failed', 'cancelled'], hasError: true }, dryRun: true },
    });
    expect(parse('')).toEqual({ ok: true, value: { filter: {}, dryRun: false } });
    expect(parse('dryRun=false&tenant=A')).toEqual({
      ok: true,
      value: { filter: { tenant: 'A' }, dryRun: false },
    });
    for (const bad of [
      'limit=5',
      'sort=created',
      'order=asc',
      'cursor=x',
      'dryRun=1',
      'dryRun=true&dryRun=true',
    ])
      expect(parse(bad).ok, bad).toBe(false);
    expect(parse('colour=blue')).toEqual({ ok: false, reason: 'unknown parameter "colour"' });
  });
});

describe('the query of the overview', () => {
  const o = (text: string) => parseOverviewQuery(new URLSearchParams(text));
  it('defaults to windows of 1 h and 24 h and 15 min for stuck tasks', () => {
    expect(o('')).toEqual({ ok: true, value: { windowsMs: [3_600_000, 86_400_000], stuckMs: 900_000 } });
    expect(o('windows=60000&stuckMs=5')).toEqual({ ok: true, value: { windowsMs: [60_000], stuckMs: 5 } });
  });
  it('refuses windows and stuckMs that are not positive integers', () => {
    for (const text of [
      'windows=',
      'windows=0',
      'windows=1,x',
      `windows=${'1,'.repeat(10)}1`,
      'stuckMs=0',
      'x=1',
    ])
      expect(o(text).ok, text).toBe(false);
  });
});
