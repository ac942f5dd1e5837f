// The small part of autocannon's programmatic API the bench uses (the package ships no types).
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Requests per second across all connections. */
      overallRate?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      /** Seconds before a request counts as timed out. */
      timeout?: number;
    }

    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }

    interface Result {
      /** Per-second samples of completed requests; `total` is the number completed. */
      requests: Histogram & { sent: number };
      /** Milliseconds, whole-millisecond resolution. */
      latency: Histogram & { totalCount: number };
      throughput: Histogram;
      duration: number;
      errors: number;
      timeouts: number;
      non2xx: number;
      resets: number;
      statusCodeStats: Record<string, { count: number }>;
    }

    interface Instance {
      stop(): void;
    }
  }

  function autocannon(options: autocannon.Options, callback: (error: Error | null, result: autocannon.Result) => void): autocannon.Instance;

  export = autocannon;
}
