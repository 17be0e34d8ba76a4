/**
 * The user's view of the job machine as an SVG: the states a user names, the edges between them
 * in words, and (given a story) the job's steps drawn on it in order: each step numbered, its
 * edge in its attempt's colour, the way back from retrying to running drawn as its own edge.
 * Fixed positions: nine states read better placed by hand than by a layout engine. Drawn at a
 * legible size whatever the width; the page scrolls it rather than shrinking it.
 */
import { escapeXml } from './escape.js';
import type { JobStory, StoryState } from './job-story.js';

const NODE_W = 124;
const NODE_H = 38;
const WIDTH = 1000;
const HEIGHT = 560;

const POSITION: Record<StoryState, { x: number; y: number }> = {
  waiting: { x: 90, y: 200 },
  running: { x: 400, y: 200 },
  retrying: { x: 400, y: 420 },
  snoozed: { x: 150, y: 420 },
  lost: { x: 640, y: 420 },
  completed: { x: 880, y: 60 },
  dead: { x: 880, y: 200 },
  skipped: { x: 880, y: 300 },
  cancelled: { x: 880, y: 510 },
};

/** The edges of the user's view, with what takes them; `bend` curves one of a pair. */
const EDGES: ReadonlyArray<{ from: StoryState; to: StoryState; label: string; bend?: number }> = [
  { from: 'waiting', to: 'running', label: 'claimed' },
  { from: 'running', to: 'completed', label: 'handler returned' },
  { from: 'running', to: 'retrying', label: 'handler threw · deadline passed', bend: 70 },
  { from: 'retrying', to: 'running', label: 'retry due', bend: 70 },
  { from: 'running', to: 'dead', label: 'no attempt left' },
  { from: 'running', to: 'skipped', label: 'no handler' },
  { from: 'running', to: 'snoozed', label: 'handler snoozed', bend: 30 },
  { from: 'snoozed', to: 'running', label: 'snooze over', bend: 30 },
  { from: 'running', to: 'lost', label: 'lease lost' },
  { from: 'lost', to: 'retrying', label: 'rescued' },
  { from: 'lost', to: 'dead', label: 'rescued, none left' },
  { from: 'running', to: 'cancelled', label: 'cancel requested' },
  { from: 'waiting', to: 'cancelled', label: 'cancel requested', bend: 120 },
];

/** One colour per attempt (attempt 0, before any claim, is grey), cycling past eight. */
export const ATTEMPT_COLORS = ['#6e7781', '#0969da', '#bc4c00', '#8250df', '#1a7f37', '#bf3989', '#9a6700', '#0550ae', '#cf222e'];
export function attemptColor(attempt: number): string {
  return attempt === 0 ? ATTEMPT_COLORS[0]! : ATTEMPT_COLORS[1 + ((attempt - 1) % (ATTEMPT_COLORS.length - 1))]!;
}

const FINAL_FILL: Partial<Record<StoryState, string>> = { completed: '#dafbe1', dead: '#ffebe9', lost: '#ffebe9', cancelled: '#f3e8ff', skipped: '#eef1f4' };

interface Curve {
  d: string;
  /** The unit normal the curve bends along: labels sit on that side. */
  normal: { x: number; y: number };
  /** Where a label or a step number goes: the point at `t` along the curve. */
  at(t: number): { x: number; y: number };
}

/** A quadratic curve between the two boxes' borders, bent sideways by `bend` pixels. */
function curve(from: StoryState, to: StoryState, bend = 0): Curve {
  const a = POSITION[from];
  const b = POSITION[to];
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  const length = Math.hypot(dx, dy) || 1;
  const [nx, ny] = [-dy / length, dx / length];
  const c = { x: (a.x + b.x) / 2 + nx * bend, y: (a.y + b.y) / 2 + ny * bend };
  const clip = (p: { x: number; y: number }, toward: { x: number; y: number }) => {
    const vx = toward.x - p.x;
    const vy = toward.y - p.y;
    const scale = Math.min(Math.abs(NODE_W / 2 / (vx || 1e-9)), Math.abs(NODE_H / 2 / (vy || 1e-9)));
    return { x: p.x + vx * scale, y: p.y + vy * scale };
  };
  const start = clip(a, c);
  const end = clip(b, c);
  const point = (t: number) => ({
    x: (1 - t) ** 2 * start.x + 2 * (1 - t) * t * c.x + t ** 2 * end.x,
    y: (1 - t) ** 2 * start.y + 2 * (1 - t) * t * c.y + t ** 2 * end.y,
  });
  const r = (n: number) => Math.round(n * 10) / 10;
  return { d: `M${r(start.x)},${r(start.y)} Q${r(c.x)},${r(c.y)} ${r(end.x)},${r(end.y)}`, normal: { x: nx, y: ny }, at: point };
}

export function renderStorySvg(story: JobStory | null): string {
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="system-ui, sans-serif" font-size="14" role="img" aria-label="the job's path in the states a user names">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#8c959f"/></marker></defs>',
  );
  const taken = new Set((story?.steps ?? []).map((s) => `${s.from}->${s.to}`));
  for (const edge of EDGES) {
    const c = curve(edge.from, edge.to, edge.bend);
    // Beside the curve, on the side it bends to (above a straight one): never on the line.
    const side = edge.bend ? Math.sign(edge.bend) : c.normal.y > 0 ? -1 : 1;
    const mid = c.at(0.5);
    const label = { x: mid.x + c.normal.x * side * 10, y: mid.y + c.normal.y * side * 10 };
    const anchor = Math.abs(c.normal.x) < 0.5 ? 'middle' : c.normal.x * side > 0 ? 'start' : 'end';
    const key = `${edge.from}->${edge.to}`;
    parts.push(
      `<g data-edge="${key}" class="edge${taken.has(key) ? ' taken' : ''}"><path d="${c.d}" fill="none" stroke="#c4ccd4" stroke-width="1.5" marker-end="url(#arrow)"/>` +
        `<text x="${label.x.toFixed(1)}" y="${(label.y + (anchor === 'middle' ? -2 : 4)).toFixed(1)}" text-anchor="${anchor}" fill="#57606a" font-size="13">${escapeXml(edge.label)}</text></g>`,
    );
  }
  // The job's steps over the edges: each in its attempt's colour, numbered where it runs.
  const drawn = new Map<string, number>();
  for (const step of story?.steps ?? []) {
    if (step.from === null) continue;
    const key = `${step.from}->${step.to}`;
    const known = EDGES.find((e) => e.from === step.from && e.to === step.to);
    const times = drawn.get(key) ?? 0;
    drawn.set(key, times + 1);
    // An edge the view does not draw (retried by hand, cancelled while retrying): a dashed one.
    const c = curve(step.from, step.to, known?.bend ?? (times + 1) * 25);
    const p = c.at(Math.min(0.85, 0.25 + times * 0.3));
    const color = attemptColor(step.attempt);
    parts.push(
      `<g class="step" data-step="${step.n}" data-attempt="${step.attempt}" data-edge="${key}">` +
        `<path d="${c.d}" fill="none" stroke="${color}" stroke-width="3.5" stroke-opacity="0.85"${known ? '' : ' stroke-dasharray="6 4"'}/>` +
        `<circle cx="${p.x.toFixed(1)}" cy="${p.y.toFixed(1)}" r="12" fill="${color}"/>` +
        `<text x="${p.x.toFixed(1)}" y="${(p.y + 5).toFixed(1)}" text-anchor="middle" fill="#ffffff" font-size="13" font-weight="700">${step.n}</text>` +
        `<title>${escapeXml(`step ${step.n}, attempt ${step.attempt}: ${step.label}`)}</title></g>`,
    );
  }
  const visited = new Set((story?.steps ?? []).map((s) => s.to));
  for (const state of Object.keys(POSITION) as StoryState[]) {
    const { x, y } = POSITION[state];
    const isCurrent = story?.current === state;
    const fill = isCurrent ? (FINAL_FILL[state] ?? '#ddf4ff') : visited.has(state) ? '#f6f8fa' : '#ffffff';
    const stroke = isCurrent ? '#1f2328' : visited.has(state) ? '#57606a' : '#c4ccd4';
    parts.push(
      `<g data-state="${state}" class="state${visited.has(state) ? ' visited' : ''}${isCurrent ? ' current' : ''}">` +
        `<rect x="${x - NODE_W / 2}" y="${y - NODE_H / 2}" width="${NODE_W}" height="${NODE_H}" rx="19" fill="${fill}" stroke="${stroke}" stroke-width="${isCurrent ? 2.5 : 1.5}"/>` +
        `<text x="${x}" y="${y + 5}" text-anchor="middle" fill="#1f2328" font-size="15"${isCurrent ? ' font-weight="700"' : ''}>${state}</text></g>`,
    );
  }
  parts.push('</svg>');
  return parts.join('\n');
}
