// What a reader thread runs (read-pool.ts): a task's output read as output asks, and a readiness
// pattern tested against a chunk of lines. Everything that turns a task's bytes into text, or runs
// a pattern over them, runs here, off the main thread (the screen's emulator aside: its work is
// bounded where it runs, terminal-screen.ts).
import { readOutput, type OutputAnswer, type OutputQuery, type OutputTask } from './output-read.js';
import type { MessagePort } from 'node:worker_threads';
import type { OutputCursor } from './output-cursor.js';
import { matchChunk, type MatchChunkJob, type MatchChunkResult } from './line-match.js';

export interface ReadOutputJob {
  type: 'read';
  task: OutputTask;
  cursor: OutputCursor;
  query: OutputQuery;
  restarted: boolean;
}

/** A job, and for one with a pattern the port it says on that it started (its budget runs from then). */
export type ReadJob = (ReadOutputJob | MatchChunkJob) & { started?: MessagePort };
export type ReadResult = OutputAnswer | MatchChunkResult;

/** Runs one job; its answer travels back to the main thread by structured clone. */
export function runReadJob(job: ReadJob): Promise<ReadResult> | ReadResult {
  job.started?.postMessage('started');
  job.started?.close();
  if (job.type === 'read') return readOutput(job.task, job.cursor, job.query, job.restarted);
  return matchChunk(job);
}
