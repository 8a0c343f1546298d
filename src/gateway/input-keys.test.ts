import { describe, expect, it } from 'vitest';
import type { HandlerContext } from '../protocol/tool-types.js';
import type { InputRequest, InputRequests, InputResponses } from '../protocol/types.js';
import { createInputKeys } from './input-keys.js';

const ask = (message: string): InputRequest => ({
  method: 'elicitation/create',
  params: { message, requestedSchema: { type: 'object', properties: {} } },
});

/** A context whose caller answered `answers` (by the gateway's keys); it records what each round asked. */
function caller(answers: InputResponses) {
  const asked: InputRequests[] = [];
  const ctx = {
    inputs(requests: InputRequests): InputResponses {
      asked.push(requests);
      const found: InputResponses = {};
      for (const key of Object.keys(requests)) {
        const answer = answers[key];
        if (answer === undefined) throw new Error(`not answered: ${key}`);
        found[key] = answer;
      }
      return found;
    },
  } as unknown as HandlerContext;
  return { ctx, asked };
}

describe('the keys of upstream input as the gateway task asks them', () => {
  it('keeps a key an earlier round did not use, renames one it did, and answers under the upstream keys', () => {
    const { ctx, asked } = caller({
      confirm: { action: 'accept' },
      'confirm#2': { action: 'decline' },
      name: { action: 'accept', content: { name: 'x' } },
    });
    const keys = createInputKeys();
    expect(keys.phase().answer(ctx, { confirm: ask('first') })).toEqual({ confirm: { action: 'accept' } });
    // The next round asks "confirm" again (the upstream's key spaces are its own): a new key for the gateway task.
    const again = keys.phase();
    expect(again.answer(ctx, { confirm: ask('again'), name: ask('name') })).toEqual({
      confirm: { action: 'decline' },
      name: { action: 'accept', content: { name: 'x' } },
    });
    expect(asked.map((round) => Object.keys(round))).toEqual([['confirm'], ['confirm#2', 'name']]);
    expect(asked[1]?.['confirm#2']).toEqual(ask('again'));
    // Within one round a key asked again (an upstream task polled twice) keeps its name.
    again.answer(ctx, { confirm: ask('again') });
    expect(Object.keys(asked[2] ?? {})).toEqual(['confirm#2']);
  });

  it('never gives two upstream keys of one round the same name', () => {
    const { ctx, asked } = caller({
      a: { action: 'accept' },
      'a#2': { action: 'accept' },
      'a#3': { action: 'accept' },
    });
    const keys = createInputKeys();
    keys.phase().answer(ctx, { a: ask('1') });
    // "a#2" is the upstream's own key here; the renamed "a" must take another name.
    keys.phase().answer(ctx, { 'a#2': ask('own'), a: ask('renamed') });
    expect(Object.keys(asked[1] ?? {}).sort()).toEqual(['a#2', 'a#3']);
  });

  it('refuses, as the upstream’s fault, a request the gateway cannot ask', () => {
    const ctx = {
      inputs() {
        throw new TypeError('input request "x": method must be elicitation/create, …');
      },
    } as unknown as HandlerContext;
    expect(() =>
      createInputKeys()
        .phase()
        .answer(ctx, { x: ask('bad') }),
    ).toThrow(/the upstream asked for input the gateway cannot pass on/);
  });
});
