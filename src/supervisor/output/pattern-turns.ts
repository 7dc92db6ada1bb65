// The pattern jobs (grep, wait_for) waiting for the pattern thread, by client, served in turns:
// the next job is the oldest of the client served longest ago (one never served, or served after
// it last went idle, first). Twenty costly patterns of one client then wait behind each other, not
// in front of another client's cheap one: that waits for the job running and at most one job of
// each other client waiting. Which client a call is: callers/call-clients.ts.

/** A job waiting for a thread: `seq` orders it among all the jobs waiting, `start` gives it the thread. */
export interface WaitingJob {
  seq: number;
  start: () => void;
}

interface ClientJobs {
  waiting: WaitingJob[];
  running: number;
  /** The turn it was last served at: 0 for a client not served since it last went idle. */
  servedAt: number;
}

export class PatternTurns {
  /** The clients with jobs waiting or running, in the order they came (a tie of servedAt goes to the first). */
  private readonly clients = new Map<string, ClientJobs>();
  private turn = 0;

  /** The `seq` of the oldest job waiting (to order patterns against plain reads), or Infinity when none waits. */
  oldestSeq(): number {
    let oldest = Infinity;
    for (const jobs of this.clients.values()) oldest = Math.min(oldest, jobs.waiting[0]?.seq ?? Infinity);
    return oldest;
  }

  /** Job `job` of `client` waits for its turn. */
  wait(client: string, job: WaitingJob): void {
    this.jobsOf(client).waiting.push(job);
  }

  /** Takes the next job to run off the queue (its client's turn), or null when none waits. */
  next(): WaitingJob | null {
    let chosen: ClientJobs | null = null;
    for (const jobs of this.clients.values())
      if (jobs.waiting.length > 0 && (chosen === null || jobs.servedAt < chosen.servedAt)) chosen = jobs;
    if (chosen === null) return null;
    chosen.running++;
    chosen.servedAt = ++this.turn;
    return chosen.waiting.shift()!;
  }

  /** A job of `client` has ended: a client with nothing waiting or running is forgotten. */
  ended(client: string): void {
    const jobs = this.clients.get(client);
    if (jobs === undefined) return;
    jobs.running--;
    if (jobs.running <= 0 && jobs.waiting.length === 0) this.clients.delete(client);
  }

  private jobsOf(client: string): ClientJobs {
    let jobs = this.clients.get(client);
    if (jobs === undefined) this.clients.set(client, (jobs = { waiting: [], running: 0, servedAt: 0 }));
    return jobs;
  }
}
