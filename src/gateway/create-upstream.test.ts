import { describe, expect, it } from 'vitest';
import { perPrincipalSessions, pooled } from './create-upstream.js';
import type { Upstream } from './upstream.js';

/** Upstreams that answer with their own number, and record which were closed. */
function factory() {
  const made: number[] = [];
  const closed: number[] = [];
  const open = (): Upstream => {
    const n = made.length;
    made.push(n);
    return {
      name: 'fake',
      ready: async () => undefined,
      listTools: async () => [],
      callTool: async () => ({ content: [{ type: 'text', text: String(n) }] }),
      onToolsChanged: () => undefined,
      close: async () => {
        closed.push(n);
      },
    };
  };
  return { open, made, closed };
}

const answerOf = async (upstream: Upstream, principal?: string): Promise<string> => {
  const answer = (await upstream.callTool(
    't',
    {},
    principal === undefined ? {} : { owner: { tenant: 'x', principal } },
  )) as {
    content: { text: string }[];
  };
  return answer.content[0]?.text ?? '';
};

describe('perPrincipalSessions', () => {
  it("sends each principal's calls on a session of their own, and closes the least recently used past the bound", async () => {
    const f = factory();
    const upstream = perPrincipalSessions(f.open, 2);
    expect(f.made).toEqual([0]); // the gateway's own session, for the tool list
    expect(await answerOf(upstream, 'alice')).toBe('1');
    expect(await answerOf(upstream, 'bob')).toBe('2');
    expect(await answerOf(upstream, 'alice')).toBe('1');
    expect(await answerOf(upstream)).toBe('0');
    // A third principal: bob's session (used least recently) is closed.
    expect(await answerOf(upstream, 'carol')).toBe('3');
    expect(f.closed).toEqual([2]);
    expect(await answerOf(upstream, 'bob')).toBe('4');
    expect(f.closed).toEqual([2, 1]);
    await upstream.close();
    expect(f.closed.sort()).toEqual([0, 1, 2, 3, 4]);
  });
});

describe('pooled', () => {
  it('sends each call to the member with the fewest calls out', async () => {
    const f = factory();
    const upstream = pooled(2, f.open);
    const answers = await Promise.all([answerOf(upstream), answerOf(upstream)]);
    expect(answers.sort()).toEqual(['0', '1']);
  });
});
