// The file piscina loads in each worker thread. piscina require()s its worker file before trying
// import(); on Node 20.19+ require() of an ES module goes through a path (the "require facade")
// that aborts the whole process when the worker is terminated while loading it, which a daemon
// stopped right after it started can do. A CommonJS entry is require()d as CommonJS, and the ES
// module is imported the ordinary way on the first task.
import type { TaskOutcome, TaskSpec } from './protocol.js';

type RunTask = (spec: TaskSpec) => Promise<TaskOutcome>;
let loaded: Promise<RunTask> | undefined;

export = function runTask(spec: TaskSpec): Promise<TaskOutcome> {
  loaded ??= import('./task-worker.js').then((module: { default: RunTask }) => module.default);
  return loaded.then((run) => run(spec));
};
