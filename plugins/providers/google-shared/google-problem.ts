import { invalid } from '../../../core/api/validate.js';
import type { RequestProblem } from '../../../core/spec/index.js';

/** Throws a provider's own request problem as the gateway's 400 (with `param`). */
export function rejectProblem(problem: RequestProblem | undefined): void {
  if (problem) throw invalid(problem.param, problem.message);
}
