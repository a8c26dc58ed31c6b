/**
 * The serialisation queue the Durable Objects share (src/pkg/serial.ts: TemplateWriter, JobRunner,
 * SearchIndex): tasks run one at a time in the order they were queued, and one task's failure is its
 * own caller's only.
 */
import { describe, expect, it } from "vitest";
import { SerialQueue } from "../../src/pkg/serial";

const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 1));

describe("SerialQueue", () => {
  it("runs tasks one at a time, in the order they were queued", async () => {
    const queue = new SerialQueue();
    const log: string[] = [];
    let running = 0;
    const task = (name: string, waits: number) => async () => {
      running += 1;
      expect(running).toBe(1);
      log.push(`start ${name}`);
      for (let i = 0; i < waits; i++) await tick();
      log.push(`end ${name}`);
      running -= 1;
      return name;
    };
    // The first task waits longest: without the queue the others would overtake it.
    const results = await Promise.all([queue.run(task("a", 5)), queue.run(task("b", 1)), queue.run(task("c", 0))]);
    expect(results).toEqual(["a", "b", "c"]);
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c"]);
  });

  it("does not start a task before the one before it has settled", async () => {
    const queue = new SerialQueue();
    let release!: () => void;
    const first = queue.run(() => new Promise<void>((resolve) => (release = resolve)));
    let secondStarted = false;
    const second = queue.run(() => {
      secondStarted = true;
    });
    await tick();
    expect(secondStarted).toBe(false);
    release();
    await first;
    await second;
    expect(secondStarted).toBe(true);
  });

  it("keeps a failure to its own caller: later tasks still run, in order", async () => {
    const queue = new SerialQueue();
    const log: string[] = [];
    const failing = queue.run(async () => {
      await tick();
      log.push("failing");
      throw new Error("boom");
    });
    const throwingSync = queue.run(() => {
      log.push("throwing");
      throw new Error("sync boom");
    });
    const next = queue.run(async () => {
      log.push("next");
      return 42;
    });
    await expect(failing).rejects.toThrow("boom");
    await expect(throwingSync).rejects.toThrow("sync boom");
    await expect(next).resolves.toBe(42);
    expect(log).toEqual(["failing", "throwing", "next"]);
  });

  it("queues are independent of each other", async () => {
    const a = new SerialQueue();
    const b = new SerialQueue();
    let release!: () => void;
    const blocked = a.run(() => new Promise<void>((resolve) => (release = resolve)));
    await expect(b.run(() => "free")).resolves.toBe("free");
    release();
    await blocked;
  });
});
