import { describe, expect, it } from 'vitest';
import { missingCapabilityFor } from './mrtr.js';

const elicit = (mode?: string) => ({
  method: 'elicitation/create' as const,
  params:
    mode === undefined ? { message: 'm', requestedSchema: {} } : { mode, message: 'm', url: 'https://x' },
});

describe('missingCapabilityFor', () => {
  it('needs the declared capability for each input request type', () => {
    expect(missingCapabilityFor(elicit(), {})).toEqual({ elicitation: {} });
    expect(missingCapabilityFor(elicit(), { elicitation: {} })).toBeUndefined();
    expect(missingCapabilityFor(elicit(), { elicitation: { url: {} } })).toEqual({
      elicitation: { form: {} },
    });
    expect(missingCapabilityFor(elicit('url'), { elicitation: {} })).toEqual({ elicitation: { url: {} } });
    expect(missingCapabilityFor(elicit('url'), { elicitation: { url: {} } })).toBeUndefined();
    expect(missingCapabilityFor({ method: 'sampling/createMessage', params: {} }, {})).toEqual({
      sampling: {},
    });
    expect(missingCapabilityFor({ method: 'roots/list' }, { roots: {} })).toBeUndefined();
  });
});
