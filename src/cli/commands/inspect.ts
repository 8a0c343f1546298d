// `durable-mcp tools` and `durable-mcp discover`: what a server offers.
import { parseFlags } from '../args.js';
import { CLIENT_FLAGS, clientFlagsHelp, clientFromFlags, EXIT, exitCodesHelp } from '../client-flags.js';
import { reportError } from '../follow.js';
import { oneLine, printJson, printOut, terminalLine } from '../terminal-text.js';

export const toolsUsage = `durable-mcp tools [flags]   list the server's tools\n${clientFlagsHelp}\n${exitCodesHelp}`;
export const discoverUsage = `durable-mcp discover [flags]   show the server's versions, capabilities and identity\n${clientFlagsHelp}\n${exitCodesHelp}`;

export async function tools(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, CLIENT_FLAGS);
  const { client, json, url } = clientFromFlags(values);
  try {
    const list = await client.listTools();
    if (json) printJson(list);
    else
      for (const t of list)
        // A description keeps its lines; the printer escapes its control characters.
        printOut(`${terminalLine(String(t.name))}${t.description ? ` — ${String(t.description)}` : ''}`);
    return EXIT.ok;
  } catch (err) {
    return reportError(err, url);
  } finally {
    await client.close();
  }
}

export async function discover(argv: string[]): Promise<number> {
  const { values } = parseFlags(argv, CLIENT_FLAGS);
  const { client, json, url } = clientFromFlags(values);
  try {
    const result = await client.discover();
    if (json) printJson(result);
    else {
      const info = (result._meta as Record<string, { name?: string; version?: string }> | undefined)?.[
        'io.modelcontextprotocol/serverInfo'
      ];
      printOut(oneLine`server: ${info?.name ?? '?'} ${info?.version ?? ''}`.trim());
      printOut(oneLine`versions: ${(result.supportedVersions as string[]).join(', ')}`);
      printOut(oneLine`capabilities: ${Object.keys(result.capabilities as object).join(', ')}`);
      const ext = (result.capabilities as { extensions?: object }).extensions;
      if (ext !== undefined) printOut(oneLine`extensions: ${Object.keys(ext).join(', ')}`);
    }
    return EXIT.ok;
  } catch (err) {
    return reportError(err, url);
  } finally {
    await client.close();
  }
}
