// Answers against their questions: the restricted form subset, URL mode, sampling, roots and placeholders.
import { describe, expect, it } from 'vitest';
import { answerRefused, checkAnswer, checkAnswers, placeholder } from './input-answers.js';
import { checkInputRequests } from './input-requests.js';
import type { InputRequest } from './types.js';

const form = (properties: Record<string, unknown>, required: string[] = []): InputRequest => ({
  method: 'elicitation/create',
  params: { message: 'Fill in', requestedSchema: { type: 'object', properties, required } },
});
const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });

describe('checkAnswer', () => {
  const order = form(
    {
      approved: { type: 'boolean' },
      size: { type: 'string', enum: ['S', 'M'] },
      colour: {
        type: 'string',
        oneOf: [
          { const: 'r', title: 'Red' },
          { const: 'g', title: 'Green' },
        ],
      },
      count: { type: 'integer', minimum: 1, maximum: 5 },
      ratio: { type: 'number' },
      name: { type: 'string', minLength: 2, maxLength: 4 },
      mail: { type: 'string', format: 'email' },
      day: { type: 'string', format: 'date' },
      at: { type: 'string', format: 'date-time' },
      site: { type: 'string', format: 'uri' },
      picks: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, minItems: 1, maxItems: 2 },
    },
    ['approved'],
  );

  it('accepts a form answered as asked, and a decline or cancel without content', () => {
    const full = {
      approved: true,
      size: 'M',
      colour: 'g',
      count: 5,
      ratio: 0.5,
      name: 'Ada',
      mail: 'ada@example.com',
      day: '2026-02-28',
      at: '2026-02-28T10:00:00Z',
      site: 'https://example.com/x',
      picks: ['b', 'a'],
    };
    expect(checkAnswer(order, accept(full))).toEqual({ ok: true });
    expect(checkAnswer(order, accept({ approved: false }))).toEqual({ ok: true });
    // A field the form did not ask (a client's generic answer) is let through.
    expect(checkAnswer(order, accept({ approved: false, name2: 'x' }))).toEqual({ ok: true });
    expect(checkAnswer(order, { action: 'decline' })).toEqual({ ok: true });
    expect(checkAnswer(order, { action: 'cancel', content: {} })).toEqual({ ok: true });
  });

  it.each([
    [{ approved: 'yes' }, 'content.approved', 'expected true or false, got "yes"'],
    [{}, 'content.approved', 'required, but missing'],
    [{ approved: true, size: 'XL' }, 'content.size', 'expected one of "S", "M", got "XL"'],
    [{ approved: true, colour: 'Red' }, 'content.colour', 'expected one of "r", "g", got "Red"'],
    [{ approved: true, count: 2.5 }, 'content.count', 'expected an integer, got 2.5'],
    [{ approved: true, count: 9 }, 'content.count', 'expected at most 5, got 9'],
    [{ approved: true, ratio: '1' }, 'content.ratio', 'expected a number, got "1"'],
    [{ approved: true, name: 'A' }, 'content.name', 'expected at least 2 characters'],
    [{ approved: true, name: 'Adalind' }, 'content.name', 'expected at most 4 characters'],
    [{ approved: true, mail: 'ada' }, 'content.mail', 'expected an email address'],
    [{ approved: true, day: '2026-02-30' }, 'content.day', 'expected a date (YYYY-MM-DD)'],
    [{ approved: true, at: 'tomorrow' }, 'content.at', 'expected a date and time (RFC 3339)'],
    [{ approved: true, site: 'not a uri' }, 'content.site', 'expected a URI'],
    [{ approved: true, picks: ['c'] }, 'content.picks', 'expected only "a", "b", got "c"'],
    [{ approved: true, picks: [] }, 'content.picks', 'expected at least 1 choices'],
    [{ approved: true, picks: ['a', 'a'] }, 'content.picks', 'expected each choice at most once'],
    [
      { approved: true, extra: { x: 1 } },
      'content.extra',
      'expected a string, number, boolean or list of strings, got {"x":1}',
    ],
  ])('refuses the form content %j at %s', (content, field, reason) => {
    expect(checkAnswer(order, accept(content))).toEqual({ ok: false, field, reason });
  });

  it('refuses an action outside the three, and content with a decline', () => {
    expect(checkAnswer(order, { action: 'yes' })).toMatchObject({ ok: false, field: 'action' });
    expect(checkAnswer(order, { action: 'decline', content: { approved: true } })).toMatchObject({
      ok: false,
      field: 'content',
    });
    expect(checkAnswer(order, 'accept')).toMatchObject({ ok: false, field: '' });
  });

  it('takes only an action for a URL-mode request', () => {
    const login: InputRequest = {
      method: 'elicitation/create',
      params: { mode: 'url', message: 'Sign in', url: 'https://example.com/login' },
    };
    expect(checkAnswer(login, { action: 'accept' })).toEqual({ ok: true });
    expect(checkAnswer(login, { action: 'accept', content: { token: 'x' } })).toMatchObject({
      ok: false,
      field: 'content',
      reason: 'a URL-mode answer carries no content',
    });
    expect(checkAnswer(login, { action: true })).toMatchObject({ ok: false, field: 'action' });
  });

  it('checks sampling and roots answers against their result schemas', () => {
    const sampling: InputRequest = {
      method: 'sampling/createMessage',
      params: { messages: [], maxTokens: 10 },
    };
    const completion = { role: 'assistant', content: { type: 'text', text: 'Hi' }, model: 'm' };
    expect(checkAnswer(sampling, completion)).toEqual({ ok: true });
    expect(checkAnswer(sampling, { ...completion, model: 3 })).toMatchObject({ ok: false, field: 'model' });
    expect(checkAnswer(sampling, { action: 'accept' })).toMatchObject({ ok: false });
    const roots: InputRequest = { method: 'roots/list' };
    expect(checkAnswer(roots, { roots: [{ uri: 'file:///home/ada', name: 'home' }] })).toEqual({ ok: true });
    expect(checkAnswer(roots, { roots: [] })).toEqual({ ok: true });
    expect(checkAnswer(roots, { roots: [{ uri: 'https://example.com' }] })).toEqual({
      ok: false,
      field: 'roots[0].uri',
      reason: 'expected a file:// URI',
    });
    expect(checkAnswer(roots, { roots: 'all' })).toMatchObject({ ok: false, field: 'roots' });
  });

  it('refuses a placeholder wherever it stands, whatever the field admits', () => {
    const text = form({ note: { type: 'string' } });
    expect(checkAnswer(text, accept({ note: placeholder('the note') }))).toEqual({
      ok: false,
      field: 'content.note',
      reason: 'a placeholder, not an answer',
      placeholder: true,
    });
    expect(checkAnswer(text, { action: placeholder('the choice') })).toMatchObject({
      field: 'action',
      placeholder: true,
    });
    expect(checkAnswer({ method: 'roots/list' }, { roots: [placeholder('a root')] })).toMatchObject({
      field: 'roots[0]',
      placeholder: true,
    });
  });
});

describe('checkAnswers and answerRefused', () => {
  it('names the key, the field and the reason, and skips keys not asked', () => {
    const requests = { ok: form({ a: { type: 'boolean' } }), bad: form({ n: { type: 'integer' } }) };
    const check = checkAnswers(requests, {
      stray: { anything: 1 },
      ok: accept({ a: true }),
      bad: accept({ n: 'two' }),
    });
    expect(check).toEqual({
      ok: false,
      key: 'bad',
      field: 'content.n',
      reason: 'expected an integer, got "two"',
    });
    if (check.ok) return;
    const err = answerRefused(check.key, check);
    expect(err.code).toBe(-32602);
    expect(err.message).toBe('Invalid params: answer to "bad": content.n: expected an integer, got "two".');
    expect(err.data).toEqual({
      inputKey: 'bad',
      field: 'content.n',
      reason: 'expected an integer, got "two"',
    });
    const asked = answerRefused('k', {
      field: 'action',
      reason: 'a placeholder, not an answer',
      placeholder: true,
    });
    expect(asked.message).toContain('Ask the user, then send their answer in its place');
  });
});

describe('checkInputRequests (forms)', () => {
  it('refuses a form field outside the spec subset, naming it', () => {
    expect(() => checkInputRequests({ f: form({ where: { type: 'object', properties: {} } }) })).toThrow(
      /input request "f" \(elicitation\/create\): params\.requestedSchema\.properties\.where: a form field must be/,
    );
    expect(() =>
      checkInputRequests({
        f: { method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'array' } } },
      }),
    ).toThrow(/params\.requestedSchema: must be \{"type":"object","properties"/);
    // A bare confirmation asks no field.
    const confirm = {
      method: 'elicitation/create',
      params: { message: 'Go?', requestedSchema: {} },
    } as const;
    expect(() => checkInputRequests({ f: confirm })).not.toThrow();
    expect(() => checkInputRequests({ f: form({ ok: { type: 'string', format: 'email' } }) })).not.toThrow();
  });
});
