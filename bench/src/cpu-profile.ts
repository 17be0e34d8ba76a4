/**
 * Where jobvisor's CPU goes: a V8 CPU profile (the format `node --cpu-prof` writes, taken
 * over the measured drain window only) summarised by self time per package and per file.
 * Builtins without a script (JSON.parse, Promise internals …) count for the nearest caller
 * that has one, so "pg" includes the JSON parsing pg asks for.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface TimeShare {
  name: string;
  ms: number;
  share: number;
  usPerJob: number;
}

export interface ProfileSummary {
  jobs: number;
  totalMs: number;
  byCategory: TimeShare[];
  /** Self time in jobvisor's own files. */
  byJobvisorFile: TimeShare[];
  topFunctions: Array<TimeShare & { category: string }>;
}

const PG_PACKAGES = new Set(['pg', 'pg-pool', 'pg-protocol', 'pg-types', 'pg-int8', 'pgpass', 'pg-connection-string', 'postgres-array', 'postgres-bytea', 'postgres-date', 'postgres-interval', 'split2']);

export async function summariseProfile(path: string, jobs: number, jobvisorRoot: string): Promise<ProfileSummary> {
  const profile = JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const srcDir = `${jobvisorRoot.replace(/\/$/, '')}/src/`;

  const fileOf = (url: string) => (url.startsWith('file://') ? fileURLToPath(url) : url);
  const categoryOf = (node: ProfileNode): { category: string; file: string } => {
    let n: ProfileNode | undefined = node;
    const fn = node.callFrame.functionName;
    if (fn === '(garbage collector)') return { category: 'GC', file: '' };
    if (fn === '(idle)') return { category: 'idle (waiting for I/O)', file: '' };
    if (fn === '(program)') return { category: 'V8 / native (program)', file: '' };
    while (n && n.callFrame.url === '') {
      const up = parent.get(n.id);
      n = up === undefined ? undefined : byId.get(up);
      if (n?.callFrame.functionName === '(root)') n = undefined;
    }
    if (!n) return { category: 'V8 builtins (no caller)', file: '' };
    const file = fileOf(n.callFrame.url);
    if (file.startsWith('node:')) return { category: 'Node.js core', file };
    const nm = file.lastIndexOf('/node_modules/');
    if (nm >= 0) {
      const rest = file.slice(nm + '/node_modules/'.length).split('/');
      const pkg = rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
      if (PG_PACKAGES.has(pkg)) return { category: 'pg (driver)', file };
      if (pkg === 'xstate' || pkg.startsWith('@xstate/')) return { category: 'xstate', file };
      if (pkg.startsWith('pino') || pkg === 'sonic-boom' || pkg === 'thread-stream') return { category: 'pino', file };
      return { category: pkg, file };
    }
    if (file.startsWith(srcDir)) return { category: 'jobvisor (our code)', file: file.slice(srcDir.length - 4) };
    if (file.includes('/bench/')) return { category: 'bench harness', file };
    return { category: 'other', file };
  };

  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    // timeDeltas[i + 1] is the time from sample i to the next one: what sample i stands for.
    const us = profile.timeDeltas[i + 1] ?? 0;
    const id = profile.samples[i]!;
    selfUs.set(id, (selfUs.get(id) ?? 0) + us);
  }
  const categories = new Map<string, number>();
  const files = new Map<string, number>();
  const functions = new Map<string, { us: number; category: string }>();
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === '(root)') continue;
    totalUs += us;
    const { category, file } = categoryOf(node);
    categories.set(category, (categories.get(category) ?? 0) + us);
    if (category === 'jobvisor (our code)') files.set(file, (files.get(file) ?? 0) + us);
    const own = fileOf(node.callFrame.url);
    const where = own === '' ? '(builtin)' : own.replace(/^.*\/node_modules\//, '').replace(srcDir, 'src/');
    // Line numbers of tsx-compiled files are not the source's: only packages' are kept.
    const line = own.includes('/node_modules/') ? `:${node.callFrame.lineNumber + 1}` : '';
    const key = `${node.callFrame.functionName || '(anonymous)'} ${where}${line}`;
    const f = functions.get(key) ?? { us: 0, category };
    f.us += us;
    functions.set(key, f);
  }
  const share = (name: string, us: number): TimeShare => ({ name, ms: us / 1000, share: us / totalUs, usPerJob: us / jobs });
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).map(([name, us]) => share(name, us));
  return {
    jobs,
    totalMs: totalUs / 1000,
    byCategory: sorted(categories),
    byJobvisorFile: sorted(files),
    topFunctions: [...functions]
      .sort((a, b) => b[1].us - a[1].us)
      .slice(0, 15)
      .map(([name, f]) => ({ ...share(name, f.us), category: f.category })),
  };
}
