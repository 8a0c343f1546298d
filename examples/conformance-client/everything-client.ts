// The "everything client" for the official conformance suite in client mode: one program that switches on
// MCP_CONFORMANCE_SCENARIO and drives the mock server (URL = last argument) through the public client API only.
// Run: conformance client --command "node dist/examples/conformance-client/everything-client.js" --scenario NAME
import {
  createClient,
  ProtocolError,
  type CreateClientOptions,
  type InputHandler,
  type McpClient,
} from 'durable-mcp/client';
import { authScenarios } from './auth-scenarios.js';

type JsonObject = Record<string, unknown>;

/** Protocol versions this program speaks, best first (the client library's own list is not public). */
const SPOKEN_VERSIONS = ['2026-07-28'];
const CLIENT_INFO = { name: 'durable-mcp-everything-client', version: '0.1.0' };

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const log = (...parts: unknown[]): void => console.log('[everything-client]', ...parts);

/** Answers any input request the way a cooperative user would: accept elicitations with schema defaults. */
const answerInputs: InputHandler = (requests) => {
  const answers: Record<string, JsonObject> = {};
  for (const [key, req] of Object.entries(requests)) {
    const params = isObject(req.params) ? req.params : {};
    switch (req.method) {
      case 'elicitation/create':
        answers[key] = { action: 'accept', content: fillSchema(params.requestedSchema) };
        break;
      case 'sampling/createMessage':
        answers[key] = {
          role: 'assistant',
          content: { type: 'text', text: 'conformance' },
          model: CLIENT_INFO.name,
          stopReason: 'endTurn',
        };
        break;
      case 'roots/list':
        answers[key] = { roots: [] };
        break;
      default:
        throw new Error(`cannot answer input request "${key}" (${String(req.method)})`);
    }
  }
  return answers;
};

/** A value for each property of a flat requested schema: its default, else a plain value of its type. */
function fillSchema(schema: unknown): JsonObject {
  const content: JsonObject = {};
  const props = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
  for (const [name, prop] of Object.entries(props)) {
    if (!isObject(prop)) continue;
    if (prop.default !== undefined) content[name] = prop.default;
    else if (prop.type === 'boolean') content[name] = true;
    else if (prop.type === 'number' || prop.type === 'integer') content[name] = 1;
    else if (Array.isArray(prop.enum) && prop.enum.length > 0) content[name] = prop.enum[0];
    else content[name] = 'conformance';
  }
  return content;
}

/** Arguments satisfying a tool's required properties (for tools the scenario gives no arguments for). */
function sampleArguments(inputSchema: unknown): JsonObject {
  const args: JsonObject = {};
  if (!isObject(inputSchema) || !isObject(inputSchema.properties)) return args;
  const required = Array.isArray(inputSchema.required) ? inputSchema.required : [];
  for (const [name, prop] of Object.entries(inputSchema.properties)) {
    if (!required.includes(name) || !isObject(prop)) continue;
    if (prop.type === 'boolean') args[name] = true;
    else if (prop.type === 'number' || prop.type === 'integer') args[name] = 1;
    else if (prop.type === 'string') args[name] = 'conformance';
  }
  return args;
}

/**
 * Opens a client and negotiates the version with server/discover: on -32022 it retries once with a version
 * from `error.data.supported` that this program speaks (the server may list the very version it rejected).
 */
async function connect(url: string, extra: Partial<CreateClientOptions> = {}): Promise<McpClient> {
  const open = (protocolVersion?: string): McpClient =>
    createClient({
      url,
      clientInfo: CLIENT_INFO,
      // answerInputs serves these (elicitation is declared by giving onInput).
      capabilities: { sampling: {}, roots: {} },
      onInput: answerInputs,
      protocolVersion,
      ...extra,
    });
  const client = open();
  try {
    await client.discover();
    return client;
  } catch (err) {
    if (!(err instanceof ProtocolError) || err.code !== -32022) throw err;
    const supported = isObject(err.data) && Array.isArray(err.data.supported) ? err.data.supported : [];
    const version = SPOKEN_VERSIONS.find((v) => supported.includes(v));
    if (version === undefined) throw err;
    log(
      `server rejected the protocol version; retrying with ${version} (supported: ${supported.join(', ')})`,
    );
    await client.close();
    const retry = open(version);
    await retry.discover();
    return retry;
  }
}

async function callAndLog(client: McpClient, name: string, args: JsonObject = {}): Promise<JsonObject> {
  const outcome = await client.callTool(name, args);
  if (outcome.kind !== 'result') throw new Error(`${name}: expected a result, got a task`);
  log(`${name} ->`, JSON.stringify(outcome.result));
  return outcome.result;
}

const scenarios: Record<string, (url: string, context: JsonObject) => Promise<void>> = {
  async tools_call(url) {
    const client = await connect(url);
    const tools = await client.listTools();
    log('tools:', tools.map((t) => t.name).join(', '));
    await callAndLog(client, 'add_numbers', { a: 5, b: 3 });
  },

  async 'request-metadata'(url) {
    const client = await connect(url);
    await client.listTools();
  },

  async 'sep-2322-client-request-state'(url) {
    const client = await connect(url);
    await client.listTools();
    // While the echo-state flow waits for input, an unrelated call must carry none of its state.
    let unrelatedDone = false;
    const interleaved: InputHandler = async (requests, ctx) => {
      if (!unrelatedDone) {
        unrelatedDone = true;
        await callAndLog(client, 'test_mrtr_unrelated');
      }
      return answerInputs(requests, ctx);
    };
    const echo = await client.callTool('test_mrtr_echo_state', {}, { onInput: interleaved });
    log('test_mrtr_echo_state ->', JSON.stringify(echo));
    await callAndLog(client, 'test_mrtr_no_state');
    await callAndLog(client, 'test_mrtr_no_result_type');
  },

  async 'http-standard-headers'(url) {
    const client = await connect(url);
    for (const tool of await client.listTools()) {
      await callAndLog(client, String(tool.name), sampleArguments(tool.inputSchema));
    }
    const resources = await client.request('resources/list');
    for (const r of Array.isArray(resources.resources) ? resources.resources : []) {
      if (isObject(r)) await client.request('resources/read', { uri: String(r.uri) });
    }
    const prompts = await client.request('prompts/list');
    for (const p of Array.isArray(prompts.prompts) ? prompts.prompts : []) {
      if (isObject(p)) await client.request('prompts/get', { name: String(p.name) });
    }
  },

  async 'http-custom-headers'(url, context) {
    const client = await connect(url);
    await client.listTools(); // learns which arguments are mirrored into Mcp-Param-* headers
    const calls = Array.isArray(context.toolCalls) ? context.toolCalls : [];
    if (calls.length === 0) throw new Error('MCP_CONFORMANCE_CONTEXT has no toolCalls');
    for (const call of calls) {
      if (!isObject(call)) continue;
      await callAndLog(client, String(call.name), isObject(call.arguments) ? call.arguments : {});
    }
  },

  async 'http-invalid-tool-headers'(url) {
    const client = await connect(url);
    // listTools leaves out tools whose x-mcp-header annotations are invalid; every tool it keeps is usable.
    const tools = await client.listTools();
    log('usable tools:', tools.map((t) => t.name).join(', '));
    for (const tool of tools) await callAndLog(client, String(tool.name), sampleArguments(tool.inputSchema));
  },

  // Not scored for 2026-07-28 (added after the release); kept so the suite can be run against it.
  async 'json-schema-2020-12-preservation'(url) {
    const client = await connect(url);
    const tools = await client.listTools();
    const focal = tools.find((t) => t.name === 'json_schema_2020_12_tool');
    if (focal === undefined) throw new Error('json_schema_2020_12_tool not listed');
    await callAndLog(client, 'json_schema_echo', { schema: focal.inputSchema as JsonObject });
  },

  async 'json-schema-ref-no-deref'(url) {
    const client = await connect(url);
    const tools = await client.listTools();
    log('tools:', JSON.stringify(tools));
  },

  ...authScenarios,
};

async function main(): Promise<void> {
  const url = process.argv[process.argv.length - 1];
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  if (url === undefined || !/^https?:\/\//.test(url))
    throw new Error('usage: everything-client <server-url>');
  const run = scenarios[scenario];
  if (run === undefined) throw new Error(`unsupported scenario "${scenario}"`);
  const raw = process.env.MCP_CONFORMANCE_CONTEXT;
  const context = raw === undefined || raw === '' ? {} : (JSON.parse(raw) as unknown);
  log(`scenario ${scenario} against ${url}`);
  await run(url, isObject(context) ? context : {});
  log('done');
}

main().catch((err: unknown) => {
  console.error('[everything-client] failed:', err instanceof Error ? (err.stack ?? err.message) : err);
  process.exit(1);
});
