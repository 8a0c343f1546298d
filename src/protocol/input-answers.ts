// Whether an answer answers its question: an elicitation's content against the form it asked (the spec's restricted
// schema subset), sampling, roots and URL-mode answers against their result schemas. Every path that takes answers
// (tasks/update, MRTR rounds, the facade's respond tool, the legacy wire, the CLI's prompt) checks them here first,
// so a task never goes on with an answer to another question, and a hand-back's placeholders are never an answer.
import {
  CreateMessageResultV2Schema,
  ElicitResultV2Schema,
  ListRootsResultV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { isJsonObject, type JsonObject } from '../json.js';
import { invalidParams, type ProtocolError } from '../wire/protocol-error.js';

/** Why an answer is refused: the field (a dotted path inside the answer; '' for the whole) and what is wrong. */
export interface AnswerProblem {
  field: string;
  reason: string;
  /** The field holds a hand-back's placeholder: the answer was never asked of the user. */
  placeholder?: boolean;
}

export type AnswerCheck = { ok: true } | ({ ok: false } & AnswerProblem);

/** The key of a hand-back's placeholder object: `{"placeholder": "what belongs here"}` answers no question. */
export const PLACEHOLDER_KEY = 'placeholder';

/** A placeholder standing where an answer's value belongs, saying what belongs there. */
export const placeholder = (what: string): JsonObject => ({ [PLACEHOLDER_KEY]: what });

const isPlaceholder = (value: unknown): boolean =>
  isJsonObject(value) && typeof value[PLACEHOLDER_KEY] === 'string' && Object.keys(value).length === 1;

const join = (path: string, name: string | number): string =>
  typeof name === 'number' ? `${path}[${name}]` : path === '' ? name : `${path}.${name}`;

/** The first placeholder inside a value, as its path. */
function findPlaceholder(value: unknown, path: string): string | undefined {
  if (isPlaceholder(value)) return path;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findPlaceholder(value[i], join(path, i));
      if (found !== undefined) return found;
    }
  } else if (isJsonObject(value)) {
    for (const [name, inner] of Object.entries(value)) {
      const found = findPlaceholder(inner, join(path, name));
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** A value as a short text for an error message (the answer may be anything a client sent). */
export function shown(value: unknown): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

const refuse = (field: string, reason: string): AnswerCheck => ({ ok: false, field, reason });

interface SchemaCheck {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: unknown[] } };
}
interface Issue {
  path: PropertyKey[];
  message: string;
}

/** An answer against a result schema of the extension: the first problem, with its path. */
function againstSchema(schema: unknown, answer: unknown): AnswerCheck {
  const parsed = (schema as SchemaCheck).safeParse(answer);
  if (parsed.success) return { ok: true };
  const issue = parsed.error.issues[0] as Issue | undefined;
  const field = (issue?.path ?? []).reduce<string>(
    (p, n) => join(p, typeof n === 'number' ? n : String(n)),
    '',
  );
  return refuse(field, issue?.message ?? 'not a valid answer');
}

/** The values a form field admits when it lists them (`enum`, or `oneOf`/`anyOf` of `const`s). */
export function listedValues(field: JsonObject): unknown[] | undefined {
  if (Array.isArray(field.enum)) return field.enum;
  const options = Array.isArray(field.oneOf) ? field.oneOf : Array.isArray(field.anyOf) ? field.anyOf : [];
  const consts = options.filter((o) => isJsonObject(o) && o.const !== undefined) as JsonObject[];
  return consts.length > 0 ? consts.map((o) => o.const) : undefined;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function isDate(text: string): boolean {
  const m = DATE.exec(text);
  if (m === null) return false;
  const d = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.getUTCDate() === Number(m[3]);
}

function formatProblem(format: unknown, text: string): string | undefined {
  switch (format) {
    case 'email':
      return EMAIL.test(text) ? undefined : 'expected an email address';
    case 'uri':
      return URL.canParse(text) ? undefined : 'expected a URI';
    case 'date':
      return isDate(text) ? undefined : 'expected a date (YYYY-MM-DD)';
    case 'date-time': {
      const m = DATE_TIME.exec(text);
      const ok = m !== null && isDate(m[1] as string) && Number(m[2]) < 24 && Number(m[3]) < 60;
      return ok && Number(m[4]) < 61 ? undefined : 'expected a date and time (RFC 3339)';
    }
    default:
      return undefined;
  }
}

const length = (text: string): number => [...text].length;

function stringProblem(field: JsonObject, value: unknown): string | undefined {
  if (typeof value !== 'string') return `expected a string, got ${shown(value)}`;
  const listed = listedValues(field);
  if (listed !== undefined && !listed.includes(value))
    return `expected one of ${listed.map(shown).join(', ')}, got ${shown(value)}`;
  if (typeof field.minLength === 'number' && length(value) < field.minLength)
    return `expected at least ${field.minLength} characters`;
  if (typeof field.maxLength === 'number' && length(value) > field.maxLength)
    return `expected at most ${field.maxLength} characters`;
  return formatProblem(field.format, value);
}

function numberProblem(field: JsonObject, value: unknown): string | undefined {
  const integer = field.type === 'integer';
  if (typeof value !== 'number' || !Number.isFinite(value) || (integer && !Number.isInteger(value)))
    return `expected ${integer ? 'an integer' : 'a number'}, got ${shown(value)}`;
  if (typeof field.minimum === 'number' && value < field.minimum)
    return `expected at least ${field.minimum}, got ${value}`;
  if (typeof field.maximum === 'number' && value > field.maximum)
    return `expected at most ${field.maximum}, got ${value}`;
  return undefined;
}

function arrayProblem(field: JsonObject, value: unknown): string | undefined {
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string'))
    return `expected a list of strings, got ${shown(value)}`;
  const listed = isJsonObject(field.items) ? listedValues(field.items) : undefined;
  const stray = listed === undefined ? undefined : value.find((v) => !listed.includes(v));
  if (stray !== undefined && listed !== undefined)
    return `expected only ${listed.map(shown).join(', ')}, got ${shown(stray)}`;
  if (new Set(value).size !== value.length) return 'expected each choice at most once';
  if (typeof field.minItems === 'number' && value.length < field.minItems)
    return `expected at least ${field.minItems} choices`;
  if (typeof field.maxItems === 'number' && value.length > field.maxItems)
    return `expected at most ${field.maxItems} choices`;
  return undefined;
}

/** One form field's value against its primitive schema. */
function fieldProblem(field: unknown, value: unknown): string | undefined {
  const f = isJsonObject(field) ? field : {};
  switch (f.type) {
    case 'string':
      return stringProblem(f, value);
    case 'number':
    case 'integer':
      return numberProblem(f, value);
    case 'boolean':
      return typeof value === 'boolean' ? undefined : `expected true or false, got ${shown(value)}`;
    case 'array':
      return arrayProblem(f, value);
    default:
      // A field outside the restricted subset (asked before requests were checked): any form value.
      return undefined;
  }
}

const anyFormValue = (value: unknown): string | undefined =>
  typeof value === 'string' ||
  typeof value === 'boolean' ||
  (typeof value === 'number' && Number.isFinite(value)) ||
  (Array.isArray(value) && value.every((v) => typeof v === 'string'))
    ? undefined
    : `expected a string, number, boolean or list of strings, got ${shown(value)}`;

/** An accepted form's content against the schema the form asked with. */
function formProblem(schema: JsonObject, content: unknown): AnswerCheck {
  if (!isJsonObject(content)) return refuse('content', "expected the form's fields as an object");
  const properties = isJsonObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required : [];
  for (const name of required) {
    if (typeof name === 'string' && content[name] === undefined)
      return refuse(join('content', name), 'required, but missing');
  }
  for (const [name, value] of Object.entries(content)) {
    // A field the form did not ask is let through, as JSON Schema would (clients send generic answers); the
    // restricted value types still hold for it.
    const problem = Object.hasOwn(properties, name)
      ? fieldProblem(properties[name], value)
      : anyFormValue(value);
    if (problem !== undefined) return refuse(join('content', name), problem);
  }
  return { ok: true };
}

const ACTIONS = ['accept', 'decline', 'cancel'];

function elicitationProblem(params: JsonObject, answer: JsonObject): AnswerCheck {
  if (!ACTIONS.includes(answer.action as string))
    return refuse('action', `expected "accept", "decline" or "cancel", got ${shown(answer.action)}`);
  const content = answer.content;
  if (answer.action !== 'accept' || params.mode === 'url') {
    // Content belongs only to an accepted form (spec: ElicitResult.content).
    const empty = content === undefined || (isJsonObject(content) && Object.keys(content).length === 0);
    const why =
      params.mode === 'url' ? 'a URL-mode answer carries no content' : `not with "${String(answer.action)}"`;
    if (!empty) return refuse('content', why);
  } else {
    const schema = isJsonObject(params.requestedSchema) ? params.requestedSchema : {};
    const form = formProblem(schema, content ?? {});
    if (!form.ok) return form;
  }
  // Whatever else the result schema holds (its _meta).
  return againstSchema(ElicitResultV2Schema, answer);
}

/** Whether `answer` answers `request` (an input request as the handler asked it). */
export function checkAnswer(request: unknown, answer: unknown): AnswerCheck {
  const at = findPlaceholder(answer, '');
  if (at !== undefined)
    return { ok: false, field: at, reason: 'a placeholder, not an answer', placeholder: true };
  if (!isJsonObject(answer)) return refuse('', `expected an object, got ${shown(answer)}`);
  const r = isJsonObject(request) ? request : {};
  const params = isJsonObject(r.params) ? r.params : {};
  switch (r.method) {
    case 'elicitation/create':
      return elicitationProblem(params, answer);
    case 'sampling/createMessage':
      return againstSchema(CreateMessageResultV2Schema, answer);
    case 'roots/list': {
      const shape = againstSchema(ListRootsResultV2Schema, answer);
      if (!shape.ok) return shape;
      const roots = answer.roots as JsonObject[];
      const i = roots.findIndex((root) => !String(root.uri).startsWith('file://'));
      return i < 0 ? shape : refuse(`roots[${i}].uri`, 'expected a file:// URI');
    }
    default:
      return { ok: true };
  }
}

/** The first answer among `responses` that does not answer its request in `requests`, with its key. */
export function checkAnswers(
  requests: Readonly<Record<string, unknown>>,
  responses: Readonly<Record<string, unknown>>,
): { ok: true } | ({ ok: false; key: string } & AnswerProblem) {
  for (const [key, answer] of Object.entries(responses)) {
    if (!Object.hasOwn(requests, key)) continue;
    const check = checkAnswer(requests[key], answer);
    if (!check.ok) return { ...check, key };
  }
  return { ok: true };
}

/** The words for a refused answer: "answer to \"key\": content.x: expected …". */
export function describeProblem(key: string, problem: AnswerProblem): string {
  const where = problem.field === '' ? '' : `${problem.field}: `;
  const ask = problem.placeholder
    ? ' Ask the user, then send their answer in its place (a placeholder answers nothing).'
    : '';
  return `answer to "${key}": ${where}${problem.reason}.${ask}`;
}

/** The -32602 refusing a whole update for one answer; the task keeps waiting for it. */
export function answerRefused(key: string, problem: AnswerProblem): ProtocolError {
  const data: JsonObject = { inputKey: key, field: problem.field, reason: problem.reason };
  if (problem.placeholder === true) data.placeholder = true;
  return invalidParams(`Invalid params: ${describeProblem(key, problem)}`, data);
}
