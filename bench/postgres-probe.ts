import pg from 'pg';

/**
 * A connected client of the PostgreSQL the log benchmarks use, or undefined (with a line saying
 * why) when it cannot be reached: those benchmarks then measure SQLite alone.
 */
export async function connectOrSkip(connectionString: string): Promise<pg.Client | undefined> {
  const probe = new pg.Client({ connectionString, connectionTimeoutMillis: 3000 });
  try {
    await probe.connect();
    return probe;
  } catch (error) {
    process.stdout.write(`PostgreSQL skipped: ${(error as Error).message}\n`);
    return undefined;
  }
}
