// Every tool the server offers, in the order tools/list shows them.
import type { ToolDefinition } from '../tool.js';
import { inputTool } from './input.js';
import { killTool } from './kill.js';
import { listTool } from './list.js';
import { outputTool } from './output.js';
import { runTool } from './run.js';
import { statusTool } from './status.js';

export const TOOLS = [runTool, statusTool, outputTool, killTool, listTool, inputTool] as unknown as ToolDefinition[];
