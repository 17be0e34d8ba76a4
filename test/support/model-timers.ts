import type { AnyEventObject } from 'xstate';

/** A delayed event a machine scheduled, in a model's virtual time. */
export interface ModelTimer {
  id: string;
  event: AnyEventObject;
  dueAt: number;
}

/**
 * Applies XState's own timer actions to a model's world: a delayed `xstate.raise` schedules,
 * `xstate.cancel` unschedules. Answers whether the action was one of them, so a recording
 * action executor handles the rest itself.
 */
export function recordTimerAction(
  world: { now: number; timers: ModelTimer[] },
  action: { type: string; params?: unknown },
): boolean {
  const params = action.params as { delay?: unknown; id: string; event: AnyEventObject; sendId: string };
  if (action.type === 'xstate.raise') {
    if (typeof params.delay === 'number') world.timers.push({ id: params.id, event: params.event, dueAt: world.now + params.delay });
    return true;
  }
  if (action.type === 'xstate.cancel') {
    world.timers = world.timers.filter((t) => t.id !== params.sendId);
    return true;
  }
  return false;
}
