// Entry point of the `durable-mcp` command: dispatches to a sub-command.
import { UsageError } from './args.js';
import { admin, adminHelp, adminUsage } from './commands/admin.js';
import { backup, backupUsage } from './commands/backup.js';
import { call, callUsage } from './commands/call.js';
import { demo, demoUsage } from './commands/demo.js';
import { discover, discoverUsage, tools, toolsUsage } from './commands/inspect.js';
import { serve, serveUsage } from './commands/serve.js';
import { gateway, gatewayUsage } from './commands/gateway.js';
import { migrate, migrateUsage } from './commands/migrate.js';
import { task, taskUsage } from './commands/task.js';
import { event, eventUsage } from './commands/event.js';
import { login, loginUsage } from './commands/login.js';
import { logout, logoutUsage } from './commands/logout.js';
import { printErr, printOut } from './terminal-text.js';
import { VERSION } from '../version.js';

const usage = `durable-mcp ${VERSION}

Server side:
  serve      run the MCP server                     (durable-mcp serve --help)
  gateway    serve an existing MCP server's tools as durable tasks (durable-mcp gateway --help)
  migrate    apply store migrations (SQLite file or PostgreSQL) and exit
  backup     copy a SQLite store while it serves
  demo       run the durable generate_report flow against a real server and restart it
Client side:
  call       call a tool; follow its task, answering input in the terminal
  task       get | watch | cancel | answer a task
  event      send an event to a task waiting for it (durable-mcp event --help)
  tools      list the server's tools
  discover   show what the server supports
  login      sign in to an OAuth-protected server for the commands above (durable-mcp login --help)
  logout     forget a sign-in, revoking its tokens where the server supports it
Operators:
  admin      tasks list | get | cancel | retry | purge, overview, pause | resume, flow: every owner's tasks
             (durable-mcp admin --help)
Other:
  version    print the version

Every command takes --help.`;

interface Command {
  usage: string;
  /** The help of a sub-command, when its words are given (`admin tasks list --help`); default `usage`. */
  help?: (argv: string[]) => string;
  /** Resolves with the exit code; `serve` resolves once it is listening (the process stays up). */
  run: (argv: string[]) => Promise<number | void>;
}

const COMMANDS: Record<string, Command> = {
  serve: { usage: serveUsage, run: serve },
  gateway: { usage: gatewayUsage, run: gateway },
  demo: { usage: demoUsage, run: demo },
  migrate: { usage: migrateUsage, run: migrate },
  backup: { usage: backupUsage, run: backup },
  call: { usage: callUsage, run: call },
  task: { usage: taskUsage, run: task },
  event: { usage: eventUsage, run: (argv) => event(argv) },
  tools: { usage: toolsUsage, run: tools },
  discover: { usage: discoverUsage, run: discover },
  login: { usage: loginUsage, run: login },
  logout: { usage: logoutUsage, run: logout },
  admin: { usage: adminUsage, help: adminHelp, run: admin },
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    printOut(usage);
    return 0;
  }
  if (name === 'version' || name === '--version') {
    printOut(VERSION);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  try {
    if (command === undefined) throw new UsageError(`unknown command "${name}"\n\n${usage}`);
    if (rest.includes('--help') || rest.includes('-h')) {
      printOut(command.help?.(rest) ?? command.usage);
      return 0;
    }
    return (await command.run(rest)) ?? 0;
  } catch (err) {
    if (err instanceof UsageError) {
      printErr(`durable-mcp ${name}: ${err.message}`);
      return 2;
    }
    printErr(`durable-mcp: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
