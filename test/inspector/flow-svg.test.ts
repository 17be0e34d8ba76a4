/**
 * A flow's DAG for the inspector: the layered layout (longest-path layers, ordered, wide
 * layers folded, the same picture every time), the SVG (a box per job coloured by state,
 * linking to its page, every name escaped) and the API routes that serve both.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/adapters/memory/index.js';
import type { FlowRecord, JobDependency } from '../../src/adapters/store.js';
import { FLOW_NODE, layoutFlow } from '../../src/inspector/flow-layout.js';
import { FLOW_STATE_COLORS, renderFlowSvg } from '../../src/inspector/flow-svg.js';
import { startInspector } from '../../src/inspector/index.js';
import { defineFlow, defineQueue, enqueueFlow, flowJob, type Job, type JobRecord, type JobState } from '../../src/index.js';
import { inBox, samplePath } from '../support/svg-geometry.js';

const ids = (n: number) => Array.from({ length: n }, (_, i) => ({ id: String(i + 1) }));
const edge = (from: string, to: string) => ({ from, to, kind: 'parent' });

/** Each edge of a layout that passes through (or within 2 px of) a box it does not connect,
 *  or leaves the drawing, in words. */
function edgesOverBoxes(layout: ReturnType<typeof layoutFlow>): string[] {
  const found: string[] = [];
  for (const e of layout.edges) {
    const points = samplePath(e.d);
    if (points.some((p) => !inBox(p, { x: 0, y: 0, width: layout.width, height: layout.height }, 0.01))) found.push(`${e.from}->${e.to} leaves the drawing`);
    for (const n of layout.nodes) {
      if (n.key === e.from || n.key === e.to) continue;
      if (points.some((p) => inBox(p, { x: n.x, y: n.y, width: FLOW_NODE.width, height: FLOW_NODE.height }, 2))) found.push(`${e.from}->${e.to} through ${n.key}`);
    }
  }
  return found;
}

describe('layoutFlow', () => {
  it('puts each job one layer right of its deepest parent, and orders a layer by its parents', () => {
    // 1 → 2 → 4, 1 → 4 (a shortcut), 1 → 3; 5 alone; 6 waits for 3 only.
    const layout = layoutFlow({ nodes: ids(6), edges: [edge('1', '2'), edge('2', '4'), edge('1', '4'), edge('1', '3'), edge('3', '6')] });
    const at = new Map(layout.nodes.map((n) => [n.key, n]));
    expect(Object.fromEntries(layout.nodes.map((n) => [n.key, n.layer]))).toEqual({ '1': 0, '5': 0, '2': 1, '3': 1, '4': 2, '6': 2 });
    for (const n of layout.nodes) expect(n.x).toBe(FLOW_NODE.pad + n.layer * (FLOW_NODE.width + FLOW_NODE.gapX));
    // In a layer, by the mean position of the parents, then id.
    expect(at.get('2')!.y).toBeLessThan(at.get('3')!.y);
    expect(at.get('4')!.y).toBeLessThan(at.get('6')!.y);
    // Boxes of a column never overlap, and all fit inside the drawing.
    for (const a of layout.nodes) {
      expect(a.x + FLOW_NODE.width).toBeLessThanOrEqual(layout.width);
      expect(a.y + FLOW_NODE.height).toBeLessThanOrEqual(layout.height);
      for (const b of layout.nodes) if (a !== b && a.layer === b.layer) expect(Math.abs(a.y - b.y)).toBeGreaterThanOrEqual(FLOW_NODE.height);
    }
    expect(layout.edges.map((e) => `${e.from}->${e.to}`)).toEqual(['1->2', '2->4', '1->4', '1->3', '3->6']);
  });

  it('routes an edge that skips layers between the boxes of the layers it crosses, never under one', () => {
    // The nine-job flow of docs/diagram-layout-trial.md: 1 fetch, 2 schema, 3 clean, 4 geocode,
    // 5 thumbnails, 6 merge, 7 publish, 8 notify, 9 audit; fetch → notify skips three layers,
    // thumbnails → publish one.
    const etl = [
      edge('1', '4'), edge('1', '5'), edge('1', '3'), edge('2', '3'), edge('2', '9'), edge('4', '6'),
      edge('3', '6'), edge('6', '7'), edge('5', '7'), edge('7', '8'), edge('1', '8'),
    ];
    expect(edgesOverBoxes(layoutFlow({ nodes: ids(9), edges: etl }))).toEqual([]);
  });

  it('keeps every edge of any DAG off the boxes it does not connect, folded layers too', () => {
    const dag = fc
      .integer({ min: 2, max: 24 })
      .chain((n) =>
        fc.record({
          n: fc.constant(n),
          edges: fc.uniqueArray(fc.tuple(fc.integer({ min: 1, max: n }), fc.integer({ min: 1, max: n })).filter(([a, b]) => a < b), {
            maxLength: 3 * n,
            selector: ([a, b]) => `${a}-${b}`,
          }),
          maxPerLayer: fc.integer({ min: 2, max: 8 }),
        }),
      );
    fc.assert(
      fc.property(dag, ({ n, edges, maxPerLayer }) => {
        const layout = layoutFlow({ nodes: ids(n), edges: edges.map(([a, b]) => edge(String(a), String(b))), maxPerLayer });
        expect(edgesOverBoxes(layout)).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('orders a layer by its parents’ positions, not by id', () => {
    // 1 and 2 are roots; 3 waits for 2, 4 waits for 1: 4 goes above 3.
    const layout = layoutFlow({ nodes: ids(4), edges: [edge('2', '3'), edge('1', '4')] });
    const y = new Map(layout.nodes.map((n) => [n.key, n.y]));
    expect(y.get('4')!).toBeLessThan(y.get('3')!);
  });

  it('gives the same layout for the same flow, whatever order the edges come in', () => {
    const edges = [edge('1', '2'), edge('1', '3'), edge('2', '4'), edge('3', '4'), edge('4', '5')];
    const one = layoutFlow({ nodes: ids(5), edges });
    const two = layoutFlow({ nodes: ids(5), edges: [...edges].reverse() });
    const positions = (l: typeof one) => Object.fromEntries(l.nodes.map((n) => [n.key, [n.x, n.y]]));
    expect(positions(two)).toEqual(positions(one));
    const paths = (l: typeof one) => Object.fromEntries(l.edges.map((e) => [`${e.from}->${e.to}`, e.d]));
    expect(paths(two)).toEqual(paths(one));
    expect(layoutFlow({ nodes: ids(5), edges })).toEqual(one);
  });

  it('folds a layer wider than the limit into one box that takes its edges once', () => {
    // A fan-out of 60 and a fan-in.
    const nodes = ids(62);
    const edges = [...nodes.slice(1, 61).map((n) => edge('1', n.id)), ...nodes.slice(1, 61).map((n) => edge(n.id, '62'))];
    const layout = layoutFlow({ nodes, edges, maxPerLayer: 10 });
    const middle = layout.nodes.filter((n) => n.layer === 1);
    expect(middle).toHaveLength(10);
    const more = middle.find((n) => n.folded)!;
    expect(more.key).toBe('more:1');
    expect(more.nodes.map((n) => n.id)).toEqual(nodes.slice(10, 61).map((n) => n.id));
    expect(layout.edges.filter((e) => e.from === '1')).toHaveLength(10);
    expect(layout.edges.filter((e) => e.to === '62')).toHaveLength(10);
    expect(layout.edges.filter((e) => e.from === 'more:1' || e.to === 'more:1').map((e) => `${e.from}->${e.to}`)).toEqual(['1->more:1', 'more:1->62']);
  });

  it('puts the jobs of a cycle (which enqueueFlow refuses) in a last layer instead of looping', () => {
    const layout = layoutFlow({ nodes: ids(3), edges: [edge('1', '2'), edge('2', '3'), edge('3', '2')] });
    expect(Object.fromEntries(layout.nodes.map((n) => [n.key, n.layer]))).toEqual({ '1': 0, '2': 1, '3': 1 });
  });

  it('draws an empty flow as an empty drawing', () => {
    expect(layoutFlow({ nodes: [], edges: [] })).toMatchObject({ nodes: [], edges: [] });
  });
});

function job(id: string, state: JobState, extra: Partial<JobRecord> = {}): JobRecord {
  const at = new Date('2026-12-01T00:00:00Z');
  return {
    id, queue: 'q', kind: 'k', payload: {}, state, priority: 0, runAt: at, attempt: 0, maxAttempts: 3, uniqueKey: null,
    concurrencyKey: null, workerId: null, leaseToken: null, leaseExpiresAt: null, result: null, error: null, createdAt: at,
    updatedAt: at, finishedAt: null, expiresAt: null, cancelRequestedAt: null, progress: null, traceContext: null, steps: [],
    waitingForSignal: null, tenant: null, debounceKey: null, ...extra,
  };
}

const dep = (jobId: string, dependsOnId: string, role: JobDependency['role'] = 'parent'): JobDependency => ({
  jobId, dependsOnId, name: dependsOnId, role, onFailure: 'cancel',
});

/** The boxes of a drawing: job id → [node name, state, fill]. */
function boxes(svg: string): Record<string, [string, string, string]> {
  const found: Record<string, [string, string, string]> = {};
  for (const m of svg.matchAll(/<a href="#\/jobs\/(\d+)" class="flow-node" data-job-id="\d+" data-node="([^"]*)" data-state="(\w+)"><title>[^<]*<\/title><rect [^>]*fill="([^"]+)"/g)) {
    found[m[1]!] = [m[2]!, m[3]!, m[4]!];
  }
  return found;
}

describe('renderFlowSvg', () => {
  it('draws a box per job, coloured by its state and linking to its page, and an arrow per edge', () => {
    const flow: FlowRecord = {
      id: '7', name: 'diamond', createdAt: new Date(),
      jobs: [
        { node: 'a', job: job('1', 'completed') },
        { node: 'b', job: job('2', 'running') },
        { node: 'c', job: job('3', 'pending') },
        { node: 'd', job: job('4', 'waiting') },
      ],
      edges: [dep('2', '1'), dep('3', '1'), dep('4', '2'), dep('4', '3')],
    };
    const svg = renderFlowSvg(flow);
    expect(boxes(svg)).toEqual({
      '1': ['a', 'completed', FLOW_STATE_COLORS.completed.fill],
      '2': ['b', 'running', FLOW_STATE_COLORS.running.fill],
      '3': ['c', 'pending', FLOW_STATE_COLORS.pending.fill],
      '4': ['d', 'waiting', FLOW_STATE_COLORS.waiting.fill],
    });
    expect([...svg.matchAll(/data-edge="([^"]+)"/g)].map((m) => m[1]!.replace('&gt;', '>')).sort()).toEqual(['1->2', '1->3', '2->4', '3->4']);
    expect(svg).toContain('data-flow-id="7"');
    // Every state has its own colour.
    expect(new Set(Object.values(FLOW_STATE_COLORS).map((c) => c.fill)).size).toBe(Object.keys(FLOW_STATE_COLORS).length);
  });

  it('escapes every name, and cuts a long one (whole in the tooltip)', () => {
    const hostile = `<script>alert("x")</script>&'${'n'.repeat(200)}`;
    const flow: FlowRecord = {
      id: '1', name: `flow ${hostile}`, createdAt: new Date(),
      jobs: [{ node: hostile, job: job('1', 'dead', { queue: `q<img src=x onerror=alert(1)>`, kind: 'k"&' }) }],
      edges: [],
    };
    const svg = renderFlowSvg(flow);
    expect(svg).not.toMatch(/<script|<img|onerror=alert\(1\)>/);
    expect(svg).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;');
    expect(svg).toContain(`&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;${'n'.repeat(200)}: job 1`);
    expect(svg).toMatch(/font-weight="600" fill="#1f2328">&lt;script&gt;alert\(&quot;x&quot;\)&lt;\/s…<\/text>/);
  });

  it('draws children a job added as dashed edges from it, and a parent outside the flow in grey', () => {
    const flow: FlowRecord = {
      id: '2', name: 'crawl', createdAt: new Date(),
      jobs: [
        { node: 'crawl', job: job('10', 'waiting') },
        { node: 'page-0', job: job('11', 'running') },
        { node: 'page-1', job: job('12', 'completed') },
      ],
      edges: [dep('10', '11', 'child'), dep('10', '12', 'child'), dep('10', '3')],
    };
    const svg = renderFlowSvg(flow);
    expect(svg).toMatch(/<path class="flow-edge child" data-edge="10-&gt;11"[^>]*stroke-dasharray/);
    expect(svg).toMatch(/<path class="flow-edge parent" data-edge="3-&gt;10"(?![^>]*stroke-dasharray)/);
    expect(svg).toMatch(/<a href="#\/jobs\/3" class="flow-node" data-job-id="3" data-node="#3" data-state="outside">/);
    expect(svg).toContain('outside this flow');
  });

  it('sums a folded column’s states', () => {
    const children = Array.from({ length: 30 }, (_, i) => ({ node: `c${i}`, job: job(String(i + 2), i < 12 ? 'completed' : 'pending') }));
    const flow: FlowRecord = {
      id: '3', name: 'fan', createdAt: new Date(),
      jobs: [{ node: 'root', job: job('1', 'completed') }, ...children],
      edges: children.map(({ job: j }) => dep(j.id, '1')),
    };
    const svg = renderFlowSvg(flow, { maxPerLayer: 5 });
    expect(Object.keys(boxes(svg))).toHaveLength(5);
    expect(svg).toContain('<g class="flow-more" data-count="26"><title>26 more jobs in this column: 8 completed, 18 pending</title>');
  });
});

describe('inspector flow routes', () => {
  const steps = defineQueue('steps', { handlers: { step: async (_job: Job<{ n: number }>) => ({ ok: true }) } });
  const diamond = defineFlow('diamond', {
    a: flowJob(steps, 'step', { n: 1 }),
    b: flowJob(steps, 'step', { n: 2 }, { dependsOn: ['a'] }),
    c: flowJob(steps, 'step', { n: 3 }, { dependsOn: ['a'] }),
    d: flowJob(steps, 'step', { n: 4 }, { dependsOn: ['b', 'c'] }),
  });

  it('serves a flow, its graph and a job’s flow; 404 for what is not there, 400 for a bad id', async () => {
    const store = memoryStore();
    const { flowId, jobs } = await enqueueFlow(store, diamond);
    const { job: loose } = await steps.enqueue(store, 'step', { n: 9 });
    const inspector = await startInspector({ store, port: 0 });
    try {
      const get = async (path: string) => {
        const res = await fetch(new URL(path, inspector.url));
        return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
      };
      const view = await get(`/api/flows/${flowId}`);
      expect(view.status).toBe(200);
      const body = JSON.parse(view.text);
      expect(body).toMatchObject({ id: flowId, name: 'diamond', counts: { pending: 1, waiting: 3 } });
      expect(body.jobs.map((j: { node: string; job: { id: string } }) => [j.node, j.job.id])).toEqual(
        ['a', 'b', 'c', 'd'].map((n) => [n, jobs[n as 'a'].id]),
      );
      expect(body.edges).toHaveLength(4);
      expect(view.text).not.toContain('leaseToken');

      const svg = await get(`/api/flows/${flowId}/graph.svg`);
      expect(svg.type).toBe('image/svg+xml; charset=utf-8');
      expect(Object.values(boxes(svg.text)).map(([node, state]) => [node, state])).toEqual([
        ['a', 'pending'], ['b', 'waiting'], ['c', 'waiting'], ['d', 'waiting'],
      ]);

      expect(JSON.parse((await get(`/api/jobs/${jobs.c.id}/flow`)).text)).toEqual({ flow: { id: flowId, name: 'diamond', node: 'c', jobs: 4 } });
      expect(JSON.parse((await get(`/api/jobs/${loose.id}/flow`)).text)).toEqual({ flow: null });
      expect((await get('/api/jobs/999/flow')).status).toBe(404);
      expect((await get('/api/flows/999')).status).toBe(404);
      expect((await get('/api/flows/999/graph.svg')).status).toBe(404);
      expect((await get('/api/flows/%3Cx%3E')).status).toBe(400);
      expect((await get(`/api/flows/${flowId}/other`)).status).toBe(404);
    } finally {
      await inspector.close();
    }
  });

  it('refuses to delete a job its flow still waits for, and says why', async () => {
    const store = memoryStore();
    const { jobs } = await enqueueFlow(store, diamond);
    const inspector = await startInspector({ store, port: 0, token: 'flow-test-token' });
    try {
      const res = await fetch(new URL(`/api/jobs/${jobs.a.id}/delete`, inspector.url), { method: 'POST', headers: { 'x-jobvisor-token': 'flow-test-token' } });
      expect(res.status).toBe(409);
      expect(await res.json()).toEqual({ error: `job ${jobs.a.id} is waited for by jobs of its flow: delete it once they have run, or cancel them first` });
      expect(await store.getJob({ id: jobs.a.id })).toMatchObject({ state: 'pending' });
    } finally {
      await inspector.close();
    }
  });
});
