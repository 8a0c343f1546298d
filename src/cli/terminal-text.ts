// Text that others supplied (a server, a tenant, a model), made safe to print on a terminal: control characters
// (escape sequences, carriage returns, bells) are shown as \uXXXX escapes, never obeyed. Tabs and newlines stay.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

export const terminalSafe = (text: string): string =>
  text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
