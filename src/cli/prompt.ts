// Terminal prompts for input requests: an elicitation form field by field, roots answered with the working directory.
import { createInterface, type Interface } from 'node:readline/promises';
import { pathToFileURL } from 'node:url';
import { checkAnswer, listedValues } from '../protocol/input-answers.js';
import type { JsonObject } from '../wire/jsonrpc.js';
import { oneLine, printErr, terminalJson, terminalLine } from './terminal-text.js';

type Property = {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  oneOf?: unknown[];
  items?: JsonObject;
  default?: unknown;
};

/** What was typed, as the field's type: a boolean, a number, a list (comma-separated) or the text itself. */
function parseRaw(raw: string, prop: Property): unknown {
  if (prop.type === 'boolean') {
    if (/^(y|yes|true)$/i.test(raw)) return true;
    if (/^(n|no|false)$/i.test(raw)) return false;
    return raw;
  }
  if (prop.type === 'number' || prop.type === 'integer') return raw === '' ? raw : Number(raw);
  if (prop.type === 'array')
    return raw
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v !== '');
  return raw;
}

/** The field's own check (the one the server makes): undefined when the value answers it. */
function problemOf(name: string, prop: Property, value: unknown): string | undefined {
  const form = {
    method: 'elicitation/create',
    params: { requestedSchema: { properties: { [name]: prop } } },
  };
  const check = checkAnswer(form, { action: 'accept', content: { [name]: value } });
  return check.ok ? undefined : check.reason;
}

async function askField(rl: Interface, name: string, prop: Property, required: boolean): Promise<unknown> {
  const label = terminalLine(prop.title ?? prop.description ?? name);
  const listed = listedValues(prop as JsonObject) ?? (prop.items ? listedValues(prop.items) : undefined);
  const choices = listed === undefined ? '' : ` (${listed.map((v) => terminalLine(String(v))).join('/')})`;
  const hint =
    prop.type === 'boolean' ? ' [y/n]' : prop.type === 'array' ? `${choices}, comma-separated` : choices;
  // A default is offered, never taken silently: Enter picks it only when it is shown.
  const offer = prop.default === undefined ? '' : ` [Enter: ${terminalJson(prop.default)}]`;
  for (;;) {
    const raw = (await rl.question(`  ${label}${hint}${required ? '' : ' (optional)'}${offer}: `)).trim();
    if (raw === '' && prop.default !== undefined) return prop.default;
    if (raw === '' && !required) return undefined;
    const value = parseRaw(raw, prop);
    const problem = problemOf(name, prop, value);
    if (problem === undefined) return value;
    printErr(oneLine`  ${problem}`);
  }
}

async function answerOne(rl: Interface, key: string, request: JsonObject): Promise<JsonObject> {
  const params = (request.params as JsonObject | undefined) ?? {};
  if (request.method === 'roots/list')
    return { roots: [{ uri: pathToFileURL(process.cwd()).href, name: 'cwd' }] };
  if (request.method !== 'elicitation/create')
    throw new Error(`cannot answer ${String(request.method)} from a terminal`);
  // The question keeps its lines; printErr escapes its control characters.
  printErr(`\n? ${String(params.message ?? key)}`);
  if (params.mode === 'url') {
    printErr(oneLine`  open: ${params.url}`);
    const done = (await rl.question('  done? [y/N]: ')).trim();
    return { action: /^y/i.test(done) ? 'accept' : 'decline' };
  }
  const choice = (await rl.question('  answer? [Y]es / [n]o (decline) / [c]ancel: ')).trim();
  if (/^n/i.test(choice)) return { action: 'decline' };
  if (/^c/i.test(choice)) return { action: 'cancel' };
  const schema =
    (params.requestedSchema as { properties?: Record<string, Property>; required?: string[] }) ?? {};
  const content: JsonObject = {};
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    const value = await askField(rl, name, prop, (schema.required ?? []).includes(name));
    if (value !== undefined) content[name] = value;
  }
  return { action: 'accept', content };
}

/** Asks on the terminal for every input request; one readline for the whole run. */
export function terminalInput(): {
  handler: (requests: Record<string, JsonObject>) => Promise<Record<string, JsonObject>>;
  close(): void;
} {
  let rl: Interface | undefined;
  return {
    async handler(requests) {
      rl ??= createInterface({
        input: process.stdin,
        output: process.stderr,
        terminal: process.stdin.isTTY === true,
      });
      const out: Record<string, JsonObject> = {};
      for (const [key, request] of Object.entries(requests)) out[key] = await answerOne(rl, key, request);
      return out;
    },
    close() {
      rl?.close();
    },
  };
}

/** Asks a yes/no question on the terminal (stderr); only `y`/`yes` is a yes. */
export async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  try {
    return /^y(es)?$/i.test((await rl.question(`${terminalLine(question)} [y/N]: `)).trim());
  } finally {
    rl.close();
  }
}
