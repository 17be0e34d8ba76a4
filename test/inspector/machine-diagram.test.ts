import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { DIAGRAM_FORMATS, machineDiagram, MACHINES, toMachineJson, toMermaid } from '../../src/inspector/diagram.js';
import { describeMachine } from '../../src/inspector/machine-graph.js';
import { layoutMachine, renderMachineSvg } from '../../src/inspector/machine-svg.js';
import { jobMachine } from '../../src/machines/job-machine.js';
import { inBox, samplePath } from '../support/svg-geometry.js';

/** Every `a --> b` of a Mermaid text, as [a, b]. */
function arrows(mermaid: string): Array<[string, string]> {
  return [...mermaid.matchAll(/^\s*(\S+) --> (\S+)/gm)].map((m) => [m[1]!, m[2]!]);
}

describe('toMermaid', () => {
  it('draws every transition of the job machine, from its initial state to its final ones', () => {
    const text = toMermaid(jobMachine);
    expect(text.startsWith('stateDiagram-v2\n')).toBe(true);
    expect(text).toContain('  [*] --> claimed\n');
    expect(text).toContain('  running --> completing : handler.resolved\n');
    // A guard combined with and() keeps both names.
    expect(text).toMatch(/\n {2}running --> failing : attempt\.deadline \[hasDeadline && \w+\]\n/);
    expect(text).toContain('  completing --> completed : write.done [writeApplied]\n');
    for (const final of ['completed', 'retrying', 'dead', 'skipped', 'cancelled', 'lost']) {
      expect(text).toContain(`  ${final} --> [*]\n`);
    }
    // Each top-level state of the machine appears in some arrow.
    const named = new Set(arrows(text).flat());
    for (const state of Object.keys(jobMachine.root.states)) expect(named).toContain(state);
  });

  it('draws nested states in their block with ids of their own, and lifts transitions across blocks', () => {
    const machine = createMachine({
      id: 'm',
      initial: 'a',
      on: { RESET: '.a' },
      states: {
        a: { initial: 'inner', states: { inner: { on: { GO: '#m.b' } }, other: {} } },
        b: {
          type: 'parallel',
          states: {
            left: { initial: 'inner', states: { inner: { always: { target: '#m.done', guard: 'ready' } } } },
            right: { initial: 'x', states: { x: { after: { 500: 'y' } }, y: {} } },
          },
        },
        done: { type: 'final' },
      },
    });
    const text = toMermaid(machine);
    expect(text).toContain('state "inner" as a_inner');
    expect(text).toContain('state "inner" as b_left_inner');
    expect(text).toContain('    [*] --> a_inner\n');
    expect(text).toMatch(/state b \{[\s\S]*state b_left \{[\s\S]*\n    --\n    state b_right \{/);
    expect(text).toContain('      b_right_x --> b_right_y : after 500ms\n');
    // `a.inner → b` is drawn between the top-level states, in the root block.
    expect(text).toContain('\n  a --> b : GO\n');
    expect(text).toContain('\n  b --> done : always [ready]\n');
    expect(text).toContain('note right of a : RESET from any state');
  });

  it('keeps labels on one line and free of Mermaid syntax', () => {
    const machine = createMachine({ id: 'm', initial: 'a', states: { a: { on: { 'say:hi;now': 'b' } }, b: {} } });
    expect(toMermaid(machine)).toContain('  a --> b : say hi now\n');
  });
});

describe('toMachineJson', () => {
  it('is shaped like the machine config, with guards and actions by name', () => {
    const json = toMachineJson(MACHINES.supervisor);
    expect(json).toMatchObject({ id: 'supervisor', initial: 'idle' });
    expect(json.on?.['supervisor.stop']).toEqual([{ target: ['#supervisor.stopping'], actions: ['setStopTimes'] }]);
    const running = json.states?.running;
    expect(running?.type).toBe('parallel');
    const claiming = running?.states?.claimer?.states?.claiming;
    expect(claiming?.entry).toEqual(['startClaim']);
    expect(claiming?.on?.['claim.error']).toEqual([
      { target: ['#supervisor.running.claimer.backingOff'], actions: ['noteClaimFailure', 'reportClaimFailure'] },
    ]);
    expect(json.states?.draining?.states?.waitingForJobs?.always).toEqual([
      { target: ['#supervisor.draining.claiming'], guard: 'endedSinceClaim && hasFreeSlots' },
      { target: ['#supervisor.idle'], guard: '!busy', actions: ['drained'] },
    ]);
    expect(json.states?.stopped).toMatchObject({ type: 'final', entry: ['stopped'] });
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
  });

  it("puts an invoke's done and error transitions under the invoke, as the config has them", () => {
    // Neither of jobvisor's machines invokes (their store calls are actions); a user's may.
    const machine = createMachine({
      id: 'm',
      initial: 'loading',
      states: {
        loading: { invoke: { id: 'load', src: 'fetchIt', onDone: 'ready', onError: 'failed' } },
        ready: {},
        failed: {},
      },
    });
    expect(toMachineJson(machine).states?.loading?.invoke).toEqual([
      { id: 'load', src: 'fetchIt', onDone: [{ target: ['#m.ready'] }], onError: [{ target: ['#m.failed'] }] },
    ]);
    expect(toMermaid(machine)).toContain('  loading --> failed : error load\n');
  });

  it('names timers by their delay and leaves out the raise and cancel XState adds for them', () => {
    // The job machine's one timer of its own: a write's retry (the supervisor's sends the rest).
    const retryWait = toMachineJson(jobMachine).states?.completing?.states?.retryWait;
    expect(Object.keys(retryWait?.after ?? {})).toEqual(['writeRetry']);
    expect(retryWait?.entry ?? []).not.toContain('xstate.raise');
    expect(toMachineJson(jobMachine).states?.running?.after).toBeUndefined();
  });
});

describe('machineDiagram', () => {
  it('prints either machine in either format', () => {
    for (const machine of Object.keys(MACHINES) as Array<keyof typeof MACHINES>) {
      for (const format of DIAGRAM_FORMATS) {
        const text = machineDiagram(machine, format);
        expect(text.endsWith('\n')).toBe(true);
        if (format === 'json') expect(JSON.parse(text).id).toBe(machine);
        else expect(text.startsWith('stateDiagram-v2')).toBe(true);
      }
    }
  });
});

describe('describeMachine', () => {
  it('keeps eventless transitions and combined guards, which machine.definition drops', () => {
    const root = describeMachine(MACHINES.supervisor);
    const waiting = root.children.find((s) => s.key === 'draining')!.children.find((s) => s.key === 'waitingForJobs')!;
    expect(waiting.transitions.filter((t) => t.kind === 'always')).toMatchObject([
      { guard: 'endedSinceClaim && hasFreeSlots', targets: ['supervisor.draining.claiming'] },
      { guard: '!busy', targets: ['supervisor.idle'] },
    ]);
  });
});

describe('renderMachineSvg', () => {
  it('draws every top-level state and escapes what it writes', () => {
    const machine = createMachine({
      id: 'm',
      initial: 'a',
      states: { a: { on: { '<go & "run">': 'b' } }, b: { type: 'final' } },
    });
    const svg = renderMachineSvg(machine);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('data-state="a"');
    expect(svg).toContain('data-state="b"');
    expect(svg).toContain('&lt;go &amp; &quot;run&quot;&gt;');
    expect(svg).not.toContain('<go');
    expect(svg).not.toMatch(/<style|<script|style="/);
  });

  it.each(['job', 'supervisor'] as const)('draws no edge of the %s machine through a state it does not connect', (name) => {
    const layout = layoutMachine(MACHINES[name]);
    const found: string[] = [];
    for (const edge of layout.edges) {
      const points = samplePath(edge.d);
      for (const node of layout.nodes) {
        if (node.key === edge.source || node.key === edge.target) continue;
        if (points.some((p) => inBox(p, node, 2))) found.push(`${edge.source}->${edge.target} through ${node.key}`);
      }
      // Its ends touch the states it connects.
      const [start, end] = [points[0]!, points.at(-1)!];
      const byKey = new Map(layout.nodes.map((node) => [node.key, node]));
      expect(inBox(start, byKey.get(edge.source)!, 0.5), `${edge.source}->${edge.target} starts on ${edge.source}`).toBe(true);
      expect(inBox(end, byKey.get(edge.target)!, 0.5), `${edge.source}->${edge.target} ends on ${edge.target}`).toBe(true);
    }
    expect(found).toEqual([]);
  });

  it('marks the states and edges of a path, and the current state', () => {
    const svg = renderMachineSvg(jobMachine, {
      states: ['claimed', 'running', 'completing', 'completed'],
      edges: ['claimed->running', 'running->completing', 'completing->completed'],
      current: 'completed',
    });
    expect(svg).toMatch(/class="node final visited current" data-state="completed"/);
    expect(svg).toMatch(/class="edge visited" data-edge="running-&gt;completing"/);
    expect(svg).toMatch(/class="node compound" data-state="failing"/);
  });
});
