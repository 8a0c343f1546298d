// Terminal prompts for input requests: an elicitation form field by field, roots answered with the working directory.
import { createInterface, type Interface } from 'node:readline/promises';
import { pathToFileURL } from 'node:url';
import type { JsonObject } from '../wire/jsonrpc.js';

type Property = { type?: string; title?: string; description?: string; enum?: unknown[]; default?: unknown };

async function askField(rl: Interface, name: string, prop: Property, required: boolean): Promise<unknown> {
  const label = prop.title ?? prop.description ?? name;
  const choices = Array.isArray(prop.enum) ? ` (${prop.enum.join('/')})` : '';
  const hint = prop.type === 'boolean' ? ' [y/n]' : choices;
  for (;;) {
    const raw = (await rl.question(`  ${label}${hint}${required ? '' : ' (optional)'}: `)).trim();
    if (raw === '' && !required) return undefined;
    if (raw === '' && prop.default !== undefined) return prop.default;
    if (prop.type === 'boolean') {
      if (/^(y|yes|true)$/i.test(raw)) return true;
      if (/^(n|no|false)$/i.test(raw)) return false;
    } else if (prop.type === 'number' || prop.type === 'integer') {
      const n = Number(raw);
      if (raw !== '' && Number.isFinite(n) && (prop.type === 'number' || Number.isInteger(n))) return n;
    } else if (Array.isArray(prop.enum)) {
      if (prop.enum.includes(raw)) return raw;
    } else if (raw !== '') {
      return raw;
    }
    console.error(`  please enter a valid ${prop.type ?? 'value'}`);
  }
}

async function answerOne(rl: Interface, key: string, request: JsonObject): Promise<JsonObject> {
  const params = (request.params as JsonObject | undefined) ?? {};
  if (request.method === 'roots/list')
    return { roots: [{ uri: pathToFileURL(process.cwd()).href, name: 'cwd' }] };
  if (request.method !== 'elicitation/create')
    throw new Error(`cannot answer ${String(request.method)} from a terminal`);
  console.error(`\n? ${String(params.message ?? key)}`);
  if (params.mode === 'url') {
    console.error(`  open: ${String(params.url)}`);
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
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N]: `)).trim());
  } finally {
    rl.close();
  }
}
