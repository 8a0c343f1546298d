// Which step's body (and attempt) the code running now belongs to, if any: what names a stream append made there
// (streams.ts).
import { AsyncLocalStorage } from 'node:async_hooks';

const stepBodies = new AsyncLocalStorage<string>();

/** Runs attempt `attempt` of step `name`'s body, so that what it does knows where it runs. */
export const inStepBody = <T>(name: string, attempt: number, body: () => T): T =>
  stepBodies.run(`${name}#${attempt}`, body);

/** `step#attempt` of the body the caller runs in; '' in the handler's own code. */
export const currentStepBody = (): string => stepBodies.getStore() ?? '';
