// Entry point of the `durable-mcp` command: dispatches to a sub-command.
import { UsageError } from './args.js';
import { demo, demoUsage } from './commands/demo.js';
import { serve, serveUsage } from './commands/serve.js';
import { VERSION } from '../version.js';

const usage = `durable-mcp ${VERSION}

Commands:
  serve     run the MCP server (see: durable-mcp serve --help)
  demo      run the durable generate_report flow against a real server and restart it
  version   print the version`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'serve':
        if (rest.includes('--help')) {
          console.log(serveUsage);
          return 0;
        }
        await serve(rest);
        return 0;
      case 'demo':
        if (rest.includes('--help')) {
          console.log(demoUsage);
          return 0;
        }
        await demo(rest);
        return 0;
      case 'version':
      case '--version':
        console.log(VERSION);
        return 0;
      case undefined:
      case 'help':
      case '--help':
        console.log(usage);
        return 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`durable-mcp: ${err.message}\n\n${usage}`);
      return 2;
    }
    console.error(`durable-mcp: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
