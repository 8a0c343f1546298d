import { describe, expect, it } from 'vitest';
import { CORE_METHODS, TASK_METHODS } from './methods.js';
import { METHOD_TRAITS, methodsWhere, traitsOf } from './method-traits.js';

// The sets each reader used to spell out on its own, written out again as the oracle of the table.
const sorted = (list: readonly string[]): string[] => [...list].sort();

describe('method traits', () => {
  it('cover every method served, and ping', () => {
    expect(sorted(Object.keys(METHOD_TRAITS))).toEqual(sorted([...CORE_METHODS, ...TASK_METHODS, 'ping']));
  });

  it('name the field Mcp-Name mirrors for the named methods only', () => {
    const named = Object.fromEntries(
      methodsWhere((t) => t.nameField !== undefined).map((m) => [m, traitsOf(m)?.nameField]),
    );
    expect(named).toEqual({
      'tools/call': 'name',
      'prompts/get': 'name',
      'resources/read': 'uri',
      'tasks/get': 'taskId',
      'tasks/update': 'taskId',
      'tasks/cancel': 'taskId',
    });
  });

  it('mirror x-mcp-header arguments on tools/call only', () => {
    expect(methodsWhere((t) => t.paramHeaders === true)).toEqual(['tools/call']);
  });

  it('give the client the same safe-to-repeat set', () => {
    expect(sorted(methodsWhere((t) => t.repeat === 'always'))).toEqual(
      sorted([
        'tasks/get',
        'tasks/cancel',
        'tasks/update',
        'server/discover',
        'tools/list',
        'prompts/list',
        'prompts/get',
        'resources/list',
        'resources/templates/list',
        'resources/read',
        'completion/complete',
        'subscriptions/listen',
        'ping',
      ]),
    );
    expect(methodsWhere((t) => t.repeat === 'keyed')).toEqual(['tools/call']);
    expect(methodsWhere((t) => t.repeat === 'never')).toEqual([]);
  });

  it('make tools/call rounds alone one-time', () => {
    expect(methodsWhere((t) => t.oneTime === true)).toEqual(['tools/call']);
  });

  it('gate prompts, resources and completion methods by their capability', () => {
    const gated = Object.fromEntries(
      methodsWhere((t) => t.capability !== undefined).map((m) => [m, traitsOf(m)?.capability]),
    );
    expect(gated).toEqual({
      'prompts/list': 'prompts',
      'prompts/get': 'prompts',
      'resources/list': 'resources',
      'resources/templates/list': 'resources',
      'resources/read': 'resources',
      'completion/complete': 'completions',
    });
  });

  it('know nothing of other names, inherited ones included', () => {
    expect(traitsOf('custom/write')).toBeUndefined();
    expect(traitsOf('constructor')).toBeUndefined();
    expect(traitsOf('__proto__')).toBeUndefined();
  });
});
