// One stream of a task, byte for byte (--stdout, --stderr): the bytes come from its file here, and
// the daemon's output tool says only whether there is more (its cursors and waits) and the end.
import type { CommandContext } from './command.js';
import { OutputFile } from './output-file.js';
import { fetchOutput, followToEnd, type OutputAnswer } from './output-reader.js';
import { fetchStatus, MAX_WAIT_SECONDS } from './tasks.js';

export interface ExactReading {
  id: string;
  stream: 'stdout' | 'stderr';
  /** The last lines to start with (Infinity: all). */
  history: number;
  follow: boolean;
}

/**
 * Copies the stream's bytes to stdout from its file, until the task's end when `follow`; false
 * (after a warning) when the file cannot be read here, for the caller to show the daemon's text.
 */
export async function copyExactOutput(context: CommandContext, reading: ExactReading): Promise<boolean> {
  const { id, stream } = reading;
  const status = await fetchStatus(context.client, id, 0);
  const path = status[`${stream}_path`];
  const file = OutputFile.open(path, status[`${stream}_bytes`]);
  if (!(file instanceof OutputFile)) {
    context.warn(
      `cannot read ${path} here (${file.reason}), so its bytes come as the daemon's text of them: a CR before a newline dropped, bytes that are not UTF-8 as U+FFFD`,
    );
    return false;
  }
  try {
    if (Number.isFinite(reading.history)) file.startAtLastLines(reading.history);
    await file.copyToEnd(context);
    if (reading.follow)
      await followToEnd(
        context,
        undefined,
        (next) => readPlace(context, reading, next),
        async () => (await file.copyToEnd(context)) > 0,
      );
  } finally {
    file.close();
  }
  return true;
}

/**
 * Where the stream has got to after `since`, without its text: at once without a cursor (which
 * gives one), else when there is more, the task has ended, or MAX_WAIT_SECONDS have passed.
 */
function readPlace(context: CommandContext, reading: ExactReading, since: string | undefined): Promise<OutputAnswer> {
  return fetchOutput(context.client, reading.id, {
    stream: reading.stream,
    raw: true,
    tail: 1,
    max_bytes: 1,
    ...(since === undefined ? {} : { since, wait_seconds: MAX_WAIT_SECONDS }),
  });
}
