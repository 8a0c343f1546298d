// Text shown on a terminal: control characters, C1 controls and bidi overrides escaped, JSON kept the same value.
import { describe, expect, it } from 'vitest';
import { oneLine, terminalJson, terminalLine, terminalSafe } from './terminal-text.js';

const HOSTILE =
  '\u001b[2J\u001b]0;title\u0007\u001b]52;c;b3duZWQ=\u0007\u009b31m\u202eevil\u2066x\u2069\u007f';
const ESCAPED =
  '\\u001b[2J\\u001b]0;title\\u0007\\u001b]52;c;b3duZWQ=\\u0007\\u009b31m\\u202eevil\\u2066x\\u2069\\u007f';
/** Any character that a terminal obeys or that reorders the text, but tab and newline. */
const OBEYED =
  // eslint-disable-next-line no-control-regex -- the characters looked for
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('terminal text', () => {
  it('shows escape sequences, C1 controls, bidi overrides and separators as escapes; a block keeps its lines', () => {
    expect(terminalSafe(`${HOSTILE}\r\nnext\tcell\u2028`)).toBe(`${ESCAPED}\\r\nnext\tcell\\u2028`);
    expect(terminalSafe('\u001b')).toBe('\\u001b');
    for (let c = 0; c < 0x3000; c++) {
      const ch = String.fromCharCode(c);
      if (ch !== '\t' && ch !== '\n') expect(terminalSafe(ch)).not.toMatch(OBEYED);
    }
    expect(terminalSafe('plain text, “quoted”, 日本語 — ok')).toBe('plain text, “quoted”, 日本語 — ok');
  });

  it('keeps a field on one line, and escaping twice changes nothing', () => {
    expect(terminalLine(`a\nb\tc${HOSTILE}`)).toBe(`a\\nb\\tc${ESCAPED}`);
    expect(terminalLine(terminalLine(HOSTILE))).toBe(terminalLine(HOSTILE));
    expect(oneLine`${'t_1'}: ${'working'} — ${`done\nt_2: completed${HOSTILE}`}`).toBe(
      `t_1: working — done\\nt_2: completed${ESCAPED}`,
    );
    expect(oneLine`runs ${3}, ${undefined}`).toBe('runs 3, undefined');
  });

  it('prints JSON that parses to the same value without a character a terminal obeys', () => {
    const value = { text: `${HOSTILE}\n\u2028\u2029\u0085`, [HOSTILE]: [1, null, 'é'] };
    for (const indent of [undefined, 2]) {
      const json = terminalJson(value, indent);
      expect(json).not.toMatch(OBEYED);
      expect(JSON.parse(json)).toEqual(value);
    }
    expect(terminalJson(undefined)).toBe('null');
  });
});
