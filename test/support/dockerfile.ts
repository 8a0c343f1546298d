// Reads a Dockerfile and its .dockerignore as `docker build` does, enough to replay the stages without Docker: the
// instructions of each stage, and what a COPY from the build context brings (the context minus .dockerignore).
import { cpSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, posix, relative, sep } from 'node:path';

export interface Instruction {
  keyword: string;
  args: string;
}

export interface Stage {
  name: string | undefined;
  instructions: Instruction[];
}

export interface Copy {
  from: string | undefined;
  sources: string[];
  dest: string;
}

/** The stages in order, each with its instructions (continuation lines joined, comments left out). */
export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  const logical = text.replace(/\\\n(\s*#.*\n)*/g, ' ').split('\n');
  for (const line of logical.map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^(\S+)\s+(.*)$/.exec(line);
    if (m === null) throw new Error(`unreadable Dockerfile line: ${line}`);
    const keyword = (m[1] as string).toUpperCase();
    const args = (m[2] as string).replace(/\s+/g, ' ');
    if (keyword === 'FROM') stages.push({ name: /\sAS\s+(\S+)$/i.exec(args)?.[1], instructions: [] });
    else if (stages.length === 0) throw new Error(`${keyword} before FROM`);
    else stages[stages.length - 1]?.instructions.push({ keyword, args });
  }
  return stages;
}

/** A COPY's sources and destination (whitespace form; --chown and --chmod change no content and are dropped). */
export function parseCopy(args: string): Copy {
  const words = args.split(' ');
  let from: string | undefined;
  while (words[0]?.startsWith('--') === true) {
    const flag = words.shift() as string;
    if (flag.startsWith('--from=')) from = flag.slice('--from='.length);
    else if (!/^--(chown|chmod)=/.test(flag)) throw new Error(`COPY flag not replayed: ${flag}`);
  }
  if (words.length < 2 || words[0]?.startsWith('[') === true)
    throw new Error(`COPY form not replayed: ${args}`);
  return { from, sources: words.slice(0, -1), dest: words[words.length - 1] as string };
}

/** Docker's pattern syntax: `*` and `?` within one path segment, `**` across segments. */
function patternRegExp(pattern: string): RegExp {
  if (/[[\\]/.test(pattern)) throw new Error(`.dockerignore pattern not replayed: ${pattern}`);
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*' && pattern[i + 1] === '*') {
      const slash = pattern[i + 2] === '/';
      re += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/**
 * Whether a path of the context (relative, with `/`) is left out by .dockerignore: the last pattern matching the
 * path or one of its parent folders decides, `!` patterns putting it back.
 */
export function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const keep = l.startsWith('!');
      const clean = posix.normalize(keep ? l.slice(1).trim() : l).replace(/^\/+|\/+$/g, '');
      return { keep, re: patternRegExp(clean) };
    });
  return (path) => {
    const prefixes = path.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'));
    let ignored = false;
    for (const { keep, re } of rules) if (prefixes.some((p) => re.test(p))) ignored = !keep;
    return ignored;
  };
}

/** Every file under `dir` (relative to `context`, with `/`), left out or not. */
function filesUnder(context: string, dir: string): string[] {
  return readdirSync(join(context, dir), { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => relative(context, join(e.parentPath, e.name)).split(sep).join('/'));
}

/**
 * Copies a COPY's sources from the build context into `destAbs` as Docker does: a folder's contents (not the folder
 * itself) and single files; into `destAbs` as a folder when it ends with `/` or there are several sources.
 * A source .dockerignore leaves out entirely fails, as `docker build` does.
 */
export function copyFromContext(
  context: string,
  ignored: (p: string) => boolean,
  copy: Copy,
  destAbs: string,
): void {
  const intoFolder = copy.dest.endsWith('/') || copy.sources.length > 1;
  for (const source of copy.sources.map((s) => posix.normalize(s).replace(/^\.\/|\/$/g, ''))) {
    const isDir = statSync(join(context, source)).isDirectory();
    const files = (isDir ? filesUnder(context, source) : [source]).filter((f) => !ignored(f));
    if (files.length === 0)
      throw new Error(`COPY ${source}: not found in the build context (or .dockerignore'd)`);
    for (const file of files) {
      const target = isDir
        ? join(destAbs, posix.relative(source, file))
        : intoFolder
          ? join(destAbs, basename(file))
          : destAbs;
      mkdirSync(dirname(target), { recursive: true });
      cpSync(join(context, file), target);
    }
  }
}
