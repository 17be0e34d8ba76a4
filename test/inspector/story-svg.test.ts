/**
 * The story view's paint order: every step's line is painted before any step's number, so no
 * later step hides an earlier number; and an edge taken by several attempts shows each
 * attempt's colour, their lines side by side rather than one over the other.
 */
import { describe, expect, it } from 'vitest';
import { jobStory } from '../../src/inspector/job-story.js';
import { renderStorySvg } from '../../src/inspector/story-svg.js';
import type { JobErrorInfo, JobEvent, JobState } from '../../src/types.js';
import { paintOrder, type Point, samplePath, type Shape } from '../support/svg-geometry.js';

const T = Date.parse('2026-12-01T10:00:00Z');
const BOOM: JobErrorInfo = { code: 'handler_error', message: 'boom' };
const ev = (from: JobState | null, to: JobState, attempt: number, ms: number, error: JobErrorInfo | null = null): JobEvent => ({
  jobId: '1', fromState: from, toState: to, attempt, workerId: attempt > 0 ? `w${attempt}` : null, at: new Date(T + ms), error,
});

/** Failed twice, then completed: running ⇄ retrying taken by two attempts each way. */
const twiceFailed = () =>
  renderStorySvg(
    jobStory([
      ev(null, 'pending', 0, 0),
      ev('pending', 'running', 1, 100),
      ev('running', 'retrying', 1, 350, BOOM),
      ev('retrying', 'running', 2, 1_350),
      ev('running', 'retrying', 2, 1_400, BOOM),
      ev('retrying', 'running', 3, 3_400),
      ev('running', 'completed', 3, 3_500),
    ]),
  );

const distance = (a: Point, b: Point) => Math.hypot(a.x - b.x, a.y - b.y);

/** What a shape painted after a step's number hides of it, in words, or null. */
function covers(later: Shape, marker: Shape): string | null {
  const centre = { x: Number(marker.attrs.cx), y: Number(marker.attrs.cy) };
  const r = Number(marker.attrs.r);
  const what = `${later.tag} ${JSON.stringify(later.data)}`;
  if (later.tag === 'path') {
    const half = Number(later.attrs['stroke-width'] ?? 1) / 2;
    return samplePath(later.attrs.d!).some((p) => distance(p, centre) < r + half) ? what : null;
  }
  if (later.tag === 'circle') return distance({ x: Number(later.attrs.cx), y: Number(later.attrs.cy) }, centre) < r + Number(later.attrs.r) ? what : null;
  const [x, y, w, h] = ['x', 'y', 'width', 'height'].map((k) => Number(later.attrs[k]));
  return centre.x + r > x! && centre.x - r < x! + w! && centre.y + r > y! && centre.y - r < y! + h! ? what : null;
}

describe('renderStorySvg paint order', () => {
  it('paints every step’s line before any step’s number, and nothing over a number', () => {
    const shapes = paintOrder(twiceFailed());
    const lines = shapes.flatMap((s, i) => (s.tag === 'path' && s.data['data-step'] ? [i] : []));
    const markers = shapes.flatMap((s, i) => (s.tag === 'circle' && s.data['data-step'] ? [i] : []));
    expect(lines).toHaveLength(6);
    expect(markers).toHaveLength(6);
    const hidden = markers.flatMap((i) =>
      shapes.slice(i + 1).flatMap((later) => {
        const what = covers(later, shapes[i]!);
        return what ? [`step ${shapes[i]!.data['data-step']} under ${what}`] : [];
      }),
    );
    expect(hidden).toEqual([]);
    expect(Math.max(...lines)).toBeLessThan(Math.min(...markers));
  });

  it('draws an edge taken by two attempts as two lines side by side, one per attempt’s colour', () => {
    const lines = paintOrder(twiceFailed()).filter((s) => s.tag === 'path' && s.data['data-step']);
    for (const edge of ['running->retrying', 'retrying->running']) {
      const [first, second, ...more] = lines.filter((s) => s.data['data-edge'] === edge);
      expect(more).toEqual([]);
      expect(first!.data['data-attempt']).not.toBe(second!.data['data-attempt']);
      expect(first!.attrs.stroke).not.toBe(second!.attrs.stroke);
      // Along its middle, the first line lies a stroke's width from the second: both show whole.
      const width = Number(second!.attrs['stroke-width']);
      const points = samplePath(first!.attrs.d!, 1);
      const others = samplePath(second!.attrs.d!, 1);
      const middle = points.slice(Math.floor(points.length * 0.2), Math.ceil(points.length * 0.8));
      const nearest = Math.min(...middle.map((p) => Math.min(...others.map((q) => distance(p, q)))));
      expect(nearest, edge).toBeGreaterThanOrEqual(width);
    }
  });
});
