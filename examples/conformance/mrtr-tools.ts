// Fixture tools for multi round-trip requests (input_required, requestState, capabilities).
import { defineTool, textResult, type InputRequest, type InputRequests } from 'durable-mcp';

const noArgs = { type: 'object', properties: {} };

const askName: InputRequest = {
  method: 'elicitation/create',
  params: {
    message: 'What is your name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
};
const askCapital: InputRequest = {
  method: 'sampling/createMessage',
  params: {
    messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
    maxTokens: 100,
  },
};
const askRoots: InputRequest = { method: 'roots/list', params: {} };
const askOk: InputRequest = {
  method: 'elicitation/create',
  params: {
    message: 'Continue?',
    requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
  },
};

const nameOf = (answer: Record<string, unknown>): string => {
  const content = answer.content as Record<string, unknown> | undefined;
  return typeof content?.name === 'string' ? content.name : 'stranger';
};

export const mrtrTools = [
  defineTool({
    name: 'test_input_required_result_elicitation',
    description: 'Asks for the user name (elicitation) before answering',
    inputSchema: noArgs,
    handler: (_args, ctx) => textResult(`Hello, ${nameOf(ctx.input('user_name', askName))}!`),
  }),
  defineTool({
    name: 'test_input_required_result_sampling',
    description: 'Asks the client to sample an answer before answering',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      const answer = ctx.input('capital_question', askCapital);
      const content = answer.content as { text?: unknown } | undefined;
      return textResult(`The model said: ${String(content?.text ?? '')}`);
    },
  }),
  defineTool({
    name: 'test_input_required_result_list_roots',
    description: 'Asks for the client roots before answering',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      const answer = ctx.input('client_roots', askRoots);
      const roots = Array.isArray(answer.roots) ? answer.roots.length : 0;
      return textResult(`The client has ${roots} root(s).`);
    },
  }),
  defineTool({
    name: 'test_input_required_result_request_state',
    description: 'Round-trips its own requestState',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      if (ctx.requestState === undefined) {
        return ctx.inputRequired({ inputRequests: { confirm: askOk }, state: { phase: 'asked' } });
      }
      const state = ctx.requestState as { phase?: string };
      const answer = ctx.input('confirm', askOk);
      return textResult(state.phase === 'asked' ? `state-ok (${answer.action})` : 'state-unexpected');
    },
  }),
  defineTool({
    name: 'test_input_required_result_multiple_inputs',
    description: 'Asks for elicitation, sampling and roots at once',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      const answers = ctx.inputs({
        user_name: askName,
        capital_question: askCapital,
        client_roots: askRoots,
      });
      return textResult(
        `Got ${Object.keys(answers).length} answers; hello, ${nameOf(answers.user_name ?? {})}!`,
      );
    },
  }),
  defineTool({
    name: 'test_input_required_result_multi_round',
    description: 'Asks for a name, then for a colour, in two rounds',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      const name = nameOf(ctx.input('user_name', askName));
      const colour = ctx.input('favorite_color', {
        method: 'elicitation/create',
        params: {
          message: `Hi ${name}, what is your favourite colour?`,
          requestedSchema: { type: 'object', properties: { color: { type: 'string' } }, required: ['color'] },
        },
      });
      const content = colour.content as { color?: unknown } | undefined;
      return textResult(`${name} likes ${String(content?.color ?? 'no colour')}.`);
    },
  }),
  defineTool({
    name: 'test_input_required_result_tampered_state',
    description: 'Rejects a requestState that was modified by the client',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      if (ctx.requestState === undefined) {
        return ctx.inputRequired({ inputRequests: { confirm: askOk }, state: { issued: true } });
      }
      return textResult(`state verified (${ctx.input('confirm', askOk).action})`);
    },
  }),
  defineTool({
    name: 'test_input_required_result_capabilities',
    description: 'Asks only for input kinds the client declared on this request',
    inputSchema: noArgs,
    handler: (_args, ctx) => {
      const caps = ctx.envelope.clientCapabilities;
      const wanted: InputRequests = {};
      if (caps.elicitation !== undefined) wanted.user_name = askName;
      if (caps.sampling !== undefined) wanted.capital_question = askCapital;
      if (caps.roots !== undefined) wanted.client_roots = askRoots;
      if (Object.keys(wanted).length === 0) return textResult('The client declared no input capability.');
      const answers = ctx.inputs(wanted);
      return textResult(`Answered: ${Object.keys(answers).sort().join(', ')}`);
    },
  }),
];
