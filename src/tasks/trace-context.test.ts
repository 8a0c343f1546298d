// The W3C trace context a task keeps: a traceparent checked strictly (version 00, non-zero ids), a bad tracestate left out.
import { describe, expect, it } from 'vitest';
import { TRACE_STATE_MAX, traceContextOfMeta, traceIdOf, toTraceContext } from './trace-context.js';

const TRACE_PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('trace contexts', () => {
  it('reads a valid traceparent and tracestate from _meta', () => {
    expect(
      traceContextOfMeta({ traceparent: TRACE_PARENT, tracestate: 'rojo=00f067aa0ba902b7, congo=t61' }),
    ).toEqual({
      traceParent: TRACE_PARENT,
      traceState: 'rojo=00f067aa0ba902b7, congo=t61',
    });
    expect(traceIdOf(TRACE_PARENT)).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
  });

  it.each([
    ['no traceparent', {}],
    ['a traceparent of another version', { traceparent: TRACE_PARENT.replace(/^00/, '01') }],
    ['a short trace id', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01' }],
    ['a zero trace id', { traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` }],
    ['a zero parent id', { traceparent: `00-4bf92f3577b34da6a3ce929d0e0e4736-${'0'.repeat(16)}-01` }],
    ['white space', { traceparent: ` ${TRACE_PARENT}` }],
    ['a line break', { traceparent: `${TRACE_PARENT}\n` }],
    ['an array', { traceparent: [TRACE_PARENT] }],
  ])('ignores %s', (_why, meta) => {
    expect(traceContextOfMeta(meta)).toBeUndefined();
  });

  it('ignores _meta that is no object', () => {
    expect(traceContextOfMeta(undefined)).toBeUndefined();
    expect(traceContextOfMeta(TRACE_PARENT)).toBeUndefined();
  });

  it.each([
    ['too long', `a=${'b'.repeat(TRACE_STATE_MAX)}`],
    ['a control character', 'rojo=00f067aa\u0007'],
    ['a member without a value', 'rojo'],
    ['an upper-case key', 'Rojo=1'],
    ['an equals sign in a value', 'rojo=a=b'],
    ['33 members', Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',')],
    ['a number', 7],
  ])('keeps the traceparent but leaves out a tracestate with %s', (_why, state) => {
    expect(toTraceContext(TRACE_PARENT, state)).toEqual({ traceParent: TRACE_PARENT });
  });
});
