// Compiles tool input schemas once (Ajv, JSON Schema 2020-12 by default, draft-07 when declared).
import { Ajv2020 } from 'ajv/dist/2020.js';
import { Ajv } from 'ajv';
import type { JsonObject } from './types.js';

export type ArgumentValidator = (args: unknown) => { ok: true } | { ok: false; reason: string };

let ajv2020: Ajv2020 | undefined;
let ajv07: Ajv | undefined;

function compilerFor(schema: JsonObject): Ajv2020 | Ajv {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (dialect.includes('draft-07') || dialect.includes('draft-06') || dialect.includes('draft-04')) {
    ajv07 ??= new Ajv({ strict: false, allErrors: false, validateSchema: false });
    return ajv07;
  }
  ajv2020 ??= new Ajv2020({ strict: false, allErrors: false, validateSchema: false });
  return ajv2020;
}

/** Compiles lazily on first use so start-up stays fast; the compiled function is cached on the tool. */
export function compileSchema(schema: JsonObject, subject = 'arguments'): ArgumentValidator {
  let compiled: (((data: unknown) => boolean) & { errors?: unknown }) | undefined;
  let broken: string | undefined;
  return (args) => {
    if (compiled === undefined && broken === undefined) {
      try {
        compiled = compilerFor(schema).compile(schema);
      } catch (err) {
        broken = err instanceof Error ? err.message : String(err);
      }
    }
    if (compiled === undefined)
      return { ok: false, reason: `tool input schema cannot be compiled: ${broken}` };
    if (compiled(args)) return { ok: true };
    const first = (compiled.errors as { instancePath?: string; message?: string }[] | null | undefined)?.[0];
    const where = first?.instancePath ? `${subject}${first.instancePath.replaceAll('/', '.')}` : subject;
    return { ok: false, reason: `${where} ${first?.message ?? 'invalid'}` };
  };
}
