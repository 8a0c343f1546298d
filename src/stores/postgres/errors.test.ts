// Driver errors → StoreUnavailableError: readable reasons, no pg objects, set-up problems keep the server's words.
import { describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../tasks/errors.js';
import { isDataError, translate } from './errors.js';

const serverError = (code: string, message = 'server says no') =>
  Object.assign(new Error(message), { code, severity: 'ERROR', detail: 'Key (id)=(secret) already exists.' });

describe('PostgreSQL error translation', () => {
  it('names network failures, including a dual-stack AggregateError', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
      code: 'ECONNREFUSED',
      address: '127.0.0.1',
      port: 1,
    });
    expect(translate(refused).reason).toBe('connection refused (127.0.0.1:1)');
    const both = Object.assign(new AggregateError([refused, refused]), { code: 'ECONNREFUSED' });
    expect(translate(both).reason).toBe('connection refused (127.0.0.1:1)');
    expect(translate(new Error('Connection terminated unexpectedly')).reason).toBe('connection lost');
    expect(translate(new Error('timeout expired')).reason).toBe('connection or query timed out');
  });

  it('names server errors by SQLSTATE without their data', () => {
    const timeout = translate(serverError('57014', 'canceling statement due to statement timeout'));
    expect(timeout).toBeInstanceOf(StoreUnavailableError);
    expect(timeout.reason).toBe('statement timeout (SQLSTATE 57014)');
    const duplicate = translate(serverError('23505'));
    expect(duplicate.reason).toBe('duplicate key (SQLSTATE 23505)');
    expect(duplicate.message).not.toContain('secret');
    expect(translate(serverError('53100')).reason).toBe('disk full (SQLSTATE 53100)');
    expect(translate(serverError('08006')).reason).toBe('connection failure (SQLSTATE 08006)');
    expect(translate(serverError('42501', 'permission denied for schema x')).reason).toBe(
      'permission denied (SQLSTATE 42501): permission denied for schema x',
    );
  });

  it('tells a server that does not answer (or cannot serve yet) from one that refuses', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    const lookup = Object.assign(new Error('getaddrinfo ENOTFOUND db'), { code: 'ENOTFOUND' });
    for (const err of [
      refused,
      lookup,
      new Error('Connection terminated due to connection timeout'),
      new Error('Connection terminated unexpectedly'),
      serverError('57P03', 'the database system is starting up'),
      serverError('53300', 'sorry, too many clients already'),
      serverError('08006'),
    ])
      expect(translate(err).unreachable).toBe(true);
    for (const err of [
      serverError('28P01', 'password authentication failed for user "x"'),
      serverError('3D000', 'database "none" does not exist'),
      serverError('42501', 'permission denied for schema x'),
      serverError('42P01', 'relation "x.tasks" does not exist'),
      new Error('self-signed certificate'),
    ])
      expect(translate(err).unreachable).toBe(false);
    expect(new StoreUnavailableError('store is closed').unreachable).toBe(false);
  });

  it('keeps a StoreUnavailableError as it is, and tells data errors from the others', () => {
    const err = new StoreUnavailableError('store is closed');
    expect(translate(err)).toBe(err);
    expect(isDataError(serverError('23505'))).toBe(true);
    expect(isDataError(serverError('22P02'))).toBe(true);
    expect(isDataError(serverError('57P01'))).toBe(false);
    expect(isDataError(new Error('Connection terminated'))).toBe(false);
  });
});
