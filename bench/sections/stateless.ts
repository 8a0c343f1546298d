// Stateless HTTP rows: the bare echo baseline, the SDK peer, and our tools/list and tools/call echo.
import { expectJsonRpcResult, resultOf } from '../harness/http.js';
import { callEcho, listTools } from '../harness/requests.js';
import type { Scenario } from '../types.js';
import { ECHO, PEER_CALL, PEER_LIST, READ_TARGETS } from './names.js';

/** The tools of `serve --tools demo`, which the peer lists too, and the input schema of `echo`. */
const DEMO_TOOLS = ['add', 'echo', 'generate_report', 'greet_person', 'wait'];
const ECHO_SCHEMA = { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] };

interface ListedTool {
  name: string;
  inputSchema?: unknown;
}

/** tools/list answered with the demo tools (ours and the peer alike). */
function verifyToolList(status: number, text: string): string | undefined {
  const problem = expectJsonRpcResult(status, text);
  if (problem !== undefined) return problem;
  const { tools } = resultOf(text) as { tools?: ListedTool[] };
  const names = Array.isArray(tools) ? tools.map((t) => t.name).sort() : [];
  if (names.join() !== DEMO_TOOLS.join()) {
    return `expected the tools ${DEMO_TOOLS.join(', ')}: ${text.slice(0, 300)}`;
  }
  const echo = tools!.find((t) => t.name === 'echo')!;
  if (JSON.stringify(echo.inputSchema) !== JSON.stringify(ECHO_SCHEMA)) {
    return `echo's input schema differs: ${JSON.stringify(echo.inputSchema)}`;
  }
  return undefined;
}

/** tools/call of echo answered with exactly the echoed text (ours and the peer alike). */
function verifyEchoResult(status: number, text: string): string | undefined {
  const problem = expectJsonRpcResult(status, text);
  if (problem !== undefined) return problem;
  const { content } = resultOf(text);
  const expected = [{ type: 'text', text: 'hi' }];
  if (JSON.stringify(content) !== JSON.stringify(expected)) {
    return `expected the content ${JSON.stringify(expected)}: ${text.slice(0, 300)}`;
  }
  return undefined;
}

export const statelessRows: Scenario[] = [
  // The baseline receives byte-for-byte the same request as `ours tools/call echo`.
  { name: ECHO, server: 'baseline', baseline: null, request: callEcho },
  // The peer receives byte-for-byte the same requests as ours; the pre-flight checks that both answer alike.
  { name: PEER_LIST, server: 'peer', baseline: ECHO, request: listTools, verify: verifyToolList },
  { name: PEER_CALL, server: 'peer', baseline: ECHO, request: callEcho, verify: verifyEchoResult },
  {
    name: 'ours tools/list',
    server: 'ours',
    baseline: ECHO,
    also: [PEER_LIST],
    targets: READ_TARGETS,
    request: listTools,
    verify: verifyToolList,
  },
  {
    name: 'ours tools/call echo',
    server: 'ours',
    baseline: ECHO,
    also: [PEER_CALL],
    request: callEcho,
    verify: verifyEchoResult,
  },
];
