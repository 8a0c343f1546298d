// Domain errors of the task layer; `wireCode` lets the protocol layer map them in one place.

/** The store could not be reached or refused the write (busy, disk full, connection lost). */
export class StoreUnavailableError extends Error {
  readonly wireCode = -32603;
  constructor(readonly reason: string) {
    super(`Task store unavailable: ${reason}`);
    this.name = 'StoreUnavailableError';
  }
}

/** An idempotency key already names a live task of the same owner and tool that was created with other arguments. */
export class IdempotencyConflictError extends Error {
  readonly wireCode = -32602;
  constructor(readonly taskId: string) {
    super('Invalid params: this idempotency key was already used with different arguments');
    this.name = 'IdempotencyConflictError';
  }
}
