import type { PassThrough } from 'node:stream';
import type { ResponseEvent, ResponseItem, ResponseObject } from '../../../spec/responses.js';
import { EventWriter, terminalEvent } from './responses-events.js';
import { clientItems } from './responses-objects.js';

/** The lifecycle events of a model call's stream, which the loop's own response replaces. */
const RESPONSE_EVENTS = new Set(['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.failed', 'response.queued']);

/**
 * The events of a streamed `mcp` tool loop: one Response's stream made of the model calls' streams
 * (their items renumbered into the loop's output, their text relayed as it comes) and the gateway's
 * own items: `mcp_list_tools` (`response.mcp_list_tools.*`), `mcp_call` (`response.mcp_call_arguments.*`
 * and `response.mcp_call.*`) and `mcp_approval_request`. The output array is shared with the loop,
 * so an item's `output_index` is its place in the final response.
 */
export class LoopEvents {
  private readonly writer = new EventWriter();
  /** This model call's output indexes as the loop's (-1: an MCP call the loop announces itself). */
  private indexes = new Map<number, number>();

  constructor(
    private readonly out: PassThrough,
    private readonly output: ResponseItem[],
    /** Whether a function name is an MCP tool's (its call becomes an `mcp_call` item). */
    private readonly isMcpCall: (name: unknown) => boolean,
    private readonly include: readonly string[] | null | undefined,
  ) {}

  private write(type: string, fields: Record<string, unknown>): void {
    if (!this.out.destroyed) this.out.write(this.writer.write(type, fields));
  }

  opening(shell: ResponseObject): void {
    this.write('response.created', { response: shell });
    this.write('response.in_progress', { response: shell });
  }

  /** A model call starts: its output indexes start again from 0. */
  step(): void {
    this.indexes = new Map();
  }

  /** One event of a model call's stream. */
  relay(event: ResponseEvent): void {
    if (RESPONSE_EVENTS.has(event.type)) return;
    const index = event.output_index;
    if (typeof index !== 'number') {
      if (!this.out.destroyed) this.out.write(this.writer.sse(event));
      return;
    }
    if (event.type === 'response.output_item.added') {
      const item = event.item as ResponseItem;
      if (item.type === 'function_call' && this.isMcpCall(item.name)) {
        this.indexes.set(index, -1);
        return;
      }
      this.indexes.set(index, this.output.length);
      this.output.push(item);
    }
    const outer = this.indexes.get(index);
    if (outer === undefined || outer < 0) return;
    if (event.type === 'response.output_item.done') this.output[outer] = event.item as ResponseItem;
    const shown = event.item === undefined ? event : { ...event, item: clientItems([event.item as ResponseItem], this.include)[0] };
    if (!this.out.destroyed) this.out.write(this.writer.sse({ ...shown, output_index: outer }));
  }

  /** A tool list the loop adds. */
  list(item: ResponseItem): void {
    const index = this.output.push(item) - 1;
    const at = { item_id: item.id, output_index: index };
    this.write('response.output_item.added', { output_index: index, item: { ...item, tools: [] } });
    this.write('response.mcp_list_tools.in_progress', at);
    this.write(item.error ? 'response.mcp_list_tools.failed' : 'response.mcp_list_tools.completed', at);
    this.write('response.output_item.done', { output_index: index, item });
  }

  /** An MCP call starts (its arguments as the model gave them); returns its output index. */
  callStarted(item: ResponseItem): number {
    const index = this.output.push(item) - 1;
    const at = { item_id: item.id, output_index: index };
    this.write('response.output_item.added', { output_index: index, item: { ...item, arguments: '', status: 'in_progress' } });
    this.write('response.mcp_call_arguments.delta', { ...at, delta: item.arguments });
    this.write('response.mcp_call_arguments.done', { ...at, arguments: item.arguments });
    this.write('response.mcp_call.in_progress', at);
    return index;
  }

  /** An MCP call ended, with its output or its error. */
  callEnded(index: number, item: ResponseItem): void {
    this.output[index] = item;
    const at = { item_id: item.id, output_index: index };
    this.write(item.status === 'failed' ? 'response.mcp_call.failed' : 'response.mcp_call.completed', at);
    this.write('response.output_item.done', { output_index: index, item });
  }

  /** An item the loop adds whole (an approval request). */
  item(item: ResponseItem): void {
    const index = this.output.push(item) - 1;
    this.write('response.output_item.added', { output_index: index, item });
    this.write('response.output_item.done', { output_index: index, item });
  }

  /** The terminal event, and the end of the stream. */
  end(response: ResponseObject): void {
    this.write(terminalEvent(response), { response });
    this.out.end();
  }
}
