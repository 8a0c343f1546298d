// Stateless HTTP rows: the bare echo baseline, the SDK peer, and our server/discover, tools/list and tools/call echo.
import { expectJsonRpcResult, resultOf } from '../harness/http.js';
import { PROTOCOL_VERSION } from '../config.js';
import { callEcho, discover, listTools } from '../harness/requests.js';
import type { Scenario } from '../types.js';
import { DISCOVER_TARGETS, ECHO, PEER_CALL, PEER_DISCOVER, PEER_LIST, READ_TARGETS } from './names.js';

/**
 * tools/list answered with the demo tools, each with the demo's input schema (ours and the peer alike). The demo is
 * imported here, when a pre-flight check needs it: the latency client process imports every row, and the demo would
 * load the whole runtime into it (some 10 MB of heap that its garbage collections would walk).
 */
export async function verifyToolList(status: number, text: string): Promise<string | undefined> {
  const problem = expectJsonRpcResult(status, text);
  if (problem !== undefined) return problem;
  const { listedTools, toolListProblem } = await import('../harness/demo-tools.js');
  return toolListProblem((resultOf(text) as { tools?: unknown }).tools, listedTools());
}

/** server/discover answered with the version the requests speak and the tools capability (ours and the peer alike). */
export function verifyDiscover(status: number, text: string): string | undefined {
  const problem = expectJsonRpcResult(status, text);
  if (problem !== undefined) return problem;
  const { supportedVersions, capabilities } = resultOf(text) as {
    supportedVersions?: unknown;
    capabilities?: { tools?: unknown };
  };
  if (!Array.isArray(supportedVersions) || !supportedVersions.includes(PROTOCOL_VERSION)) {
    return `expected supportedVersions to hold ${PROTOCOL_VERSION}: ${text.slice(0, 300)}`;
  }
  if (typeof capabilities?.tools !== 'object') return `expected the tools capability: ${text.slice(0, 300)}`;
  return undefined;
}

/** tools/call of echo answered with exactly the echoed text (ours, the peer and the gateway's upstream alike). */
export function verifyEchoResult(status: number, text: string): string | undefined {
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
  { name: PEER_DISCOVER, server: 'peer', baseline: ECHO, request: discover, verify: verifyDiscover },
  {
    name: 'ours server/discover',
    server: 'ours',
    baseline: ECHO,
    also: [PEER_DISCOVER],
    targets: DISCOVER_TARGETS,
    request: discover,
    verify: verifyDiscover,
  },
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
