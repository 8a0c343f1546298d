// Summarises a .cpuprofile written by `npm run bench -- --cpu-prof DIR`: the functions that take the most CPU.
// usage: npx tsx bench/profile-summary.ts DIR/ours-tasks.cpuprofile [top N]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg] = process.argv.slice(2);
if (file === undefined) {
  console.error('usage: npx tsx bench/profile-summary.ts FILE.cpuprofile [N]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
const parents = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parents.set(c, n.id);

/** Time per node id, from the sample stream (each sample lasts until the next one). */
const timeById = new Map<number, number>();
profile.samples.forEach((id, i) => timeById.set(id, (timeById.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

const label = (n: ProfileNode) => {
  const { functionName, url, lineNumber } = n.callFrame;
  const where = url.replace(/^file:\/\//, '').replace(/^.*?\/(dist|node_modules|bench|examples)\//, '$1/');
  return `${functionName || '(anonymous)'} ${where ? `${where}:${lineNumber + 1}` : ''}`.trim();
};
const IDLE = new Set(['(idle)', '(program)']);
let busy = 0;
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const [id, t] of timeById) {
  const node = nodes.get(id)!;
  if (IDLE.has(node.callFrame.functionName)) continue;
  busy += t;
  const key = label(node);
  self.set(key, (self.get(key) ?? 0) + t);
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parents.get(cur)) {
    const k = label(nodes.get(cur)!);
    if (seen.has(k)) continue;
    seen.add(k);
    inclusive.set(k, (inclusive.get(k) ?? 0) + t);
  }
}
const pct = (t: number) => `${((t / busy) * 100).toFixed(1).padStart(5)} %`;
const print = (title: string, map: Map<string, number>, filter: (key: string) => boolean = () => true) => {
  console.log(`\n${title}`);
  const rows = [...map].filter(([k]) => filter(k)).sort((a, b) => b[1] - a[1]);
  for (const [k, t] of rows.slice(0, top))
    console.log(`${pct(t)}  ${(t / 1000).toFixed(0).padStart(6)} ms  ${k}`);
};
console.log(`${file}: ${(busy / 1e6).toFixed(1)} s of CPU (idle excluded); shares below are of that`);
print('self time', self);
print('inclusive time, our code (dist/)', inclusive, (k) => k.includes('dist/'));
