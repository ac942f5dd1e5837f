import { defineLogSink, type SinkRecord, SinkError } from '../../../core/spec/index.js';
import { CREDENTIAL_PROPERTY, secretOf, sinkFailure } from '../../shared/sink-delivery.js';

const SINK = 'rabbitmq';

export interface RabbitMqSinkParams {
  /** `amqp://host:port/vhost` or `amqps://…`, without credentials (give them below). */
  url: string;
  /** The exchange records are published to (default `''`, the default exchange: `routingKey` is then a queue's name). */
  exchange?: string;
  routingKey: string;
  /** User and password (typically from `process.env`); never logged. */
  username?: string;
  password?: string;
  /** Or a credential stored in the vault, with the fields `username` and `password`. */
  credential?: string;
}

type Channel = {
  publish(exchange: string, routingKey: string, content: Buffer, options: Record<string, unknown>): boolean;
  waitForConfirms(): Promise<void>;
  on(event: string, listener: (...args: any[]) => void): unknown;
};
type Connection = { close(): Promise<void>; on(event: string, listener: (...args: any[]) => void): unknown; createConfirmChannel(): Promise<Channel> };

/**
 * RabbitMQ over AMQP 0-9-1 with publisher confirms: each record is one persistent message (its
 * body the record's JSON, `messageId` the record's id, `mandatory`, so a message no queue takes
 * fails the batch), and a batch is delivered once the broker confirmed every message. A consumer
 * deduplicates a redelivery by `messageId`.
 */
export const rabbitmq = defineLogSink<RabbitMqSinkParams>(
  {
    id: SINK,
    version: '1.0.0',
    description: 'Publishes each log record to a RabbitMQ exchange with publisher confirms; messageId is the record id.',
    params: {
      type: 'object',
      required: ['url', 'routingKey'],
      properties: {
        url: { type: 'string', pattern: '^amqps?://[^@]*$' },
        exchange: { type: 'string' },
        routingKey: { type: 'string' },
        username: { type: 'string', minLength: 1 },
        password: { type: 'string', minLength: 1, writeOnly: true },
        credential: CREDENTIAL_PROPERTY,
      },
    },
  },
  (params, dependencies) => {
    const given = params.username !== undefined ? { fields: { username: params.username, password: params.password ?? '' } } : undefined;
    const secret = secretOf(SINK, given, params.credential, dependencies);
    const where = new URL(params.url);
    let connection: Connection | undefined;
    let channel: Channel | undefined;
    let broken: string | undefined;
    let unroutable = 0;
    const drop = async () => {
      const open = connection;
      connection = undefined;
      channel = undefined;
      await open?.close().catch(() => {});
    };
    return {
      async open() {
        await drop();
        const amqp = await import('amqplib');
        const auth = await secret();
        broken = undefined;
        try {
          const opened = (await amqp.connect({
            protocol: where.protocol.slice(0, -1),
            hostname: where.hostname,
            port: where.port ? Number(where.port) : undefined,
            vhost: where.pathname.length > 1 ? decodeURIComponent(where.pathname.slice(1)) : '/',
            ...(auth?.fields?.username ? { username: auth.fields.username, password: auth.fields.password ?? '' } : {}),
            heartbeat: 30,
          })) as unknown as Connection;
          // Unhandled, these events would end the process; the next delivery fails instead.
          opened.on('error', (error: Error) => (broken = error.message));
          opened.on('close', () => (broken ??= 'connection closed'));
          const confirms = await opened.createConfirmChannel();
          confirms.on('error', (error: Error) => (broken = error.message));
          confirms.on('close', () => (broken ??= 'channel closed'));
          confirms.on('return', () => unroutable++);
          connection = opened;
          channel = confirms;
        } catch (error) {
          throw sinkFailure(SINK, error);
        }
      },
      async deliver(records: readonly SinkRecord[]) {
        const open = channel;
        if (!open || broken) throw new SinkError(SINK, broken ?? 'not connected');
        const returnedBefore = unroutable;
        try {
          for (const record of records) {
            open.publish(params.exchange ?? '', params.routingKey, Buffer.from(JSON.stringify(record)), {
              persistent: true,
              mandatory: true,
              messageId: record.id,
              contentType: 'application/json',
              type: 'gateway.log',
              timestamp: Math.floor(Date.parse(record.time) / 1000),
            });
          }
          await open.waitForConfirms();
        } catch (error) {
          throw sinkFailure(SINK, error);
        }
        if (unroutable !== returnedBefore) throw new SinkError(SINK, `${unroutable - returnedBefore} messages were routed to no queue`);
      },
      reset: drop,
      close: drop,
    };
  },
);
