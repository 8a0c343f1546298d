// Wall-clock helpers of the suite.
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));
export const now = (): number => Date.now();
