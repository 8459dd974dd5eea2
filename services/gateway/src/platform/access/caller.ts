import type { TokenScope } from '../store/api-token.entity.js';
import type { ProjectType } from '../store/project.entity.js';

/** Who is calling with an API token, once the token pipeline has let the call through. */
export interface Caller {
  tokenId: string;
  orgId: string;
  projectId: string;
  projectType: ProjectType;
  scopes: readonly TokenScope[];
  /** The project's published version when the call came in. */
  publishedVersion: number;
  /** The project's configuration version when the call came in (current as of its arrival). */
  configVersion: number;
  /** The moment (performance.now()) the pipeline's reads are current as of; later checks reuse it. */
  checkedAt: number;
}
