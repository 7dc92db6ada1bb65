// Every hive-bash command, in the order --help lists them, and how a name or alias finds one.
import type { Command } from '../command.js';
import { approvalsCommand, approveCommand, denyCommand } from './approvals.js';
import { followCommand, logsCommand } from './follow.js';
import { killCommand } from './kill.js';
import { listCommand } from './list.js';
import { policyCommand } from './policy.js';
import { runCommand } from './run.js';
import { screenCommand } from './screen.js';
import { statusCommand } from './status.js';
import { todosCommand } from './todos.js';
import { topCommand } from './top.js';
import { waitCommand } from './wait.js';

export const COMMANDS: Command[] = [
  listCommand,
  statusCommand,
  followCommand,
  logsCommand,
  screenCommand,
  waitCommand,
  killCommand,
  runCommand,
  topCommand,
  todosCommand,
  approvalsCommand,
  approveCommand,
  denyCommand,
  policyCommand,
];

/** The command called `name` or aliased so, or undefined. */
export function findCommand(name: string): Command | undefined {
  return COMMANDS.find((command) => command.name === name || command.aliases?.includes(name));
}
