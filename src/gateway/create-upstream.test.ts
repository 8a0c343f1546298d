import { describe, expect, it } from 'vitest';
import { perPrincipalSessions, pooled } from './create-upstream.js';
import type { Upstream } from './upstream.js';

/**
 * Upstreams that answer with their own number, and record which were closed; a task is followed until `finish` is
 * called, and ends with the number of the upstream that followed it.
 */
function factory() {
  const made: number[] = [];
  const closed: number[] = [];
  const following: (() => void)[] = [];
  const open = (): Upstream => {
    const n = made.length;
    made.push(n);
    return {
      name: 'fake',
      ready: async () => undefined,
      listTools: async () => [],
      callTool: async () => ({ content: [{ type: 'text', text: String(n) }] }),
      followTask: () =>
        new Promise((resolve) =>
          following.push(() => resolve({ status: 'completed', result: { followedBy: n } })),
        ),
      onToolsChanged: () => undefined,
      close: async () => {
        closed.push(n);
      },
    };
  };
  const finish = (): void => following.splice(0).forEach((end) => end());
  return { open, made, closed, finish };
}

const owner = (principal: string) => ({ tenant: 'x', principal });

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

describe('perPrincipalSessions following upstream tasks', () => {
  it("follows a task on its owner's session, which is not closed while it is followed", async () => {
    const f = factory();
    const upstream = perPrincipalSessions(f.open, 1);
    expect(await answerOf(upstream, 'alice')).toBe('1');
    const followed = upstream.followTask?.('t1', { owner: owner('alice'), onInput: () => ({}) });
    await new Promise((resolve) => setTimeout(resolve, 0));
    // Past the bound, but alice's session has a task followed on it: it stays open.
    expect(await answerOf(upstream, 'bob')).toBe('2');
    expect(f.closed).toEqual([]);
    f.finish();
    expect(await followed).toEqual({ status: 'completed', result: { followedBy: 1 } });
    expect(await answerOf(upstream, 'carol')).toBe('3');
    expect(f.closed).toEqual([1]);
  });
});

describe('pooled', () => {
  it('follows a task none of its calls answered with (one from before a restart) through its first member', async () => {
    const f = factory();
    const upstream = pooled(2, f.open);
    const followed = upstream.followTask?.('t1', { onInput: () => ({}) });
    await new Promise((resolve) => setTimeout(resolve, 0));
    f.finish();
    expect(await followed).toEqual({ status: 'completed', result: { followedBy: 0 } });
  });

  it('follows a task on the member whose call answered with it', async () => {
    const f = factory();
    const members: Upstream[] = [];
    const upstream = pooled(2, () => {
      const member = f.open();
      const n = members.length;
      members.push(member);
      return {
        ...member,
        callTool: async () => ({ resultType: 'task', taskId: `t${n}`, status: 'working' }),
      };
    });
    // Two calls out at once: one on each member, each answered with a task of that member's.
    const answers = await Promise.all([upstream.callTool('t', {}), upstream.callTool('t', {})]);
    expect(answers.map((a) => (a as { taskId: string }).taskId).sort()).toEqual(['t0', 't1']);
    const followed = upstream.followTask?.('t1', { onInput: () => ({}) });
    await new Promise((resolve) => setTimeout(resolve, 0));
    f.finish();
    expect(await followed).toEqual({ status: 'completed', result: { followedBy: 1 } });
  });

  it('sends each call to the member with the fewest calls out', async () => {
    const f = factory();
    const upstream = pooled(2, f.open);
    const answers = await Promise.all([answerOf(upstream), answerOf(upstream)]);
    expect(answers.sort()).toEqual(['0', '1']);
  });
});
