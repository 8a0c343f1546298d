// What the CLI prints for people, and the one way it prints: text that others supplied (a server, a tenant, a tool, a
// model) is shown, never obeyed. Control characters (C0, DEL, C1 such as the 8-bit CSI U+009B: escape sequences that
// clear the screen, set the window title or write the clipboard), the Unicode bidi overrides and isolates that
// reorder what is shown, and the line and paragraph separators are printed as escapes (`\u001b`). Escaping is done
// when printing, so text stored long ago is shown the same way, and it is idempotent: escaped text has nothing left
// to escape, so a view may escape a field that the printer escapes again.
/* eslint-disable no-console -- the CLI's only console output; every other module prints through these functions */

const CONTROL = '\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f';
const BIDI_AND_SEPARATORS = '\\u061c\\u200e\\u200f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069';

/** Text shown on purpose on several lines: tabs and newlines stay. */
const BLOCK = new RegExp(`[${CONTROL}${BIDI_AND_SEPARATORS}]`, 'g');
/** A field shown on one line: tabs and newlines are escaped too, so no field can start a line of its own. */
const LINE = new RegExp(`[\\t\\n${CONTROL}${BIDI_AND_SEPARATORS}]`, 'g');
/** What JSON.stringify leaves as it is (it escapes C0 itself); these occur only inside JSON strings. */
const JSON_RAW = new RegExp(`[\\u007f-\\u009f${BIDI_AND_SEPARATORS}]`, 'g');

const SHORT: Readonly<Record<string, string>> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const escape = (c: string): string => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** Multi-line text (a tool's result, a stack, a question) made safe to print; tabs and newlines stay. */
export const terminalSafe = (text: string): string => text.replace(BLOCK, escape);

/** One field of a line (an id, a status message, a key, a name) made safe to print, on one line. */
export const terminalLine = (text: string): string => text.replace(LINE, escape);

/**
 * A line of a view: every interpolated value is shown with `terminalLine`, the template's own text as it is.
 * `oneLine\`${id}: ${status}\`` can neither carry a control character nor break into a second line.
 */
export function oneLine(parts: TemplateStringsArray, ...values: unknown[]): string {
  return parts.reduce((line, part, i) => line + terminalLine(String(values[i - 1])) + part);
}

/** JSON that is safe to print: the same document (it parses to the same value), with those characters escaped. */
export const terminalJson = (value: unknown, indent?: number): string =>
  (JSON.stringify(value, null, indent) ?? 'null').replace(JSON_RAW, escape);

/** Prints a line of human output on stdout. */
export const printOut = (text: string): void => console.log(terminalSafe(text));

/** Prints a line of human output on stderr (progress, refusals, errors). */
export const printErr = (text: string): void => console.error(terminalSafe(text));

/** Prints a value as JSON on stdout (`--output json`). */
export const printJson = (value: unknown, indent?: number): void => console.log(terminalJson(value, indent));
