/**
 * The serialisation queue of a Durable Object. An object lets other calls in while it awaits
 * (D1, a fetch, its storage), so an object whose steps must not interleave runs them through one of
 * these: each task starts only when the one before it has settled, in the order they were queued.
 * A task's failure is its caller's alone: the queue goes on with the next task.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs `task` after every task queued before it; resolves or rejects with its own outcome. */
  run<T>(task: () => T | Promise<T>): Promise<T> {
    const result = this.tail.then(task);
    // The queue continues whatever this task's outcome; the caller still sees its own failure.
    this.tail = result.catch(() => undefined);
    return result;
  }
}
