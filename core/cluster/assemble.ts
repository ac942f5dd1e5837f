import { type Container, provide } from '../container.js';
import { workerId } from './worker.js';

/** This process's place in a cluster (GATEWAY_WORKERS): which worker it is, if it is one. */
export class ClusterMembership {
  /** This worker's id; undefined when the gateway runs alone. */
  readonly worker = workerId();
  /** What `GET /health` answers: a worker says which one answered. */
  readonly health = this.worker === undefined ? { status: 'ok' } : { status: 'ok', worker: this.worker };
  /** Whether files in the data dir (cache.sqlite) are shared with the other workers. */
  readonly sharesDataDir = this.worker !== undefined;
}

/** Registers the cluster membership, read once per gateway. */
export function registerCluster(container: Container): void {
  provide(container, ClusterMembership, () => new ClusterMembership());
}
