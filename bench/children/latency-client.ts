// The client process of the latency rows (started by the runner over IPC): runs the rows it is sent, one at a
// time, and answers each with its sample and the row's state (which runs may advance). A process of its own does
// nothing but the row it runs, so what it times is not held up by the runner's own work and garbage collections.
import { SCENARIOS } from '../sections/index.js';
import type { RowState, TargetView } from '../types.js';

interface RunMessage {
  name: string;
  target: TargetView;
  state: RowState | undefined;
  seconds: number;
}

const reply = (message: object) => process.send!(message);

process.on('message', (msg: RunMessage) => {
  const scenario = SCENARIOS.find((s) => s.name === msg.name);
  Promise.resolve()
    .then(() => {
      if (scenario?.kind !== 'latency') throw new Error(`no latency row named ${msg.name}`);
      return scenario.run(msg.target, msg.state, msg.seconds);
    })
    .then(
      (sample) => reply({ type: 'sample', sample, state: msg.state }),
      (err: unknown) => reply({ type: 'error', message: (err as Error | undefined)?.stack ?? String(err) }),
    );
});
process.on('disconnect', () => process.exit(0));
reply({ type: 'ready' });
