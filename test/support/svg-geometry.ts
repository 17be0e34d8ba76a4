/**
 * Geometry of the SVGs the inspector draws, for tests that check what covers what: the points
 * along a path's data (the absolute M, L, Q and C our renderers write), whether a point falls
 * in a box, and the drawing's shapes in paint order, each with the data-* attributes of the
 * groups around it.
 */

export interface Point {
  x: number;
  y: number;
}

export interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** Points along path data, about every `every` pixels of each segment's control polygon. */
export function samplePath(d: string, every = 2): Point[] {
  const tokens = [...d.matchAll(/([MLQC])([^MLQC]*)/g)];
  const points: Point[] = [];
  let at: Point = { x: 0, y: 0 };
  for (const [, command, args] of tokens) {
    const numbers = (args!.match(/-?\d+(?:\.\d+)?(?:e-?\d+)?/g) ?? []).map(Number);
    const pts = Array.from({ length: numbers.length / 2 }, (_, i) => ({ x: numbers[2 * i]!, y: numbers[2 * i + 1]! }));
    if (command === 'M') {
      at = pts[0]!;
      points.push(at);
      continue;
    }
    const control = [at, ...pts];
    const length = control.slice(1).reduce((sum, p, i) => sum + Math.hypot(p.x - control[i]!.x, p.y - control[i]!.y), 0);
    const count = Math.max(1, Math.ceil(length / every));
    for (let i = 1; i <= count; i++) points.push(bezier(control, i / count));
    at = pts[pts.length - 1]!;
  }
  return points;
}

/** De Casteljau: a line, quadratic or cubic at `t`. */
function bezier(control: Point[], t: number): Point {
  let level = control;
  while (level.length > 1) level = level.slice(1).map((p, i) => ({ x: level[i]!.x + (p.x - level[i]!.x) * t, y: level[i]!.y + (p.y - level[i]!.y) * t }));
  return level[0]!;
}

/** Strictly inside the box grown by `margin` on every side. */
export function inBox(p: Point, box: Box, margin = 0): boolean {
  return p.x > box.x - margin && p.x < box.x + box.width + margin && p.y > box.y - margin && p.y < box.y + box.height + margin;
}

export interface Shape {
  tag: 'path' | 'circle' | 'rect';
  attrs: Record<string, string>;
  /** data-* attributes of the shape and of the groups around it, the nearest winning. */
  data: Record<string, string>;
}

/** The paths, circles and rects of an SVG in the order they are painted, `<defs>` left out. */
export function paintOrder(svg: string): Shape[] {
  const shapes: Shape[] = [];
  const groups: Array<Record<string, string>> = [];
  let inDefs = false;
  for (const [, closing, tag, rest] of svg.matchAll(/<(\/?)(\w+)((?:[^>"]|"[^"]*")*)>/g)) {
    const selfClosing = rest!.endsWith('/');
    if (tag === 'defs') inDefs = closing === '';
    if (inDefs) continue;
    if (tag === 'g' || tag === 'a') {
      if (closing) groups.pop();
      else if (!selfClosing) groups.push(attributes(rest!));
      continue;
    }
    if (closing || (tag !== 'path' && tag !== 'circle' && tag !== 'rect')) continue;
    const attrs = attributes(rest!);
    const data = Object.fromEntries(
      [...groups, attrs].flatMap((a) => Object.entries(a).filter(([name]) => name.startsWith('data-'))),
    );
    shapes.push({ tag, attrs, data });
  }
  return shapes;
}

function attributes(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/([\w-]+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}
