// The priority a new task takes: the caller's, the policy's number, or the policy's function checked.
import { describe, expect, it } from 'vitest';
import { priorityOf, priorityProblem } from './priority.js';

describe('priorityOf', () => {
  const call = { args: { urgent: true }, owner: 'alice' };
  it("takes the caller's, else the policy's number or computed value", () => {
    expect(priorityOf('t', 5, call, -3)).toBe(-3);
    expect(priorityOf('t', 5, call)).toBe(5);
    expect(priorityOf('t', undefined, call)).toBeUndefined();
    expect(priorityOf('t', (a: { urgent: boolean }) => (a.urgent ? 9 : 0), call)).toBe(9);
  });
  it('refuses a computed priority out of range, naming the tool', () => {
    expect(() => priorityOf('report', () => 500, call)).toThrow(
      'tool "report": task.priority: the computed priority must be a whole number from -100 to 100',
    );
    expect(priorityProblem(Number.NaN)).toBeDefined();
    expect(priorityProblem(-100)).toBeUndefined();
  });
});
