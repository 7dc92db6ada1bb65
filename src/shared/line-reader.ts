// Line framing: the todo socket's requests and answers, and a shim's status lines, are each one
// `\n`-terminated line.
import type { Socket } from 'node:net';

/** Calls `onLine` with each line read from `socket` (without its `\n`); `onOverflow` when one grows past `maxLineBytes`. */
export function readLines(
  socket: Socket,
  onLine: (line: string) => void,
  maxLineBytes = Infinity,
  onOverflow = () => {},
): void {
  let buffer = '';
  socket.setEncoding('utf8');
  socket.on('data', (text: string) => {
    buffer += text;
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      onLine(line);
    }
    if (buffer.length > maxLineBytes) {
      buffer = '';
      onOverflow();
    }
  });
}
