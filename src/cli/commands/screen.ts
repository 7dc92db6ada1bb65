// screen: what a pty task's terminal shows now, as a person would see it (the daemon's emulator).
import { escapeControls } from '../../shared/control-escape.js';
import { requireIds } from '../arguments.js';
import { writeJson, type Command } from '../command.js';
import { fetchOutput } from '../output-reader.js';

export const screenCommand: Command = {
  name: 'screen',
  summary: "what a pty task's terminal shows now (top, vim, a REPL, an installer's menu)",
  usage: 'hive-bash screen ID',
  help: [
    'Prints the rows of the terminal of a task run with --pty, as its emulator in the daemon draws them',
    'from the output so far; a line under them gives the size, the cursor and whether a full-screen',
    "program has the alternate screen. --json prints the output tool's answer with its screen.",
    'Exit code: 0; 1 for a task that does not run on a terminal.',
  ],
  options: {},
  async run(context, _values, positionals) {
    const [id] = requireIds('screen', positionals, true) as [string];
    const answer = await fetchOutput(context.client, id, { screen: true });
    if (context.json) {
      writeJson(context, answer);
      return 0;
    }
    const screen = answer.screen as {
      text: string;
      cursor: { row: number; col: number };
      rows: number;
      cols: number;
      alternate_screen: boolean;
      skipped_bytes?: number;
    };
    const skipped = screen.skipped_bytes === undefined ? '' : `, ${screen.skipped_bytes} bytes of output skipped`;
    const note = `${screen.cols}x${screen.rows}, cursor at row ${screen.cursor.row} col ${screen.cursor.col}${screen.alternate_screen ? ', alternate screen' : ''}${skipped}; task ${answer.state}`;
    context.write(`${escapeControls(screen.text, true)}\n${context.paint('dim', `--- ${note}`)}\n`);
    return 0;
  },
};
