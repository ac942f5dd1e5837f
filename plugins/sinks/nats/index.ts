import { defineLogSink, type SinkRecord, SinkError } from '../../../core/spec/index.js';
import { CREDENTIAL_PROPERTY, secretOf, sinkFailure } from '../../shared/sink-delivery.js';

const SINK = 'nats';

export interface NatsSinkParams {
  /** `host:port` (or `nats://host:port`), one or several. */
  servers: string | string[];
  /** The subject each record is published on; a JetStream stream must capture it. */
  subject: string;
  /** A token, or a user and password (typically from `process.env` in gateway.config.ts); never logged. */
  token?: string;
  user?: string;
  pass?: string;
  /** Or a credential stored in the vault: its `apiKey` is the token, or its fields `user` and `pass`. */
  credential?: string;
  /** Time allowed for the stream's acknowledgement of one message (default 5000 ms). */
  ackTimeoutMs?: number;
}

type Connection = { close(): Promise<void>; isClosed(): boolean };
type Publisher = { publish(subject: string, payload: string, options: { msgID: string; timeout: number }): Promise<{ duplicate: boolean }> };

/**
 * NATS JetStream: each record is one message on `subject`, its body the record's JSON, its
 * `Nats-Msg-Id` the record's id, so the stream drops a redelivery within its duplicate window.
 * A batch is published at once and delivered when every message is acknowledged by the stream.
 * The connection does not reconnect by itself: a failure fails the batch, the queue spills and
 * reconnects on its retry.
 */
export const nats = defineLogSink<NatsSinkParams>(
  {
    id: SINK,
    version: '1.0.0',
    description: 'Publishes each log record to a NATS JetStream subject, deduplicated by Nats-Msg-Id.',
    params: {
      type: 'object',
      required: ['servers', 'subject'],
      properties: {
        // Credentials go in token, user and pass (or credential), never in a server's address.
        servers: { anyOf: [{ type: 'string', pattern: '^[^@]+$' }, { type: 'array', minItems: 1, items: { type: 'string', pattern: '^[^@]+$' } }] },
        subject: { type: 'string', minLength: 1 },
        token: { type: 'string', minLength: 1, writeOnly: true },
        user: { type: 'string', minLength: 1 },
        pass: { type: 'string', minLength: 1, writeOnly: true },
        credential: CREDENTIAL_PROPERTY,
        ackTimeoutMs: { type: 'integer', minimum: 1 },
      },
    },
  },
  (params, dependencies) => {
    const given = params.token !== undefined ? { apiKey: params.token } : params.user !== undefined ? { fields: { user: params.user, ...(params.pass ? { pass: params.pass } : {}) } } : undefined;
    const secret = secretOf(SINK, given, params.credential, dependencies);
    const ackTimeoutMs = params.ackTimeoutMs ?? 5000;
    let connection: Connection | undefined;
    let publisher: Publisher | undefined;
    const drop = async () => {
      const open = connection;
      connection = undefined;
      publisher = undefined;
      await open?.close().catch(() => {});
    };
    return {
      async open() {
        await drop();
        const [{ connect }, { jetstream }] = await Promise.all([import('@nats-io/transport-node'), import('@nats-io/jetstream')]);
        const auth = await secret();
        try {
          const opened = await connect({
            servers: params.servers,
            reconnect: false,
            timeout: ackTimeoutMs,
            name: 'llm-gateway log sink',
            ...(auth?.apiKey ? { token: auth.apiKey } : {}),
            ...(auth?.fields?.user ? { user: auth.fields.user, pass: auth.fields.pass } : {}),
          });
          connection = opened;
          publisher = jetstream(opened) as unknown as Publisher;
        } catch (error) {
          throw sinkFailure(SINK, error);
        }
      },
      async deliver(records: readonly SinkRecord[]) {
        const js = publisher;
        if (!js || connection?.isClosed()) throw new SinkError(SINK, 'not connected');
        try {
          await Promise.all(records.map((record) => js.publish(params.subject, JSON.stringify(record), { msgID: record.id, timeout: ackTimeoutMs })));
        } catch (error) {
          throw sinkFailure(SINK, error);
        }
      },
      reset: drop,
      close: drop,
    };
  },
);
