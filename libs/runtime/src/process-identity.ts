import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * A fresh identity for a service instance, told apart from every other without configuration
 * (DESIGN.md section 15): the host name, the process id and a random part. Two replicas started
 * with the same environment on one host differ by pid; two containers that are both pid 1 on
 * hosts of one name, a restarted process that got its old pid back, or two instances of a
 * service in one process (tests, the launcher) differ by the random part. Whatever an instance
 * must tell its own claims from others' by (a run's lease owner, the holder of a bot session's
 * turn) is made here, once per instance, never from the host name or the service name alone.
 */
export function instanceIdentity(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}
