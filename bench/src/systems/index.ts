import type { BenchSystem, SystemContext, SystemName } from './system.js';

/** Loads only the system a run asks for, so a run's process holds one system's code. */
export async function openSystem(name: SystemName, ctx: SystemContext): Promise<BenchSystem> {
  switch (name) {
    case 'jobvisor':
      return (await import('./jobvisor.js')).jobvisorSystem(ctx);
    case 'graphile-worker':
      return (await import('./graphile-worker.js')).graphileWorkerSystem(ctx);
    case 'pg-boss':
      return (await import('./pg-boss.js')).pgBossSystem(ctx);
  }
}
