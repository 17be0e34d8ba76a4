/**
 * The user's view of the job machine as an SVG: the states a user names, the edges between them
 * in words, and (given a story) the job's steps drawn on it in order: each step numbered, its
 * edge in its attempt's colour (one line per attempt beside each other where several took an
 * edge, the numbers painted over everything), the way back from retrying to running drawn as
 * its own edge.
 * Fixed positions: nine states read better placed by hand than by a layout engine. Labels are
 * placed where they meet no state, step number or other label (label-place.ts). Drawn at a
 * legible size whatever the width; the page scrolls it rather than shrinking it.
 */
import { escapeXml } from './escape.js';
import type { JobStory, StoryState } from './job-story.js';
import { type Box, placeLabel, type Point, samplePoints } from './label-place.js';

const NODE_W = 124;
const NODE_H = 38;
const WIDTH = 1000;
const HEIGHT = 500;
const LABEL_SIZE = 13;
const STEP_R = 12;
const STEP_LINE = 3.5;
/** Between the lines of the attempts that took one edge: a line's width and a hairline, so
 *  each shows whole and apart; closer when many attempts took it, so the band stays narrow. */
const STRAND_GAP = STEP_LINE + 1;
const STRAND_BAND = 16;

/** Finals on the right; the loops a job can go round (snoozed, retrying) above and below running. */
const POSITION: Record<StoryState, { x: number; y: number }> = {
  snoozed: { x: 400, y: 50 },
  sleeping: { x: 160, y: 60 },
  waiting: { x: 90, y: 220 },
  running: { x: 400, y: 220 },
  retrying: { x: 400, y: 440 },
  lost: { x: 660, y: 440 },
  cancelled: { x: 90, y: 440 },
  completed: { x: 880, y: 50 },
  dead: { x: 880, y: 220 },
  skipped: { x: 880, y: 330 },
};

/** The edges of the user's view, with what takes them (a label of one or two lines); `bend`
 *  curves one of a pair. */
const EDGES: ReadonlyArray<{ from: StoryState; to: StoryState; label: readonly string[]; bend?: number }> = [
  { from: 'waiting', to: 'running', label: ['claimed'] },
  { from: 'running', to: 'completed', label: ['handler returned'] },
  { from: 'running', to: 'retrying', label: ['handler threw', 'deadline passed'], bend: 70 },
  { from: 'retrying', to: 'running', label: ['retry due'], bend: 70 },
  { from: 'running', to: 'dead', label: ['no attempt left'] },
  { from: 'running', to: 'skipped', label: ['no handler'] },
  { from: 'running', to: 'snoozed', label: ['handler snoozed'], bend: 40 },
  { from: 'snoozed', to: 'running', label: ['snooze over'], bend: 40 },
  { from: 'running', to: 'lost', label: ['lease lost'] },
  { from: 'lost', to: 'retrying', label: ['rescued'] },
  { from: 'lost', to: 'dead', label: ['rescued,', 'none left'] },
  { from: 'running', to: 'cancelled', label: ['cancel requested'] },
  { from: 'waiting', to: 'cancelled', label: ['cancel requested'] },
  { from: 'running', to: 'sleeping', label: ['handler sleeps', 'or waits'], bend: 30 },
  { from: 'sleeping', to: 'running', label: ['woke'], bend: 30 },
  { from: 'sleeping', to: 'waiting', label: ['signal arrived'] },
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
  at(t: number): Point;
  /** About as long as the curve (its control polygon). */
  length: number;
}

/** A quadratic curve between the two boxes' borders, bent sideways by `bend` pixels, or the
 *  curve that runs `offset` pixels beside it (along the normal): one attempt's line of an edge
 *  several attempts took. */
function curve(from: StoryState, to: StoryState, bend = 0, offset = 0): Curve {
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
  const [start, control, end] = beside(clip(a, c), c, clip(b, c), offset);
  const point = (t: number) => ({
    x: (1 - t) ** 2 * start.x + 2 * (1 - t) * t * control.x + t ** 2 * end.x,
    y: (1 - t) ** 2 * start.y + 2 * (1 - t) * t * control.y + t ** 2 * end.y,
  });
  const r = (n: number) => Math.round(n * 10) / 10;
  return {
    d: `M${r(start.x)},${r(start.y)} Q${r(control.x)},${r(control.y)} ${r(end.x)},${r(end.y)}`,
    normal: { x: nx, y: ny },
    at: point,
    length: Math.hypot(control.x - start.x, control.y - start.y) + Math.hypot(end.x - control.x, end.y - control.y),
  };
}

/** A quadratic curve moved `offset` pixels sideways: each end along its own tangent's normal,
 *  the control point where the two moved tangents meet, so the two curves stay about
 *  `offset` apart all along (Tiller and Hanson's offset of a control polygon). */
function beside(start: Point, c: Point, end: Point, offset: number): [Point, Point, Point] {
  if (offset === 0) return [start, c, end];
  const unitNormal = (p: Point, q: Point) => {
    const length = Math.hypot(q.x - p.x, q.y - p.y) || 1;
    return { x: -(q.y - p.y) / length, y: (q.x - p.x) / length };
  };
  const n0 = unitNormal(start, c);
  const n1 = unitNormal(c, end);
  const k = offset / (1 + n0.x * n1.x + n0.y * n1.y);
  return [
    { x: start.x + n0.x * offset, y: start.y + n0.y * offset },
    { x: c.x + (n0.x + n1.x) * k, y: c.y + (n0.y + n1.y) * k },
    { x: end.x + n1.x * offset, y: end.y + n1.y * offset },
  ];
}

function nodeBox(state: StoryState, pad = 4): Box {
  const { x, y } = POSITION[state];
  return { x: x - NODE_W / 2 - pad, y: y - NODE_H / 2 - pad, width: NODE_W + 2 * pad, height: NODE_H + 2 * pad };
}

/** How far beside its edge an attempt's line runs, the attempts in the order they took it,
 *  centred on the edge. */
function strandOffset(attempts: readonly number[], attempt: number): number {
  if (attempts.length < 2) return 0;
  const gap = Math.min(STRAND_GAP, STRAND_BAND / (attempts.length - 1));
  return (attempts.indexOf(attempt) - (attempts.length - 1) / 2) * gap;
}

const f = (n: number) => n.toFixed(1);

export function renderStorySvg(story: JobStory | null): string {
  const parts: string[] = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="system-ui, sans-serif" font-size="14" role="img" aria-label="the job's path in the states a user names">`,
    '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#8c959f"/></marker></defs>',
  );
  const taken = new Set((story?.steps ?? []).map((s) => `${s.from}->${s.to}`));
  // The job's steps first: their numbers are fixed on their edges, and labels keep off them.
  // Lines and numbers go apart: all the lines under the states, all the numbers over
  // everything, so that a later step on the same edge never hides an earlier one's number.
  const stepLines: string[] = [];
  const stepMarkers: string[] = [];
  const stepBoxes: Box[] = [];
  const drawn = new Map<string, number>();
  const lines: Point[] = [];
  // An edge several attempts took: one line per attempt, side by side, so every attempt's
  // colour shows along the whole edge (and one attempt's way round can be followed by colour).
  const attemptsOn = new Map<string, number[]>();
  for (const step of story?.steps ?? []) {
    const key = `${step.from}->${step.to}`;
    const attempts = attemptsOn.get(key) ?? [];
    if (!attempts.includes(step.attempt)) attempts.push(step.attempt);
    attemptsOn.set(key, attempts);
  }
  for (const step of story?.steps ?? []) {
    if (step.from === null) continue;
    const key = `${step.from}->${step.to}`;
    const known = EDGES.find((e) => e.from === step.from && e.to === step.to);
    const times = drawn.get(key) ?? 0;
    drawn.set(key, times + 1);
    // An edge the view does not draw (retried by hand, cancelled while retrying): a dashed one,
    // bent further each time it is taken.
    const c = known
      ? curve(step.from, step.to, known.bend, strandOffset(attemptsOn.get(key)!, step.attempt))
      : curve(step.from, step.to, (times + 1) * 25);
    if (!known) lines.push(...samplePoints(c.at, c.length));
    const p = c.at(Math.min(0.85, 0.25 + times * 0.3));
    stepBoxes.push({ x: p.x - STEP_R - 2, y: p.y - STEP_R - 2, width: 2 * STEP_R + 4, height: 2 * STEP_R + 4 });
    const color = attemptColor(step.attempt);
    const data = `data-step="${step.n}" data-attempt="${step.attempt}" data-edge="${key}"`;
    stepLines.push(
      `<path class="step-line" ${data} d="${c.d}" fill="none" stroke="${color}" stroke-width="${STEP_LINE}" stroke-opacity="0.85"${known ? '' : ' stroke-dasharray="6 4"'}/>`,
    );
    stepMarkers.push(
      `<g class="step" ${data}>` +
        `<circle cx="${f(p.x)}" cy="${f(p.y)}" r="${STEP_R}" fill="${color}"/>` +
        `<text x="${f(p.x)}" y="${f(p.y + 5)}" text-anchor="middle" fill="#ffffff" font-size="13" font-weight="700">${step.n}</text>` +
        `<title>${escapeXml(`step ${step.n}, attempt ${step.attempt}: ${step.label}`)}</title></g>`,
    );
  }
  const curves = EDGES.map((edge) => curve(edge.from, edge.to, edge.bend));
  for (const c of curves) lines.push(...samplePoints(c.at, c.length));
  const boxes: Box[] = [...(Object.keys(POSITION) as StoryState[]).map((state) => nodeBox(state)), ...stepBoxes];
  const canvas = { x: 0, y: 0, width: WIDTH, height: HEIGHT };
  EDGES.forEach((edge, i) => {
    const c = curves[i]!;
    // Beside the curve, on the side it bends to (above a straight one) when there is room.
    const side = edge.bend ? Math.sign(edge.bend) : c.normal.y > 0 ? -1 : 1;
    const spot = placeLabel({ lines: edge.label, fontSize: LABEL_SIZE, at: c.at, normal: c.normal, side }, boxes, lines, canvas);
    boxes.push(spot.box);
    const key = `${edge.from}->${edge.to}`;
    const text = edge.label
      .map((line, n) => `<tspan x="${f(spot.x)}"${n === 0 ? '' : ` dy="${LABEL_SIZE * 1.2}"`}>${escapeXml(line)}</tspan>`)
      .join('');
    parts.push(
      `<g data-edge="${key}" class="edge${taken.has(key) ? ' taken' : ''}"><path d="${c.d}" fill="none" stroke="#c4ccd4" stroke-width="1.5" marker-end="url(#arrow)"/>` +
        `<text class="label" x="${f(spot.x)}" y="${f(spot.y)}" text-anchor="${spot.anchor}" fill="#57606a" font-size="${LABEL_SIZE}">${text}</text></g>`,
    );
  });
  parts.push(...stepLines);
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
  parts.push(...stepMarkers);
  parts.push('</svg>');
  return parts.join('\n');
}
