// What a handler may ask the client for: each input request an elicitation, a sampling or a roots request as the
// extension's schema has it, a form asking only the fields the spec allows (its restricted schema subset, so that
// every answer can be checked against it). Anything else would be sent as is (a message clients cannot read) or, in a task, fail
// to be stored and leave the task running for ever; it is refused where the handler asks, naming the key.
import {
  CreateMessageRequestV2Schema,
  ElicitRequestV2Schema,
  ListRootsRequestV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { PrimitiveSchemaDefinitionSchema } from '@modelcontextprotocol/core';
import { isJsonObject } from '../json.js';
import type { InputRequests } from './types.js';

/** Only the check each schema makes is needed here (their full types are too deep to carry around). */
interface RequestSchema {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: unknown[] } };
}

const SCHEMAS: Readonly<Record<string, RequestSchema>> = {
  'elicitation/create': ElicitRequestV2Schema as unknown as RequestSchema,
  'sampling/createMessage': CreateMessageRequestV2Schema as unknown as RequestSchema,
  'roots/list': ListRootsRequestV2Schema as unknown as RequestSchema,
};

interface Issue {
  path: PropertyKey[];
  message: string;
  errors?: Issue[][];
}

/** The first innermost problem of a schema issue, with its whole path (a union's first option's first problem). */
function leaf(issue: Issue, prefix: PropertyKey[] = []): { path: string; message: string } {
  const path = [...prefix, ...issue.path];
  const inner = issue.errors?.[0]?.[0];
  if (inner !== undefined) return leaf(inner, path);
  return { path: path.map(String).join('.'), message: issue.message };
}

/** Throws a TypeError naming the first request that is not a valid input request, and what is wrong with it. */
export function checkInputRequests(requests: InputRequests): void {
  for (const [key, request] of Object.entries(requests as Record<string, unknown>)) {
    const method = (request as { method?: unknown } | null)?.method;
    const schema = typeof method === 'string' && Object.hasOwn(SCHEMAS, method) ? SCHEMAS[method] : undefined;
    if (schema === undefined) {
      const got = typeof method === 'string' ? `"${method}"` : 'none';
      throw new TypeError(
        `input request "${key}": method must be elicitation/create, sampling/createMessage or roots/list (got ${got})`,
      );
    }
    const parsed = schema.safeParse(request);
    if (!parsed.success) {
      const problem = leaf(parsed.error.issues[0] as unknown as Issue);
      const where = problem.path === '' ? '' : `${problem.path}: `;
      throw new TypeError(`input request "${key}" (${method}): ${where}${problem.message}`);
    }
    if (method === 'elicitation/create') checkForm(key, (request as { params: unknown }).params);
  }
}

const FORM_FIELDS =
  'a form field must be a string (with minLength, maxLength, format date, date-time, email or uri), a number ' +
  'or integer (with minimum, maximum), a boolean, a choice of strings (enum, or oneOf of const and title), or a ' +
  'list of such choices (type array with items of enum or anyOf)';

/**
 * A form's fields against the spec's restricted subset (flat fields of the allowed kinds), so that every answer can
 * be checked against them. A schema without `properties` asks no field (a bare confirmation).
 */
function checkForm(key: string, params: unknown): void {
  if (!isJsonObject(params) || params.mode === 'url') return;
  const where = `input request "${key}" (elicitation/create): params.requestedSchema`;
  const schema = params.requestedSchema;
  const properties = isJsonObject(schema) ? (schema.properties ?? {}) : undefined;
  if (!isJsonObject(schema) || (schema.type ?? 'object') !== 'object' || !isJsonObject(properties)) {
    throw new TypeError(`${where}: must be {"type":"object","properties":{…},"required":[…]}`);
  }
  const primitive = PrimitiveSchemaDefinitionSchema as unknown as RequestSchema;
  for (const [name, field] of Object.entries(properties)) {
    if (!primitive.safeParse(field).success)
      throw new TypeError(`${where}.properties.${name}: ${FORM_FIELDS}`);
  }
}
