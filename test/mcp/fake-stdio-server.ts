// A stdio MCP server for the gateway's supervision tests, run as a child process: `hello` answers,
// `exit` makes the process exit (the gateway restarts it), and it writes a line to stderr on start.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'fake-stdio', version: '1.0.0' });
server.registerTool('hello', { description: 'Says hello' }, async () => ({ content: [{ type: 'text', text: `hello from ${process.pid}` }] }));
server.registerTool('exit', { description: 'Exits the process' }, async () => {
  setTimeout(() => process.exit(1), 10);
  return { content: [{ type: 'text', text: 'exiting' }] };
});
process.stderr.write(`fake stdio server started (pid ${process.pid}, token ${process.env.FAKE_TOKEN ?? 'none'})\n`);
await server.connect(new StdioServerTransport());
