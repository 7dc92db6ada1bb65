// The file piscina loads in each reader thread; CommonJS for the reason task-worker-entry.cts gives
// (a thread stopped while require() loads an ES module aborts the process): the ES module is
// imported the ordinary way on the first job.
import type { ReadJob, ReadResult } from './read-thread.js';

type RunJob = (job: ReadJob) => Promise<ReadResult> | ReadResult;
let loaded: Promise<RunJob> | undefined;

export = function runJob(job: ReadJob): Promise<ReadResult> {
  loaded ??= import('./read-thread.js').then((module: { runReadJob: RunJob }) => module.runReadJob);
  return loaded.then((run) => run(job));
};
