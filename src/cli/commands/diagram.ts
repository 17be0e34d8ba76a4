import { Command, Option } from 'commander';
import { print } from '../output.js';

interface DiagramOptions {
  format: 'mermaid' | 'json';
  machine: 'job' | 'supervisor';
}

export function diagramCommand(): Command {
  return new Command('diagram')
    .summary('print the job or supervisor machine as Mermaid or JSON')
    .description(
      'Print a machine as a Mermaid stateDiagram-v2 (for docs: GitHub renders it in a ```mermaid block) or as JSON shaped like ' +
        'its XState config, with guards and actions by name (for Stately’s tools and scripts). Needs no store.',
    )
    .addOption(new Option('--format <format>', 'output format').choices(['mermaid', 'json']).default('mermaid'))
    .addOption(new Option('--machine <machine>', 'which machine').choices(['job', 'supervisor']).default('job'))
    .action(async (options: DiagramOptions) => {
      // Imported here, not at the top: the other commands' start-up need not load XState.
      const { machineDiagram } = await import('../../inspector/diagram.js');
      print(machineDiagram(options.machine, options.format).trimEnd());
    });
}
