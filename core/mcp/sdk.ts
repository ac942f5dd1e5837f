/**
 * The official MCP SDK, loaded on first use: its schemas and clients take ~90 ms to import, which a
 * gateway that serves no MCP request must not pay at start-up. The JSON-RPC codes the gateway
 * answers with are the protocol's own numbers, kept here so that nothing needs the SDK to name them.
 */
export const RPC = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The SDK's `ConnectionClosed`; also the session-not-found answer of its server transport. */
  ConnectionClosed: -32000,
  /** A server-defined error (the range -32000 to -32099): a limit refused the call. */
  LimitRefused: -32000,
  /** The SDK's `RequestTimeout`. */
  RequestTimeout: -32001,
  /** A request the client cancelled. */
  Cancelled: -32800,
} as const;

export interface Sdk {
  readonly Client: typeof import('@modelcontextprotocol/sdk/client/index.js').Client;
  readonly SSEClientTransport: typeof import('@modelcontextprotocol/sdk/client/sse.js').SSEClientTransport;
  readonly StdioClientTransport: typeof import('@modelcontextprotocol/sdk/client/stdio.js').StdioClientTransport;
  readonly StreamableHTTPClientTransport: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPClientTransport;
  readonly StreamableHTTPError: typeof import('@modelcontextprotocol/sdk/client/streamableHttp.js').StreamableHTTPError;
  readonly McpError: typeof import('@modelcontextprotocol/sdk/types.js').McpError;
  readonly ToolListChangedNotificationSchema: typeof import('@modelcontextprotocol/sdk/types.js').ToolListChangedNotificationSchema;
  readonly LATEST_PROTOCOL_VERSION: string;
  readonly SUPPORTED_PROTOCOL_VERSIONS: readonly string[];
}

let loading: Promise<Sdk> | undefined;
/** The SDK once loaded (errors from it can only exist after it loaded). */
export let loadedSdk: Sdk | undefined;

export function loadSdk(): Promise<Sdk> {
  loading ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]).then(([client, sse, stdio, streamable, types]) => {
    loadedSdk = {
      Client: client.Client,
      SSEClientTransport: sse.SSEClientTransport,
      StdioClientTransport: stdio.StdioClientTransport,
      StreamableHTTPClientTransport: streamable.StreamableHTTPClientTransport,
      StreamableHTTPError: streamable.StreamableHTTPError,
      McpError: types.McpError,
      ToolListChangedNotificationSchema: types.ToolListChangedNotificationSchema,
      LATEST_PROTOCOL_VERSION: types.LATEST_PROTOCOL_VERSION,
      SUPPORTED_PROTOCOL_VERSIONS: types.SUPPORTED_PROTOCOL_VERSIONS,
    };
    return loadedSdk;
  });
  return loading;
}
