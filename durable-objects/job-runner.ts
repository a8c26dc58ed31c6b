import { nowMs, platform } from "../src/platform/services";
import { DurableObject } from "cloudflare:workers";
import type { Bindings } from "../src/env";
import { relayOutbox } from "../src/events/outbox";
import { errorFields } from "../src/pkg/logger";
import { taskLogger } from "../src/config";
import { SerialQueue } from "../src/pkg/serial";

/** The jobs' runner, loaded when first used, not while the Worker starts (src/index.ts). */
const runner = () => import("../src/dataprocessing/runner");

/** How often a running chain is polled (rule 5: the output is refreshed every minute). */
export const POLL_INTERVAL_MS = 60_000;

/**
 * Drives ONE chain of jobs (`idFromName(chainId)`; a single job is a chain of one). It stores the
 * chain id and keeps a minute alarm while a job of the chain is to run or running; each step
 * (creation, alarm, cron refresh, cancellation) runs after the previous one has finished, so two
 * steps never start the same container or end the same job twice. D1 holds the jobs themselves.
 */
export class JobRunner extends DurableObject<Bindings> {
  private readonly queue = new SerialQueue();

  /** Runs a step now (after any step in flight) and schedules the next poll. */
  async kick(chainId: string): Promise<void> {
    await this.ctx.storage.put("chainId", chainId);
    await this.serialised(() => this.step(chainId));
  }

  async cancel(chainId: string, jobId: string, by: { id: string; name: string | null }): Promise<boolean> {
    await this.ctx.storage.put("chainId", chainId);
    return this.serialised(async () => {
      const log = taskLogger(this.env, { task: "job-runner", chainId });
      const { cancelJob } = await runner();
      const cancelled = await cancelJob(this.env, jobId, by, platform().clock.now(), log);
      await this.step(chainId);
      return cancelled;
    });
  }

  override async alarm(): Promise<void> {
    const chainId = await this.ctx.storage.get<string>("chainId");
    if (chainId) await this.serialised(() => this.step(chainId));
  }

  private serialised<T>(work: () => Promise<T>): Promise<T> {
    return this.queue.run(work);
  }

  private async step(chainId: string): Promise<void> {
    const log = taskLogger(this.env, { task: "job-runner", chainId });
    let active = true;
    try {
      const { advanceChain } = await runner();
      ({ active } = await advanceChain(this.env, chainId, platform().clock.now(), log));
    } catch (error) {
      // Unexpected (D1 down, a bug): keep polling; the chain's deadline still bounds it.
      log.error("job step failed", errorFields(error));
    }
    if (active) await this.ctx.storage.setAlarm(nowMs() + POLL_INTERVAL_MS);
    else await this.ctx.storage.deleteAlarm();
    // A step's events (a job's status, a monitor job's alarms) leave now: no request follows them to relay.
    this.ctx.waitUntil(
      relayOutbox(this.env, log).catch((error: unknown) => log.warn("outbox relay after a step failed", errorFields(error))),
    );
  }
}
